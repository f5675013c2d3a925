"""``.input`` relations read by Spark and ``.output`` relations written by Spark, in Soufflé's
layouts, from and to any path Spark can reach (local, ``hdfs://``, ``s3a://`` ...): the facts
never pass through the driver.

Reading (``read_inputs``): each line of ``<facts_dir>/<filename>`` (default
``<relation>.facts``; ``.gz`` is read compressed) is split on the directive's delimiter
(default tab) into exactly the declared number of fields, taken as raw text (no quoting, no
trimming) for a symbol and as a decimal (surrounding blanks allowed) or ``0x`` hex number for a
number. Empty lines are skipped; a nullary relation is true when the file has a non-empty
line. A missing file or a malformed line raises FactsError naming the file, the relation and
the offending line's text (Spark does not number lines).

Writing (``write_outputs``): ``csv`` writes ``<out_dir>/<filename>`` (default
``<relation>.csv``) as one file exactly as the local backend does (rows sorted by column,
numbers numerically, symbols by code point; ``()`` for a true nullary relation): Spark sorts
and writes one part file, which is then renamed through the Hadoop FileSystem of the path.
``parquet`` writes the Spark directory ``<out_dir>/<relation>.parquet`` (columns c0..c{k-1});
Parquet has no table without columns, so a nullary relation is written as its CSV file.
``-`` as ``out_dir`` or ``IO=stdout`` prints the relation in Soufflé's banner layout (rows are
collected to the driver); ``.printsize`` prints ``relation<TAB>count``.

Cost: one job per input to read and check it, one job per output to sort and write it.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from herbrand.framework import io
from herbrand.framework.errors import FactsError
from herbrand.framework.syntax import SYMBOL, Program
from herbrand.spark_backend.expressions import column_name
from herbrand.spark_backend.frames import nullary_frame

OUTPUT_FORMATS = ("csv", "parquet")
_FIELDS = "fields"


def join_path(directory: str, filename: str) -> str:
    """``filename`` under ``directory`` (a local path or a URI); an absolute ``filename`` or a
    URI stays as it is."""
    if filename.startswith("/") or re.match(r"^[a-zA-Z][\w+.-]*://", filename):
        return filename
    return f"{str(directory).rstrip('/')}/{filename}"


def _number(field: Column) -> Column:
    """A number field as a long; NULL when it is not a decimal or ``0x`` hex number."""
    text = F.trim(field)
    hexadecimal = F.lower(text).startswith("0x")
    return F.when(hexadecimal, F.conv(F.substring(text, 3, 64), 16, 10).cast("long")).otherwise(
        text.cast("long"))


def read_relation(session: SparkSession, path: str, name: str, types: tuple[str, ...],
                  delimiter: str) -> DataFrame:
    """The distinct rows of one facts file as a frame typed by ``types``; FactsError for a
    missing file or the first malformed line."""
    if not delimiter or "\n" in delimiter:
        raise FactsError(f"{path}: relation {name}: invalid delimiter {delimiter!r}")
    try:
        lines = session.read.text(path)
    except AnalysisException:
        raise FactsError(f"{path}: cannot open facts file of relation {name}: no such file") \
            from None
    lines = lines.select(F.regexp_replace("value", "\r$", "").alias("value")).filter(
        F.col("value") != "")
    if not types:
        return nullary_frame(session, lines.limit(1).count() > 0)
    fields = lines.select("value", F.split("value", re.escape(delimiter), -1).alias(_FIELDS))
    values = [F.col(_FIELDS)[i] if type_ == SYMBOL else _number(F.col(_FIELDS)[i])
              for i, type_ in enumerate(types)]
    parsed = fields.select("value", F.size(_FIELDS).alias("count"),
                           *(v.alias(column_name(i)) for i, v in enumerate(values)))
    bad = parsed.filter((F.col("count") != len(types)) | F.greatest(*(
        F.col(column_name(i)).isNull() for i in range(len(types)))))
    first_bad = bad.select("value").limit(1).collect()
    if first_bad:
        raise FactsError(f"{path}: relation {name}: malformed line {first_bad[0][0]!r}: expected "
                         f"{len(types)} fields ({', '.join(types)}) separated by {delimiter!r}")
    columns = parsed.select(*(column_name(i) for i in range(len(types))))
    return columns.distinct()


def read_inputs(session: SparkSession, program: Program, facts_dir: str) -> dict[str, DataFrame]:
    """Each ``.input`` relation of ``program`` read from ``facts_dir`` (see the module doc),
    several directives of one relation united."""
    frames: dict[str, DataFrame] = {}
    for directive in program.directives:
        if directive.kind != "input":
            continue
        kind, filename, delimiter = io.io_parameters(directive, ".facts")
        if kind != "file":
            raise FactsError(
                f"{io.directive_place(directive)}: unsupported IO={kind} (only IO=file)")
        name = directive.relation
        types = program.declaration_of[name].types
        frame = read_relation(session, join_path(facts_dir, filename), name, types, delimiter)
        frames[name] = frames[name].union(frame).distinct() if name in frames else frame
    return frames


def _sorted_lines(frame: DataFrame, delimiter: str) -> DataFrame:
    """One partition of the relation's lines, sorted by column, in a ``value`` column."""
    if not frame.columns:
        return frame.limit(1).select(F.lit("()").alias("value"))
    text = F.concat_ws(delimiter, *(F.col(c).cast("string") for c in frame.columns))
    return frame.coalesce(1).sortWithinPartitions(*frame.columns).select(text.alias("value"))


