"""select_constants: atoms with constants read selections of fixed relations, same results."""

from __future__ import annotations

import doctest

from herbrand.evaluators.incremental import selections
from herbrand.evaluators.incremental.programs import renamed, with_body
from herbrand.evaluators.incremental.selections import (
    SELECT_PREFIX,
    KeptSelections,
    select_constants,
)
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


def test_kept_selections_follow_the_changes_and_equal_a_fresh_scan():
    rule, = parse(".decl m(a: number, b: number, c: number)\n"
                  "m(x, 0, z) :- m(x, 0, y), m(y, 0, z).").rules
    old = Database({"m": Relation.from_rows([(1, 0, 2), (2, 0, 3), (1, 5, 3)])})
    kept = KeptSelections()
    _, first = select_constants([rule], old, kept)
    added, removed = Relation.from_rows([(4, 0, 5), (6, 7, 8)]), Relation.from_rows([(1, 0, 2)])
    new = Database({"m": old["m"].difference(removed).union(added)})
    kept.changed("m", old["m"], new["m"], removed.columns, added.columns)
    _, carried = select_constants([rule], new, kept)
    _, scanned = select_constants([rule], new)
    expected = {(2, 3), (4, 5)}
    assert carried["@select:m:1=0"].to_set() == scanned["@select:m:1=0"].to_set() == expected
    _, before = select_constants([rule], old, kept)  # the view before the change stays
    assert before["@select:m:1=0"] is first["@select:m:1=0"]
    assert kept.nbytes > 0
    other = Database({"m": Relation.from_rows([(9, 0, 9)])})  # not followed: scanned again
    _, fresh = select_constants([rule], other, kept)
    assert fresh["@select:m:1=0"].to_set() == {(9, 9)}


def test_kept_selections_leave_the_changes_alone():
    rule, = parse(".decl m(a: number, b: number)\n.decl d(a: number, b: number)\n"
                  "m(x, 1) :- d(x, 1), m(x, 1).").rules
    change = renamed(rule.body[0], "@plus:m")
    rule = with_body(rule, (change, rule.body[1]))
    fixed = Database({"m": Relation.from_rows([(1, 1), (2, 0)]),
                      "@plus:m": Relation.from_rows([(1, 1)])})
    (rewritten,), views = select_constants([rule], fixed, KeptSelections())
    assert [lit.atom.relation for lit in rewritten.body] == ["@plus:m", "@select:m:1=1"]
    assert views["@select:m:1=1"].to_rows() == [(1,)]
