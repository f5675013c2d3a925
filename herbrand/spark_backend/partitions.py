"""How a recursive relation is laid out across Spark partitions during semi-naive passes.

A recursive relation and its deltas are hash-partitioned on all their columns into the same
number of parts (``partition_count``): a derived row can then only equal a known row of the
same partition, so the pass's deduplication and its anti-join against the known rows need no
exchange of the known rows (Spark sees two children with the same ``HashPartitioning`` and,
with ``spark.sql.unionOutputPartitioning``, keeps it through the union that grows the
relation). Only the derived rows are shuffled, once, into that layout (``new_rows``).

The number of parts follows the data as well as the cores: one per ``ROWS_PER_PARTITION``
known rows, at most the session's ``spark.sql.shuffle.partitions`` (herbrand's default: 2 per
core), at least one; a chain of 50 edges is one partition, not 2 per core of a few rows each.

    >>> partition_count(1275, 4), partition_count(2_000_001, 4), partition_count(10**9, 4)
    (1, 3, 4)
"""

from __future__ import annotations

from pyspark.sql import DataFrame

ROWS_PER_PARTITION = 1_000_000
"""Known rows per partition of a recursive relation before it is split further: a task per
partition per pass costs milliseconds, sorting a million longs in a task about as much."""


def partition_count(rows: int, most: int, rows_per_partition: int = ROWS_PER_PARTITION) -> int:
    """The parts of a relation of ``rows`` rows: ceil(rows / rows_per_partition), within
    [1, max(1, most)]. O(1)."""
    return max(1, min(most, -(-rows // rows_per_partition)))


def hash_partitioned(frame: DataFrame, parts: int) -> DataFrame:
    """``frame`` hash-partitioned on all its columns into ``parts`` parts (lazy; a shuffle of
    its rows when run). One part, or a frame without columns (a nullary relation), is a
    coalesce: a narrow dependency, one task reading every partition, no shuffle."""
    if parts == 1 or not frame.columns:
        return frame.coalesce(1)
    return frame.repartition(parts, *frame.columns)



def new_rows(derived: DataFrame, known: DataFrame, parts: int) -> DataFrame:
    """The distinct rows of ``derived`` that are not in ``known`` (same columns), laid out by
    ``hash_partitioned`` into ``parts`` parts (lazy). When ``known`` is laid out so too, only
    ``derived`` is shuffled; the distinct and the anti-join are partition-local. Cost when
    run: a shuffle of ``derived``, a hash aggregate of it and a sort-merge anti-join with
    ``known`` per partition."""
    distinct = hash_partitioned(derived, parts).distinct()
    if not distinct.columns:
        return distinct.join(known.limit(1), how="left_anti")
    return distinct.join(known, on=distinct.columns, how="left_anti")
