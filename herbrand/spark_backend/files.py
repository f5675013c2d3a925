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
and its number is the count of lines with an id up to its own.

Cost: reading an input is three calls from the driver to the file system (about 3 ms
locally) and one job, run without adaptive execution (which would make a job of each
exchange): it parses the lines, keeps the distinct rows in Spark's storage (memory, then
disk) with the id of each malformed line (one repeated value on a well-formed file, a few
bytes once run-length encoded), and returns their count and the least malformed id. A
malformed file costs one more job, which finds that line's number and fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import reduce
from operator import or_

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from herbrand.framework import io
from herbrand.framework.errors import FactsError
from herbrand.framework.symbols import ENCODING
from herbrand.framework.syntax import SYMBOL, Program
from herbrand.spark_backend.driver_strata import Driver
from herbrand.spark_backend.expressions import column_name
from herbrand.spark_backend.frames import nullary_frame
from herbrand.spark_backend.paths import join_path, path_failures
from herbrand.spark_backend.session import RunSession, sql_settings

_BOM = b"\xef\xbb\xbf"
_GLOB_CHARACTERS = re.compile(r"([\\*?\[\]{}])")
_NUMBER_PATTERN = rf"\A(?:{io.NUMBER_SYNTAX})\z"
_LINE, _ID, _COUNT = "value", "line_id", "field_count"
_WELL_FORMED = 2**63 - 1
"""The line id kept on a well-formed line: one value (stored run-length encoded, where nulls
cost four bytes a row), above every real id."""
_GZIP_FAILURES = ("java.io.EOFException", "java.util.zip.ZipException")
READ_SETTINGS = {"spark.sql.adaptive.enabled": "false"}
"""Session SQL settings of reading a file: adaptive execution would run the distinct's and the
count's exchanges as jobs of their own, and materialize the stored rows as another."""


@dataclass(frozen=True)
class StoredRelation:
    """A relation's distinct ``rows``, their ``count``, and the frame kept in Spark's storage for
    them (``stored``, of which ``rows`` is a view; ``release`` drops it)."""

    rows: DataFrame
    count: int
    stored: DataFrame

    def release(self) -> None:
        """Drop the stored blocks (nothing when ``stored`` was never persisted). O(1) calls."""
        self.stored.unpersist()


def stored(frame: DataFrame) -> StoredRelation:
    """``frame`` (distinct rows) persisted in memory and on disk, and counted: one job, which
    also stores it."""
    kept = frame.persist(StorageLevel.MEMORY_AND_DISK)
    return StoredRelation(kept, kept.count(), kept)


def united(relation: StoredRelation, frame: DataFrame) -> StoredRelation:
    """The distinct rows of ``relation`` and ``frame``, stored (``stored``: one job); then
    ``relation`` is released."""
    union = stored(relation.rows.union(frame).distinct())
    relation.release()
    return union


# -- reading ------------------------------------------------------------------------------------


def _bytes_literal(data: bytes) -> Column:
    """A string literal holding ``data`` exactly (a binary literal cast to string: a raw copy)."""
    return F.lit(bytearray(data)).cast("string")


def _reading(session: SparkSession, path: str, name: str):
    """Turn a failure to read ``path`` (``paths.path_failures``) into the FactsError ``cannot
    read``: ``io.INVALID_GZIP`` for a broken ``.gz``, else the exception's message."""

    def error_of(cause) -> FactsError:
        if path.endswith(".gz") and cause.getClass().getName() in _GZIP_FAILURES:
            return io.unreadable_file_error(path, name, io.INVALID_GZIP)
        return io.unreadable_file_error(path, name, cause.getMessage()
                                        or cause.getClass().getName())

    return path_failures(session, error_of)


def _file_head(session: SparkSession, path: str, name: str, size: int = 4) -> bytes:
    """The first ``size`` bytes of the file at ``path``, decompressed as Spark decompresses it.
    FactsError when it is missing, a directory, or unreadable. Cost: three file-system calls
    from the driver."""
    jvm = session.sparkContext._jvm
    configuration = session.sparkContext._jsc.hadoopConfiguration()
    with _reading(session, path, name):
        target = jvm.org.apache.hadoop.fs.Path(path)
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


def _malformed(types: tuple[str, ...]) -> Column:
    """Whether a line of ``_fields`` is malformed: another field count than ``types``, or a
    number column that is not a number."""
    numbers = (_is_number(F.col(_field_name(i))) for i, type_ in enumerate(types)
               if type_ != SYMBOL)
    return reduce(or_, (~valid for valid in numbers), F.col(_COUNT) != len(types))


