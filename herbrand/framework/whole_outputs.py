"""What a failed or interrupted write leaves behind on the local file system: nothing it did
not finish. Every output file is whole or absent, and a run that fails removes the folders it
made for its outputs.

- ``whole_file(path)`` opens a temporary file beside ``path`` (``.<name>.<random>.tmp``, in
  the same folder, so on the same file system) and, once the block ends without error,
  replaces ``path`` by it (``os.replace``: a reader sees the old file or the new one, never a
  part). On any failure or interruption inside (a KeyboardInterrupt too), the temporary file
  is removed and ``path`` stays as it was. The local writer (``csv_writer.write_chunks``)
  writes every file through it: the local backend's outputs, the outputs a Spark run writes
  on its driver, and the part files a Spark task writes (``spark_backend.part_files``).
- ``made_folders()`` yields a ``MadeFolders``, through which a run makes its output folders
  (``-D out/a/b``, a ``filename=`` with folders): it records the folders it creates, and only
  those. When the run fails or is interrupted inside the block, each of them that is empty is
  removed, the deepest first; a folder that existed before, or holds anything, stays.
  ``made_folders(folders)`` does the same for the folders of any other object with
  ``remove_empty`` (``RemovesEmpty``: another file system's).

A replaced file is a new file: it takes the default mode (0666 less the umask) and replaces a
symbolic link at ``path`` rather than writing through it. Nothing is flushed to the disk
(``fsync``): a file is whole against the failure of the process, not of the machine.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO, Protocol, TypeVar


@contextmanager
def whole_file(path: Path) -> Iterator[BinaryIO]:
    """A new binary file to write ``path``'s bytes into, which replaces ``path`` when the block
    ends without error and is removed when it fails (see the module doc). The folder is not
    made: a missing one is a FileNotFoundError. Cost: one file created and one renamed."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        with open(temporary, "xb") as stream:
            yield stream
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):  # the write's failure is the one to report
            temporary.unlink(missing_ok=True)
        raise


class MadeFolders:
    """The folders made through ``make``, which ``remove_empty`` removes again."""

    def __init__(self) -> None:
        self._made: list[Path] = []

    def make(self, directory: Path) -> None:
        """Make ``directory`` and its missing parents, as ``Path.mkdir(parents=True,
        exist_ok=True)`` does (with its errors: FileExistsError when ``directory`` is a file,
        NotADirectoryError below a file), recording each folder this call creates (not one
        another process made meanwhile). Cost: a ``stat`` per missing folder and one more."""
        missing = []
        for folder in (directory, *directory.parents):
            if folder.exists():
                break
            missing.append(folder)
        for folder in reversed(missing):
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            self._made.append(folder)
        directory.mkdir(exist_ok=True)  # an existing file: FileExistsError

    def remove_empty(self) -> None:
        """Remove each folder ``make`` created that is empty now (a folder emptied by removing
        one below it too), the last made first. A folder that cannot be removed stays."""
        for folder in reversed(self._made):
            with suppress(OSError):
                folder.rmdir()
        self._made.clear()


class RemovesEmpty(Protocol):
    """What ``made_folders`` calls when its block fails: ``MadeFolders``, or the like of
    another file system (the Spark backend's, through Hadoop)."""

    def remove_empty(self) -> None: ...


Folders = TypeVar("Folders", bound=RemovesEmpty)


@contextmanager
def made_folders(folders: Folders | None = None) -> Iterator[Folders | MadeFolders]:
    """``folders`` (a new ``MadeFolders`` when None) for the block, whose folders still empty
    are removed (``remove_empty``) when the block fails or is interrupted; the failure then
    goes on."""
    folders = MadeFolders() if folders is None else folders
    try:
        yield folders
    except BaseException:
        folders.remove_empty()
        raise
