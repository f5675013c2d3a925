"""A decomposed stratum (``decomposed``) whose seeds are made and split on the driver: every
relation the stratum reads is held there (``driver_strata``), whether it was there already
(the driver's attempt to run the whole stratum was abandoned over its budget) or was
collected from Spark for it (Spark read or derived it, within the budget: the lower ones are
the broadcast relations, which the job collects anyway).

The driver derives the seeds itself (``Driver.seeds``: the stratum's rows held there and what
its exit rules derive), splits them into parts by the pivot value (``part_numbers``), and
broadcasts each part as an Arrow IPC stream in the wide layout, with the lower relations the
rules read; the job's input is then ``parts`` numbered rows (``session.range``, one per
partition), from which each partition reads its part (``PartitionFixpoint.seeded``). Spark then
runs no first pass, makes no frame of the driver's rows, samples nothing for a range
partitioning and collects nothing to broadcast: the job is the only one (TC over Gnutella08 on
``local[2]``: see bench/README.md).

The parts are ranges of the pivot value balanced by seed count (as Spark's range partitioning
samples them), consecutive in sort order when ``decomposed.ordered_by_pivot`` (symbols then
ranked by their bytes, as the writers order them), so that every relation's result is in sort
order partition after partition, as on the other path; without a pivot, one part holds every
seed.

Cost on the driver: O(n log n) for n seeds (a sort of their pivot keys), the broadcasts'
serialization (O(seeds + lower rows)).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import SparkSession

from herbrand.framework.analysis import Stratum
from herbrand.framework.csv_writer import symbol_ranks
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import SYMBOL
from herbrand.spark_backend.decomposed import (
    Decomposition,
    lower_relations,
    ordered_by_pivot,
    partition_task,
    wide_batch,
    wide_schema,
)
from herbrand.spark_backend.frames import driver_table
from herbrand.translators.pivots import Pivot


def part_numbers(seeds: Database, stratum: Stratum, pivot: Pivot | None, parts: int,
                 ordered: bool) -> dict[str, np.ndarray]:
    """For each relation of ``stratum``, the part (0 <= part < ``parts``) of each of its rows
    in ``seeds``: every row of one pivot value in one part, the parts balanced by rows, part
    after part in the order of the pivot values (when ``ordered``, their sort order:
    ``sort_keys``; else of their int64 ids); all 0 without a ``pivot``. O(n log n)."""
    names = stratum.relations
    if pivot is None or parts <= 1:
        return {name: np.zeros(len(seeds[name]), dtype=np.int64) for name in names}
    values = np.concatenate([seeds[name].column(pivot.position(name)) for name in names])
    types = {seeds.types[name][pivot.position(name)] for name in names}
    keys = sort_keys(values, seeds.symbols) if ordered and types == {SYMBOL} else values
    cuts = np.sort(keys)[(np.arange(1, parts) * len(keys)) // parts] if len(keys) else keys
    numbers = np.searchsorted(cuts, keys, side="right")
    return dict(zip(names, np.split(numbers, np.cumsum([len(seeds[n]) for n in names])[:-1]),
                    strict=True))


def sort_keys(values: np.ndarray, symbols: SymbolTable) -> np.ndarray:
    """Symbol ids ``values`` as int64 keys in the order of their texts' bytes (the writers'
    order: ``csv_writer.symbol_ranks``): each id's rank among the distinct ones. O(n log n)."""
    return symbol_ranks(values, symbols)[0]


def seeded_decomposition(session: SparkSession, stratum: Stratum, pivot: Pivot | None,
                         seeds: Database, parts: int) -> Decomposition:
    """The job bringing ``stratum`` to fixpoint from ``seeds`` (its relations' seeds and the
    lower relations its rules read, with their types and symbols) in ``parts`` parts (one
    without a ``pivot``), planned (see the module doc): nothing runs here."""
    types = dict(seeds.types)
    ordered = ordered_by_pivot(stratum, pivot, types)
    parts = 1 if pivot is None else parts
    own = tuple(types[name] for name in stratum.relations)
    numbers = part_numbers(seeds, stratum, pivot, parts, ordered)
    streams = {}
    for part in range(parts):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, wide_schema(own)) as writer:
            for k, name in enumerate(stratum.relations):
                rows = seeds[name].columns[:, numbers[name] == part]
                writer.write_batch(wide_batch(own, k, Relation(rows, unique=True),
                                              seeds.symbols))
        streams[part] = sink.getvalue().to_pybytes()
    lower = {name: driver_table(seeds[name], types[name], seeds.symbols)
             for name in lower_relations(stratum)}
    task = partition_task(session, stratum, types, lower, ordered, streams)
    return Decomposition(session.range(0, parts, 1, parts), task)
