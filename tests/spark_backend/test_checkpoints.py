"""The passes' checkpoints: each pass's lineage is cut when the pass returns, the storage a run
holds stays bounded over its passes, and ``release`` frees all of it.

A chain long enough for an uncut lineage to overflow the driver's stack when a task is
serialized (200 edges: linear TC failed between passes 175 and 200) takes minutes; these tests
check the property that prevents it, on 30-40 passes, instead."""

from __future__ import annotations

from pathlib import Path

import pytest

import herbrand
from herbrand.evaluators.fixpoint import delta_name
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.checkpoints import Checkpoints, checkpoint_rdd, sized
from herbrand.workloads import chain

LINEAR = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""
DOUBLING = LINEAR.replace("tc(x, y), e(y, z)", "tc(x, y), tc(y, z)")


def recorded_runs(monkeypatch) -> list:
    """Every SparkFixpoint the backends build from now on, in order."""
    runs, build = [], SparkBackend._fixpoint

    def recorded(self, *args, **kwargs):
        runs.append(build(self, *args, **kwargs))
        return runs[-1]

    monkeypatch.setattr(SparkBackend, "_fixpoint", recorded)
    return runs


def lineage_depth(frame) -> int:
    """The lines of the debug string of the RDD a job reading ``frame`` computes: one or two
    per RDD up to the stored checkpoints."""
    return len(str(frame._jdf.queryExecution().toRdd().toDebugString()).splitlines())


@pytest.mark.parametrize("single", [True, False], ids=["one-partition", "split"])
def test_each_pass_cuts_its_lineage(spark, monkeypatch, single):
    """A pass's delta is a checkpoint stored with its lineage cut when its count returns, and
    what the next pass reads (the delta and the full relation) has a lineage that does not
    grow with the passes. Both fail when a checkpoint is left for the next pass's job."""
    runs, cut, depths = recorded_runs(monkeypatch), [], []
    store = Checkpoints.store

    def stored(self, frame):
        rows = store(self, frame)
        cut.append(checkpoint_rdd(frame).isCheckpointed())
        return rows

    def observed(event):
        frames = runs[-1].frames
        depths.append(lineage_depth(frames["tc"]) + lineage_depth(frames[delta_name("tc")]))

    monkeypatch.setattr(Checkpoints, "store", stored)
    backend = SparkBackend(session=spark, decompose=False,
                           rows_per_partition=10**6 if single else 50)
    database = herbrand.materialize(LINEAR, facts={"e": chain(30)}, backend=backend,
                                    observer=observed)
    assert len(database["tc"]) == 30 * 31 // 2
    assert len(cut) == 31 and all(cut), cut  # every pass, the last (empty) one too
    assert max(depths[15:]) <= max(depths[:15]), depths


def storage(spark) -> tuple[int, list[int]]:
    """(persisted RDDs, the ids of those holding blocks) of ``spark``'s context."""
    context = spark.sparkContext._jsc
    return (context.getPersistentRDDs().size(),
            [info.id() for info in context.sc().getRDDStorageInfo()])


@pytest.mark.parametrize("interval", [1, 5])
def test_storage_stays_bounded_over_the_passes(spark, interval):
    """A relation laid out again frees the checkpoints it supersedes once it is stored: the
    RDDs a run keeps do not grow with its passes (every checkpoint kept until the end was one
    per pass, 40 here, and held the rows of every layout: quadratic)."""
    before, _ = storage(spark)
    kept = []
    backend = SparkBackend(session=spark, decompose=False, checkpoint_interval=interval)
    database = herbrand.materialize(LINEAR, facts={"e": chain(40)}, backend=backend,
                                    observer=lambda event: kept.append(storage(spark)[0]))
    assert len(database["tc"]) == 40 * 41 // 2
    assert len(kept) == 41
    assert max(kept) - before <= interval + 5, kept


@pytest.mark.parametrize("program, decompose", [(LINEAR, False), (DOUBLING, False),
                                                (LINEAR, True)],
                         ids=["linear", "doubling", "decomposed"])
def test_release_frees_every_stored_rdd(spark, program, decompose):
    """After a run, the session holds the persisted RDDs it held before, and no blocks more
    (a checkpoint's blocks are freed by unpersisting its RDD, not its frame)."""
    before = storage(spark)
    backend = SparkBackend(session=spark, decompose=decompose)
    database = herbrand.materialize(program, facts={"e": chain(15)}, backend=backend)
    assert len(database["tc"]) == 15 * 16 // 2
    assert storage(spark) == before


def test_release_deletes_reliable_checkpoint_files(spark, tmp_path):
    """Reliable checkpoints (files) superseded during the run and left at its end are
    deleted: no RDD's checkpoint folder remains under the checkpoint directory."""
    backend = SparkBackend(session=spark, decompose=False,
                           checkpoint_dir=str(tmp_path / "checkpoints"))
    database = herbrand.materialize(LINEAR, facts={"e": chain(12)}, backend=backend)
    assert len(database["tc"]) == 12 * 13 // 2
    assert list(Path(tmp_path / "checkpoints").rglob("rdd-*")) == []


def test_a_sized_checkpoint_is_the_same_rows_estimated_at_their_count(spark):
    """``sized`` changes Spark's estimate of a checkpoint, nothing else: the same leaf over the
    same RDD (no Limit in the plan), estimated at the given rows."""
    checkpoints = Checkpoints(spark, None)
    frame = checkpoints.cut(spark.range(30).selectExpr("id AS c0", "id % 7 AS c1"))
    rows = checkpoints.store(frame)
    estimated = sized(frame, rows)
    plan = estimated._jdf.queryExecution().optimizedPlan()
    assert plan.stats().rowCount().get() == rows == 30
    assert "Limit" not in plan.toString()
    assert checkpoint_rdd(estimated).id() == checkpoint_rdd(frame).id()
    assert sorted(estimated.collect()) == sorted(frame.collect())
    checkpoints.release()
