"""Whole processes, as users meet herbrand: ``herbrand run PROG -F FACTS -D OUT`` in each of its
configurations beside Soufflé (compiled and interpreted), DuckDB and clingo, on the workloads of
``herbrand.workloads.catalogue``, one group per workload (``process-<workload>``), one row per
configuration (``bench.processes``).

Each row's times are those of whole child processes (``herbrand.comparison.measure``: a warm-up
run, then timed runs from fork to exit, each one's output checked against the known sizes and
herbrand's default configuration); they are handed to pytest-benchmark through a clock that
advances by exactly the measured seconds, so the report's median is the process's median.
``extra_info``: ``tuples`` (the workload's headline relation), ``peak_rss_mb`` (the process's
``ru_maxrss``), ``process_seconds`` (the median again, rounded), ``runs``, and for herbrand's
configurations ``warm_seconds`` (the in-process median of ``herbrand.materialize``, as
``bench_relational`` measures; full size only); Soufflé, DuckDB and clingo rows carry
``peer: True``, so ``herbrand bench report`` prints every row's ratio to each of them.

Sizes: with ``--benchmark-only`` (``make bench``) the full workloads, each run stopped after
``$HERBRAND_BENCH_TIMEOUT`` seconds (default 600; a stopped configuration is skipped with the
reason), Gnutella08 and Galen only when ``HERBRAND_BENCH_HEAVY=1``. Otherwise (``make test``,
or plain pytest) the smoke sizes, one run each: every workload with herbrand's default, Soufflé
and the peers, and herbrand's other configurations on two workloads only (each herbrand
process costs about a second of start-up); Soufflé binaries are not compiled then, only used
when ``bench/.cache`` has them. A configuration that cannot run here (no ``souffle``, no
``native`` evaluator) is skipped with the reason.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from herbrand.comparison.measure import measure, measure_warm
from herbrand.comparison.outputs import Output
from herbrand.comparison.processes import Unavailable, default_memory_limit_mb
from herbrand.workloads.catalogue import HEAVY, WORKLOADS, Prepared, prepare, shape_of, spec

from .processes import CONFIGURATIONS, DEFAULT_CONFIGURATIONS, REFERENCE, cache_root

# Smoke runs give herbrand's non-default configurations these workloads only.
SMOKE_EVERY_CONFIGURATION = ("tc-graph10000", "counter100k")
SMOKE_TIMEOUT = 120.0


def _full(config) -> bool:
    return bool(config.getoption("benchmark_only", False))


def _cases(full: bool) -> list[tuple[str, str]]:
    heavy = os.environ.get("HERBRAND_BENCH_HEAVY") == "1"
    cases = []
    for workload in WORKLOADS:
        if ("full" if full else "smoke") not in spec(workload).sizes:
            continue
        if workload in HEAVY and not heavy:
            continue
        shape = shape_of(workload)
        for name in DEFAULT_CONFIGURATIONS:
            tool = CONFIGURATIONS[name].configuration.peer
            if tool in ("duckdb", "clingo") and (
                    shape is None or (shape.peer.sql if tool == "duckdb" else shape.peer.asp)
                    is None):
                continue  # no program for this peer: no row
            if (not full and CONFIGURATIONS[name].kind == "herbrand" and name != REFERENCE
                    and workload not in SMOKE_EVERY_CONFIGURATION):
                continue
            cases.append((workload, name))
    return cases


def pytest_generate_tests(metafunc):
    if {"workload_name", "configuration_name"} <= set(metafunc.fixturenames):
        cases = _cases(_full(metafunc.config))
        metafunc.parametrize(("workload_name", "configuration_name"), cases,
                             ids=[f"{w}-{c}" for w, c in cases])


@dataclass
class ProcessContext:
    """The session's sizes, limits, prepared workloads and reference outputs."""

    full: bool
    root: Path
    scratch: Path
    timeout: float
    memory_limit_mb: float
    prepared: dict[str, Prepared] = field(default_factory=dict)
    references: dict[str, dict[str, Output] | None] = field(default_factory=dict)

    @property
    def size(self) -> str:
        return "full" if self.full else "smoke"

    def prepare(self, workload: str) -> Prepared:
        if workload not in self.prepared:
            self.prepared[workload] = prepare(workload, self.size, self.root)
        return self.prepared[workload]

    def reference(self, workload: str) -> dict[str, Output] | None:
        """The outputs of herbrand's default configuration (one untimed run, unless its own
        row has run already); None when it does not finish (then only the known sizes are
        checked)."""
        if workload not in self.references:
            result = measure(CONFIGURATIONS[REFERENCE].configuration, self.prepare(workload),
                             scratch=self.scratch / "reference", cache_root=cache_root(),
                             name=REFERENCE, repeat=1, warmup=0,
                             timeout=self.timeout, memory_limit_mb=self.memory_limit_mb)
            self.references[workload] = result.outputs if result.ok else None
        return self.references[workload]


