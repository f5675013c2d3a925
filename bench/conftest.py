"""Benchmark workloads: each a (program, facts) pair, built once per session.

Benchmarks are grouped by workload (``benchmark.group``) so the report compares the
implementations of one workload side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from herbrand.workloads import dyre_edges, dyre_program, lubm1_triples, random_tree, rmat
from herbrand.workloads.programs import (
    RDFS_ASP,
    SAME_GENERATION,
    SAME_GENERATION_ASP,
    SAME_GENERATION_SQL,
    TC_ASP,
    TC_SQL,
)


@dataclass(frozen=True)
class Workload:
    """A benchmark: a program, its facts, the relation whose size is recorded, and the same
    computation for the peers: ``asp`` (clingo rules over the same facts) and ``sql`` (a DuckDB
    recursive CTE over tables named after the input relations, columns c0, c1, ... returning
    one count), where one is written."""

    name: str
    program: object  # a path or Datalog text
    facts: dict[str, np.ndarray]
    output: str  # the relation whose size is recorded
    asp: str | None = None
    sql: str | None = None


def _workloads() -> dict[str, Workload]:
    tc = dyre_program("tc")
    return {
        "tc-graph1000": Workload("tc-graph1000", tc, {"e": dyre_edges("graph1000")}, "tc",
                                 TC_ASP, TC_SQL),
        "tc-graph10000": Workload("tc-graph10000", tc, {"e": dyre_edges("graph10000")}, "tc",
                                  TC_ASP, TC_SQL),
        "tc-rmat1000": Workload("tc-rmat1000", tc, {"e": rmat(1000, 10_000, seed=1)}, "tc",
                                TC_ASP, TC_SQL),
        "sg-tree2000": Workload("sg-tree2000", SAME_GENERATION,
                                {"parent": random_tree(2000, seed=1)}, "sg",
                                SAME_GENERATION_ASP, SAME_GENERATION_SQL),
        "rdfs-lubm1": Workload("rdfs-lubm1", dyre_program("rdfs"), {"t": lubm1_triples()}, "m",
                               RDFS_ASP),
    }


WORKLOAD_NAMES = ("tc-graph1000", "tc-graph10000", "tc-rmat1000", "sg-tree2000", "rdfs-lubm1")


@pytest.fixture(scope="session")
def workloads() -> dict[str, Workload]:
    return _workloads()
