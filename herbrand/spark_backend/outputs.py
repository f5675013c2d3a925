"""``.output`` relations written by Spark, in Soufflé's layout, to any path Spark can reach
(local, ``hdfs://``, ``s3a://`` ...): the rows never pass through the driver.

``csv`` writes ``<out_dir>/<filename>`` (default ``<relation>.csv``) as one file, as the local
backend does: rows sorted by column (numbers numerically, symbols by bytes, which is the order
of code points for UTF-8, and the local writer's order for bytes that are not UTF-8 too;
``()`` for a true nullary relation). A relation of at most ``ROWS_PER_WRITE_TASK`` rows is
sorted and written by one task; a larger one is range-partitioned on its columns into
``write_parts`` parts (a sampling job, then a shuffle), each sorted and written by its own
task in parallel, and the part files, whose order is the sort order, are concatenated in
partition order into the file through the Hadoop FileSystem of the path (one sequential copy
of the bytes in the driver's JVM; a single part file is renamed instead). The lines of a
relation of numbers only are written by Spark's CSV writer (a long's digits and the delimiter:
the same bytes; about a quarter less time than formatting strings for the text writer,
measured on 13.1M rows of TC), unless the delimiter holds a character the CSV writer would
quote (``_CSV_QUOTED``); the others, whose symbols must keep their exact bytes (the CSV writer
goes through Java strings), by the text writer. A gzipped file name (``csv_writer.gzipped``:
``r.csv.gz``) has each task gzip its part (Spark's ``gzip`` compression); the parts, gzip
members, join into one gzip file of the local backend's bytes (no part:
``csv_writer.EMPTY_GZIP``).

``parquet`` writes the Spark directory ``paths.parquet_path`` (columns c0..c{k-1}): the
directive's file name with its extension replaced, ``<out_dir>/<relation>.parquet`` by default;
Parquet has no table without columns, so a nullary relation is written as its CSV file.

Every output is written into a directory beside it (``part_files.parts_directory``:
``<output>.parts``) and takes its place, whole, by a rename at the end: a write that fails
or is interrupted removes that directory (``leftovers``) and leaves the output as it was; the
local writer's files (a relation held on the driver, a task's part file) are whole or absent
too (``whole_outputs.whole_file``), and the folders a failed write made for its output are
removed again (``_written``). The renamed output replaces the old one whole
(``replaced_outputs``: the old one moved aside, the new one renamed in, the old one deleted;
a write first puts back an old output an interrupted replacement left aside).
``-`` as ``out_dir`` (CSV only: ``paths.check_paths``) or ``IO=stdout`` prints the relation in
Soufflé's banner layout (rows are collected to the driver as bytes, decoded as the local
backend decodes them: UTF-8 with ``surrogateescape``); ``.printsize`` prints
``relation<TAB>count``. A path the file system refuses is an OutputError naming the directive
(``_writing``), never Java's trace.

A frame that is in sort order already, partition after partition (``ordered``: a decomposed
stratum's, ``decomposed.ordered_by_pivot``), is written as it is, a task per partition. When
that stratum's job is left to the write (``written_once``) and the file and the executors are
on this machine (``part_files.task_written_path``), its tasks write their rows themselves with
herbrand's local writer and the driver joins their part files (``part_files``): the rows
never reach the JVM.

Cost: one job per output of at most ``ROWS_PER_WRITE_TASK`` rows or in order already; two (the
range sample, the sort and write) for a larger one; and the concatenation of its part files;
then a rename (a directory's too, for Parquet: on an object store such as S3, a copy).
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from herbrand.framework import io
from herbrand.framework.analysis import Stratum, rule_literals
from herbrand.framework.csv_writer import EMPTY_GZIP, gzipped
from herbrand.framework.errors import FactsError, OutputError
from herbrand.framework.storage import Database
from herbrand.framework.symbols import ENCODING
from herbrand.framework.syntax import SYMBOL, Directive, Program
from herbrand.framework.whole_outputs import MadeFolders, made_folders
from herbrand.spark_backend.decomposed import Decomposition
from herbrand.spark_backend.driver_strata import Driver, local_path
from herbrand.spark_backend.frames import frame_types
from herbrand.spark_backend.hadoop_folders import HadoopFolders
from herbrand.spark_backend.leftovers import (
    removed_on_failure,
    removing_directory,
    removing_path,
)
from herbrand.spark_backend.part_files import (
    join_parts,
    part_file,
    parts_directory,
    task_written_path,
)
from herbrand.spark_backend.paths import join_path, local_file, parquet_path, path_failures
from herbrand.spark_backend.replaced_outputs import (
    HadoopFiles,
    LocalFiles,
    replace_whole,
    settle,
)
from herbrand.spark_backend.session import RunSession

OUTPUT_FORMATS = ("csv", "parquet")
ROWS_PER_WRITE_TASK = 1_000_000
"""Rows of an output up to which one task sorts and writes it; above, a task per this many
rows (at most the session's shuffle partitions) writes a range of it in parallel."""
_CSV_QUOTED = frozenset('0123456789-"\\\r\n')
"""Characters of a delimiter that would make Spark's CSV writer quote a number field."""
_SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
_COPY_BUFFER = 1 << 20


def write_parts(rows: int | None, most: int) -> int:
    """The parts an output of ``rows`` rows (None: unknown, written as one) is written in:
    ceil(rows / ROWS_PER_WRITE_TASK), within [1, max(1, most)]. O(1).

    >>> write_parts(1275, 4), write_parts(13_148_244, 4), write_parts(None, 4)
    (1, 4, 1)
    """
    if rows is None:
        return 1
    return max(1, min(most, -(-rows // ROWS_PER_WRITE_TASK)))


def _sorted_rows(frame: DataFrame, parts: int) -> DataFrame:
    """The relation's rows sorted by column in ``parts`` partitions, partition i holding rows
    all before partition i + 1's (one: coalesced, no shuffle; more: range-partitioned; 0: the
    frame is in that order already, as it is)."""
    if parts == 0:
        return frame
    if parts == 1:
        return frame.coalesce(1).sortWithinPartitions(*frame.columns)
    return frame.repartitionByRange(parts, *frame.columns).sortWithinPartitions(*frame.columns)


def _sorted_lines(frame: DataFrame, delimiter: str, parts: int = 1) -> DataFrame:
    """The relation's lines in a ``value`` column, sorted as ``_sorted_rows``."""
    if not frame.columns:
        return frame.limit(1).coalesce(1).select(F.lit("()").alias("value"))
    text = F.concat_ws(delimiter, *(F.col(c).cast("string") for c in frame.columns))
    return _sorted_rows(frame, parts).select(text.alias("value"))


def _written_by_csv(frame: DataFrame, delimiter: str) -> bool:
    """Whether Spark's CSV writer writes ``frame``'s lines with exactly the text writer's
    bytes: every column a number, no character of the delimiter quoted (``_CSV_QUOTED``)."""
    return (bool(frame.columns) and not set(delimiter) & _CSV_QUOTED
            and all(type_ != SYMBOL for type_ in frame_types(frame)))


def _write_lines(frame: DataFrame, delimiter: str, parts: int, directory: str,
                 compressed: bool) -> None:
    """Write ``frame``'s lines, sorted (``_sorted_rows``), as part files in ``directory``,
    each gzipped when ``compressed``."""
    compression = "gzip" if compressed else "none"
    if _written_by_csv(frame, delimiter):
        _sorted_rows(frame, parts).write.mode("overwrite").option("sep", delimiter).option(
            "compression", compression).csv(directory)
    else:
        _sorted_lines(frame, delimiter, parts).write.mode("overwrite").option(
            "lineSep", "\n").option("compression", compression).text(directory)


def _write_single_file(session: SparkSession, frame: DataFrame, delimiter: str, parts: int,
                       path: str) -> None:
    """Write ``frame``'s lines (``_write_lines``) as the file ``path``, gzipped when
    ``gzipped(path)``, through the directory ``parts_directory(path)``: its part files, in
    partition order, are joined there (one is taken as it is), and the result replaces
    ``path`` whole (``replaced_outputs``); on failure the directory is removed and ``path``
    stays as it was (``leftovers``)."""
    jvm = session.sparkContext._jvm
    hadoop = jvm.org.apache.hadoop.fs
    directory = parts_directory(path)
    compressed = gzipped(path)
    with removed_on_failure(session, removing_path(session, directory)):
        _write_lines(frame, delimiter, parts, directory, compressed)
        target = hadoop.Path(path)
        filesystem = target.getFileSystem(session.sparkContext._jsc.hadoopConfiguration())
        written = sorted((status.getPath() for status in filesystem.listStatus(
            hadoop.Path(directory)) if status.getPath().getName().startswith("part-")),
            key=lambda part: part.getName())  # part-00000-...: the partition's number
        joined = written[0] if len(written) == 1 else hadoop.Path(directory, "joined")
        if len(written) != 1:
            output = filesystem.create(joined, True)
            try:
                if not written and compressed:
                    output.write(bytearray(EMPTY_GZIP))
                for part in written:
                    source = filesystem.open(part)
                    try:
                        jvm.org.apache.hadoop.io.IOUtils.copyBytes(source, output,
                                                                   _COPY_BUFFER, False)
                    finally:
                        source.close()
            finally:
                output.close()
        replace_whole(HadoopFiles(session), joined.toString(), path)
        filesystem.delete(hadoop.Path(directory), True)
    # a checksummed file system (the local one) keeps a ".<name>.crc" beside the file
    checksum = hadoop.Path(target.getParent(), f".{target.getName()}.crc")
    if filesystem.exists(checksum):
        filesystem.delete(checksum, False)


def _write_parquet(session: SparkSession, frame: DataFrame, path: str) -> None:
    """Write ``frame`` as the Parquet directory ``path``, through the directory
    ``parts_directory(path)``, which then replaces ``path`` whole (``replaced_outputs``); on
    failure it is removed and ``path`` stays as it was (``leftovers``)."""
    directory = parts_directory(path)
    with removed_on_failure(session, removing_path(session, directory)):
        frame.write.mode("overwrite").parquet(directory)
        replace_whole(HadoopFiles(session), directory, path)


def _writing(session: SparkSession, directive: Directive, path: str):
    """Turn a failure to write ``path`` (``paths.path_failures``) into an OutputError naming
    ``directive``, the path and Java's reason."""

    def error_of(cause) -> OutputError:
        reason = (cause.getMessage() or cause.getClass().getName()).splitlines()[0]
        return OutputError(f"{io.directive_place(directive)}: cannot write {path}: {reason}")

    return path_failures(session, error_of)


def written_once(program: Program, strata: Sequence[Stratum], out_dir: str) -> frozenset[str]:
    """The relations each of which is, of its whole stratum, the one thing read after the
    stratum: by one ``.output`` directive to a file (not stdout), while no other directive
    and no rule of another stratum reads any relation of the stratum. O(rules + directives).
    """
    reads: Counter[str] = Counter()
    for stratum in strata:
        reads.update(literal.atom.relation for rule in stratum.rules
                     for literal, _ in rule_literals(rule)
                     if literal.atom.relation not in stratum.relations)
    files: Counter[str] = Counter()
    for directive in program.directives:
        if directive.kind in ("output", "printsize"):
            reads[directive.relation] += 1
        if directive.kind == "output" and str(out_dir) != "-" and io.io_parameters(
                directive, ".csv")[0] != "stdout":
            files[directive.relation] += 1
    once = set()
    for stratum in strata:
        read = [name for name in stratum.relations if reads[name]]
        if len(read) == 1 and reads[read[0]] == files[read[0]] == 1:
            once.add(read[0])
    return frozenset(once)


def write_outputs(spark: RunSession, program: Program, frames: dict[str, DataFrame],
                  out_dir: str, output_format: str = "csv", stdout: TextIO | None = None,
                  counts: Mapping[str, int] | None = None, ordered: Collection[str] = (),
                  jobs: Mapping[str, Decomposition] | None = None,
                  driver: Driver | None = None) -> None:
    """Carry out ``program``'s ``.output`` and ``.printsize`` directives over ``frames``, in
    program order (see the module doc); ``counts`` (name -> rows, where known) chooses how many
    tasks write a CSV file, the frames of ``ordered`` are in sort order already, and the
    relations of ``jobs`` (name -> the decomposed job computing it, whose one use is this
    write) are written as CSV by that job's tasks when ``part_files`` allows. A relation
    ``driver`` holds is written by the local writer (``_write_on_driver``) unless it goes to
    Parquet or to a path with a scheme, which take its frame (the run's session, ``spark``,
    started for it if it is not yet). Raises FactsError for an unsupported IO= or format."""
    if output_format not in OUTPUT_FORMATS:
        raise FactsError(f"unsupported output format {output_format!r} "
                         f"(supported: {', '.join(OUTPUT_FORMATS)})")
    stdout = sys.stdout if stdout is None else stdout
    counts, jobs = counts or {}, jobs or {}
    for directive in program.directives:
        name = directive.relation
        if directive.kind in ("output", "printsize") and driver is not None and driver.holds(
                name):
            if _write_on_driver(program, directive, driver, out_dir, output_format, stdout):
                continue
            frames.setdefault(name, driver.frame(name))
        if directive.kind == "printsize":
            stdout.write(f"{name}\t{frames[name].count()}\n")
            continue
        if directive.kind != "output":
            continue
        kind, filename, delimiter = io.io_parameters(directive, ".csv")
        if kind == "stdout" or str(out_dir) == "-":
            lines = _sorted_lines(frames[name], delimiter).select(F.col("value").cast("binary"))
            io.write_stdout(name, [str(row[0], *ENCODING) for row in lines.collect()], stdout)
        elif output_format == "parquet" and frames[name].columns:
            path = parquet_path(out_dir, filename)
            with _written(spark.get(), directive, path):
                _write_parquet(spark.get(), frames[name], path)
        else:
            path = join_path(out_dir, filename)
            session = spark.get()
            local = (task_written_path(path, session.sparkContext.master) if name in jobs
                     else None)
            with _written(session, directive, path):
                if local is not None:
                    part = part_file(local, delimiter)
                    with removed_on_failure(session, removing_directory(part.directory)):
                        jobs[name].write_parts(name, part)
                        join_parts(local)
                else:
                    most = int(session.conf.get(_SHUFFLE_PARTITIONS))
                    parts = 0 if name in ordered else write_parts(counts.get(name), most)
                    _write_single_file(session, frames[name], delimiter, parts, path)


def _write_on_driver(program: Program, directive: Directive, driver: Driver, out_dir: str,
                     output_format: str, stdout: TextIO) -> bool:
    """Carry out ``directive`` (of a relation ``driver`` holds) with the local writer
    (``io.write_outputs``: the local backend's bytes), unless it writes Parquet (not to
    stdout) or to a path with a scheme: whether it did. OSError writing a file as an
    OutputError naming the directive and the path."""
    name = directive.relation
    database = Database({name: driver.relations[name]}, driver.symbols,
                        {name: program.declaration_of[name].types})
    single = Program(declarations=(program.declaration_of[name],), directives=(directive,))
    kind, filename, _ = (io.io_parameters(directive, ".csv") if directive.kind == "output"
                         else ("stdout", "", ""))
    if kind == "stdout" or str(out_dir) == "-":
        io.write_outputs(single, database, out_dir, stdout)
        return True
    path = join_path(out_dir, filename)
    if output_format == "parquet" or not local_path(path):
        return False
    with _local_failures(directive, path):
        settle(LocalFiles(), path)
        io.write_outputs(single, database, out_dir, stdout)
    return True


@contextmanager
def _written(session: SparkSession, directive: Directive, path: str) -> Iterator[None]:
    """The write of ``directive``'s output ``path`` inside, after what an interrupted
    replacement of ``path`` left is settled (``replaced_outputs.settle``: an old output
    moved aside and not replaced is put back), its folder made first and removed again,
    with the folders above it that it made, when the write fails
    (``whole_outputs.made_folders``; on another file system than this machine's,
    ``paths.local_file``, through Hadoop: ``hadoop_folders``); a failure as an OutputError
    naming the directive (``_writing``, ``_local_failures``)."""
    local = local_file(path)
    folders = MadeFolders() if local is not None else HadoopFolders(session)
    with (_writing(session, directive, path), _local_failures(directive, path),
          made_folders(folders)):
        settle(HadoopFiles(session), path)
        if isinstance(folders, MadeFolders):
            folders.make(Path(local).parent)
        else:
            folders.make_parent(path)
        yield


@contextmanager
def _local_failures(directive: Directive, path: str) -> Iterator[None]:
    """An OSError inside (writing ``path`` on the local file system) as an OutputError naming
    ``directive``, the path and the reason."""
    try:
        yield
    except OSError as error:
        raise OutputError(f"{io.directive_place(directive)}: cannot write {path}: "
                          f"{error.strerror or error}") from None
