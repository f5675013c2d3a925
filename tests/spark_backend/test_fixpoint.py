"""The semi-naive driver: results do not depend on the checkpoint interval; one Progress per
pass."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

import herbrand
from herbrand.spark_backend import fixpoint
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
    backend = SparkBackend(session=spark, checkpoint_interval=interval, single_partition_rows=0)
    database, stats = herbrand.materialize_with_stats(
        PROGRAM, facts={"e": chain(12)}, backend=backend, observer=events.append)
    assert len(database["tc"]) == 12 * 13 // 2
    assert [e.iteration for e in events] == list(range(1, stats[0].iterations + 1))
    assert events[-1].delta == 0 and events[-1].total == 78


LINEAR = PROGRAM.replace("tc(x, y), tc(y, z)", "tc(x, y), e(y, z)")


def test_a_pass_after_the_first_does_not_exchange_the_full_relation(spark, monkeypatch):
    """The known rows are laid out like the derived ones: the distinct and the anti-join of
    a pass need no exchange that Spark would insert (ENSURE_REQUIREMENTS); only the derived
    rows are shuffled, by the layout's repartition. (Laid out in one part, the known rows
    are a union that Spark exchanges within that part: see ``fixpoint``.)"""
    plans, new_rows = [], fixpoint.new_rows

    def recorded(derived, known, parts):
        frame = new_rows(derived, known, parts)
        plans.append((parts, frame._jdf.queryExecution().executedPlan().toString()))
        return frame

    monkeypatch.setattr(fixpoint, "new_rows", recorded)
    # recursive relations split every 50 rows: a chain of 30 edges (465 rows) spreads over the
    # 4 shuffle partitions of the test session
    database, _ = herbrand.materialize_with_stats(
        LINEAR, facts={"e": chain(30)},
        backend=SparkBackend(session=spark, decompose=False, rows_per_partition=50))
    assert len(database["tc"]) == 30 * 31 // 2
    split = [plan for parts, plan in plans[1:] if parts > 1]
    assert len(split) >= 10, [parts for parts, _ in plans]
    for plan in split:
        assert "ENSURE_REQUIREMENTS" not in plan, plan
        assert "REPARTITION_BY_NUM" in plan, plan


def test_a_pass_in_one_partition_broadcasts_nothing(spark, monkeypatch):
    """Small relations: no pass after the first broadcasts (a job per broadcast relation) or
    splits its rows into more than one part."""
    plans, new_rows = [], fixpoint.new_rows

    def recorded(derived, known, parts):
        frame = new_rows(derived, known, parts)
        plans.append(frame._jdf.queryExecution().executedPlan().toString())
        return frame

    monkeypatch.setattr(fixpoint, "new_rows", recorded)
    for program in (LINEAR, PROGRAM):
        plans.clear()
        database = herbrand.materialize(program, facts={"e": chain(12)},
                                        backend=SparkBackend(session=spark, decompose=False))
        assert len(database["tc"]) == 12 * 13 // 2
        assert len(plans) > 3
        for plan in plans[1:]:
            assert "Broadcast" not in plan, plan
            assert set(re.findall(r"hashpartitioning\(.*?, (\d+)\)", plan)) <= {"1"}, plan


def test_a_pass_runs_one_job(spark):
    """Per pass of TC on a chain, after the first: the count, which also stores the new rows
    (a broadcast of the edges would be a job more; adaptive execution would make a job of
    every exchange)."""
    tracker = spark.sparkContext.statusTracker()
    jobs_by_pass = []

    def observed(event):
        jobs_by_pass.append(max(tracker.getJobIdsForGroup(None), default=-1))  # ids grow

    backend = SparkBackend(session=spark, decompose=False)
    herbrand.materialize(LINEAR, facts={"e": chain(20)}, backend=backend, observer=observed)
    passes = len(jobs_by_pass) - 1
    assert passes == 20
    steps = [b - a for a, b in pairwise(jobs_by_pass)]
    assert steps == [1] * passes, steps
