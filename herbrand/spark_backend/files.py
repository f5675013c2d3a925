"""``.input`` relations read by Spark, in Soufflé's layout, from any path Spark can reach
(local, ``hdfs://``, ``s3a://`` ...): the facts never pass through the driver (``outputs``
writes the ``.output`` relations).

Reading (``read_inputs``, ``read_relation``) follows the local reader's rules exactly (the
module doc of ``herbrand.framework.io``: Soufflé's ReadStreamCSV), with the same FactsError
messages: ``<facts_dir>/<filename>`` (default ``<relation>.facts``; ``.gz`` read through gzip)
split on ``\\n`` (a final ``\\n`` ends the last line; one trailing ``\\r`` dropped; blank lines
are rows), each line split on the delimiter into exactly ``arity`` fields, a symbol being its
bytes exactly and a number ``io.NUMBER_SYNTAX`` within int64; rows are distinct. A missing
path, a directory or an unreadable file is reported before or by the first job; a malformed
file reports its first malformed line in file order, with its line number.

How bytes stay exact: Spark's text source (``lineSep`` ``\\n``) gives each line's raw bytes as
a string column, and every function applied to it works on UTF8String bytes without ever making
a Java String (which would turn invalid UTF-8 into U+FFFD): ``endswith``, ``octet_length``,
``substring`` of the binary cast, ``replace``, ``substring_index``, ``try_cast`` (checked in
Spark's UTF8String source and by tests). ``split``, ``split_part`` and ``regexp_replace`` are
not byte-exact and are not used; ``rlike`` (on number fields only) only answers yes or no.
Three of Spark's habits are undone: a leading UTF-8 byte order mark, which Spark's line reader
strips, is put back; file names starting with ``_`` or ``.``, which Spark skips as hidden, are
read (the ``ignoredPathSegmentRegex`` option of Spark 4.3; an older Spark reads them as empty
files); glob characters in the path are escaped. Files with another compression suffix that Hadoop knows (``.bz2``, ``.deflate``,
``.zst``, ``.lz4``, ``.snappy``) are decompressed by Spark but read as they are locally.

Line numbers: Spark's text source has none, so they are computed only when a line is wrong.
``monotonically_increasing_id`` grows with the file offset (a file's splits are partitions in
offset order, each read in order), so the first malformed line is the one with the smallest id
and its number is one plus the count of lines with a smaller id.

Cost: reading an input is three calls from the driver to the file system (about 3 ms
locally) and one job that looks for a malformed line (``isEmpty``: Spark runs it on one
partition, then on more, up to every one when there is none); the frame itself is lazy. A
malformed file costs two more jobs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from functools import reduce
from operator import or_

from py4j.protocol import Py4JJavaError
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from herbrand.framework import io
from herbrand.framework.symbols import ENCODING
from herbrand.framework.syntax import SYMBOL, Program
from herbrand.spark_backend.expressions import column_name
from herbrand.spark_backend.frames import nullary_frame

_BOM = b"\xef\xbb\xbf"
_GLOB_CHARACTERS = re.compile(r"([\\*?\[\]{}])")
_NUMBER_PATTERN = rf"\A(?:{io.NUMBER_SYNTAX})\z"
_LINE, _ID, _COUNT = "value", "line_id", "field_count"
_GZIP_FAILURES = ("java.io.EOFException", "java.util.zip.ZipException")


def join_path(directory: str, filename: str) -> str:
    """``filename`` under ``directory`` (a local path or a URI); an absolute ``filename`` or a
    URI stays as it is."""
    if filename.startswith("/") or re.match(r"^[a-zA-Z][\w+.-]*://", filename):
        return filename
    return f"{str(directory).rstrip('/')}/{filename}"


# -- reading ------------------------------------------------------------------------------------


def _bytes_literal(data: bytes) -> Column:
    """A string literal holding ``data`` exactly (a binary literal cast to string: a raw copy)."""
    return F.lit(bytearray(data)).cast("string")


def _io_exception(session: SparkSession, error: Py4JJavaError) -> object | None:
    """The innermost java.io.IOException behind a failed Spark call, or None."""
    jvm = session.sparkContext._jvm
    kind = jvm.java.lang.Class.forName("java.io.IOException")
    throwable = getattr(error, "java_exception", None)
    found = None
    while throwable is not None:
        if kind.isInstance(throwable):
            found = throwable
        throwable = throwable.getCause()
    return found


@contextmanager
def _reading(session: SparkSession, path: str, name: str) -> Iterator[None]:
    """Turn a failure to read ``path`` (an IOException under a Spark call) into the FactsError
    ``cannot read``: ``io.INVALID_GZIP`` for a broken ``.gz``, else the exception's message."""
    try:
        yield
    except Py4JJavaError as error:
        cause = _io_exception(session, error)
        if cause is None:
            raise
        if path.endswith(".gz") and cause.getClass().getName() in _GZIP_FAILURES:
            reason = io.INVALID_GZIP
        else:
            reason = cause.getMessage() or cause.getClass().getName()
        raise io.unreadable_file_error(path, name, reason) from None