def _write_single_file(session: SparkSession, lines: DataFrame, path: str) -> None:
    """Write ``lines`` (one partition) as the text file ``path``, through a temporary
    directory ``path + ".parts"`` whose one part file is renamed to ``path``."""
    jvm = session.sparkContext._jvm
    hadoop = jvm.org.apache.hadoop.fs
    parts = path + ".parts"
    lines.write.mode("overwrite").option("lineSep", "\n").text(parts)
    target = hadoop.Path(path)
    filesystem = target.getFileSystem(session.sparkContext._jsc.hadoopConfiguration())
    if filesystem.exists(target):
        filesystem.delete(target, False)
    written = [status.getPath() for status in filesystem.listStatus(hadoop.Path(parts))
               if status.getPath().getName().startswith("part-")]
    if written:
        filesystem.rename(written[0], target)
    else:
        filesystem.create(target).close()
    filesystem.delete(hadoop.Path(parts), True)
    # a checksummed file system (the local one) keeps a ".<name>.crc" beside the file
    checksum = hadoop.Path(target.getParent(), f".{target.getName()}.crc")
    if filesystem.exists(checksum):
        filesystem.delete(checksum, False)


def write_outputs(session: SparkSession, program: Program, frames: dict[str, DataFrame],
                  out_dir: str, output_format: str = "csv", stdout: TextIO | None = None) -> None:
    """Carry out ``program``'s ``.output`` and ``.printsize`` directives over ``frames``, in
    program order (see the module doc). Raises FactsError for an unsupported IO= or format."""
    if output_format not in OUTPUT_FORMATS:
        raise FactsError(f"unsupported output format {output_format!r} "
                         f"(supported: {', '.join(OUTPUT_FORMATS)})")
    stdout = sys.stdout if stdout is None else stdout
    for directive in program.directives:
        name = directive.relation
        if directive.kind == "printsize":
            stdout.write(f"{name}\t{frames[name].count()}\n")
            continue
        if directive.kind != "output":
            continue
        kind, filename, delimiter = io.io_parameters(directive, ".csv")
        if kind not in ("file", "stdout"):
            raise FactsError(
                f"{io.directive_place(directive)}: unsupported IO={kind} (only file, stdout)")
        lines = _sorted_lines(frames[name], delimiter)
        if kind == "stdout" or str(out_dir) == "-":
            io.write_stdout(name, [row[0] for row in lines.collect()], stdout)
        elif output_format == "parquet" and frames[name].columns:
            frames[name].write.mode("overwrite").parquet(join_path(out_dir, f"{name}.parquet"))
        else:
            _write_single_file(session, lines, join_path(out_dir, filename))