@pytest.fixture(scope="session")
def process_context(request, tmp_path_factory) -> ProcessContext:
    full = _full(request.config)
    base = tmp_path_factory.mktemp("processes")
    return ProcessContext(
        full=full,
        root=cache_root() if full else base / "workloads",
        scratch=base / "scratch",
        timeout=float(os.environ.get("HERBRAND_BENCH_TIMEOUT", 600 if full else SMOKE_TIMEOUT)),
        memory_limit_mb=default_memory_limit_mb(),
    )


class _Clock:
    """A timer for pytest-benchmark that advances by the seconds it is told, so a row's stats
    are the measured processes' seconds."""

    def __init__(self, seconds: list[float]):
        self.now = 0.0
        self.pending = list(seconds)

    def __call__(self) -> float:
        return self.now

    def run(self) -> None:
        self.now += self.pending.pop(0) if self.pending else 0.0


def test_process(benchmark, process_context, workload_name, configuration_name):
    context = process_context
    column = CONFIGURATIONS[configuration_name]
    configuration = column.configuration
    benchmark.group = f"process-{workload_name}"
    benchmark.name = configuration_name
    prepared = context.prepare(workload_name)
    try:
        configuration.check(prepared, cache_root(), compile=context.full)
    except Unavailable as why:
        pytest.skip(f"{configuration_name}: {why}")
    reference = None if configuration_name == REFERENCE else context.reference(workload_name)
    result = measure(configuration, prepared, scratch=context.scratch / configuration_name,
                     cache_root=cache_root(), name=configuration_name, repeat=3 if context.full else 1, warmup=1 if context.full else 0,
                     timeout=context.timeout, memory_limit_mb=context.memory_limit_mb,
                     reference=reference, compile=context.full)
    if result.status in ("timeout", "memory") and context.full:
        pytest.skip(f"{configuration_name} on {workload_name}: {result.status} "
                    f"({result.detail})")
    assert result.ok, f"{configuration_name} on {workload_name}: {result.status}: {result.detail}"
    if configuration_name == REFERENCE:
        context.references[workload_name] = result.outputs

    clock = _Clock(result.seconds)
    if hasattr(benchmark, "_timer"):  # pytest-benchmark's timer, read by pedantic's runner
        benchmark._timer = clock
    benchmark.pedantic(clock.run, rounds=len(result.seconds), iterations=1)

    extra = benchmark.extra_info
    extra["tuples"] = result.tuples(spec(workload_name).headline)
    extra["peak_rss_mb"] = round(result.rss, 1)
    extra["process_seconds"] = round(result.median, 4)
    extra["runs"] = len(result.seconds)
    if column.peer:
        extra["peer"] = True
    if context.full and configuration.kind == "herbrand":
        warm = measure_warm(configuration, prepared, scratch=context.scratch / "warm",
                            timeout=context.timeout, memory_limit_mb=context.memory_limit_mb)
        if warm:
            extra["warm_seconds"] = round(statistics.median(warm), 4)
