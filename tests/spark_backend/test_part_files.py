"""A written-once decomposed stratum's CSV file written by its own tasks (``part_files``): only
for a local path on a master on this machine, with the local backend's bytes, whatever the
delimiter, symbols or folder, and right when a task is retried."""

from __future__ import annotations

import io as text_io
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from pyspark import TaskContext

import herbrand
from herbrand.cli import main
from herbrand.framework.csv_writer import EMPTY_GZIP
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.spark_backend import part_files
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.decomposed import Decomposition
from herbrand.spark_backend.part_files import (
    PartFile,
    join_parts,
    parts_directory,
    task_written_path,
)
from tests.folder_listing import listing
from tests.spark_backend.conftest import recorded_writes, requires_java
from tests.spark_backend.edge_files import (
    NUMBER_EDGES,
    SYMBOL_EDGES,
    plain_bytes,
    tc_files,
)

HERE = os.path.abspath("out/tc.csv")


@pytest.mark.parametrize("path, master, expected", [
    ("/data/tc.csv", "local[2]", "/data/tc.csv"),
    ("out/tc.csv", "local", HERE),
    ("file:/data/tc.csv", "local-cluster[2,1,1024]", "/data/tc.csv"),
    ("file:///data/tc.csv", "local[*]", "/data/tc.csv"),
    ("FILE://localhost/data/tc.csv", "local[2,3]", "/data/tc.csv"),
    ("file://host/data/tc.csv", "local[2]", None),
    ("hdfs://name:8020/data/tc.csv", "local[2]", None),
    ("s3a://bucket/data/tc.csv", "local-cluster[2,1,1024]", None),
    ("/data/tc.csv", "spark://host:7077", None),
    ("/data/tc.csv", "yarn", None),
    ("/data/tc.csv.gz", "local[2]", "/data/tc.csv.gz"),  # each task gzips its part
])
def test_tasks_write_only_local_files_on_a_master_on_this_machine(path, master, expected):
    assert task_written_path(path, master) == expected


def test_parts_are_joined_in_partition_order_and_removed(tmp_path):
    path = str(tmp_path / "tc.csv")
    directory = Path(parts_directory(path))
    directory.mkdir()
    for partition, text in ((10, b"c\n"), (2, b"b\n"), (0, b"a\n"), (3, b"")):
        (directory / f"part-{partition:05d}").write_bytes(text)
    (directory / ".part-00001.17").write_bytes(b"a failed attempt\n")
    join_parts(path)
    assert Path(path).read_bytes() == b"a\nb\nc\n"
    assert [p.name for p in tmp_path.iterdir()] == ["tc.csv"]
    directory.mkdir()  # no part at all: an empty file, over an old one
    join_parts(path)
    assert Path(path).read_bytes() == b"" and not directory.exists()
    directory = Path(parts_directory(path + ".gz"))
    directory.mkdir()  # gzipped: an empty gzip file
    join_parts(path + ".gz")
    assert Path(path + ".gz").read_bytes() == EMPTY_GZIP and not directory.exists()


@pytest.mark.parametrize("failure", [RuntimeError, KeyboardInterrupt])
def test_a_task_writes_its_part_whole_or_not_at_all(tmp_path, monkeypatch, failure):
    """Partition 3's task writes ``part-00003`` and nothing else; when its rows fail half-way
    (after a first chunk), the folder holds nothing, not even a temporary file."""
    task = SimpleNamespace(partitionId=lambda: 3, taskAttemptId=lambda: 17)
    monkeypatch.setattr(TaskContext, "get", classmethod(lambda cls: task))
    rows = Relation.from_rows([(2, 1), (1, 2)])
    part = PartFile(str(tmp_path), "\t")
    part.write(rows, ("number", "number"), SymbolTable())
    assert listing(tmp_path) == {"part-00003": b"1\t2\n2\t1\n"}
    (tmp_path / "part-00003").unlink()
    chunks = part_files.relation_chunks

    def failing(*args):
        yield from list(chunks(*args))[:1]
        raise failure

    monkeypatch.setattr(part_files, "relation_chunks", failing)
    with pytest.raises(failure):
        part.write(rows, ("number", "number"), SymbolTable())
    assert listing(tmp_path) == {}


