"""``whole_outputs``: a file written whole or not at all, and the folders a failed run made,
removed when empty (only those)."""

from __future__ import annotations

import gzip
from contextlib import nullcontext

import pytest

from herbrand.framework.csv_writer import write_chunks
from herbrand.framework.whole_outputs import MadeFolders, made_folders, whole_file
from tests.folder_listing import listing


class Failure(Exception):
    pass


def test_a_whole_file_replaces_the_old_one_once_written(tmp_path):
    (tmp_path / "r.csv").write_bytes(b"old\n")
    with whole_file(tmp_path / "r.csv") as stream:
        stream.write(b"new ")
        assert listing(tmp_path)["r.csv"] == b"old\n" and len(listing(tmp_path)) == 2
        stream.write(b"rows\n")
    assert listing(tmp_path) == {"r.csv": b"new rows\n"}


@pytest.mark.parametrize("failure", [Failure, KeyboardInterrupt])
def test_a_failed_whole_file_leaves_the_old_one_and_nothing_else(tmp_path, failure):
    (tmp_path / "r.csv").write_bytes(b"old\n")
    with pytest.raises(failure), whole_file(tmp_path / "r.csv") as stream:
        stream.write(b"half a li")
        raise failure
    assert listing(tmp_path) == {"r.csv": b"old\n"}


def test_a_whole_file_that_cannot_take_its_place_is_removed(tmp_path):
    (tmp_path / "r.csv").mkdir()
    with pytest.raises(IsADirectoryError), whole_file(tmp_path / "r.csv") as stream:
        stream.write(b"rows\n")
    assert listing(tmp_path) == {"r.csv": None}


def test_a_whole_file_makes_no_folder(tmp_path):
    with pytest.raises(FileNotFoundError), whole_file(tmp_path / "no" / "r.csv"):
        pass
    assert listing(tmp_path) == {}


def test_made_folders_records_only_the_folders_it_makes(tmp_path):
    (tmp_path / "kept").mkdir()
    folders = MadeFolders()
    folders.make(tmp_path / "kept" / "a" / "b")
    folders.make(tmp_path / "kept" / "a" / "c")
    folders.make(tmp_path / "kept")
    (tmp_path / "kept" / "a" / "c" / "f").write_bytes(b"")
    folders.remove_empty()
    assert listing(tmp_path) == {"kept": None, "kept/a": None, "kept/a/c": None,
                                 "kept/a/c/f": b""}
    (tmp_path / "kept" / "a" / "c" / "f").unlink()
    folders.remove_empty()  # forgotten once removed: a and c stay
    assert set(listing(tmp_path)) == {"kept", "kept/a", "kept/a/c"}


@pytest.mark.parametrize(("below", "error"), [("", FileExistsError),
                                              ("sub", NotADirectoryError)])
def test_made_folders_fail_as_mkdir_does_below_a_file(tmp_path, below, error):
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(error):
        MadeFolders().make(tmp_path / "f" / below)


@pytest.mark.parametrize("failure", [Failure, KeyboardInterrupt])
def test_a_failed_block_removes_the_empty_folders_it_made(tmp_path, failure):
    (tmp_path / "out").mkdir()
    with pytest.raises(failure), made_folders() as folders:
        folders.make(tmp_path / "out" / "a" / "b")
        folders.make(tmp_path / "out" / "c")
        (tmp_path / "out" / "c" / "f").write_bytes(b"")
        raise failure
    assert listing(tmp_path) == {"out": None, "out/c": None, "out/c/f": b""}


def test_a_block_that_ends_keeps_its_folders(tmp_path):
    with made_folders() as folders:
        folders.make(tmp_path / "a" / "b")
    assert listing(tmp_path) == {"a": None, "a/b": None}


class Removals:
    """Another file system's folders: counts the calls of ``remove_empty``."""

    calls = 0

    def remove_empty(self) -> None:
        self.calls += 1


@pytest.mark.parametrize("fails", [True, False])
def test_the_folders_given_are_removed_when_the_block_fails(fails):
    given = Removals()
    with pytest.raises(Failure) if fails else nullcontext(), made_folders(given) as folders:
        assert folders is given
        if fails:
            raise Failure
    assert given.calls == int(fails)


def failing_chunks():
    yield b"1\t2\n"
    raise Failure


@pytest.mark.parametrize("name", ["r.csv", "r.csv.gz"])
def test_write_chunks_that_fail_leave_the_old_file_and_no_new_folder(tmp_path, name):
    (tmp_path / name).write_bytes(b"old\n")
    with pytest.raises(Failure):
        write_chunks(tmp_path / name, failing_chunks())
    with pytest.raises(Failure):
        write_chunks(tmp_path / "a" / "b" / name, failing_chunks())
    assert listing(tmp_path) == {name: b"old\n"}


def test_write_chunks_gzip_header_names_the_file_not_the_temporary_one(tmp_path):
    write_chunks(tmp_path / "r.csv.gz", [b"1\t2\n"])
    data = (tmp_path / "r.csv.gz").read_bytes()
    assert data[10:16] == b"r.csv\0" and gzip.decompress(data) == b"1\t2\n"
