"""Input-driven terms: which terms of a stratum's incremental joins only input changes drive,
and the slice each reads."""

from __future__ import annotations

from herbrand.evaluators.incremental.dbsp.input_terms import InputTerms, slice_name
from herbrand.evaluators.incremental.dbsp.operators import LiftedRule, old_name
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


def test_tc_terms_driven_by_edges_alone_read_the_slice_of_tc():
    rules = [LiftedRule.of(rule) for rule in TC]
    terms = InputTerms(rules, ["tc"])
    found = {(t.rule, t.reads, t.term[0]) for t in terms.terms}
    assert found == {(0, None, (0,)), (1, "tc", (1,))}
    sliced = next(t.term[1] for t in terms.terms if t.reads == "tc")
    assert slice_name("tc") in _reads(sliced) and old_name("tc") not in _reads(sliced)
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
    assert {chosen for _, (chosen, _) in terms.sliced[0]} == {(0,), (1,), (0, 2), (1, 2)}
    assert all(slice_name("m") in _reads(rule) and old_name("m") not in _reads(rule)
               for _, (_, rule) in terms.sliced[0])
    assert {chosen for chosen, _ in terms.multiple[0]} == {(2,)}
    assert terms.multiple_read == {"m"}
