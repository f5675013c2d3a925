"""``herbrand.explain`` and ``Explainer``: golden proof trees on small fixed programs, goals
in every form, and goals that cannot be tuples of the program."""

from __future__ import annotations

import json

import pytest

import herbrand
from herbrand.api import load_database
from herbrand.framework.errors import (
    ArityError,
    HerbrandSyntaxError,
    HerbrandTypeError,
    UndeclaredRelationError,
    UsageError,
)
from herbrand.framework.parser import parse
from herbrand.framework.syntax import Atom, Const
from herbrand.provenance.explain import Explainer
from herbrand.provenance.proofs import Proof

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""
CHAIN = {"e": [(1, 2), (2, 3), (3, 4)]}


def _explainer(text: str, facts: dict) -> Explainer:
    program = parse(text, file="p.dl")
    return Explainer(program, load_database(program, facts))


def test_tc_proof_goes_down_to_the_input_facts_with_decreasing_heights():
    proof = herbrand.explain(parse(TC, file="tc.dl"), "tc(1, 4)", CHAIN)
    assert str(proof) == "\n".join([
        "tc(1, 4) [3] rule #2 at tc.dl:5:1: tc(x, z) :- tc(x, y), e(y, z).",
        "  tc(1, 3) [2] rule #2 at tc.dl:5:1: tc(x, z) :- tc(x, y), e(y, z).",
        "    tc(1, 2) [1] rule #1 at tc.dl:4:1: tc(x, y) :- e(x, y).",
        "      e(1, 2) [0] input fact",
        "    e(2, 3) [0] input fact",
        "  e(3, 4) [0] input fact",
    ])
    assert proof.derived and proof.relation == "tc" and proof.values == (1, 4)
    assert proof.rule_index == 1 and [p.height for p in proof.premises] == [2, 0]


def test_negation_picks_a_body_instance_whose_negated_atom_is_absent():
    proof = _explainer("""
        .decl e(x: number, y: number)
        .decl bad(y: number)
        .decl ok(x: number)
        bad(2).
        ok(x) :- e(x, y), !bad(y).
    """, {"e": [(1, 2), (1, 3)]}).explain("ok(1)")
    assert str(proof) == "\n".join([
        "ok(1) [1] rule #2 at p.dl:6:9: ok(x) :- e(x, y), !bad(y).",
        "  e(1, 3) [0] input fact",
        "  !bad(3) absent",
    ])


def test_arithmetic_shows_the_instantiated_expression():
    proof = _explainer("""
        .decl n(x: number)
        .decl succ(x: number, y: number)
        succ(x, y) :- n(x), y = x + 1, n(y).
        succ(x, y) :- n(y), n(x - 1), y = x.
    """, {"n": [(1,), (2,)]}).explain("succ(1, 2)")
    assert str(proof) == "\n".join([
        "succ(1, 2) [1] rule #1 at p.dl:4:9: succ(x, y) :- n(x), y = (x + 1), n(y).",
        "  n(1) [0] input fact",
        "  2 = (1 + 1) holds",
        "  n(2) [0] input fact",
    ])


def test_symbols_are_shown_as_strings():
    proof = _explainer("""
        .decl parent(p: symbol, c: symbol)
        .decl ancestor(a: symbol, d: symbol)
        ancestor(a, d) :- parent(a, d).
        ancestor(a, d) :- ancestor(a, m), parent(m, d), a != "nobody".
    """, {"parent": [("ann", "bob"), ("bob", "cy")]}).explain('ancestor("ann", "cy")')
    assert str(proof).splitlines()[0] == (
        'ancestor("ann", "cy") [2] rule #2 at p.dl:5:9: '
        'ancestor(a, d) :- ancestor(a, m), parent(m, d), a != "nobody".')
    assert proof.body[2].left == Const("ann")
    assert proof.to_dict()["premises"][1]["tuple"] == ["bob", "cy"]


def test_inline_facts_are_leaves_naming_the_fact():
    proof = _explainer("""
        .decl e(x: number, y: number)
        .decl tc(x: number, y: number)
        e(1, 2).
        tc(x, y) :- e(x, y).
    """, {}).explain("tc(1, 2)")
    leaf = proof.premises[0]
    assert leaf.source == "fact" and leaf.rule_index == 0
    assert str(leaf) == "e(1, 2) [0] fact #1 at p.dl:4:9: e(1, 2)."


