"""The peers on the same workloads: clingo grounding the same rules, DuckDB's recursive CTE
(one thread, and two), each checked to derive as many tuples as herbrand."""

from __future__ import annotations

import pytest

import herbrand
from herbrand.comparison.peer_process import clingo_count

from .conftest import WORKLOAD_NAMES
from .peers import asp_facts, duckdb_count


def _expected(workload) -> int:
    return len(herbrand.materialize(workload.program, facts=workload.facts)[workload.output])


@pytest.mark.parametrize("workload_name", WORKLOAD_NAMES)
def test_clingo(benchmark, workloads, workload_name):
    workload = workloads[workload_name]
    benchmark.group = workload_name
    benchmark.name = "clingo"
    benchmark.extra_info["peer"] = True
    text = asp_facts(workload.facts)
    rounds = 3 if benchmark.enabled else 1
    count = benchmark.pedantic(clingo_count, args=(workload.asp, text, workload.output),
                               rounds=rounds, iterations=1)
    benchmark.extra_info["tuples"] = count
    assert count == _expected(workload)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("workload_name", [n for n in WORKLOAD_NAMES if not n.startswith("rdfs")])
def test_duckdb(benchmark, workloads, workload_name, threads):
    workload = workloads[workload_name]
    benchmark.group = workload_name
    benchmark.name = f"duckdb-{threads}thread"
    benchmark.extra_info["peer"] = True
    rounds = 3 if benchmark.enabled else 1
    count = benchmark.pedantic(duckdb_count, args=(workload.sql, workload.facts, threads),
                               rounds=rounds, iterations=1, warmup_rounds=1)
    benchmark.extra_info["tuples"] = count
    assert count == _expected(workload)
