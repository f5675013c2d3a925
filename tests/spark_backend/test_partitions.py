"""The layout of recursive relations: parts sized from the rows and the cores."""

from __future__ import annotations

import pytest

from herbrand.spark_backend.partitions import (
    ROWS_PER_PARTITION,
    hash_partitioned,
    partition_count,
)


@pytest.mark.parametrize(("rows", "most", "parts"), [
    (0, 4, 1), (1275, 4, 1), (ROWS_PER_PARTITION, 4, 1), (ROWS_PER_PARTITION + 1, 4, 2),
    (10**9, 4, 4), (10**9, 0, 1),
])
def test_partition_count_follows_the_rows_within_the_cores(rows, most, parts):
    assert partition_count(rows, most) == parts


def test_hash_partitioned_keeps_the_rows_in_the_given_parts(spark):
    frame = spark.createDataFrame([(i, i % 3) for i in range(20)], "c0 long, c1 long")
    laid_out = hash_partitioned(frame, 3)
    assert laid_out.rdd.getNumPartitions() == 3
    assert sorted(laid_out.collect()) == sorted(frame.collect())
    assert hash_partitioned(frame.select(), 3).rdd.getNumPartitions() == 1
