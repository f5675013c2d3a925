"""A recursive stratum run as one Spark job: herbrand's native engine to fixpoint inside each
partition (generalized pivoting; ``herbrand.translators.pivots``), or, for a small stratum
without a pivot, inside one partition.

Given the stratum's seeds (its relations after the first pass: given facts and exit rules),
``run_decomposed``

1. collects the lower relations the recursive rules read on the driver (those the driver
   does not hold already) and broadcasts them (Arrow tables; the caller checks they are small
   enough);
2. unites the seeds of every relation of the stratum into one wide frame (a relation number,
   then each relation's columns, null outside its own rows) and partitions it on the pivot
   column's value, so that every seed of one pivot value lands in one partition: by ranges of
   the value when the pivot is every relation's first column (``ordered_by_pivot``; each
   partition then sorts its rows, so that the relations' frames are in sort order, partition
   after partition, and are written without a sort of Spark's), else by its hash; without a
   pivot, it is coalesced into one partition (no exchange), which then holds every
   seed: its fixpoint is the stratum's, whatever the rules;
3. runs ``PartitionFixpoint`` over each partition with ``mapInArrow``: the recursive rules, fed
   the partition's seeds through ``@seed:`` relations and the broadcast relations, are brought
   to fixpoint by the local backend's default engine (the native executor) in the Python
   worker, and the partition's tuples come back in the same wide layout.

A pivot keeps every tuple in the partition of its pivot value, so the partitions' results are
disjoint and their union is the stratum's fixpoint: no distinct, no anti-join, no exchange
between passes. The workers import herbrand, numpy and its native kernels: on ``local`` and
``local-cluster`` masters they run the driver's Python (``masters.session_defaults`` sets
``spark.pyspark.python``); on a cluster, ship an environment (README, "Spark on a cluster").

``run_decomposed`` plans the job; it runs in every job that reads its result until that is
stored (``Decomposition``). ``store`` caches it and counts its relations (a global
aggregate); a stratum in sort order whose one use is one write (``outputs.written_once``) is
computed by that write instead, straight from the partitions into the files, and its sizes
are what its tasks counted (an accumulator): no cache, no count job (TC over Gnutella08 on
``local[2]``: see bench/README.md). Where the file is on this machine's file system and so
are the executors (``part_files``), the tasks write it themselves with herbrand's local
writer (``Decomposition.write_parts``) and return no rows.

When the driver holds the seeds, ``driver_seeds`` splits them there and plans the same task
over them (``PartitionFixpoint.seeded``): no frame of them, no sample, no exchange.

Cost: one job (two when range-partitioned: Spark samples the seeds); per partition, the
native engine's work on its share of the derivations plus loading the broadcast relations
(O(their rows) per partition) and converting its rows to and from Arrow (O(rows)), or, when
it writes them, the local writer's sort and formatting (O(n log n)); when stored, Spark's
columnar cache of the rows and their count. Memory per partition: the
broadcast relations and its share of the result.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
from pyspark import Accumulator, AccumulatorParam, Broadcast
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from herbrand.framework.analysis import Stratum, rule_literals
from herbrand.framework.packed_keys import sorted_blocks, value_range
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import (
    SYMBOL,
    Atom,
    Column,
    Declaration,
    Literal,
    Program,
    Rule,
    Var,
)
from herbrand.spark_backend.executor_code import check_same_code, source_digest
from herbrand.spark_backend.expressions import column_name
from herbrand.spark_backend.frames import frame_table, relation_table, table_relation
from herbrand.spark_backend.part_files import PartFile
from herbrand.translators.pivots import Pivot

SEED_PREFIX = "@seed:"
RELATION = "relation"  # the wide layout's relation number
PIVOT = "pivot"  # the pivot value (or its hash) the seeds are partitioned on
PART = "id"  # the part number a partition of seeds split on the driver reads (``driver_seeds``)


def wide_column(relation: int, column: int) -> str:
    """The name, in the wide layout, of column ``column`` of the stratum's ``relation``-th
    relation."""
    return f"r{relation}_{column_name(column)}"


def _wide_schema(types: tuple[tuple[str, ...], ...]) -> StructType:
    fields = [StructField(RELATION, LongType(), False)]
    for k, columns in enumerate(types):
        fields += [StructField(wide_column(k, j), StringType() if t == SYMBOL else LongType(),
                               True) for j, t in enumerate(columns)]
    return StructType(fields)


def _arrow_type(type_: str) -> pa.DataType:
    return pa.string() if type_ == SYMBOL else pa.int64()


@dataclass(frozen=True)
class PartitionFixpoint:
    """What one partition runs (pickled to the workers): ``program`` (the stratum's recursive
    rules and a copying rule from each ``@seed:`` relation) over ``lower`` (name -> Arrow table
    of a lower relation, broadcast) and the partition's seeds; ``relations`` and ``types``
    (of the stratum's relations, in the wide layout's order) and ``lower_types``."""

    program: Program
    relations: tuple[str, ...]
    types: tuple[tuple[str, ...], ...]
    lower_types: tuple[tuple[str, tuple[str, ...]], ...]
    lower: object  # a Broadcast of {name: pa.Table}
    code: str  # the driver's ``executor_code.source_digest``: the worker checks it runs the same
    sizes: object  # an Accumulator of ``RowCounts``: the partition's rows per relation
    sort: bool = False  # each relation's rows sorted by column (``ordered_by_pivot``)
    writes: tuple[int, PartFile] | None = None
    """(k, part): the partition writes its rows of the stratum's ``k``-th relation as its part
    file and returns no rows (``Decomposition.write_parts``)."""
    seeded: object = None
    """A Broadcast of the seeds split on the driver (``driver_seeds``): part number -> an Arrow
    IPC stream of that part's seeds in the wide layout; the partitions' rows are then their
    part numbers (``PART``), not seeds. None: the rows are the seeds."""

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        LocalBackend, NativeEvaluator, SemiNaiveFixpoint = _engine()  # noqa: N806 (classes)
        check_same_code(self.code)
        seeds = self._seeds(list(batches))
        if seeds is None:
            return
        symbols = SymbolTable()
        tables = self.lower.value
        relations = {name: table_relation(tables[name], types, symbols)
                     for name, types in self.lower_types}
        numbers = seeds.column(RELATION).to_numpy()
        for k, name in enumerate(self.relations):
            own = seeds.filter(pa.array(numbers == k)).select(
                [wide_column(k, j) for j in range(len(self.types[k]))])
            relations[SEED_PREFIX + name] = table_relation(own, self.types[k], symbols)
        types = {**dict(self.lower_types),
                 **{SEED_PREFIX + n: t for n, t in zip(self.relations, self.types, strict=True)}}
        result, _ = LocalBackend().materialize(
            self.program, Database(relations, symbols, types, {}),
            evaluator=NativeEvaluator(), fixpoint=SemiNaiveFixpoint)
        self.sizes.add(tuple(len(result[name]) for name in self.relations))
        if self.writes is not None:
            k, part = self.writes
            part.write(result[self.relations[k]], self.types[k], symbols)
            return
        for k, name in enumerate(self.relations):
            if len(result[name]):
                yield wide_batch(self.types, k, result[name], symbols, self.sort)

    def _seeds(self, received: list[pa.RecordBatch]) -> pa.Table | None:
        """The partition's seeds in the wide layout, from its ``received`` rows (None: it has
        none): those rows, or, when ``seeded``, the parts they number."""
        if self.seeded is None:
            return pa.Table.from_batches(received) if received else None
        parts = [part for batch in received for part in batch.column(PART).to_pylist()]
        tables = [pa.ipc.open_stream(self.seeded.value[part]).read_all() for part in parts]
        seeds = pa.concat_tables(tables) if tables else None
        return seeds if seeds is not None and seeds.num_rows else None


def _engine() -> tuple[type, type, type]:
    """The local engine a partition runs: LocalBackend, NativeEvaluator, SemiNaiveFixpoint
    (imported when a worker first asks: the driver of a run that decomposes nothing never
    imports them)."""
    from herbrand.evaluators.fixpoint import SemiNaiveFixpoint
    from herbrand.evaluators.local import LocalBackend
    from herbrand.evaluators.native.evaluator import NativeEvaluator

    return LocalBackend, NativeEvaluator, SemiNaiveFixpoint


def ready_worker(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A ``mapInArrow`` task that readies its Python worker for ``PartitionFixpoint`` and
    returns no rows: the worker imports this module and the local engine and digests its
    sources (``executor_code``), as a partition's first task would (``warm_workers``).
    Cost: those imports (about 0.25 s of CPU), once per worker."""
    _engine()
    source_digest()
    for _ in batches:
        pass
    return iter(())


