"""Python workers started ahead of a decomposed job (``decomposed``), while the driver plans it.

A decomposed job's first tasks wait for Spark to start its Python daemon, fork the workers and
have them import herbrand's engine: 1-2 s on ``local[2]`` after the job is submitted, while
planning the job (its broadcasts, and the JVM's planning of its first query) takes the
driver another 0.5-1.3 s before that. ``warm_workers`` runs a job of one task per core in a
background thread first (``decomposed.ready_worker``: the imports, no rows); Spark keeps
the workers (``spark.python.worker.reuse``, true by default), and the decomposed job's
tasks run in them. TC over Gnutella08 on ``local[2]``, wall time of the whole run, eight
rounds alternated on a shared machine (load 4.3-7.0): faster in seven, median ratio 0.88
(10.3-29.9 s without, 10.9-26.2 s with), the same CPU (9.5-11.1 s).

Only on masters on this machine (``masters.on_this_machine``), where it was measured: a
cluster's executors and its slots are its own. A warming that fails is ignored (the job it
readies reports the same failure itself, say an executor without herbrand,
``executor_code``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import suppress

import pyarrow as pa
from pyspark.sql import SparkSession

from herbrand.spark_backend.decomposed import ready_worker

JOB_GROUP = "herbrand-warm-workers"
"""The Spark job group of a warming job (``SparkContext.setJobGroup``)."""


def warm_workers(session: SparkSession, tasks: int,
                 task: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]
                 = ready_worker) -> threading.Thread:
    """Start a thread running a job of ``tasks`` tasks of ``task`` (``mapInArrow`` over one
    numbered row each; a failure ignored), and return it: join it before the session may
    stop. Cost on the driver: a thread; in the session, the job (its workers' imports)."""

    def run() -> None:
        context = session.sparkContext
        context.setJobGroup(JOB_GROUP, "herbrand: Python workers started ahead of a job",
                            interruptOnCancel=False)
        with suppress(Exception):  # the job it readies reports it (module doc)
            session.range(0, tasks, 1, tasks).mapInArrow(task, "id long").write.format(
                "noop").mode("overwrite").save()

    thread = threading.Thread(target=run, name=JOB_GROUP, daemon=True)
    thread.start()
    return thread
