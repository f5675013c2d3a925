"""Benchmark workloads: each a (program, facts) pair, built once per session.

Benchmarks are grouped by workload (``benchmark.group``) so the report compares the
implementations of one workload side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from herbrand.workloads import dyre_edges, dyre_program, lubm1_triples, random_tree, rmat

SAME_GENERATION = """
.decl parent(p: number, c: number)
.decl sg(x: number, y: number)
sg(x, y) :- parent(p, x), parent(p, y), x != y.
sg(x, y) :- parent(a, x), sg(a, b), parent(b, y).
"""


@dataclass(frozen=True)
class Workload:
    name: str
    program: object  # a path or Datalog text
    facts: dict[str, np.ndarray]
    output: str  # the relation whose size is recorded


def _workloads() -> dict[str, Workload]:
    tc = dyre_program("tc")
    return {
        "tc-graph1000": Workload("tc-graph1000", tc, {"e": dyre_edges("graph1000")}, "tc"),
        "tc-graph10000": Workload("tc-graph10000", tc, {"e": dyre_edges("graph10000")}, "tc"),
        "tc-rmat1000": Workload("tc-rmat1000", tc, {"e": rmat(1000, 10_000, seed=1)}, "tc"),
        "sg-tree2000": Workload("sg-tree2000", SAME_GENERATION,
                                {"parent": random_tree(2000, seed=1)}, "sg"),
        "rdfs-lubm1": Workload("rdfs-lubm1", dyre_program("rdfs"), {"t": lubm1_triples()}, "m"),
    }


@pytest.fixture(scope="session")
def workloads() -> dict[str, Workload]:
    return _workloads()