def wide_schema(types: tuple[tuple[str, ...], ...]) -> pa.Schema:
    """The Arrow schema of the wide layout of relations of column ``types``."""
    fields = [pa.field(RELATION, pa.int64(), nullable=False)]
    for k, columns in enumerate(types):
        fields += [pa.field(wide_column(k, j), _arrow_type(t)) for j, t in enumerate(columns)]
    return pa.schema(fields)


def wide_batch(types: tuple[tuple[str, ...], ...], k: int, relation: Relation,
               symbols: SymbolTable, sort: bool = False) -> pa.RecordBatch:
    """``relation`` (the ``k``-th of relations of column ``types``, ids decoded with
    ``symbols``) as a record batch of their wide layout, its rows in order when ``sort``
    (``sorted_table``); a true nullary relation is one row without columns of its own.
    O(rows), O(n log n) sorted."""
    n = len(relation)
    if sort and types[k] and n:
        own = sorted_table(relation, types[k], symbols)
    else:
        own = relation_table(relation, types[k], symbols) if types[k] else None
    arrays = [pa.array(np.full(n, k, dtype=np.int64))]
    for other, columns in enumerate(types):
        for j, type_ in enumerate(columns):
            arrays.append(own.column(j).combine_chunks() if other == k
                          else pa.nulls(n, _arrow_type(type_)))
    return pa.RecordBatch.from_arrays(arrays, schema=wide_schema(types))


