"""An output that Spark's writers made replaces the old one whole, on any file system Hadoop
reaches, as ``herbrand.framework.whole_outputs.whole_file`` replaces a local file: at every
instant the old output or the new one is whole, at the output's path or, for the old one, beside
it.

Hadoop's ``rename`` does not overwrite (a file) or moves into (a directory), so a new output
(a file or a Parquet directory, written complete under another name: ``part_files``) cannot
take the old one's place in one call. ``replace_whole`` takes three:

1. the old output, if any, is moved aside, to ``aside_path`` (``<output>.old``);
2. the new one is renamed to the output's path;
3. the old one is deleted.

A failure or interruption (a KeyboardInterrupt too) at any step is followed there by
``settle``, and a process killed outright leaves the same states for the next run's write of
the output to ``settle`` before it writes (``outputs``): after step 1, the old output is
renamed back from aside (the new one stays where it was written, which the failed write then
removes); after step 2, the aside one is deleted. A rename that fails (Hadoop answers
``false``) raises OSError.

Both ``HadoopFiles`` (through a Spark session's Hadoop FileSystem of each path) and
``LocalFiles`` (this machine's, through ``os``: outputs the driver writes with the local
writer, which replaces its files by ``os.replace``, are settled too) carry the three calls.

Cost: a call to the file system per step (one ``exists`` to ``settle`` an output nothing
interrupted).
"""

from __future__ import annotations

import errno
import os
import shutil
from contextlib import suppress
from typing import Protocol

from pyspark.sql import SparkSession

ASIDE_SUFFIX = ".old"


def aside_path(path: str) -> str:
    """Where the old output at ``path`` waits while a new one replaces it: ``path + ".old"``,
    beside it (so on the same file system, where a rename is one call).

    >>> aside_path("hdfs://name/out/tc.csv")
    'hdfs://name/out/tc.csv.old'
    """
    return path + ASIDE_SUFFIX


class Files(Protocol):
    """The calls ``replace_whole`` and ``settle`` make to a file system, on paths (a file or
    a directory, with all it holds)."""

    def exists(self, path: str) -> bool: ...

    def is_directory(self, path: str) -> bool:
        """Whether ``path`` (which exists) is a directory."""

    def rename(self, source: str, target: str) -> None:
        """Rename ``source`` to ``target`` (absent); OSError when it is not done."""

    def delete(self, path: str) -> None:
        """Delete ``path`` and all it holds (nothing when it is absent)."""


class HadoopFiles:
    """``Files`` through the Hadoop FileSystem of each path, in ``session``'s JVM."""

    def __init__(self, session: SparkSession):
        context = session.sparkContext
        self._paths = context._jvm.org.apache.hadoop.fs
        self._configuration = context._jsc.hadoopConfiguration()

    def _file_system(self, path: str):
        target = self._paths.Path(path)
        return target.getFileSystem(self._configuration), target

    def exists(self, path: str) -> bool:
        file_system, target = self._file_system(path)
        return file_system.exists(target)

    def is_directory(self, path: str) -> bool:
        file_system, target = self._file_system(path)
        return file_system.getFileStatus(target).isDirectory()

    def rename(self, source: str, target: str) -> None:
        file_system, moved = self._file_system(source)
        if not file_system.rename(moved, self._paths.Path(target)):
            raise OSError(f"cannot rename {source} to {target}")

    def delete(self, path: str) -> None:
        file_system, target = self._file_system(path)
        file_system.delete(target, True)


class LocalFiles:
    """``Files`` on this machine's file system (paths without a scheme), through ``os``."""

    def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    def is_directory(self, path: str) -> bool:
        return os.path.isdir(path) and not os.path.islink(path)

    def rename(self, source: str, target: str) -> None:
        if os.path.lexists(target):  # os.rename would replace a file
            raise OSError(f"cannot rename {source} to {target}: it exists")
        os.rename(source, target)

    def delete(self, path: str) -> None:
        if self.is_directory(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)


def settle(files: Files, path: str) -> None:
    """Finish what an interrupted ``replace_whole`` of ``path`` left: an old output aside is
    renamed back when nothing is at ``path`` (the new one never took its place), else
    deleted. Nothing when none is aside. Cost: one ``exists``, two more calls when one is."""
    aside = aside_path(path)
    if not files.exists(aside):
        return
    if files.exists(path):
        files.delete(aside)
    else:
        files.rename(aside, path)


def replace_whole(files: Files, written: str, path: str) -> None:
    """Make ``written`` (a complete new output, beside ``path`` on its file system) the
    output ``path`` in the three steps of the module doc, ``path`` settled first (``settle``)
    and again when a step fails or is interrupted, before the failure goes on. OSError, and
    nothing changed, when ``path`` is a directory and ``written`` a file, or the other way
    round (an output replaces only its own kind, as ``os.replace`` does: ``Is a
    directory``, ``Not a directory``). Cost: four to eight calls to the file system."""
    settle(files, path)
    aside = aside_path(path)
    replacing = files.exists(path)
    if replacing and files.is_directory(path) != files.is_directory(written):
        number = errno.EISDIR if files.is_directory(path) else errno.ENOTDIR
        raise OSError(number, os.strerror(number), path)
    try:
        if replacing:
            files.rename(path, aside)
        files.rename(written, path)
        files.delete(aside)
    except BaseException:
        with suppress(Exception):  # the failure is the one to report; the next run settles
            settle(files, path)
        raise
