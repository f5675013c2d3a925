"""The semi-naive driver: results do not depend on the checkpoint interval; one Progress per
pass."""

from __future__ import annotations

import pytest

import herbrand
from herbrand.spark_backend.backend import SparkBackend
from herbrand.workloads import chain

PROGRAM = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), tc(y, z).
"""


@pytest.mark.parametrize("interval", [1, 3, 100])
def test_checkpoint_interval_does_not_change_the_result(spark, interval):
    events = []
    backend = SparkBackend(session=spark, checkpoint_interval=interval)
    database, stats = herbrand.materialize_with_stats(
        PROGRAM, facts={"e": chain(12)}, backend=backend, observer=events.append)
    assert len(database["tc"]) == 12 * 13 // 2
    assert [e.iteration for e in events] == list(range(1, stats[0].iterations + 1))
    assert events[-1].delta == 0 and events[-1].total == 78