def sorted_table(relation: Relation, types: tuple[str, ...], symbols: SymbolTable) -> pa.Table:
    """``relation_table`` of a non-empty ``relation`` with the rows in order, column by column
    (a symbol by its text). Numbers only: one sort of a packed key per row (``packed_keys.sorted_blocks``; 13.1M rows
    of TC over Gnutella08 in about half of Arrow's two-column sort); else Arrow's sort.
    O(n log n)."""
    if SYMBOL in types:
        table = relation_table(relation, types, symbols)
        return table.sort_by([(name, "ascending") for name in table.column_names])
    columns = list(relation.columns)
    [rows] = sorted_blocks(columns, [value_range(column) for column in columns], len(relation))
    return relation_table(Relation(np.vstack(rows), unique=True), types, symbols)


def lower_relations(stratum: Stratum) -> tuple[str, ...]:
    """The relations of lower strata the stratum's rules read (sorted)."""
    own = set(stratum.relations)
    return tuple(sorted({literal.atom.relation for rule in stratum.rules
                         for literal, _ in rule_literals(rule)} - own))


def ordered_by_pivot(stratum: Stratum, pivot: Pivot | None,
                     types: dict[str, tuple[str, ...]]) -> bool:
    """Whether a decomposed run of ``stratum`` range-partitions its seeds on the pivot value and
    sorts each partition's rows, so that every relation's frame is in sort order by column,
    partition after partition (``outputs`` then writes it without sorting): the pivot is the
    first column of every relation of the stratum, of one type throughout. O(relations)."""
    return (pivot is not None
            and all(pivot.position(name) == 0 for name in stratum.relations)
            and len({types[name][0] for name in stratum.relations}) == 1)


