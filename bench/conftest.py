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


TC_ASP = """
tc(X, Y) :- e(X, Y).
tc(X, Z) :- tc(X, Y), e(Y, Z).
"""

TC_SQL = """
WITH RECURSIVE tc(x, y) AS (
    SELECT c0, c1 FROM e
    UNION
    SELECT tc.x, e.c1 FROM tc JOIN e ON tc.y = e.c0)
SELECT count(*) FROM tc
"""

SAME_GENERATION_ASP = """
sg(X, Y) :- parent(P, X), parent(P, Y), X != Y.
sg(X, Y) :- parent(A, X), sg(A, B), parent(B, Y).
"""

SAME_GENERATION_SQL = """
WITH RECURSIVE sg(x, y) AS (
    SELECT p1.c1, p2.c1 FROM parent p1 JOIN parent p2 ON p1.c0 = p2.c0 WHERE p1.c1 <> p2.c1
    UNION
    SELECT p1.c1, p2.c1 FROM sg JOIN parent p1 ON p1.c0 = sg.x JOIN parent p2 ON p2.c0 = sg.y)
SELECT count(*) FROM sg
"""

RDFS_ASP = """
m(S, P, O) :- t(S, P, O).
m(X, 0, Z) :- m(X, 0, Y), m(Y, 0, Z).
m(X, 1, Z) :- m(X, 1, Y), m(Y, 1, Z).
m(X, B, Y) :- m(A, 1, B), m(X, A, Y).
m(Z, 4, Y) :- m(X, 0, Y), m(Z, 4, X).
m(Y, 4, X) :- m(A, 2, X), m(Y, A, Z).
m(Z, 4, X) :- m(A, 3, X), m(Y, A, Z).
"""


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
