"""Input-driven terms: which terms of a stratum's incremental joins only input changes drive,
and the slice each reads."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.dbsp.input_terms import (
    InputTerms,
    kept_rows,
    last_change,
    split_by_tag,
    tagged_name,
    tagged_rows,
)
from herbrand.evaluators.incremental.dbsp.operators import LiftedRule, delta_name, old_name
from herbrand.evaluators.incremental.dbsp.trace import Trace
from herbrand.evaluators.incremental.dbsp.zset import ZSet
from herbrand.framework.parser import parse
from herbrand.framework.syntax import Literal

TC = parse("""
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
""").rules

SQUARED = parse("""
.decl t(x: number)
.decl m(x: number, y: number)
m(x, z) :- m(x, y), m(y, z), t(z).
""").rules


def _reads(rule) -> set[str]:
    return {e.atom.relation for e in rule.body if isinstance(e, Literal)}


def test_tc_terms_driven_by_edges_alone_read_the_tagged_rows_of_tc():
    rules = [LiftedRule.of(rule) for rule in TC]
    terms = InputTerms(rules, ["tc"])
    found = {(t.rule, t.reads, t.term[0]) for t in terms.terms}
    assert found == {(0, None, (0,)), (1, "tc", (1,))}
    sliced = next(t.term[1] for t in terms.terms if t.reads == "tc")
    assert tagged_name("tc") in _reads(sliced) and old_name("tc") not in _reads(sliced)
    # the tag is the first column of the tagged rows and of the head
    (tagged,) = [e.atom for e in sliced.body
                 if isinstance(e, Literal) and e.atom.relation == tagged_name("tc")]
    assert tagged.terms[0] == sliced.head.terms[0] and tagged.arity == 3
    # the terms driven by Δtc stay with the circuit's evaluation over R_{i-1}
    assert terms.others == ((), tuple(term for term in rules[1].terms if 0 in term[0]))
    assert not terms.read  # those read e's old value and Δtc, not tc's old value
    assert terms.single == terms.others and not any(terms.multiple)


def test_a_term_reading_a_stratum_relation_twice_is_not_input_driven():
    rules = [LiftedRule.of(rule) for rule in SQUARED]
    terms = InputTerms(rules, ["m"])
    assert not terms.terms
    assert terms.others == (rules[0].terms,)
    assert terms.read == {"m"}
    # a term with one Δm reads m's old value once (linear in it: sliced); Δt alone reads it
    # twice, both Δm not at all
    single = {chosen for chosen, _ in terms.single[0]}
    assert single == {(0,), (1,), (0, 1), (0, 2), (1, 2), (0, 1, 2)}
    assert {t.term[0] for t in terms.sliced} == {(0,), (1,), (0, 2), (1, 2)}
    assert all(t.rule == 0 and t.reads == "m" and tagged_name("m") in _reads(t.term[1])
               and old_name("m") not in _reads(t.term[1]) for t in terms.sliced)
    # each shares with its Δm the variable it joins on: m(x, y)'s slice with Δm(y, z) by y
    by_chosen = {t.term[0]: t.shared for t in terms.sliced}
    assert by_chosen[(1,)] == ((delta_name("m"), (), ((1, 0),)),)
    assert {chosen for chosen, _ in terms.multiple[0]} == {(2,)}
    assert terms.multiple_read == {"m"}


def test_kept_rows_are_those_joining_the_changes():
    """``tc(x, y), Δe(y, z)`` keeps the rows of tc's trace whose y occurs in Δe; a slice
    keeps its kept rows (none: no evaluation), and an unchanged Δe keeps no row."""
    rules = [LiftedRule.of(rule) for rule in TC]
    terms = InputTerms(rules, ["tc"])
    rows = np.array([[1, 1, 2, 3, 1, 4], [2, 5, 3, 5, 3, 2]])
    iteration = np.array([0, 0, 1, 1, 2, 2])
    trace = Trace.of(rows, iteration, [ZSet.of_set(rows[:, :2])])
    delta = ZSet.of_set(np.array([[3, 9], [7, 8]]))  # Δe: (3, 7), (9, 8)
    kept = kept_rows(terms.terms, {"tc": trace}, {delta_name("e"): delta})
    columns = trace.relation.columns
    assert sorted(map(tuple, columns[:, kept["tc"]].T.tolist())) == [(1, 3), (2, 3)]
    # tagged by the iteration each drives: the slice of j drives j + 1
    assert tagged_rows(trace, kept["tc"]).columns.T.tolist() == [[2, 2, 3], [3, 1, 3]]
    assert tagged_rows(trace, kept["tc"], 0, 1).columns.shape == (3, 0)
    assert tagged_rows(trace, kept["tc"], 1, 2).columns.T.tolist() == [[2, 2, 3]]
    assert tagged_rows(trace, kept["tc"], 2, 3).columns.T.tolist() == [[3, 1, 3]]
    assert tagged_rows(trace, None, 1, 2).columns.T.tolist() == [[2, 2, 3], [2, 3, 5]]
    assert tagged_rows(trace, None).columns[0].tolist() == [1, 1, 2, 2, 3, 3]
    assert tagged_rows(trace, None, 3, 4).columns.shape == (3, 0)  # past the trace
    assert not len(kept_rows(terms.terms, {"tc": trace}, {})["tc"])
    assert last_change({"tc": trace}, kept) == 3  # a kept row at 2: the change at 3 reads it
    # from the slice of 2 on, only (1, 3); past the trace, none
    later = kept_rows(terms.terms, {"tc": trace}, {delta_name("e"): delta}, 2)
    assert columns[:, later["tc"]].T.tolist() == [[1, 3]]
    assert kept_rows(terms.terms, {"tc": trace}, {delta_name("e"): delta}, 3)["tc"].tolist() == []
    assert last_change({"tc": trace}, {"tc": np.zeros(0, dtype=np.int64)}) == 0


def test_a_term_sharing_no_variable_with_its_change_keeps_every_row():
    rules = [LiftedRule.of(rule) for rule in parse("""
    .decl e(x: number)
    .decl p(x: number)
    p(x) :- e(x).
    p(x) :- p(x), e(_).
    """).rules]
    terms = InputTerms(rules, ["p"])
    rows = np.array([[1, 2]])
    trace = Trace.of(rows, np.array([0, 1]), [ZSet.of_set(rows)])
    kept = kept_rows(terms.terms, {"p": trace}, {delta_name("e"): ZSet.of_set(np.array([[7]]))})
    assert kept == {"p": None} and last_change({"p": trace}, kept) == 2


def test_kept_rows_join_only_the_delta_rows_holding_its_literals_constants():
    """``p(x), Δe(x, 1)`` keeps the rows of p whose x occurs in Δe's rows with 1 in their
    second column: (2, 1) keeps p(2), (1, 0) keeps nothing; the same term twice is matched
    once."""
    rules = [LiftedRule.of(rule) for rule in parse("""
    .decl e(x: number, k: number)
    .decl p(x: number)
    p(x) :- e(x, 0).
    p(x) :- p(x), e(x, 1).
    p(x) :- p(x), e(x, 1).
    """).rules]
    terms = InputTerms(rules, ["p"])
    assert [t.shared for t in terms.terms if t.reads] == [
        ((delta_name("e"), ((1, 1),), ((0, 0),)),)] * 2
    rows = np.array([[1, 2]])
    trace = Trace.of(rows, np.array([0, 1]), [ZSet.of_set(rows)])
    delta = ZSet.of_set(np.array([[1, 2], [0, 1]]))
    kept = kept_rows(terms.terms, {"p": trace}, {delta_name("e"): delta})
    assert trace.relation.columns[:, kept["p"]].tolist() == [[2]]
    assert last_change({"p": trace}, kept) == 2
    only_zero = ZSet.of_set(np.array([[1], [0]]))
    assert kept_rows(terms.terms, {"p": trace}, {delta_name("e"): only_zero})["p"].tolist() == []


def test_split_by_tag_consolidates_each_tag_in_any_order():
    """Rows tagged 2, 0, 2, 5, 0 (not ascending: sorted stably first) give one Z-set per tag
    that holds a row, each consolidated (2's (1, 1) twice sums, 0's (3, 3) cancels); tags
    already ascending are sliced alike."""
    rows = np.array([[1, 4, 1, 7, 3, 3], [1, 4, 1, 7, 3, 3]])
    weights = np.array([1, 2, 1, 3, 1, -1])
    split = split_by_tag(np.array([2, 0, 2, 5, 0, 0]), rows, weights)
    assert sorted(split) == [0, 2, 5]
    assert split[0] == ZSet.of(np.array([[4], [4]]), np.array([2]))
    assert split[2] == ZSet.of(np.array([[1], [1]]), np.array([2]))
    assert split[5] == ZSet.of(np.array([[7], [7]]), np.array([3]))
    ascending = split_by_tag(np.array([0, 0, 0, 2, 2, 5]), rows[:, [1, 4, 5, 0, 2, 3]],
                             weights[[1, 4, 5, 0, 2, 3]])
    assert sorted(ascending) == [0, 2, 5]
    assert all(ascending[k] == split[k] for k in split)
