"""What a Spark master URL says about the machine a run gets, and the session defaults that
follow from it. Imports nothing of Spark's, so ``herbrand compare`` can count a configuration's
cores without loading pyspark.

    >>> master_cores("local[2]"), master_cores("local-cluster[2,1,1024]"), master_cores("yarn")
    (2, 2, None)

``local[N,F]`` is ``local[N]`` whose tasks may fail F times (Spark's local mode tries a task
once otherwise).
"""

from __future__ import annotations

import os
import re

LOCAL = re.compile(r"^local(?:\[(\d+|\*)(?:\s*,\s*\d+)?\])?$")
LOCAL_CLUSTER = re.compile(r"^local-cluster\[(\d+),\s*(\d+),\s*\d+\]$")
PARTITIONS_PER_CORE = 2
"""Shuffle partitions per core on a master whose cores are known: a pass of semi-naive
evaluation pays a task per partition, and Spark's default of 200 made TC over dyre graph10000
on local[2] take 49.6 s against 13.9 s with 4 (2 to 8 measured alike); adaptive execution
coalesces small ones further."""
DRIVER_MEMORY_SHARE = 0.6
"""The share of the machine's memory a local driver may use (Spark's default is 1 GB, where TC
over Gnutella08 ran out of heap)."""


def master_cores(master: str) -> int | None:
    """The cores a master gives a run: N for ``local[N]`` (the machine's for ``local[*]``, 1 for
    ``local``), executors x cores for ``local-cluster[E,C,MB]``; None for a cluster master,
    whose size Spark learns at run time."""
    if (local := LOCAL.match(master)) is not None:
        count = local.group(1) or "1"
        return (os.cpu_count() or 1) if count == "*" else int(count)
    if (cluster := LOCAL_CLUSTER.match(master)) is not None:
        return int(cluster.group(1)) * int(cluster.group(2))
    return None


def on_this_machine(master: str) -> bool:
    """Whether ``master``'s executors run on this machine (``local``, ``local-cluster``)."""
    return LOCAL.match(master) is not None or LOCAL_CLUSTER.match(master) is not None


def master_family(master: str) -> str:
    """``master`` with its core count written as N: ``local[N]``, ``local-cluster[E,C,...]``;
    a cluster master as it is."""
    if LOCAL.match(master):
        return "local[N]"
    if LOCAL_CLUSTER.match(master):
        return "local-cluster[E,C,...]"
    return master


def session_defaults(master: str) -> dict[str, str]:
    """Settings a session herbrand starts on ``master`` gets unless the user sets them: no
    console progress bar (it redraws over herbrand's progress line), no capture of the Python
    call site of each Column method by pyspark (``spark.python.sql.dataFrameDebugging``: its
    errors name herbrand's lines, not the user's), adaptive execution with
    partition coalescing, and where the master's cores are known ``PARTITIONS_PER_CORE``
    shuffle partitions per core; on a ``local`` master (the driver is the whole run) a driver heap of
    ``DRIVER_MEMORY_SHARE`` of the machine's memory; on a master on this machine, no web UI
    (``spark.ui.enabled``: its server and the listeners that feed it cost the driver JVM about
    0.9 s of CPU in a run of TC over Gnutella08 on ``local[2]``; a cluster's driver keeps it).
    O(1)."""
    defaults = {
        "spark.ui.showConsoleProgress": "false",
        # pyspark's capture of the Python call site of every Column method (for error
        # messages): four calls to the JVM each, about 60 per pass
        "spark.python.sql.dataFrameDebugging.enabled": "false",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.adaptive.coalescePartitions.enabled": "true",
    }
    if on_this_machine(master):
        defaults["spark.ui.enabled"] = "false"
    cores = master_cores(master)
    if cores is not None:
        partitions = str(PARTITIONS_PER_CORE * cores)
        defaults["spark.sql.shuffle.partitions"] = partitions
        defaults["spark.default.parallelism"] = partitions
    if LOCAL.match(master) is not None:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        defaults["spark.driver.memory"] = f"{int(memory * DRIVER_MEMORY_SHARE) // 2**20}m"
    return defaults
