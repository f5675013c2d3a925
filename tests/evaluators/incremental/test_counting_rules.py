"""The counting engine's rewrites: exact iteration variants and signed epoch variants."""

from __future__ import annotations

from herbrand.evaluators.incremental.counting_rules import epoch_variants, iteration_variants
from herbrand.framework.parser import parse

PROGRAM = parse("""
.decl e(x: number, y: number)
.decl b(x: number)
.decl p(x: number, y: number)
.decl n(c: number)
p(x, z) :- p(x, y), e(y, z), p(z, x).
p(x, y) :- e(x, y), !b(x).
p(x, y) :- e(x, y), !b(_).
n(c) :- c = count : { e(_, _) }.
""")
JOIN, NEGATION, WILDCARD, AGGREGATE = PROGRAM.rules


def test_iteration_variants_read_the_previous_relation_before_the_delta():
    assert [str(v) for v in iteration_variants(JOIN, {"p"})] == [
        "p(x, z) :- @delta:p(x, y), e(y, z), p(z, x).",
        "p(x, z) :- @delta:p(z, x), @prev:p(x, y), e(y, z).",
    ]
    assert iteration_variants(NEGATION, {"p"}) == ()


def test_epoch_variants_read_new_before_and_old_after():
    variants, whole = epoch_variants(JOIN, {"p", "e"})
    assert not whole
    described = [(str(v.rule), v.sign, v.delta) for v in variants]
    assert described[:2] == [
        ("p(x, z) :- @plus:p(x, y), @old:e(y, z), @old:p(z, x).", 1, "@plus:p"),
        ("p(x, z) :- @minus:p(x, y), @old:e(y, z), @old:p(z, x).", -1, "@minus:p"),
    ]
    assert described[-1] == ("p(x, z) :- @minus:p(z, x), p(x, y), e(y, z).", -1, "@minus:p")
    assert len(described) == 6


def test_a_negated_literal_flips_with_opposite_signs():
    variants, whole = epoch_variants(NEGATION, {"b"})
    assert not whole
    assert [(str(v.rule), v.sign) for v in variants] == [
        ("p(x, y) :- @plus:b(x), e(x, y).", -1),
        ("p(x, y) :- @minus:b(x), e(x, y).", 1),
    ]


def test_wildcard_negations_and_aggregates_are_differenced_whole():
    assert epoch_variants(WILDCARD, {"b"}) == ((), True)
    assert epoch_variants(AGGREGATE, {"e"}) == ((), True)
    assert epoch_variants(AGGREGATE, {"b"}) == ((), False)
