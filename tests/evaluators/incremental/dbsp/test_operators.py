"""Lifted operators: the incremental join equals the difference of full evaluations, along
either time dimension; ``accumulated`` reads a differentiated stream's integral."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.counting_semijoins import SEMIJOIN_PREFIX, Semijoins
from herbrand.evaluators.incremental.dbsp.operators import (
    LiftedEvaluation,
    LiftedRule,
    accumulated,
    copied_columns,
    delta_name,
    negation_delta,
    old_name,
)
from herbrand.evaluators.incremental.dbsp.zset import ZSet
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.parser import parse
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable

RULES = parse("""
.decl a(x: number, y: number)
.decl b(x: number, y: number)
.decl c(x: number)
.decl h(x: number, y: number)
h(x, z) :- a(x, y), b(y, z), !c(z).
h(x, x) :- a(x, y), a(y, x), b(x, _), !c(y), x < 3.
h(y, x) :- a(x, y).
h(x, x) :- b(x, y).
""").rules

pairs = st.sets(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=8)
singles = st.sets(st.tuples(st.integers(0, 3)), max_size=3)


def _relation(rows, arity):
    return Relation.from_rows(sorted(rows), arity)


def _change(old: Relation, new: Relation) -> ZSet:
    return ZSet.change(new.difference(old).columns, old.difference(new).columns)


@settings(max_examples=40, deadline=None)
@given(pairs, pairs, singles, pairs, pairs, singles)
def test_incremental_join_equals_the_difference_of_full_evaluations(a0, b0, c0, a1, b1, c1):
    old = {"a": _relation(a0, 2), "b": _relation(b0, 2), "c": _relation(c0, 1)}
    new = {"a": _relation(a1, 2), "b": _relation(b1, 2), "c": _relation(c1, 1)}
    evaluator, symbols = RelationalEvaluator(), SymbolTable()
    for rule in RULES:
        lifted = LiftedRule.of(rule)
        deltas = {delta_name(n): _change(old[n], new[n]) for n in ("a", "b")}
        for factor in lifted.factors:
            if factor.negated:
                deltas[factor.delta] = negation_delta(factor, old["c"], new["c"])
        change = LiftedEvaluation(evaluator, symbols, old, deltas).change(lifted)
        before = LiftedEvaluation(evaluator, symbols, old, {}).full(lifted)
        after = LiftedEvaluation(evaluator, symbols, new, {}).full(lifted)
        assert change == after - before, str(rule)


def test_a_copy_term_is_read_off_its_delta_without_a_plan():
    """A term whose body is one delta atom of distinct variables, under a head of them, takes
    its derivations from the delta's columns; the evaluator plans no rule for it."""
    rules = parse("""
    .decl a(x: number, y: number)
    .decl h(x: number, y: number, z: number)
    h(y, x, y) :- a(x, y).
    h(x, 1, y) :- a(x, y).
    h(x, x, x) :- a(x, x).
    """).rules
    copy, constant, repeated = (LiftedRule.of(r) for r in rules)
    assert copied_columns(copy.terms[0][1]) == (1, 0, 1, 2)
    assert copied_columns(constant.terms[0][1]) is None
    assert copied_columns(repeated.terms[0][1]) is None
    evaluator = RelationalEvaluator()
    old = {"a": _relation({(1, 2), (3, 4)}, 2)}
    delta = ZSet.change(np.array([[5], [6]]), np.array([[1], [2]]))
    change = LiftedEvaluation(evaluator, SymbolTable(), old,
                              {delta_name("a"): delta}).change(copy)
    assert change.rows.T.tolist() == [[2, 1, 2], [6, 5, 6]]
    assert change.weights.tolist() == [-1, 1]
    assert copy.terms[0][1] not in evaluator._plans
    # the same shape over an old value (no delta batch) is evaluated as before
    full = LiftedEvaluation(evaluator, SymbolTable(), old, {}).full(copy)
    assert full.rows.T.tolist() == [[2, 1, 2], [4, 3, 4]] and full.weights.tolist() == [1, 1]


