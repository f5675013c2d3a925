"""The rules the backward/forward deletion step evaluates: instance rules (atoms the rest of
the body binds probed, not joined), saturation rules reading the proved facts, and rules their
batches cannot drive."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.fixpoint import delta_variants
from herbrand.evaluators.incremental.instance_rules import (
    FOCUS,
    PairRule,
    RuleReads,
    StepRules,
    TwoStepRule,
    driven,
    instance_rule,
    reading_proved,
    unfolding,
)
from herbrand.framework.analysis import Stratum
from herbrand.framework.parser import parse
from herbrand.framework.storage import Relation
from tests.evaluators.incremental.engine_helpers import TC


def test_rewrites():
    program = parse(TC + ".decl p(x: number)\np(x) :- tc(x, _), tc(_, x).\n")
    relations = ("tc", "p")
    # e(x, y) has only head variables: probed in the new e, not joined
    base = instance_rule(program.rules[0], 0, relations)
    assert str(base.rule) == "@instance:0(x, y, @at) :- @delta:focus:tc(x, y, @at)."
    assert base.probed == (("e", (0, 1)),)
    # tc(x, y): the focus and e(y, z) bind it, so it is probed in the old tc, not joined
    recursive = instance_rule(program.rules[1], 1, relations)
    assert str(recursive.rule) == (
        "@instance:1(x, z, @at, x, y) :- @delta:focus:tc(x, z, @at), e(y, z).")
    assert recursive.atoms == (("tc", 2),) and recursive.members == (0,)
    both = instance_rule(program.rules[2], 2, relations)
    assert str(both.rule) == (
        "@instance:2(x, @at, x, @w3, @w4, x) :- @delta:focus:p(x, @at), tc(x, @w3), "
        "tc(@w4, x).")
    assert both.members == ()
    # a literal with a constant stays joined (a small selection) and binds the other's
    rdfs = parse(".decl m(s: number, p: number, o: number)\n"
                 "m(x, b, y) :- m(a, 1, b), m(x, a, y).\n").rules[0]
    sub_property = instance_rule(rdfs, 0, ("m",))
    assert str(sub_property.rule) == (
        "@instance:0(x, b, y, @at, a, 1, b, x, a, y) :- @delta:focus:m(x, b, y, @at), "
        "m(a, 1, b).")
    assert sub_property.members == (1,)
    # an atom with a constant that the rest binds is probed after the join, not joined; of
    # two that bind each other, the first is probed and the second stays joined
    typed = instance_rule(parse(".decl m(s: number, p: number, o: number)\n"
                               "m(z, 4, y) :- m(x, 0, y), m(z, 4, x).\n").rules[0], 4, ("m",))
    assert str(typed.rule) == (
        "@instance:4(z, 4, y, @at, x, 0, y, z, 4, x) :- @delta:focus:m(z, 4, y, @at), "
        "m(z, 4, x).")
    assert typed.probed == (("m", (4, 5, 6)),) and typed.members == ()
    chain = instance_rule(parse(".decl m(s: number, p: number, o: number)\n"
                               "m(x, 0, z) :- m(x, 0, y), m(y, 0, z).\n").rules[0], 1, ("m",))
    assert str(chain.rule) == (
        "@instance:1(x, 0, z, @at, x, 0, y, y, 0, z) :- @delta:focus:m(x, 0, z, @at), "
        "m(y, 0, z).")
    assert chain.probed == (("m", (4, 5, 6)),)
    # a lower literal not joined to the focus would make a product: nothing is left out
    apart = parse(TC + ".decl q(x: number)\nq(x) :- tc(x, y), e(z, y), e(y, w).\n").rules[2]
    assert instance_rule(apart, 2, relations + ("q",)).members == ()
    assert str(reading_proved(program.rules[1], relations)) == (
        "tc(x, z) :- @proved:tc(x, y), e(y, z).")


def test_a_rule_whose_constants_match_no_focus_row_is_not_run():
    rule = parse(".decl m(s: number, p: number, o: number)\n"
                 "m(x, 0, z) :- m(x, 0, y), m(y, 0, z).\n").rules[0]
    instance = instance_rule(rule, 0, ("m",)).rule
    assert not driven(instance, {FOCUS + "m": np.array([[1], [4], [2]])})
    assert driven(instance, {FOCUS + "m": np.array([[1, 1], [4, 0], [2, 3]])})
    assert not driven(instance, {FOCUS + "m": np.zeros((3, 0), dtype=np.int64)})


def test_a_rule_reading_an_empty_relation_or_no_row_with_its_constants_may_not_derive():
    rule = parse(".decl m(s: number, p: number, o: number)\n.decl d(s: number, o: number)\n"
                 "m(x, 1, z) :- d(x, y), m(y, 1, z).\n").rules[0]
    reads = RuleReads.of(rule)
    m = np.array([[5, 6], [1, 2], [7, 8]])
    d = {"d": np.array([[3], [5]])}
    assert reads.may_derive(d, {"m": Relation(m)}, {})
    assert not reads.may_derive(d, {"m": Relation(m[:, :0])}, {})  # m is empty
    assert reads.may_derive(d, {}, {})  # m unknown here: left to the evaluator
    assert not reads.may_derive({**d, "m": m[:, 1:]}, {}, {})  # no m row with p = 1
    seen = {("m", ((1, 1),)): False}  # answers kept by the caller are not asked again
    assert not reads.may_derive({**d, "m": m}, {}, seen)


def test_the_copies_are_the_rules_copying_a_lower_relation_into_distinct_variables(
        monkeypatch):
    # unfolded rules read by the evaluator (not natively as TwoStepRules, which they are)
    monkeypatch.setattr(TwoStepRule, "of", lambda *arguments: None)
    program = parse(TC + """
