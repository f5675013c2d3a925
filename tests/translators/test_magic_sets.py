"""The magic-sets rewrite: golden programs, fallbacks, names, and answers equal to a selection
over the full materialization (fixed programs here; random ones in
tests/evaluators/test_top_down.py)."""

from __future__ import annotations

import pytest

import herbrand
from herbrand.framework.analysis import analyse
from herbrand.framework.parser import parse, parse_atom
from herbrand.translators.magic_sets import magic_sets

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
.input e
.output tc
tc(x, y) :- e(x, y).
tc(x, z) :- e(x, y), tc(y, z).
"""
SAMEGEN = """
.decl parent(x: number, y: number)
.decl node(x: number)
.decl sg(x: number, y: number)
sg(x, x) :- node(x).
sg(x, y) :- parent(x, a), sg(a, b), parent(y, b).
"""
NEGATION = """
.decl e(x: number, y: number)
.decl r(x: number, y: number)
.decl blocked(x: number)
.decl b(x: number)
.decl ok(x: number, y: number)
r(x, y) :- e(x, y).
r(x, z) :- r(x, y), e(y, z).
b(x) :- e(x, x).
blocked(x) :- b(x).
ok(x, y) :- r(x, y), !blocked(y).
"""
BODY_CONSTANT = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
.decl q(y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
q(y) :- tc(1, y), y > 2.
"""


def _rewrite(text: str, goal: str):
    program = parse(text)
    return magic_sets(program, (parse_atom(goal),))


def _rules(text: str, goal: str) -> list[str]:
    return [str(rule) for rule in _rewrite(text, goal).program.rules]


def test_tc_with_a_bound_first_argument():
    rewrite = _rewrite(TC, "tc(1, y)")
    assert rewrite.answers == ("tc_bf",)
    assert [str(rule) for rule in rewrite.program.rules] == [
        "magic_tc_bf(1).",
        "tc_bf(x, y) :- magic_tc_bf(x), e(x, y).",
        "magic_tc_bf(y) :- magic_tc_bf(x), e(x, y).",
        "tc_bf(x, z) :- magic_tc_bf(x), e(x, y), tc_bf(y, z).",
    ]
    assert [str(d) for d in rewrite.program.declarations[-2:]] == [
        ".decl tc_bf(x: number, y: number)", ".decl magic_tc_bf(x: number)"]
    # only the input directive is kept: tc is not written (its copy is partial)
    assert [str(d) for d in rewrite.program.directives] == [".input e"]
    assert rewrite.fallbacks == ()


def test_same_generation_is_linear():
    assert _rules(SAMEGEN, "sg(16384, 32767)") == [
        "magic_sg_bb(16384, 32767).",
        "sg_bb(x, x) :- magic_sg_bb(x, x), node(x).",
        "magic_sg_bf(a) :- magic_sg_bb(x, y), parent(x, a).",
        "sg_bb(x, y) :- magic_sg_bb(x, y), parent(x, a), sg_bf(a, b), parent(y, b).",
        "sg_bf(x, x) :- magic_sg_bf(x), node(x).",
        "magic_sg_bf(a) :- magic_sg_bf(x), parent(x, a).",
        "sg_bf(x, y) :- magic_sg_bf(x), parent(x, a), sg_bf(a, b), parent(y, b).",
    ]


def test_negation_falls_back_to_materializing_the_slice_whole():
    rewrite = _rewrite(NEGATION, "ok(1, y)")
    assert [(f.relation, f.reason.split(" in the rule")[0].split(",")[0])
            for f in rewrite.fallbacks] == [("blocked", "negated"), ("b", "blocked depends on it")]
    assert [str(rule) for rule in rewrite.program.rules] == [
        "b(x) :- e(x, x).",
        "blocked(x) :- b(x).",
        "magic_ok_bf(1).",
        "magic_r_bf(x) :- magic_ok_bf(x).",
        "ok_bf(x, y) :- magic_ok_bf(x), r_bf(x, y), !blocked(y).",
        "r_bf(x, y) :- magic_r_bf(x), e(x, y).",
        "r_bf(x, z) :- magic_r_bf(x), r_bf(x, y), e(y, z).",
    ]
    assert "// materialized whole: blocked: negated in the rule at" in rewrite.explain()
    analyse(rewrite.program)  # stratified