def test_an_aggregate_node_names_its_value_and_does_not_expand_its_body():
    proof = _explainer("""
        .decl e(x: number, y: number)
        .decl node(x: number)
        .decl degree(x: number, n: number)
        node(x) :- e(x, _).
        degree(x, n) :- node(x), n = count : { e(x, _) }.
    """, {"e": [(1, 2), (1, 3)]}).explain("degree(1, 2)")
    assert str(proof).splitlines()[1:] == [
        "  node(1) [1] rule #1 at p.dl:5:9: node(x) :- e(x, _).",
        "    e(1, 2) [0] input fact",
        "  2 = count : { e(1, _) } holds (aggregate count : { e(1, _) } = 2; the matches of "
        "its body are not expanded)",
    ]
    assert [(str(a.aggregate), a.value) for a in proof.aggregates] == [
        ("count : { e(1, _) }", 2)]


def test_to_dict_is_json_and_mirrors_the_tree():
    proof = herbrand.explain(parse(TC, file="tc.dl"), "tc(1, 3)", CHAIN)
    data = json.loads(json.dumps(proof.to_dict()))
    assert data["derived"] is True and data["tuple"] == [1, 3] and data["height"] == 2
    assert data["rule"] == {"index": 1, "text": "tc(x, z) :- tc(x, y), e(y, z).",
                            "location": "tc.dl:5:1"}
    assert data["body"] == ["tc(1, 2)", "e(2, 3)"]
    assert [p["tuple"] for p in data["premises"]] == [[1, 2], [2, 3]]
    assert data["premises"][1] == {
        "relation": "e", "tuple": [2, 3], "height": 0, "source": "input", "rule": None,
        "body": [], "aggregates": [], "premises": [], "truncated": False}


def test_max_depth_bounds_the_search_and_the_output_says_where_it_stops():
    explainer = _explainer(TC, CHAIN)
    shallow = explainer.explain("tc(1, 4)", max_depth=1)
    assert shallow.premises[0].truncated and shallow.premises[0].rule is None
    assert str(shallow).splitlines()[1] == (
        "  tc(1, 3) [2] (proof not reconstructed: below max depth)")
    full = explainer.explain("tc(1, 4)")
    assert full.render(max_depth=1).splitlines()[2:] == [
        "    ... (2 body entries below depth 1 not shown)", "  e(3, 4) [0] input fact"]
    assert full.to_dict(max_depth=1)["premises"][0]["premises_cut"] is True
    lines = full.render(max_lines=2).splitlines()
    assert len(lines) == 3 and lines[2].startswith("... output cut at 2 lines")


def test_shared_subproofs_are_one_value():
    proof = _explainer("""
        .decl a(x: number)
        .decl b(x: number)
        .decl c(x: number)
        b(x) :- a(x).
        c(x) :- b(x), b(x).
    """, {"a": [(1,)]}).explain("c(1)")
    assert proof.premises[0] is proof.premises[1]


@pytest.mark.parametrize("goal", ["tc(1, 4)", " tc( 1 , 2 + 2 ) // a comment",
                                  Atom("tc", (Const(1), Const(4))), ("tc", 1, 4)])
def test_every_goal_form_names_the_same_tuple(goal):
    assert _explainer(TC, CHAIN).explain(goal).values == (1, 4)


@pytest.mark.parametrize(("goal", "error", "message"), [
    ("tk(1, 2)", UndeclaredRelationError, "goal:1:1: undeclared relation tk"),
    ("tc(1)", ArityError, "goal:1:1: tc has 1 argument(s) here but 2 in its declaration at"),
    (Atom("tc", (Const(1),)), ArityError, "goal tc(1): tc has 1 argument(s) here but 2"),
    ('tc(1, "a")', HerbrandTypeError, 'goal:1:1: column y of tc is a number, got "a"'),
    ("tc(1, y)", UsageError, "goal:1:1: column y of tc is y, not a value"),
    ("tc(1, _)", UsageError, "goal:1:1: column y of tc is _, not a value"),
    ("tc(1, 2", HerbrandSyntaxError, "goal:1:8: expected ',' or ')'"),
    (("tc", 1.5), UsageError, "a goal is Datalog text"),
    (3, UsageError, "a goal is Datalog text"),
])
def test_a_goal_that_is_not_a_tuple_of_the_program_is_one_clear_error(goal, error, message):
    with pytest.raises(error) as raised:
        _explainer(TC, CHAIN).explain(goal)
    assert str(raised.value).splitlines()[0].startswith(message)


def test_explain_reads_facts_from_a_directory(tmp_path):
    (tmp_path / "e.facts").write_text("1\t2\n2\t3\n")
    program = parse(TC + ".input e\n")
    proof = herbrand.explain(program, "tc(1, 3)", facts_dir=tmp_path)
    assert isinstance(proof, Proof) and proof.height == 2


def test_max_depth_must_be_a_level_count():
    with pytest.raises(UsageError, match="max_depth must be a non-negative int"):
        _explainer(TC, CHAIN).explain("tc(1, 2)", max_depth=-1)
