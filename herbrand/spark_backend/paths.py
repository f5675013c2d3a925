"""The paths Spark reads ``.input`` files from and writes ``.output`` relations to, checked
before anything runs, and Java's path failures as one line.

``join_path`` puts a directive's file name under ``-F``/``-D`` as the local backend does
(``pathlib``: a trailing ``/`` dropped), so both backends name the same file; ``local_file``
is such a path's place on this machine's file system, when it has one. With
``output_format="parquet"`` an ``.output`` relation is the Parquet directory ``parquet_path``:
the directive's file name (default ``<relation>.csv``) with ``.gz`` and then its one extension
replaced by ``.parquet`` (``sub/r.csv.gz`` -> ``sub/r.parquet``); ``delimiter=`` does not
apply. ``parquet_notes`` are the one-line notes (``FilesRun.notes``) naming each directive that
gave a ``filename=`` or ``delimiter=`` and where its relation was written instead.

``check_paths`` refuses, in one line naming the directive, what Spark could not do as the
local backend does, before the session starts:

- a file name holding ``:`` (``a:b.csv``; a ``:`` in a folder, ``a:b/r.csv``, is fine): Hadoop's
  local file system cannot make the checksum file ``.a:b.csv.crc`` of such a file (it reads
  the name as a URI with the scheme ``.a``), so reading or writing it fails half-way; HDFS
  refuses ``:`` everywhere;
- an input named ``.<name>.crc``: Hadoop's local file system takes it for a checksum file and
  lists nothing, so the relation would be read empty;
- Parquet to stdout (``-``: every output would be printed as text instead), and two relations
  whose Parquet directories are the same (``r.csv`` and ``r.tsv``).

What Hadoop refuses beyond these (a file system's own rules: HDFS's names, S3's keys) surfaces
while reading or writing; ``java_failure`` finds the Java exception to report it by.
Cost: O(directives), no file-system call.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import PurePosixPath

from py4j.protocol import Py4JJavaError
from pyspark.errors.exceptions.captured import CapturedException

from herbrand.framework import io
from herbrand.framework.errors import FactsError, HerbrandError, OutputError, UsageError, quoted
from herbrand.framework.syntax import Directive, Program

PATH_FAILURES = ("java.io.IOException", "java.lang.IllegalArgumentException")
"""Java exceptions that mean a path could not be read or written (not a failed job)."""
_URI = re.compile(r"^[a-zA-Z][\w+.-]*://")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")


def join_path(directory: str, filename: str) -> str:
    """``filename`` under ``directory`` (a local path or a URI), normalized as pathlib (the
    local backend) does: ``//``, ``/./`` and a trailing ``/`` dropped; an absolute ``filename``
    or a URI stays as it is.

    >>> join_path("out/", "sub/r.csv"), join_path("out", "/tmp/r.csv"), join_path("o", "a//./b/")
    ('out/sub/r.csv', '/tmp/r.csv', 'o/a/b')
    """
    if _URI.match(filename):
        return filename
    name = str(PurePosixPath(filename)) if filename else filename
    if name.startswith("/"):
        return name
    return f"{str(directory).rstrip('/')}/{name}"


def local_file(path: str) -> str | None:
    """The absolute path, on this machine's file system, of ``path`` as Spark takes it: a
    path without a scheme (a relative one is the working directory's) or a ``file:`` URI
    (of no host or ``localhost``); None for any other scheme or host. Pure (no file system
    access).

    >>> local_file("file:///data/out/tc.csv"), local_file("file://localhost/tc.csv")
    ('/data/out/tc.csv', '/tc.csv')
    >>> local_file("hdfs://name/out/tc.csv"), local_file("file://host/tc.csv")
    (None, None)
    """
    scheme = _SCHEME.match(path)
    if scheme is not None:
        if scheme.group(1).lower() != "file":
            return None
        path = path[scheme.end():]
        if path.startswith("//"):
            host, slash, rest = path[2:].partition("/")
            if host not in ("", "localhost"):
                return None
            path = slash + rest
    return os.path.abspath(path)


def parquet_path(directory: str, filename: str) -> str:
    """The Parquet directory of an ``.output`` to ``filename`` under ``directory``: its last
    name without ``.gz`` and then its one extension, plus ``.parquet`` (``join_path``).

    >>> parquet_path("out", "r.csv"), parquet_path("out", "sub/r.csv.gz"), parquet_path("o", ".r")
    ('out/r.parquet', 'out/sub/r.parquet', 'o/.r.parquet')
    """
    folder, slash, name = join_path(directory, filename).rpartition("/")
    name = name.removesuffix(".gz")
    stem, dot, _ = name.rpartition(".")
    return f"{folder}{slash}{stem if dot and stem else name}.parquet"


def _file_directives(program: Program) -> list[tuple[Directive, str]]:
    """Each ``.input`` and ``IO=file`` ``.output`` directive with its file name."""
    found = []
    for directive in program.directives:
        if directive.kind in ("input", "output"):
            extension = ".facts" if directive.kind == "input" else ".csv"
            kind, filename, _ = io.io_parameters(directive, extension)
            if kind == "file":
                found.append((directive, filename))
    return found


def _name_problem(directive: Directive, filename: str) -> str | None:
    """Why Spark cannot read or write ``filename`` of ``directive`` as locally, or None."""
    if _URI.match(filename):
        return None
    name = PurePosixPath(filename).name
    if ":" in name:
        return ("a file name holding ':' cannot be read or written through Hadoop's file "
                "systems (Spark's); rename the file, or run on the local backend")
    if directive.kind == "input" and name.startswith(".") and name.endswith(".crc"):
        return ("Hadoop's local file system takes a file named .<name>.crc for a checksum "
                "file and skips it; rename the file, or run on the local backend")
    return None


def check_paths(program: Program, out_dir: str, output_format: str) -> None:
    """Refuse what the module doc lists: FactsError (an input) or OutputError (an output)
    naming the directive, its file name and why; UsageError for Parquet to stdout."""
    if output_format == "parquet" and str(out_dir) == "-":
        raise UsageError("parquet outputs need an output directory, not - (which prints "
                         "every output to stdout as text)")
    written: dict[str, Directive] = {}
    for directive, filename in _file_directives(program):
        problem = _name_problem(directive, filename)
        if problem is not None:
            error = FactsError if directive.kind == "input" else OutputError
            raise error(f"{io.directive_place(directive)}: filename {quoted(filename)}: "
                        f"{problem}")
        if directive.kind != "output" or output_format != "parquet" or str(out_dir) == "-":
            continue
        path = parquet_path(out_dir, filename)
        other = written.setdefault(path, directive)
        if other.relation != directive.relation:
            raise OutputError(f"{io.directive_place(directive)}: the Parquet directory {path} "
                              f"is also relation {other.relation}'s ({other.location})")


def parquet_notes(program: Program, out_dir: str) -> tuple[str, ...]:
    """A line for each ``.output`` directive to a file that gives ``filename=`` or
    ``delimiter=``, saying where its relation was written as Parquet instead."""
    return tuple(f"{_written(directive)}: written as Parquet to {parquet_path(out_dir, filename)}"
                 for directive, filename in _file_directives(program)
                 if directive.kind == "output" and (directive.param("filename") is not None
                                                    or directive.param("delimiter") is not None))


def _written(directive: Directive) -> str:
    """The directive as written, after its place (file:line:col) when known."""
    return str(directive) if directive.location is None else f"{directive.location}: {directive}"


def java_failure(error: BaseException, session, kinds: tuple[str, ...] = PATH_FAILURES):
    """The innermost Java exception of one of ``kinds`` (class names) behind ``error`` (a
    Py4J error, or PySpark's exception made of one), or None. O(the cause chain)."""
    throwable = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    if throwable is None:
        return None
    jvm = session.sparkContext._jvm
    classes = [jvm.java.lang.Class.forName(kind) for kind in kinds]
    found = None
    while throwable is not None:
        if any(cls.isInstance(throwable) for cls in classes):
            found = throwable
        throwable = throwable.getCause()
    return found


@contextmanager
def path_failures(session, error_of: Callable[[object], HerbrandError]) -> Iterator[None]:
    """Turn a failure under a Spark call whose cause is a Java exception of ``PATH_FAILURES``
    (``java_failure``) into ``error_of(cause)``, one line; any other failure passes."""
    try:
        yield
    except (Py4JJavaError, CapturedException) as error:
        cause = java_failure(error, session)
        if cause is None:
            raise
        raise error_of(cause) from None