.decl f(x: number, y: number)
.decl r(x: number, y: number)
.decl s(x: number, y: number)
r(x, y) :- f(y, x).
r(x, y) :- r(x, z), f(z, y).
s(x, x) :- f(x, x).
s(x, y) :- e(x, y), x != y.
""")
    step = StepRules.of(Stratum(0, ("tc", "r", "s"), program.rules, True), lambda name: False)
    assert step.copies == {"tc": ("e", (0, 1)), "r": ("f", (1, 0))}
    # tc's and r's recursive rules unfold (s has no copy rule, its rules none to unfold)
    assert [str(i.rule) for i in step.unfolded] == [
        "@instance:6(x, z, @at, x, y) :- @delta:focus:tc(x, z, @at), e(y, z).",
        "@instance:7(x, y, @at, z, x) :- @delta:focus:r(x, y, @at), f(z, y)."]
    assert [i.probed for i in step.unfolded] == [(("e", (3, 4)),), (("f", (3, 4)),)]
    assert not any(i.atoms for i in step.unfolded)


def test_unfolding_reads_each_stratum_atom_as_the_lower_relation_it_copies():
    rules = parse(TC + """
.decl u(x: number, y: number)
u(x, y) :- tc(x, y), u(y, x).
""").rules
    copies = {"tc": ("e", (0, 1))}
    assert str(unfolding(rules[1], ("tc",), copies)) == "tc(x, z) :- e(x, y), e(y, z)."
    assert str(unfolding(rules[1], ("tc",), {"tc": ("e", (1, 0))})) == (
        "tc(x, z) :- e(y, x), e(y, z).")
    assert unfolding(rules[0], ("tc",), copies) is None  # no stratum atom
    assert unfolding(rules[2], ("tc", "u"), copies) is None  # u(y, x) copies nothing


def test_a_pair_rule_is_a_delta_variant_joining_one_stratum_atom_with_one_lower_atom():
    rules = parse(TC + """
.decl w(x: number, y: number, z: number)
.decl a(x: number, y: number)
a(z, x) :- tc(y, x), w(x, y, z).
tc(x, y) :- tc(x, y), e(y, 5).
tc(x, z) :- tc(x, y), tc(y, z).
tc(x, y) :- tc(x, y), e(y, y).
tc(x, y) :- tc(x, y), !e(y, x).
""").rules
    relations = ("tc", "a")
    (recursive,), (joined,) = (delta_variants(rules[k], relations) for k in (1, 2))
    assert PairRule.of(recursive, relations) == PairRule("tc", "tc", "e", (1,), (0,), (0, -2))
    # two join columns, in the source's order; head columns from both atoms
    assert PairRule.of(joined, relations) == PairRule("a", "tc", "w", (0, 1), (1, 0), (-3, 1))
    others = [v for rule in rules[3:] for v in delta_variants(rule, relations)]
    assert len(others) == 5
    # constants, a second stratum atom, a repeated variable, a negation: not pairs
    assert [PairRule.of(v, relations) for v in others] == [None] * 5
    step = StepRules.of(Stratum(0, relations, rules[:3], True), lambda name: False)
    assert len(step.pairs) == 2 and not step.saturation


def test_a_two_step_rule_is_an_unfolded_rule_of_two_lower_atoms_sharing_one_variable():
    rules = parse(TC + """
.decl f(x: number, y: number)
.decl r(x: number)
tc(x, z) :- f(z, y), e(y, x).
tc(x, z) :- e(x, y), e(y, 3), f(3, z).
tc(x, y) :- e(x, y), e(y, x).
r(x) :- e(x, y), e(y, x).
tc(x, z) :- e(x, y), f(y, z), e(z, x).
""").rules
    two_steps = [TwoStepRule.of(rule) for rule in rules[2:]]
    assert two_steps[0] == TwoStepRule("tc", ("f", 0, 1, 1), ("e", 1, 0, 0))
    # constants, the shared variable in the head, one head variable, three atoms: none
    assert two_steps[1:] == [None] * 4
    step = StepRules.of(Stratum(0, ("tc",), rules[:2], True), lambda name: False)
    assert step.two_steps == (TwoStepRule("tc", ("e", 0, 0, 1), ("e", 1, 1, 0)),)
    assert not step.unfolded  # TC's unfolded rule is proved natively only
