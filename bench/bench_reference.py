"""The reference evaluator (substitution, semi-naive) on every workload.

The slowest workloads for a tuple-at-a-time evaluator are only timed once per run.
"""

from __future__ import annotations

import pytest

import herbrand

from .conftest import WORKLOAD_NAMES as WORKLOADS


@pytest.mark.parametrize("workload_name", WORKLOADS)
def test_reference_evaluator(benchmark, workloads, workload_name):
    workload = workloads[workload_name]
    benchmark.group = workload_name
    benchmark.name = "substitution-seminaive"
    program = herbrand.parse(workload.program)

    def run():
        return herbrand.materialize(program, facts=workload.facts, evaluator="substitution")

    database = benchmark.pedantic(run, rounds=1, iterations=1, warmup_rounds=0)
    benchmark.extra_info["tuples"] = len(database[workload.output])
    assert len(database[workload.output]) > 0
