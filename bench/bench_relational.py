"""The executor and index comparison: the batch executor (relational) over each index backing,
local and parallel, and the native executor, local and parallel, on every workload, with the
peak memory of each batch configuration.

Each configuration is timed over a few rounds (one when benchmarks are disabled); the peak
memory is measured in one extra, untimed run (see ``memory``). The substitution evaluator's
times are in ``bench_reference``; the peers' in ``bench_peers``. All three share the workload
groups, so the report shows them side by side.
"""

from __future__ import annotations

import pytest

import herbrand
from herbrand.evaluators.parallel import ParallelBackend

from .conftest import WORKLOAD_NAMES
from .memory import peak_megabytes

INDEXES = ("sorted_vector", "spine", "hash", "btree", "persistent")
CONFIGURATIONS = {
    **{f"relational-{index}": {"evaluator": "relational", "index": index, "backend": "local"}
       for index in INDEXES},
    "relational-sorted_vector-parallel2": {
        "evaluator": "relational", "index": "sorted_vector", "backend": ParallelBackend(workers=2),
    },
    "native": {"evaluator": "native", "backend": "local"},
    "native-parallel2": {"evaluator": "native", "backend": ParallelBackend(workers=2)},
}


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
@pytest.mark.parametrize("workload_name", WORKLOAD_NAMES)
def test_relational(benchmark, workloads, workload_name, configuration):
    workload = workloads[workload_name]
    benchmark.group = workload_name
    benchmark.name = configuration
    program = herbrand.parse(workload.program)
    options = CONFIGURATIONS[configuration]

    def run():
        return herbrand.materialize(program, facts=workload.facts, **options)

    rounds = 3 if benchmark.enabled else 1
    database = benchmark.pedantic(run, rounds=rounds, iterations=1, warmup_rounds=1)
    benchmark.extra_info["tuples"] = len(database[workload.output])
    if benchmark.enabled and options["evaluator"] == "relational":
        # tracemalloc sees numpy's buffers, not the native store's: its memory is in the
        # whole-process peak RSS of side_by_side
        benchmark.extra_info["peak_mb"] = peak_megabytes(run)
    assert len(database[workload.output]) > 0
