"""The folders a Spark write makes through Hadoop's FileSystem API (``hadoop_folders``), on
``file:`` URIs: only those missing are recorded, and only those still empty directories are
removed, the deepest first."""

from __future__ import annotations

from herbrand.spark_backend.hadoop_folders import HadoopFolders
from tests.folder_listing import listing


def test_only_the_folders_made_are_removed_and_only_while_empty(spark, tmp_path):
    (tmp_path / "out").mkdir()
    folders = HadoopFolders(spark)
    folders.make_parent(f"file://{tmp_path}/out/a/b/c/tc.csv")
    folders.make_parent(f"file://{tmp_path}/out/a/d/tc.parquet")
    assert listing(tmp_path) == {"out": None, "out/a": None, "out/a/b": None,
                                 "out/a/b/c": None, "out/a/d": None}
    (tmp_path / "out" / "a" / "d" / "kept").write_bytes(b"kept\n")
    folders.remove_empty()
    assert listing(tmp_path) == {"out": None, "out/a": None, "out/a/d": None,
                                 "out/a/d/kept": b"kept\n"}


def test_a_folder_made_then_replaced_by_a_file_stays(spark, tmp_path):
    folders = HadoopFolders(spark)
    folders.make_parent(f"file://{tmp_path}/a/b/tc.csv")
    (tmp_path / "a" / "b").rmdir()
    (tmp_path / "a" / "b").write_bytes(b"a file\n")
    folders.remove_empty()
    assert listing(tmp_path) == {"a": None, "a/b": b"a file\n"}


def test_existing_folders_are_not_recorded(spark, tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    folders = HadoopFolders(spark)
    folders.make_parent(f"file://{tmp_path}/a/b/tc.csv")
    folders.remove_empty()
    assert listing(tmp_path) == {"a": None, "a/b": None}