def _raise_line_error(numbered: DataFrame, first: int, path: str, name: str,
                      types: tuple[str, ...], delimiter: str) -> None:
    """The FactsError of the malformed line of ``numbered`` (``_fields`` with their ids) whose
    id is ``first`` (the least of them). One job: the count of lines with an id up to ``first``
    (its line number) and that line's field count, validity of its number fields and their
    bytes."""
    numbers = [i for i, type_ in enumerate(types) if type_ != SYMBOL]
    detail = F.struct(F.col(_COUNT), *(
        F.struct(_is_number(F.col(_field_name(i))), F.col(_field_name(i)).cast("binary"))
        for i in numbers))
    line, found = numbered.where(F.col(_ID) <= first).agg(
        F.count(F.lit(1)), F.max(F.when(F.col(_ID) == first, detail))).first()
    if found[0] != len(types):
        raise io.field_count_error(path, line, name, len(types), delimiter, found[0])
    column, field = next((i, raw) for i, (ok, raw) in zip(numbers, found[1:], strict=True)
                         if not ok)
    raise io.number_error(path, line, name, column + 1, bytes(field).decode(*ENCODING))


def read_relation(session: SparkSession, path: str, name: str, types: tuple[str, ...],
                  delimiter: str) -> StoredRelation:
    """The distinct rows of one facts file as a frame typed by ``types``, stored, and their
    count (see the module doc).

    Raises FactsError for an invalid delimiter, a missing, directory or unreadable path, or the
    first malformed line (nothing stays stored then). Cost: the file-system calls and the one
    job of the module doc; a nullary relation's is a job that looks for a line (``isEmpty``)."""
    io.check_delimiter(path, name, delimiter)
    lines = _lines(session, path, name)
    with _reading(session, path, name), sql_settings(session, READ_SETTINGS):
        if not types:
            present = not lines.isEmpty()
            frame = nullary_frame(session, present)
            return StoredRelation(frame, int(present), frame)
        # every line's id, then kept on the malformed ones only, _WELL_FORMED on the others
        # (an id computed under a condition counts only the lines that meet it)
        numbered = _fields(lines, len(types), delimiter).select(
            "*", F.monotonically_increasing_id().alias(_ID))
        values = [F.col(_field_name(i)) if type_ == SYMBOL else
                  F.col(_field_name(i)).try_cast("long") for i, type_ in enumerate(types)]
        malformed = F.when(_malformed(types), F.col(_ID)).otherwise(F.lit(_WELL_FORMED))
        tagged = numbered.select(*(v.alias(column_name(i)) for i, v in enumerate(values)),
                                 malformed.alias(_ID)).distinct()
        kept = tagged.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            count, first = kept.agg(F.count(F.lit(1)), F.min(_ID)).first()
            if first not in (None, _WELL_FORMED):  # None: a file without lines
                _raise_line_error(numbered, first, path, name, types, delimiter)
        except BaseException:
            kept.unpersist()
            raise
    return StoredRelation(kept.drop(_ID), count, kept)


def read_inputs(spark: RunSession, program: Program, facts_dir: str,
                driver: Driver | None = None) -> dict[str, StoredRelation]:
    """Each ``.input`` relation of ``program`` read from ``facts_dir`` and stored (see the module
    doc), several directives of one relation united (``united``: a job more); with a
    ``driver``, the files it reads (``Driver.reads``: small, local) are read there by the local
    reader, and a relation read in both places is united here (its driver's rows a frame).
    The run's session (``spark``) is started by the first file Spark reads. Raises as
    ``read_relation`` (or the local reader), with nothing left stored."""
    relations: dict[str, StoredRelation] = {}
    try:
        for directive in program.directives:
            if directive.kind != "input":
                continue
            _, filename, delimiter = io.io_parameters(directive, ".facts")
            name = directive.relation
            types = program.declaration_of[name].types
            path = join_path(facts_dir, filename)
            if driver is not None and driver.reads(path):
                driver.read(path, name, delimiter)
                continue
            read = read_relation(spark.get(), path, name, types, delimiter)
            if name not in relations:
                relations[name] = read
                continue
            try:
                relations[name] = united(relations[name], read.rows)
            finally:
                read.release()
        for name in relations:
            if driver is not None and driver.holds(name):
                relations[name] = united(relations[name], driver.frame(name))
                del driver.relations[name]
    except BaseException:
        for relation in relations.values():
            relation.release()
        raise
    return relations
