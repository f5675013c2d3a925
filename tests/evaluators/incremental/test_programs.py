"""Preparing programs for incremental engines: inputs, base rules, change variants."""

from __future__ import annotations

import pytest

from herbrand.evaluators.incremental.programs import (
    IncrementalProgram,
    change_variants,
    head_restricted,
)
from herbrand.framework.errors import ArityError
from herbrand.framework.evaluator_checks import encode_facts
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation

PROGRAM = parse("""
.decl e(x: number, y: number)
.decl seed(x: number)
.decl p(x: number)
.decl q(x: number)
seed(7).
p(1).
p(x) :- e(x, _), !seed(x).
q(n) :- n = count : { p(_) }.
""")


def test_prepare_moves_base_facts_of_derived_relations_behind_a_base_rule():
    prepared, instance = IncrementalProgram.prepare(PROGRAM, encode_facts(PROGRAM, {"e": [(1, 2)]}))
    assert prepared.inputs == {"e", "seed"} and prepared.derived == {"p", "q"}
    assert instance["seed"].to_set() == {(7,)}  # inline facts of inputs are rows of the input
    assert instance["@base:p"].to_set() == {(1,)} and not len(instance["p"])
    rules = [str(r) for s in prepared.strata for r in s.rules]
    assert "p(x0) :- @base:p(x0)." in rules


def test_prepare_rejects_rows_of_the_wrong_arity():
    database = Database({"e": Relation.from_rows([(1,)])})
    with pytest.raises(ArityError, match="relation e"):
        IncrementalProgram.prepare(PROGRAM, database)


def test_change_variants_cover_positive_negated_and_aggregated_literals():
    rule_p = PROGRAM.rules[2]
    variants = change_variants(rule_p, {"e": "@minus:e"}, {"seed": "@plus:seed"})
    assert [str(v) for v in variants] == [
        "p(x) :- @minus:e(x, _), !seed(x).",
        "p(x) :- @plus:seed(x), e(x, _), !seed(x).",
    ]
    rule_q = PROGRAM.rules[3]
    assert change_variants(rule_q, {"p": "@plus:p"}, {}) == (rule_q,)
    assert change_variants(rule_q, {"e": "@plus:e"}, {}) == ()


def test_head_restricted_prepends_the_head_atom():
    assert str(head_restricted(PROGRAM.rules[2], "@over:p")) == (
        "p(x) :- @over:p(x), e(x, _), !seed(x).")
