"""``leftovers``: the wait for a failed job's tasks to end before what they wrote is removed."""

from __future__ import annotations

import threading
import time

from herbrand.spark_backend.leftovers import running_tasks, tasks_ended


def test_tasks_ended_waits_for_running_tasks(spark):
    job = threading.Thread(target=lambda: spark.sparkContext.parallelize(range(2), 2).foreach(
        lambda _: time.sleep(3)))
    job.start()
    deadline = time.monotonic() + 60
    while not running_tasks(spark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running_tasks(spark) == 2
    assert not tasks_ended(spark, timeout=0.2)
    job.join()
    assert tasks_ended(spark, timeout=60) and running_tasks(spark) == 0
