"""An output replaced whole (``replaced_outputs``): killed or interrupted before each of its
steps, through Hadoop's FileSystem API (on ``file:`` URIs) and through ``os``, the old output
or the new one is whole at every instant, at the path or aside; the failure's own ``settle``,
or the next run's after a kill, leaves exactly one at the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from herbrand.spark_backend.replaced_outputs import (
    HadoopFiles,
    LocalFiles,
    aside_path,
    replace_whole,
    settle,
)
from tests.folder_listing import listing

OLD, NEW = b"old rows\n", b"new rows\n"


class Killed(BaseException):
    """The process's end, injected: nothing of it runs another call."""


class Stopping:
    """``files`` whose ``step``-th rename or delete (1: the old output moved aside, 2: the new
    one renamed in, 3: the old one deleted) raises ``failure`` instead; after a ``Killed``,
    every call raises it (the process is gone). Before every call it checks that an output
    is whole at ``path`` (old or new) or the old one is aside."""

    def __init__(self, files, step: int, failure: type[BaseException], path: str, local: Path,
                 kind: str):
        self.files, self.step, self.failure = files, step, failure
        self.path, self.local, self.kind = path, local, kind
        self.steps, self.dead = 0, False

    def _check(self) -> None:
        if self.dead:
            raise Killed
        here = contents(self.local, self.kind)
        aside = contents(Path(aside_path(str(self.local))), self.kind)
        assert here in (old_output(self.kind), new_output(self.kind)) or (
            aside == old_output(self.kind)), (here, aside)

    def _mutating(self) -> None:
        self._check()
        self.steps += 1
        if self.steps == self.step:
            self.dead = self.failure is Killed
            raise self.failure

    def exists(self, path: str) -> bool:
        self._check()
        return self.files.exists(path)

    def is_directory(self, path: str) -> bool:
        self._check()
        return self.files.is_directory(path)

    def rename(self, source: str, target: str) -> None:
        self._mutating()
        self.files.rename(source, target)

    def delete(self, path: str) -> None:
        self._mutating()
        self.files.delete(path)


def old_output(kind: str):
    return OLD if kind == "file" else {"part-0": OLD, "part-1": OLD}


def new_output(kind: str):
    return NEW if kind == "file" else {"part-0": NEW}


def contents(path: Path, kind: str):
    """The bytes of a file output, the files of a directory one; None when absent."""
    if not path.exists():
        return None
    return path.read_bytes() if kind == "file" else listing(path)


def write(path: Path, output) -> None:
    if isinstance(output, bytes):
        path.write_bytes(output)
        return
    path.mkdir()
    for name, data in output.items():
        (path / name).write_bytes(data)


@pytest.fixture(params=["hadoop", "os"])
def files(request):
    """(the Files, how a local path is named to it)."""
    if request.param == "os":
        return LocalFiles(), str
    return HadoopFiles(request.getfixturevalue("spark")), lambda path: f"file://{path}"


@pytest.mark.parametrize("kind", ["file", "directory"])
@pytest.mark.parametrize("failure", [Killed, KeyboardInterrupt])
@pytest.mark.parametrize("step", [1, 2, 3])
def test_a_replacement_stopped_at_each_step_keeps_one_output_whole(files, tmp_path, kind,
                                                                   failure, step):
    files, named = files
    target, written = tmp_path / "tc.csv", tmp_path / "tc.csv.parts"
    write(target, old_output(kind))
    write(written, new_output(kind))
    stopping = Stopping(files, step, failure, named(target), target, kind)
    with pytest.raises(failure):
        replace_whole(stopping, named(written), named(target))
    replaced = new_output(kind) if step == 3 else old_output(kind)
    if failure is KeyboardInterrupt:  # the failure's settle ran
        assert contents(target, kind) == replaced
        assert not os.path.lexists(aside_path(str(target)))
    settle(files, named(target))  # the next run's write of the output
    assert contents(target, kind) == replaced
    assert not os.path.lexists(aside_path(str(target)))


@pytest.mark.parametrize("kind", ["file", "directory"])
@pytest.mark.parametrize("old", [True, False], ids=["over an old output", "new"])
def test_a_replacement_that_is_not_stopped_leaves_the_new_output_alone(files, tmp_path, kind,
                                                                      old):
    files, named = files
    target, written = tmp_path / "tc.csv", tmp_path / "tc.csv.parts"
    if old:
        write(target, old_output(kind))
    write(written, new_output(kind))
    replace_whole(files, named(written), named(target))
    assert listing(tmp_path) == listing_of({"tc.csv": new_output(kind)})


def listing_of(outputs: dict) -> dict:
    """``listing`` of a folder holding ``outputs`` (name -> bytes or a directory's files)."""
    found = {}
    for name, output in outputs.items():
        if isinstance(output, bytes):
            found[name] = output
        else:
            found[name] = None
            found.update({f"{name}/{part}": data for part, data in output.items()})
    return found


class Refusing:
    """A Hadoop FileSystem whose ``rename`` answers ``false``, as HDFS does for a target that
    exists or a missing parent."""

    def rename(self, source, target) -> bool:
        return False


def test_a_rename_refused_is_an_os_error(spark, tmp_path, monkeypatch):
    files = HadoopFiles(spark)
    monkeypatch.setattr(files, "_file_system", lambda path: (Refusing(), path))
    with pytest.raises(OSError, match="cannot rename"):
        files.rename(f"file://{tmp_path}/a", f"file://{tmp_path}/b")
    (tmp_path / "a").write_bytes(OLD)
    (tmp_path / "b").write_bytes(NEW)
    with pytest.raises(OSError, match="cannot rename"):
        LocalFiles().rename(str(tmp_path / "a"), str(tmp_path / "b"))
    assert listing(tmp_path) == {"a": OLD, "b": NEW}


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_an_output_of_the_other_kind_is_not_replaced(files, tmp_path, kind):
    files, named = files
    target, written = tmp_path / "tc.csv", tmp_path / "tc.csv.parts"
    other = "directory" if kind == "file" else "file"
    write(target, old_output(other))
    write(written, new_output(kind))
    before = listing(tmp_path)
    with pytest.raises(OSError, match="Is a directory" if other == "directory"
                       else "Not a directory"):
        replace_whole(files, named(written), named(target))
    assert listing(tmp_path) == before
