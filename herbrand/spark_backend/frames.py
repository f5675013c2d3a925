"""herbrand Relations <-> Spark DataFrames: columns c0..c{k-1}, typed by the declaration.

A number column is a Spark long, a symbol column a Spark string: symbols are decoded with the
Database's SymbolTable on the way in and interned into it on the way out, so no id of the
table ever reaches Spark. A symbol's bytes are kept exactly both ways: a str holding bytes that
are not UTF-8 (``surrogateescape``, as the facts readers give them) is those bytes in Spark, and
back. Transfers go through Arrow (``createDataFrame`` of a pyarrow Table,
``DataFrame.toArrow``). A nullary relation is a frame with no columns and 0 or 1 rows.
Cost: O(rows) on the driver each way (vectorised, plus one dict lookup per symbol); meant for
inputs given in memory and for outputs small enough to collect.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from herbrand.framework.storage import Relation
from herbrand.framework.symbols import ENCODING, SymbolTable
from herbrand.framework.syntax import NUMBER, SYMBOL
from herbrand.spark_backend.expressions import column_name


def frame_types(frame: DataFrame) -> tuple[str, ...]:
    """The column types (``number`` or ``symbol``) of a relation's frame."""
    return tuple(SYMBOL if isinstance(field.dataType, StringType) else NUMBER
                 for field in frame.schema.fields)


def frame_schema(types: tuple[str, ...]) -> StructType:
    """The schema of a relation with column ``types`` (``number`` or ``symbol``)."""
    return StructType([
        StructField(column_name(i), StringType() if type_ == SYMBOL else LongType(), False)
        for i, type_ in enumerate(types)
    ])


def empty_frame(session: SparkSession, types: tuple[str, ...]) -> DataFrame:
    """A frame with no rows and the column types of ``types`` (built in the JVM: no Python
    worker is started for it)."""
    return session.range(0).select(*(
        F.lit(None).cast(field.dataType).alias(field.name) for field in frame_schema(types)))


def nullary_frame(session: SparkSession, true: bool) -> DataFrame:
    """The frame of a nullary relation: one empty row when ``true``, else none."""
    return session.range(1 if true else 0).select()


def _symbol_array(symbols: list[str]) -> pa.Array:
    """An Arrow string array of ``symbols``, each encoded with surrogateescape: when some hold
    bytes that are not UTF-8, the binary array of those bytes is read as a string array (the
    same layout; Arrow does not check it and Spark copies the bytes). O(n)."""
    try:
        return pa.array(symbols, type=pa.string())
    except UnicodeEncodeError:
        binary = pa.array([symbol.encode(*ENCODING) for symbol in symbols], type=pa.binary())
        return pa.Array.from_buffers(pa.string(), len(binary), binary.buffers())


def _symbol_list(column: pa.ChunkedArray) -> list[str]:
    """The strs of an Arrow string column, bytes that are not UTF-8 decoded with
    surrogateescape. O(n)."""
    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        return [value.decode(*ENCODING) for value in column.cast(pa.binary()).to_pylist()]


def relation_table(relation: Relation, types: tuple[str, ...], symbols: SymbolTable) -> pa.Table:
    """``relation`` (arity >= 1, ids decoded with ``symbols``) as an Arrow table of columns
    c0..c{k-1} typed by ``types``. O(rows)."""
    arrays = [
        _symbol_array(symbols.decode_many(column).tolist()) if type_ == SYMBOL
        else pa.array(column, type=pa.int64())
        for column, type_ in zip(relation.columns, types, strict=True)
    ]
    return pa.Table.from_arrays(arrays, schema=pa.schema([
        pa.field(column_name(i), array.type, nullable=False) for i, array in enumerate(arrays)
    ]))


def table_relation(table: pa.Table, types: tuple[str, ...], symbols: SymbolTable) -> Relation:
    """The distinct rows of an Arrow table (its first ``len(types)`` columns typed by
    ``types``; a nullary relation holds one row when the table has any) as a Relation, symbols
    interned into ``symbols``. O(rows)."""
    if not types:
        return Relation(np.zeros((0, min(table.num_rows, 1)), dtype=np.int64), unique=True)
    if not table.num_rows:
        return Relation.empty(len(types))
    columns = [
        symbols.intern_many(_symbol_list(table.column(i))) if type_ == SYMBOL
        else np.asarray(table.column(i).to_numpy(), dtype=np.int64)
        for i, type_ in enumerate(types)
    ]
    return Relation(np.vstack(columns), unique=True)


def relation_frame(session: SparkSession, relation: Relation, types: tuple[str, ...],
                   symbols: SymbolTable) -> DataFrame:
    """``relation`` (ids decoded with ``symbols``) as a frame typed by ``types``."""
    if relation.arity == 0:
        return nullary_frame(session, len(relation) > 0)
    if not len(relation):
        return empty_frame(session, types)
    return session.createDataFrame(relation_table(relation, types, symbols),
                                   schema=frame_schema(types))


def frame_table(frame: DataFrame) -> pa.Table:
    """The rows of a relation's ``frame`` collected as an Arrow table (``table_relation``
    reads it back). A nullary frame's row is kept as a row of one placeholder column: Spark's
    ``toArrow`` of a frame with no columns has no rows, whatever the frame holds, and a
    pickled Arrow table of no columns loses its rows too. O(rows) on the driver."""
    if not frame.columns:
        return nullary_table(frame.limit(1).count() > 0)
    return frame.toArrow()


def nullary_table(true: bool) -> pa.Table:
    """A nullary relation as ``frame_table`` gives it: one row of a placeholder column when
    ``true``, none when false."""
    return pa.table({"true": pa.array([True] if true else [], type=pa.bool_())})


def driver_table(relation: Relation, types: tuple[str, ...], symbols: SymbolTable) -> pa.Table:
    """``relation`` (ids decoded with ``symbols``) as ``frame_table`` gives a frame of it:
    ``relation_table``, or ``nullary_table`` for a nullary one. O(rows)."""
    if not types:
        return nullary_table(len(relation) > 0)
    return relation_table(relation, types, symbols)


def frame_relation(frame: DataFrame, types: tuple[str, ...], symbols: SymbolTable) -> Relation:
    """The rows of ``frame`` collected as a Relation, symbols interned into ``symbols``.

    The rows must be distinct (every relation frame of the backend is)."""
    return table_relation(frame_table(frame), types, symbols)
