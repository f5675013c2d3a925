"""A master URL's cores and the session defaults that follow (no Spark started)."""

from __future__ import annotations

import os

import pytest

from herbrand.spark_backend.masters import (
    DRIVER_MEMORY_SHARE,
    PARTITIONS_PER_CORE,
    master_cores,
    session_defaults,
)


@pytest.mark.parametrize(("master", "cores"), [
    ("local", 1), ("local[3]", 3), ("local[*]", os.cpu_count()), ("local[2,3]", 2),
    ("local[*, 2]", os.cpu_count()),
    ("local-cluster[2,3,1024]", 6), ("local-cluster[2, 1, 512]", 2),
    ("spark://host:7077", None), ("yarn", None), ("k8s://https://host:443", None),
])
def test_cores_of_a_master(master, cores):
    assert master_cores(master) == cores


def test_shuffle_partitions_follow_the_cores_and_only_a_local_driver_gets_memory():
    local = session_defaults("local[2]")
    assert local["spark.sql.shuffle.partitions"] == str(2 * PARTITIONS_PER_CORE)
    assert local["spark.default.parallelism"] == str(2 * PARTITIONS_PER_CORE)
    assert local["spark.ui.showConsoleProgress"] == "false"
    assert local["spark.sql.adaptive.coalescePartitions.enabled"] == "true"
    assert local["spark.python.sql.dataFrameDebugging.enabled"] == "false"
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert local["spark.driver.memory"] == f"{int(memory * DRIVER_MEMORY_SHARE) // 2**20}m"
    cluster = session_defaults("local-cluster[2,1,1024]")
    assert cluster["spark.sql.shuffle.partitions"] == str(2 * PARTITIONS_PER_CORE)
    assert "spark.driver.memory" not in cluster  # its executors hold the data
    remote = session_defaults("yarn")
    assert "spark.sql.shuffle.partitions" not in remote and "spark.driver.memory" not in remote
    assert local["spark.ui.enabled"] == cluster["spark.ui.enabled"] == "false"
    assert "spark.ui.enabled" not in remote  # a cluster's driver keeps its web UI
