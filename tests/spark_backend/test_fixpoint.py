"""The semi-naive driver: results do not depend on the checkpoint interval; one Progress per
pass."""

from __future__ import annotations

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


def recorded_plans(monkeypatch) -> list[tuple[int, str]]:
    """(parts, physical plan) of every pass's new rows (``partitions.new_rows``, as
    ``fixpoint`` calls it) from now on, in order. The plan is that of a new DataFrame over the
    same query, planned as the pass plans it (same inputs, same settings): planning the pass's
    own frame would fix its plan before the pass caches it, and its checkpoint would then
    neither read the cache nor get its size."""
    plans, new_rows = [], fixpoint.new_rows

    def recorded(derived, known, parts):
        frame = new_rows(derived, known, parts)
        plan = frame.select(*frame.columns)._jdf.queryExecution().executedPlan().toString()
        plans.append((parts, plan))
        return frame

    monkeypatch.setattr(fixpoint, "new_rows", recorded)
    return plans


def test_a_pass_after_the_first_does_not_exchange_the_full_relation(spark, monkeypatch):
    """The known rows are laid out like the derived ones: the distinct and the anti-join of
    a pass need no exchange that Spark would insert (ENSURE_REQUIREMENTS); only the derived
    rows are shuffled, by the layout's repartition. (Laid out in one part, the known rows
    are a union that Spark exchanges within that part: see ``fixpoint``.)"""
    plans = recorded_plans(monkeypatch)
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


def test_a_pass_in_one_partition_exchanges_nothing(spark, monkeypatch):
    """Small relations, many passes: every pass joins, deduplicates and anti-joins within the
    one part, without an Exchange (Spark exchanges both sides of a join whose estimated size
    passes ``spark.sql.maxSinglePartitionBytes``, and an estimate that is a product over the
    joins of all earlier passes soon does: ``SparkFixpoint._derive``) and without a broadcast
    (a job per broadcast relation)."""
    plans = recorded_plans(monkeypatch)
    for program in (LINEAR, PROGRAM):
        plans.clear()
        database = herbrand.materialize(program, facts={"e": chain(20)},
                                        backend=SparkBackend(session=spark, decompose=False))
        assert len(database["tc"]) == 20 * 21 // 2
        assert len(plans) > 5
        for _, plan in plans:
            assert "Exchange" not in plan and "Broadcast" not in plan, plan


def test_a_pass_runs_one_job(spark):
    """Per pass of TC on a chain, after the first: the count, which caches the new rows and
    stores the previous pass's, in one stage (a broadcast of the edges would be a job more;
    adaptive execution would make a job of every exchange, and an exchange is a stage more).
    The last pass finds nothing new, so its anti-join reads none of the known rows, whose
    checkpoint (laid out after pass 20) Spark then stores in a job of its own."""
    tracker = spark.sparkContext.statusTracker()
    jobs_by_pass = []

    def observed(event):
        jobs_by_pass.append(max(tracker.getJobIdsForGroup(None), default=-1))  # ids grow

    backend = SparkBackend(session=spark, decompose=False)
    herbrand.materialize(LINEAR, facts={"e": chain(20)}, backend=backend, observer=observed)
    passes = len(jobs_by_pass) - 1
    assert passes == 20
    steps = [b - a for a, b in pairwise(jobs_by_pass)]
    assert steps[:-1] == [1] * (passes - 1) and steps[-1] <= 2, steps
    stages = [len(tracker.getJobInfo(job).stageIds)
              for job in range(jobs_by_pass[0] + 1, jobs_by_pass[-1] + 1)]
    assert stages == [1] * len(stages), stages


def compilations(spark) -> int:
    """Classes Spark's code generator has compiled in this JVM so far (cache misses)."""
    metrics = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics
    return metrics.METRIC_COMPILATION_TIME().getCount()


@pytest.mark.parametrize("program", [LINEAR, PROGRAM], ids=["linear", "doubling"])
def test_passes_in_one_partition_reuse_their_generated_code(spark, program):
    """A pass in one partition generates the code of the pass before (a delta read through
    a Limit of its size made new code every pass, about 9 compilations, driver and task):
    run again, the passes compile nothing."""
    backend = SparkBackend(session=spark, decompose=False)
    herbrand.materialize(program, facts={"e": chain(20)}, backend=backend)
    before = compilations(spark)
    database = herbrand.materialize(program, facts={"e": chain(20)}, backend=backend)
    assert len(database["tc"]) == 20 * 21 // 2
    assert compilations(spark) - before <= 2
