"""select_constants: atoms with constants read selections of fixed relations, same results."""

from __future__ import annotations

import doctest

from herbrand.evaluators.incremental import selections
from herbrand.evaluators.incremental.selections import SELECT_PREFIX, select_constants
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation

PROGRAM = """
.decl m(s: number, p: number, o: number)
.decl d(s: number, p: number, o: number)
.decl out(x: number, y: number)
out(x, z) :- d(x, 0, y), m(y, 0, z), !m(z, 1, x), m(1, 1, 1).
"""
FACTS = {"m": [(1, 0, 2), (2, 0, 3), (3, 1, 8), (1, 1, 1), (2, 1, 9)],
         "d": [(7, 0, 1), (8, 0, 2)]}


def _database() -> Database:
    return Database({name: Relation.from_rows(rows) for name, rows in FACTS.items()})


def test_only_positive_partial_constant_literals_over_fixed_relations_are_rewritten():
    rule, = parse(PROGRAM).rules
    (rewritten,), with_views = select_constants([rule], Database({"m": _database()["m"]}))
    relations = [element.atom.relation for element in rewritten.body]
    # d is not fixed; the negated atom and the all-constant atom are kept as they are
    assert relations == ["d", SELECT_PREFIX + "m:1=0", "m", "m"]
    assert with_views[SELECT_PREFIX + "m:1=0"].to_set() == {(1, 2), (2, 3)}


def test_rewritten_rules_derive_the_same_rows():
    rule, = parse(PROGRAM).rules
    database = _database()
    (rewritten,), with_views = select_constants([rule], database)
    evaluator = RelationalEvaluator()
    plain = evaluator.evaluate([rule], database)["out"].to_set()
    assert plain == {(7, 2)}  # (8, 3) is excluded by the negated m(3, 1, 8)
    assert evaluator.evaluate([rewritten], with_views)["out"].to_set() == plain


def test_no_constants_no_views():
    rule, = parse(".decl e(x: number, y: number)\n.decl t(x: number, y: number)\n"
                  "t(x, z) :- t(x, y), e(y, z).").rules
    database = Database({"e": Relation.from_rows([(1, 2)]), "t": Relation.from_rows([(0, 1)])})
    (rewritten,), same = select_constants([rule], database)
    assert rewritten == rule and same is database


def test_doctests():
    assert doctest.testmod(selections).failed == 0
