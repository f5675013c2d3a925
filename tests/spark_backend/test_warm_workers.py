"""Python workers started ahead of a decomposed job (``warm_workers``): the warming job runs a
task per worker asked for, readies the engine, is ignored when it fails, and a run warms once,
on masters on this machine only."""

from __future__ import annotations

import subprocess
import sys

import herbrand
from herbrand.framework.parser import parse
from herbrand.spark_backend import decomposed_strata
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.decomposed import ready_worker
from herbrand.spark_backend.warm_workers import JOB_GROUP, warm_workers
from tests.spark_backend.test_decomposed import PIVOT_FIXTURES

TWO_STRATA = (PIVOT_FIXTURES / "tc_left_linear.dl").read_text() + """
.decl tc2(x: number, y: number)
tc2(x, y) :- tc(x, y).
tc2(x, z) :- tc2(x, y), tc(y, z).
"""


def _warming_jobs(spark) -> list:
    tracker = spark.sparkContext.statusTracker()
    return [tracker.getJobInfo(job) for job in tracker.getJobIdsForGroup(JOB_GROUP)]


def test_a_warming_job_runs_one_task_per_worker_asked_for(spark):
    before = len(_warming_jobs(spark))
    warm_workers(spark, 2).join()
    jobs = _warming_jobs(spark)
    assert len(jobs) == before + 1
    newest = max(jobs, key=lambda job: job.jobId)
    assert newest.status == "SUCCEEDED"
    stages = [spark.sparkContext.statusTracker().getStageInfo(s) for s in newest.stageIds]
    assert sum(stage.numCompletedTasks for stage in stages if stage) == 2


def _fails(batches):
    raise RuntimeError("no herbrand here")


def test_a_failed_warming_is_ignored(spark):
    thread = warm_workers(spark, 1, _fails)
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert max(_warming_jobs(spark), key=lambda job: job.jobId).status == "FAILED"
    assert spark.range(3).count() == 3  # the session goes on


def test_a_readied_worker_has_imported_the_engine():
    script = ("import sys; from herbrand.spark_backend.decomposed import ready_worker; "
              "assert 'herbrand.evaluators.native.evaluator' not in sys.modules; "
              "assert list(ready_worker(iter(()))) == []; "
              "print('herbrand.evaluators.native.evaluator' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "True", done.stderr
    assert list(ready_worker(iter(()))) == []


def test_a_run_warms_once_and_only_on_a_master_on_this_machine(spark, monkeypatch):
    warmed = []
    monkeypatch.setattr(decomposed_strata, "warm_workers",
                        lambda session, tasks: warmed.append(tasks) or warm_workers(
                            session, tasks))
    program = parse(TWO_STRATA)
    facts = {"e": [(i, (i * 7 + 1) % 20) for i in range(20)]}
    database = herbrand.materialize(program, facts=facts, backend=SparkBackend(session=spark))
    assert database.decoded_rows("tc2") and warmed == [2]  # local[2]: 4 parts, 2 at once
    monkeypatch.setattr(decomposed_strata, "on_this_machine", lambda master: False)
    herbrand.materialize(program, facts=facts, backend=SparkBackend(session=spark))
    assert warmed == [2]