def _file_head(session: SparkSession, path: str, name: str, size: int = 4) -> bytes:
    """The first ``size`` bytes of the file at ``path``, decompressed as Spark decompresses it.
    FactsError when it is missing, a directory, or unreadable. Cost: three file-system calls
    from the driver."""
    jvm = session.sparkContext._jvm
    configuration = session.sparkContext._jsc.hadoopConfiguration()
    target = jvm.org.apache.hadoop.fs.Path(path)
    with _reading(session, path, name):
        filesystem = target.getFileSystem(configuration)
        if not filesystem.exists(target):
            raise io.missing_file_error(path, name)
        if filesystem.getFileStatus(target).isDirectory():
            raise io.unreadable_file_error(path, name, io.IS_A_DIRECTORY)
        stream = filesystem.open(target)
        codec = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(
            configuration).getCodec(target)
        if codec is not None:
            stream = codec.createInputStream(stream)
        try:
            return bytes(stream.readNBytes(size))
        finally:
            stream.close()


def _without_carriage_return(line: Column) -> Column:
    """``line`` without its one trailing ``\\r`` (a byte substring: no character decoding)."""
    shorter = F.substring(line.cast("binary"), 1, F.octet_length(line) - 1).cast("string")
    return F.when(line.endswith("\r"), shorter).otherwise(line)


def _lines(session: SparkSession, path: str, name: str) -> DataFrame:
    """The lines of the file at ``path`` in file order, each the raw bytes of a string column
    ``value`` without its line end (see the module doc); FactsError for a missing, directory
    or unreadable path."""
    head = _file_head(session, path, name)
    if head == _BOM:  # the file is one line holding a BOM, which Spark's reader would skip
        return session.range(1).select(_bytes_literal(_BOM).alias(_LINE))
    lines = (session.read.option("lineSep", "\n").option("ignoredPathSegmentRegex", "")
             .text(_GLOB_CHARACTERS.sub(r"\\\1", path)))
    line = F.col(_LINE)
    if head.startswith(_BOM):  # Spark strips it from the first line of the first split
        first = F.monotonically_increasing_id() == 0
        line = F.when(first, F.concat(_bytes_literal(_BOM), line)).otherwise(line)
    return lines.select(_without_carriage_return(line).alias(_LINE))


def _field_name(index: int) -> str:
    return f"field{index}"