def test_unchanged_factors_give_no_terms():
    lifted = LiftedRule.of(RULES[0])
    assert len(lifted.terms) == 7  # the non-empty subsets of three factors
    old = {"a": _relation({(1, 2)}, 2), "b": _relation({(2, 3)}, 2), "c": _relation(set(), 1)}
    evaluation = LiftedEvaluation(RelationalEvaluator(), SymbolTable(), old, {})
    assert not len(evaluation.change(lifted))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sets(st.integers(0, 5), max_size=4), max_size=5))
def test_accumulated_reads_the_integral_of_a_differentiated_stream(values):
    stream = [ZSet.of_set(np.array([sorted(v)], dtype=np.int64).reshape(1, -1)) for v in values]
    diffs = [value - previous for value, previous
             in zip(stream, [ZSet.empty(1), *stream][:len(stream)], strict=True)]
    for i in range(len(stream)):
        assert accumulated(diffs, stream[i], i).tolist() == [1] * len(stream[i])
        absent = np.array([[v for v in range(6) if v not in set(values[i])]], dtype=np.int64)
        assert accumulated(diffs, ZSet.of_set(absent), i).tolist() == [0] * absent.shape[1]


class _CountingEvaluator(RelationalEvaluator):
    """A relational evaluator that counts the rules it runs."""

    runs = 0

    def derivations(self, rules, instance, transient=frozenset()):
        self.runs += len(rules)
        return super().derivations(rules, instance, transient)


def test_terms_whose_delta_holds_no_row_with_their_constants_are_not_run():
    rule = parse(".decl m(s: number, p: number, o: number)\n"
                 "m(x, 0, z) :- m(x, 0, y), m(y, 0, z).\n").rules[0]
    lifted = LiftedRule.of(rule)
    old = {"m": Relation.from_rows([(1, 0, 2), (2, 0, 3)], 3)}
    evaluator = _CountingEvaluator()
    other = ZSet.of_set(np.array([[3], [1], [4]]))  # predicate 1: no term runs
    assert not len(LiftedEvaluation(evaluator, SymbolTable(), old,
                                    {delta_name("m"): other}).change(lifted))
    assert evaluator.runs == 0
    joined = ZSet.of_set(np.array([[3], [0], [4]]))  # m(3, 0, 4) extends m(1, 0, 2), m(2, 0, 3)
    change = LiftedEvaluation(evaluator, SymbolTable(), old,
                              {delta_name("m"): joined}).change(lifted)
    assert sorted(map(tuple, change.rows.T.tolist())) == [(2, 0, 4)]
    assert evaluator.runs == 3


class _IndexingEvaluator(RelationalEvaluator):
    """Records the names of the relations it builds or reuses an index of."""

    def __init__(self):
        super().__init__()
        self.indexed: list[str] = []

    def relation_index(self, name, relation, key):
        self.indexed.append(name)
        return super().relation_index(name, relation, key)


def test_a_reduction_of_a_reducible_relation_is_joined_without_an_index():
    """A reducible relation's semi-join reduction is read once: the join from the much
    smaller delta builds no index of it (its rows search the sorted delta), and derives the
    same change as the evaluation without reductions."""
    rule = parse(".decl e(x: number, y: number)\n.decl tc(x: number, y: number)\n"
                 "tc(x, z) :- tc(x, y), e(y, z).\n").rules[0]
    lifted = LiftedRule.of(rule)
    tc = Relation.from_rows([(x, y) for x in range(20) for y in range(20)], 2)
    old = {"tc": tc, "e": Relation.from_rows([(y, y + 1) for y in range(20)], 2)}
    deltas = {delta_name("e"): ZSet.of_set(np.array([[3], [40]]))}
    evaluator = _IndexingEvaluator()
    reduced = LiftedEvaluation(evaluator, SymbolTable(), old, deltas, semijoins=Semijoins(),
                               reducible=frozenset({old_name("tc")})).change(lifted)
    assert reduced == LiftedEvaluation(RelationalEvaluator(), SymbolTable(), old,
                                       deltas).change(lifted)
    assert len(reduced) == 20
    assert not any(name.startswith(SEMIJOIN_PREFIX) for name in evaluator.indexed)
