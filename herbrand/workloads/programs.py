"""Program texts of the workloads: the Datalog programs written beside the facts for
whole-process runs (herbrand, Soufflé), and the same computations for the peers by shape
(``PEER_PROGRAMS``): ASP rules for clingo and recursive CTEs for DuckDB (tables named after the
input relations, columns c0, c1, ...; each query returns one count). The peers' processes
are handed the ASP or SQL text itself (``herbrand.comparison.peer_process``), so they import
nothing of herbrand's.
"""

from __future__ import annotations

from dataclasses import dataclass

from herbrand.workloads.generators import ANDERSEN_PROGRAM

TC_DL = """\
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
.input e
.output tc
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""

SAME_GENERATION = """
.decl parent(p: number, c: number)
.decl sg(x: number, y: number)
sg(x, y) :- parent(p, x), parent(p, y), x != y.
sg(x, y) :- parent(a, x), sg(a, b), parent(b, y).
"""

SAME_GENERATION_DL = SAME_GENERATION.lstrip() + ".input parent\n.output sg\n"

ANDERSEN_DL = (ANDERSEN_PROGRAM + "".join(f".input {name}\n" for name in
                                         ("addressOf", "assign", "load", "store"))
               + ".output pointsTo\n")


def counter_dl(bound: int) -> str:
    """``b(0). b(x+1) :- b(x), x < bound.``: ``bound + 1`` tuples in ``bound`` iterations."""
    return (".decl b(x: number)\n.output b\n"
            f"b(0).\nb(x + 1) :- b(x), x < {bound}.\n")


def tc_file_dl(filename: str) -> str:
    """TC over an edge file named explicitly (relative to the facts directory)."""
    return TC_DL.replace(".input e\n", f'.input e(IO=file, filename="{filename}")\n')


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

RDFS_DL = """\
.decl t(s: number, p: number, o: number)
.decl m(s: number, p: number, o: number)
.input t
.output m
m(s, p, o) :- t(s, p, o).
m(x, 0, z) :- m(x, 0, y), m(y, 0, z).
m(x, 1, z) :- m(x, 1, y), m(y, 1, z).
m(x, b, y) :- m(a, 1, b), m(x, a, y).
m(z, 4, y) :- m(x, 0, y), m(z, 4, x).
m(y, 4, x) :- m(a, 2, x), m(y, a, z).
m(z, 4, x) :- m(a, 3, x), m(y, a, z).
"""


@dataclass(frozen=True)
class PeerProgram:
    """One computation as each peer writes it: ``datalog`` (the program a herbrand program is
    recognised by, ``herbrand.comparison.shapes``), ``output`` (the relation the peers count),
    ``asp`` (clingo's rules, or None) and ``sql`` (DuckDB's query returning the count, or
    None)."""

    datalog: str
    output: str
    asp: str | None
    sql: str | None


# The peers' programs by shape.
PEER_PROGRAMS: dict[str, PeerProgram] = {
    "tc": PeerProgram(TC_DL, "tc", TC_ASP, TC_SQL),
    "sg": PeerProgram(SAME_GENERATION_DL, "sg", SAME_GENERATION_ASP, SAME_GENERATION_SQL),
    "rdfs": PeerProgram(RDFS_DL, "m", RDFS_ASP, None),
}
