"""The Spark backend: against a hand-written DataFrame loop, and the COST suite.

- ``test_baseline_against_herbrand``: the plain semi-naive TC loop written directly on
  DataFrames (join, distinct, left-anti join, union per iteration, no caching, checkpoints or
  broadcasts) against the herbrand Spark backend, on TC over dyre/graph10000, same master
  (local[2]), same run. Target: herbrand at least 2x faster.
- ``test_cost``: each workload on the local backend (1 thread; the single-thread time), the
  parallel backend (2 workers, when registered), and Spark on local[1], local[2] and
  local-cluster[2,1,1024]. ``herbrand bench report`` prints the COST table and plot from the
  ``cost-<workload>`` groups (``extra_info["cores"]`` orders the configurations).
- ``test_spark_iteration_overhead``: seconds (and Spark jobs) per semi-naive pass on a chain of
  50 edges, decomposition off, for the linear TC and the doubling one (no pivot), where the
  data is negligible and the time is Spark's per-pass overhead (the figure to drive down).

With ``--benchmark-disable`` (``make test``) each function runs once on smoke-sized inputs
(chains of SMOKE_EDGES edges), so the suite only checks that everything still runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import functions as F

import herbrand
from herbrand.framework.registry import BACKENDS
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.session import java_executable, start_session
from herbrand.workloads import chain

# local-cluster executors are launched from $SPARK_HOME; it must be set before the first JVM.
os.environ.setdefault("SPARK_HOME", str(Path(pyspark.__file__).parent))

pytestmark = pytest.mark.skipif(java_executable() is None, reason="no Java: Spark cannot start")

CONF = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4"}
SPARK_MASTERS = {"spark-local[1]": ("local[1]", 1), "spark-local[2]": ("local[2]", 2),
                 "spark-local-cluster[2,1,1024]": ("local-cluster[2,1,1024]", 2)}
COST_WORKLOADS = ["tc-graph1000", "tc-graph10000", "rdfs-lubm1"]
SMOKE_EDGES = 3
OVERHEAD_EDGES = 50
TC_PROGRAM = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""


def _session(master: str):
    """A session on ``master``, stopping the active one when it runs on another master."""
    active = pyspark.sql.SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master != master:
        active.stop()
    session = start_session(master, CONF)
    session.sparkContext.setLogLevel("ERROR")
    return session


def _inputs(benchmark, workloads, name: str):
    """(program, facts, output relation): the workload, or a short chain when benchmarks
    are disabled (a smoke run)."""
    if benchmark.disabled:
        return TC_PROGRAM, {"e": chain(SMOKE_EDGES)}, "tc"
    workload = workloads[name]
    return workload.program, workload.facts, workload.output


def baseline_tc(session, edges) -> int:
    """Transitive closure by the textbook DataFrame loop, untuned; returns its size."""
    e = session.createDataFrame(edges.tolist(), "x long, y long")
    tc = e.distinct()
    delta = tc
    while True:
        step = (delta.alias("d").join(e.alias("e"), F.col("d.y") == F.col("e.x"))
                .select(F.col("d.x").alias("x"), F.col("e.y").alias("y")).distinct())
        new = step.join(tc, ["x", "y"], "left_anti")
        if new.count() == 0:
            return tc.count()
        tc = tc.union(new)
        delta = new


@pytest.mark.parametrize("implementation", ["dataframe-baseline", "herbrand-spark"])
def test_baseline_against_herbrand(benchmark, workloads, implementation):
    program, facts, output = _inputs(benchmark, workloads, "tc-graph10000")
    session = _session("local[2]")
    benchmark.group = "spark-baseline-tc-graph10000"
    benchmark.name = implementation
    if implementation == "dataframe-baseline":
        def run():
            return baseline_tc(session, facts["e"])
    else:
        backend = SparkBackend(session=session, driver_rows=0)  # Spark's plans, not the driver

        def run():
            return len(herbrand.materialize(program, facts, backend=backend)[output])

    tuples = benchmark.pedantic(run, rounds=2 if not benchmark.disabled else 1, iterations=1)
    benchmark.extra_info["tuples"] = tuples
    assert tuples > 0


def _configurations():
    configurations = [pytest.param("local-1thread", id="local-1thread")]
    configurations.append(pytest.param(
        "parallel-2", id="parallel-2",
        marks=[] if "parallel" in BACKENDS else [pytest.mark.xfail(
            strict=True, reason="the parallel backend is not registered yet")]))
    configurations += [pytest.param(name, id=name) for name in SPARK_MASTERS]
    return configurations


def _backend(configuration: str):
    """(backend, cores) of a COST configuration."""
    if configuration == "local-1thread":
        return "local", 1
    if configuration == "parallel-2":
        return BACKENDS.get("parallel")(workers=2), 2
    master, cores = SPARK_MASTERS[configuration]
    return SparkBackend(session=_session(master)), cores


@pytest.mark.parametrize("workload_name", COST_WORKLOADS)  # varies fastest: one session each
@pytest.mark.parametrize("configuration", _configurations())
def test_cost(benchmark, workloads, workload_name, configuration):
    program, facts, output = _inputs(benchmark, workloads, workload_name)
    backend, cores = _backend(configuration)
    parsed = herbrand.parse(program)
    benchmark.group = f"cost-{workload_name}"
    benchmark.name = configuration

    def run():
        return len(herbrand.materialize(parsed, facts, backend=backend)[output])

    tuples = benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
    benchmark.extra_info["tuples"] = tuples
    benchmark.extra_info["cores"] = cores
    assert tuples > 0


OVERHEAD_PROGRAMS = {"tc-linear": TC_PROGRAM,
                     "tc-doubling": TC_PROGRAM.replace("tc(x, y), e(y, z)", "tc(x, y), tc(y, z)")}


@pytest.mark.parametrize("program_name", OVERHEAD_PROGRAMS)
def test_spark_iteration_overhead(benchmark, program_name):
    """Semi-naive passes (decomposition off: the linear TC has a pivot, the doubling one
    none; on Spark: a chain of 50 edges would run on the driver); extra_info has
    seconds_per_pass (the target: at most 0.1) and jobs_per_pass."""
    session = _session("local[2]")
    backend = SparkBackend(session=session, decompose=False, driver_rows=0)
    program = herbrand.parse(OVERHEAD_PROGRAMS[program_name])
    edges = SMOKE_EDGES if benchmark.disabled else OVERHEAD_EDGES
    facts = {"e": chain(edges)}
    benchmark.group = f"spark-iteration-overhead-chain{OVERHEAD_EDGES}"
    benchmark.name = f"herbrand-spark-local[2]-{program_name}"
    tracker = session.sparkContext.statusTracker()
    stats, jobs = [], []

    def run():
        first = max(tracker.getJobIdsForGroup(None), default=-1)
        database, run_stats = herbrand.materialize_with_stats(program, facts, backend=backend)
        stats[:] = run_stats
        jobs[:] = [max(tracker.getJobIdsForGroup(None), default=-1) - first]
        return len(database["tc"])

    tuples = benchmark.pedantic(run, rounds=2 if not benchmark.disabled else 1, iterations=1)
    passes = sum(s.iterations for s in stats)
    benchmark.extra_info["tuples"] = tuples
    benchmark.extra_info["passes"] = passes
    benchmark.extra_info["seconds_per_pass"] = round(sum(s.seconds for s in stats) / passes, 3)
    benchmark.extra_info["jobs_per_pass"] = round(jobs[0] / passes, 2)
    assert tuples == edges * (edges + 1) // 2