def _partition_program(stratum: Stratum, types: dict[str, tuple[str, ...]]) -> Program:
    """The stratum's recursive rules and ``name :- @seed:name`` for each of its relations."""
    own = set(stratum.relations)
    recursive = tuple(rule for rule in stratum.rules
                      if any(isinstance(e, Literal) and e.atom.relation in own
                             for e in rule.body))
    copies = []
    for name in stratum.relations:
        variables = tuple(Var(f"v{j}") for j in range(len(types[name])))
        copies.append(Rule(Atom(name, variables), (Literal(Atom(SEED_PREFIX + name, variables)),)))
    names = [*lower_relations(stratum), *stratum.relations,
             *(SEED_PREFIX + name for name in stratum.relations)]
    declarations = tuple(
        Declaration(name, tuple(Column(f"c{j}", t) for j, t in enumerate(
            types[name.removeprefix(SEED_PREFIX)]))) for name in names)
    return Program(declarations=declarations, rules=tuple(copies) + recursive)


class RowCounts(AccumulatorParam):
    """An accumulator of rows per relation of a stratum: a tuple of ints, added element-wise."""

    def zero(self, value: tuple[int, ...]) -> tuple[int, ...]:
        return (0,) * len(value)

    def addInPlace(self, first: tuple[int, ...], second: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(a + b for a, b in zip(first, second, strict=True))


class Decomposition:
    """A decomposed stratum's job, planned (``run_decomposed``): ``result``, the wide frame of
    its fixpoint, is lazy, computed by every job that reads it until ``store`` keeps it.

    Either ``store`` it (a job: the partitions are computed, cached and counted), or let
    exactly one job compute it whole (a write of ``result``, or ``write_parts``), then take
    ``written_sizes``: the rows each task counted, added up (an accumulator), exact when the
    job's last stage computes the partitions (a write: Spark adds a result task's updates
    once, however often it ran) and meaningless otherwise. ``release`` drops the cache and
    the broadcast relations."""

    def __init__(self, seeds: DataFrame, task: PartitionFixpoint):
        self._schema = _wide_schema(task.types)
        self.result = seeds.mapInArrow(task, self._schema)
        self.relations = task.relations
        self._seeds = seeds
        self._task = task
        self._sizes: Accumulator = task.sizes
        self._broadcasts: tuple[Broadcast, ...] = tuple(
            found for found in (task.lower, task.seeded) if found is not None)

    def store(self) -> dict[str, int]:
        """Cache ``result`` and count each relation's rows: one job, whose global aggregate
        (a counter per relation, not a grouped one: no hash map per row) also fills the
        cache; then the broadcast is dropped. Rows per relation name."""
        self.result = self.result.persist()
        sizes = self.result.agg(*(F.count(F.when(F.col(RELATION) == k, True))
                                  for k in range(len(self.relations)))).first()
        self._unpersist()
        return dict(zip(self.relations, sizes, strict=True))

    def write_parts(self, name: str, part: PartFile) -> None:
        """Run the job with each task writing its partition's rows of relation ``name`` as its
        part file (``part``) and returning no rows: one action, a write to Spark's ``noop``
        sink, so that the tasks are its result stage's (``written_sizes`` is then exact).
        Cost: the job (the range sample's too), the engine's work and the local writer's
        (``PartFile.write``) in each task; nothing crosses to the JVM but the seeds."""
        task = replace(self._task, writes=(self.relations.index(name), part))
        self._seeds.mapInArrow(task, self._schema).write.format("noop").mode(
            "overwrite").save()

    def written_sizes(self) -> dict[str, int]:
        """Rows per relation name, as the tasks of the one job that computed ``result``
        counted them (see the class doc). O(1)."""
        return dict(zip(self.relations, self._sizes.value, strict=True))

    def release(self) -> None:
        """Drop ``result``'s cache, if stored, and the broadcast relations. O(1) calls."""
        self.result.unpersist()
        self._unpersist()

    def _unpersist(self) -> None:
        for broadcast in self._broadcasts:
            broadcast.unpersist()


def run_decomposed(session: SparkSession, stratum: Stratum, pivot: Pivot | None,
                   frames: dict[str, DataFrame], types: dict[str, tuple[str, ...]],
                   partitions: int, held: dict[str, pa.Table]) -> Decomposition:
    """The job computing the stratum's fixpoint from its seeds (``frames`` of its relations)
    in ``partitions`` parts split by ``pivot`` (None: one part, whatever ``partitions``
    says), planned: nothing of it runs here but the collection of the lower relations to
    broadcast that are not in ``held`` (name -> the table of a lower relation the driver
    holds, ``driver_table``: broadcast as it is, with no job). When ``ordered_by_pivot``, the parts are ranges of pivot values (Spark
    samples the seeds when the job runs: a job more) and hold their rows sorted; else they
    are split by the pivot value's hash."""
    ordered = ordered_by_pivot(stratum, pivot, types)
    task = partition_task(session, stratum, types, {
        name: held[name] if name in held else frame_table(frames[name])
        for name in lower_relations(stratum)}, ordered)
    own, schema = task.types, _wide_schema(task.types)
    parts = []
    for k, name in enumerate(stratum.relations):
        frame = frames[name]
        columns = [F.lit(k).cast("long").alias(RELATION)]
        for other, other_types in enumerate(own):
            columns += [frame[column_name(j)].alias(wide_column(k, j)) if other == k
                        else F.lit(None).cast(schema[wide_column(other, j)].dataType)
                        .alias(wide_column(other, j)) for j in range(len(other_types))]
        if pivot is not None:
            value = frame[column_name(pivot.position(name))]
            columns.append((value if ordered else F.xxhash64(value)).alias(PIVOT))
        parts.append(frame.select(*columns))
    seeds = parts[0]
    for part in parts[1:]:
        seeds = seeds.unionByName(part)
    if pivot is None:
        seeds = seeds.coalesce(1)
    elif ordered:
        seeds = seeds.repartitionByRange(partitions, PIVOT).drop(PIVOT)
    else:
        seeds = seeds.repartition(partitions, PIVOT).drop(PIVOT)
    return Decomposition(seeds, task)


def partition_task(session: SparkSession, stratum: Stratum, types: dict[str, tuple[str, ...]],
                   lower: dict[str, pa.Table], sort: bool,
                   seeded: dict[int, bytes] | None = None) -> PartitionFixpoint:
    """The PartitionFixpoint of ``stratum`` (``types``: of its relations and the lower ones),
    with its ``lower`` relations' tables (name -> table) broadcast, its rows sorted when
    ``sort``, and ``seeded`` (part number -> the part's seeds; see the field) broadcast when
    given. Cost: the broadcasts' serialization on the driver, O(their rows)."""
    context = session.sparkContext
    names = lower_relations(stratum)
    return PartitionFixpoint(
        _partition_program(stratum, types), stratum.relations,
        tuple(types[name] for name in stratum.relations),
        tuple((name, types[name]) for name in names), context.broadcast(lower),
        source_digest(), context.accumulator((0,) * len(stratum.relations), RowCounts()),
        sort, seeded=None if seeded is None else context.broadcast(seeded))


def relation_of(result: DataFrame, stratum: Stratum, name: str,
                types: dict[str, tuple[str, ...]]) -> DataFrame:
    """Relation ``name``'s rows of a wide result, as a relation frame (columns c0..)."""
    k = stratum.relations.index(name)
    return result.filter(F.col(RELATION) == k).select(
        *(F.col(wide_column(k, j)).alias(column_name(j)) for j in range(len(types[name]))))