@pytest.mark.parametrize("kind, params, edges, file", [
    ("number", "", NUMBER_EDGES, "tc.csv"),
    ("number", "", b"", "tc.csv"),  # empty: an empty file
    ("symbol", "", SYMBOL_EDGES, "tc.csv"),  # bytes that are not UTF-8
    ("number", '(delimiter=", ")', NUMBER_EDGES, "tc.csv"),
    ("symbol", '(delimiter="\\"")', SYMBOL_EDGES, "tc.csv"),
    ("number", '(filename="sub/dir/paths.txt", delimiter="\\t|")', NUMBER_EDGES,
     "sub/dir/paths.txt"),
    ("number", '(filename="tc.csv.gz")', NUMBER_EDGES, "tc.csv.gz"),  # gzip members joined
    ("number", '(filename="tc.csv.gz")', b"", "tc.csv.gz"),  # no part: an empty gzip file
    ("symbol", '(filename="sub/tc.gz", delimiter="\\"")', SYMBOL_EDGES, "sub/tc.gz"),
], ids=["numbers", "empty", "bytes", "comma", "quote", "subdirectory", "gzip", "gzip-empty",
        "gzip-bytes"])
def test_tasks_write_the_local_backend_s_bytes(spark, tmp_path, monkeypatch, kind, params,
                                               edges, file):
    written_by_spark = recorded_writes(monkeypatch)
    by_tasks = []
    write_parts = Decomposition.write_parts
    monkeypatch.setattr(Decomposition, "write_parts",
                        lambda *args: by_tasks.append(1) or write_parts(*args))
    program, facts = tc_files(tmp_path, kind, params, edges)
    SparkBackend(session=spark).materialize_files(herbrand.parse(program.read_text()), facts,
                                                  tmp_path / "spark", stdout=text_io.StringIO())
    assert main(["run", str(program), "-F", str(facts), "-D", str(tmp_path / "local"),
                 "--no-progress"]) == 0
    assert (by_tasks, written_by_spark) == ([1], [])
    assert plain_bytes(tmp_path / "spark" / file) == plain_bytes(tmp_path / "local" / file)
    top = file.split("/")[0]
    assert [p.name for p in (tmp_path / "spark").iterdir()] == [top]
    assert [p.name for p in (tmp_path / "spark" / file).parent.iterdir()] == [Path(file).name]


RETRIED = """
import os, sys
from pathlib import Path
import herbrand
from herbrand.spark_backend import outputs
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.part_files import PartFile

MARKS = Path(sys.argv[3])


class FailingOnce(PartFile):
    '''Partition 0's first attempt fails halfway through its temporary file; partition 1's
    after its part file is in place.'''

    def write(self, relation, types, symbols):
        from pyspark import TaskContext

        partition = TaskContext.get().partitionId()
        mark = MARKS / str(partition)
        if partition == 0 and not mark.exists():
            mark.touch()
            Path(self.directory, ".part-00000.x").write_bytes(b"half a line")
            raise RuntimeError("fault injected before the rename")
        super().write(relation, types, symbols)
        if partition == 1 and not mark.exists():
            mark.touch()
            raise RuntimeError("fault injected after the rename")


made = outputs.part_file
outputs.part_file = lambda path, delimiter: FailingOnce(**vars(made(path, delimiter)))
backend = SparkBackend(master="local[2,2]", driver_rows=0, conf={"spark.ui.enabled": "false",
                                                  "spark.sql.shuffle.partitions": "4"})
program = herbrand.parse(Path(sys.argv[1]).read_text())
run = backend.materialize_files(program, sys.argv[2], sys.argv[4])
print(run.stats[0].derived)
"""


@requires_java
def test_a_retried_task_still_writes_the_right_file(tmp_path):
    """On ``local[2,2]`` (a task may fail once): one task fails before its part file is
    renamed, one after; the file and the size the tasks counted are still right."""
    program, facts = tc_files(tmp_path, "number", "", NUMBER_EDGES)
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "retried.py"
    script.write_text(textwrap.dedent(RETRIED))
    result = subprocess.run([sys.executable, str(script), str(program), str(facts), str(marks),
                             str(tmp_path / "spark")], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(p.name for p in marks.iterdir()) == ["0", "1"]
    local = herbrand.materialize(herbrand.parse(program.read_text()), facts_dir=facts)
    assert int(result.stdout.split()[-1]) == len(local["tc"])
    assert main(["run", str(program), "-F", str(facts), "-D", str(tmp_path / "local"),
                 "--no-progress"]) == 0
    assert (tmp_path / "spark" / "tc.csv").read_bytes() == (
        tmp_path / "local" / "tc.csv").read_bytes()
    assert [p.name for p in (tmp_path / "spark").iterdir()] == ["tc.csv"]
