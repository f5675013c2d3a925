"""The saturation's lower literals cut to the rows that can derive a checked head: which
literals are cut, the rows a cut admits as C grows, and when a rule reads its relation whole."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.fixpoint import delta_variants
from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.instance_rules import reading_proved
from herbrand.evaluators.incremental.near_heads import NearHeads, cut_rule
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation
from tests.evaluators.incremental.engine_helpers import TC


def _saturation(text: str, relations: tuple[str, ...]):
    return [reading_proved(v, relations) for rule in parse(text).rules
            for v in delta_variants(rule, set(relations))]


def test_the_lower_literals_holding_head_variables_are_cut():
    recursive, = _saturation(TC, ("tc",))
    cut, cuts = cut_rule(recursive, 0, ("tc",))
    assert str(cut) == "tc(x, z) :- @delta:tc(x, y), @near0.1:e(y, z)."
    assert [(c.relation, c.columns) for c in cuts] == [("e", ((1, 1),))]
    # a constant, a negation, or no head variable: the literal is read whole
    others = (".decl e(x: number, y: number)\n.decl f(x: number)\n.decl g(x: number)\n"
              ".decl r(x: number)\n"
              "r(y) :- r(x), e(x, 7), f(y).\nr(y) :- r(y), e(y, z), !g(y).\n"
              "r(y) :- r(y), f(z).\n")
    first, second, third = _saturation(others, ("r",))
    assert str(cut_rule(first, 0, ("r",))[0]) == "r(y) :- @delta:r(x), e(x, 7), @near0.2:f(y)."
    assert str(cut_rule(second, 1, ("r",))[0]) == (
        "r(y) :- @delta:r(y), @near1.1:e(y, z), !g(y).")
    assert cut_rule(third, 2, ("r",)) == (third, ())


def _checked(rows) -> CheckedFacts:
    facts = CheckedFacts(2)
    facts.check(np.array(rows, dtype=np.int64).T)
    return facts


def test_a_cut_admits_the_rows_of_the_checked_heads_values_once_in_order():
    recursive, = _saturation(TC, ("tc",))
    near = NearHeads([recursive], ("tc",))
    e = Relation.from_rows([(1, 2), (2, 3), (3, 4), (5, 3), (4, 2)])
    lower = Database({"e": e})
    facts = {"tc": _checked([(9, 3), (8, 3), (9, 9), (7, 7), (6, 6)])}
    rules, reads = near.rules(facts, lower)
    assert [str(r) for r in rules] == ["tc(x, z) :- @delta:tc(x, y), @near0.1:e(y, z)."]
    first = reads["@near0.1:e"]
    assert sorted(first.to_rows()) == [(2, 3), (5, 3)]  # the e rows into 3 (or 9, 7, 6)
    facts["tc"].check(np.array([[9, 9], [2, 3]]))  # 2 is new, 3 is not
    _, reads = near.rules(facts, lower)
    grown = reads["@near0.1:e"].columns
    assert np.array_equal(grown[:, :2], first.columns)  # appended: the index extends
    assert sorted(map(tuple, grown.T.tolist())) == [(1, 2), (2, 3), (4, 2), (5, 3)]
    _, reads = near.rules(facts, lower)  # C unchanged: the same Relation
    assert reads["@near0.1:e"].columns is grown


def test_a_cut_of_two_columns_admits_a_row_when_both_values_are_held():
    rule, = _saturation(".decl e(x: number, y: number)\n.decl r(x: number, y: number)\n"
                        "r(x, y) :- r(y, x), e(x, y).\n", ("r",))
    near = NearHeads([rule], ("r",))
    lower = Database({"e": Relation.from_rows([(1, 2), (2, 1), (1, 3)])})
    facts = {"r": _checked([(1, 5), (4, 6), (6, 4)])}  # first column 1, second never 2 or 3
    _, reads = near.rules(facts, lower)
    assert reads["@near0.1:e"].to_rows() == []
    facts["r"].check(np.array([[7], [2]]))
    _, reads = near.rules(facts, lower)
    assert reads["@near0.1:e"].to_rows() == [(1, 2)]


def test_a_relation_larger_than_the_checked_heads_is_read_whole():
    recursive, = _saturation(TC, ("tc",))
    near = NearHeads([recursive], ("tc",))
    lower = Database({"e": Relation.from_rows([(i, i + 1) for i in range(5)])})
    rules, reads = near.rules({"tc": _checked([(0, 1), (0, 2)])}, lower)
    assert rules == [recursive] and reads == {}