def test_a_constant_in_a_body_atom_binds():
    rewrite = _rewrite(BODY_CONSTANT, "q(_)")
    assert rewrite.answers == ("q",)
    assert [str(rule) for rule in rewrite.program.rules] == [
        "magic_tc_bf(1).",
        "q(y) :- tc_bf(1, y), y > 2.",
        "tc_bf(x, y) :- magic_tc_bf(x), e(x, y).",
        "tc_bf(x, z) :- magic_tc_bf(x), tc_bf(x, y), e(y, z).",
    ]


def test_a_prefix_through_a_derived_relation_is_a_supplementary_relation():
    rules = _rules("""
        .decl e(x: number, y: number)
        .decl p(x: number, y: number)
        p(x, y) :- e(x, y).
        p(x, z) :- p(x, y), p(y, z).
    """, "p(1, z)")
    assert rules == [
        "magic_p_bf(1).",
        "p_bf(x, y) :- magic_p_bf(x), e(x, y).",
        "sup_p_bf_1_1(x, y) :- magic_p_bf(x), p_bf(x, y).",
        "magic_p_bf(y) :- sup_p_bf_1_1(x, y).",
        "p_bf(x, z) :- sup_p_bf_1_1(x, y), p_bf(y, z).",
    ]


def test_arithmetic_on_head_bindings_is_not_passed_on():
    rules = _rules("""
        .decl valid(x: number)
        .decl gen(x: number)
        gen(0) :- valid(0).
        gen(x) :- gen(x + 1), valid(x).
    """, "gen(0)")
    # gen(x + 1) is asked for whole: asking for gen(x + 1) per gen(x) asked would not end
    assert "gen_b(x) :- magic_gen_b(x), _me0 = (x + 1), gen(_me0), valid(x)." in rules
    assert "gen(x) :- gen(_me0), valid(x), _me0 = (x + 1)." in rules


def test_generated_names_never_collide_with_declared_ones():
    rewrite = _rewrite(TC + ".decl tc_bf(x: number)\n.decl magic_tc_bf(x: number)\n",
                       "tc(1, y)")
    assert rewrite.answers == ("tc_bf_",)
    assert [d.name for d in rewrite.program.declarations] == ["e", "tc_bf_", "magic_tc_bf_"]


def test_an_input_relation_with_rules_keeps_its_rows():
    rules = _rules(TC.replace(".input e", ".input e, tc"), "tc(1, y)")
    assert "tc_bf(v0, v1) :- magic_tc_bf(v0), tc(v0, v1)." in rules


@pytest.mark.parametrize(("text", "goal"), [
    (TC, "tc(1, y)"), (TC, "tc(_, 3)"), (TC, "tc(x, x)"), (SAMEGEN, "sg(4, y)"),
    (SAMEGEN, "sg(4, 6)"), (NEGATION, "ok(1, y)"), (NEGATION, "ok(x, 2)"),
    (BODY_CONSTANT, "q(y)"),
])
def test_answers_equal_the_selection_over_the_full_model(text, goal):
    facts = {"e": [(1, 2), (2, 3), (3, 3), (3, 4), (5, 1)],
             "parent": [(2, 1), (3, 1), (4, 2), (5, 2), (6, 3), (7, 3)],
             "node": [(i,) for i in range(1, 8)]}
    program = parse(text)
    facts = {name: rows for name, rows in facts.items() if name in program.declaration_of}
    relation = parse_atom(goal).relation
    by_magic = herbrand.query(program, goal, facts=facts, evaluator="substitution")
    by_model = herbrand.query(program, goal, facts=facts, evaluator="substitution", magic=False)
    assert set(by_magic.decoded_rows(relation)) == set(by_model.decoded_rows(relation))
    assert len(by_model[relation]) > 0