def _fields(lines: DataFrame, arity: int, delimiter: str) -> DataFrame:
    """``lines`` with ``field_count`` (the delimiter's occurrences, left to right without
    overlap, plus one) and the raw fields ``field0..``; the fields are meaningless on a line
    with another count than ``arity``. A delimiter of several bytes is first replaced by
    ``\\n``, which no line holds, so that ``substring_index`` (which finds overlapping
    occurrences) only ever looks for one byte."""
    encoded = delimiter.encode(*ENCODING)
    line = F.col(_LINE)
    separator = delimiter if len(encoded) == 1 else "\n"
    if len(encoded) != 1:
        lines = lines.select(F.replace(line, _bytes_literal(encoded), F.lit("\n")).alias(_LINE))
    count = F.octet_length(line) - F.octet_length(F.replace(line, F.lit(separator), F.lit("")))
    fields = [F.substring_index(F.substring_index(line, separator, index + 1), separator, -1)
              for index in range(arity)]
    return lines.select((count + 1).alias(_COUNT),
                        *(field.alias(_field_name(i)) for i, field in enumerate(fields)))


def _is_number(field: Column) -> Column:
    """Whether ``field`` is a number (``io.parse_number``): its syntax, and within int64."""
    return field.rlike(_NUMBER_PATTERN) & field.try_cast("long").isNotNull()


def _raise_first_error(fields: DataFrame, path: str, name: str, types: tuple[str, ...],
                       delimiter: str) -> None:
    """The FactsError of the first malformed line of ``fields`` in file order, if any.

    One job that looks for a malformed line (``isEmpty``: it stops at the first one found) when
    every line is well formed; two more otherwise, to find the first malformed line (the least
    ``monotonically_increasing_id``) and count the lines before it (see the module doc)."""
    numbers = [i for i, type_ in enumerate(types) if type_ != SYMBOL]
    valid = [_is_number(F.col(_field_name(i))) for i in numbers]
    bad = reduce(or_, (~v for v in valid), F.col(_COUNT) != len(types))
    if fields.where(bad).isEmpty():
        return
    numbered = fields.select("*", F.monotonically_increasing_id().alias(_ID))
    raw = [F.col(_field_name(i)).cast("binary") for i in numbers]
    detail = F.struct(F.col(_ID), F.col(_COUNT),
                      *(F.struct(v, r) for v, r in zip(valid, raw, strict=True)))
    first = numbered.where(bad).agg(F.min(detail)).first()[0]
    line = numbered.where(F.col(_ID) < first[0]).count() + 1
    if first[1] != len(types):
        raise io.field_count_error(path, line, name, len(types), delimiter, first[1])
    column, field = next((i, raw) for i, (ok, raw) in zip(numbers, first[2:], strict=True)
                         if not ok)
    raise io.number_error(path, line, name, column + 1, bytes(field).decode(*ENCODING))


def read_relation(session: SparkSession, path: str, name: str, types: tuple[str, ...],
                  delimiter: str) -> DataFrame:
    """The distinct rows of one facts file as a frame typed by ``types`` (see the module doc).

    Raises FactsError for an invalid delimiter, a missing, directory or unreadable path, or the
    first malformed line. Cost: the file-system calls and the checking job of the module doc;
    the frame returned is lazy."""
    io.check_delimiter(path, name, delimiter)
    lines = _lines(session, path, name)
    with _reading(session, path, name):
        if not types:
            return nullary_frame(session, not lines.isEmpty())
        fields = _fields(lines, len(types), delimiter)
        _raise_first_error(fields, path, name, types, delimiter)
    values = [F.col(_field_name(i)) if type_ == SYMBOL else
              F.col(_field_name(i)).try_cast("long") for i, type_ in enumerate(types)]
    return fields.select(*(v.alias(column_name(i)) for i, v in enumerate(values))).distinct()


def read_inputs(session: SparkSession, program: Program, facts_dir: str) -> dict[str, DataFrame]:
    """Each ``.input`` relation of ``program`` read from ``facts_dir`` (see the module doc),
    several directives of one relation united."""
    frames: dict[str, DataFrame] = {}
    for directive in program.directives:
        if directive.kind != "input":
            continue
        _, filename, delimiter = io.io_parameters(directive, ".facts")
        name = directive.relation
        types = program.declaration_of[name].types
        frame = read_relation(session, join_path(facts_dir, filename), name, types, delimiter)
        frames[name] = frames[name].union(frame).distinct() if name in frames else frame
    return frames
