"""Why not: golden answers on small programs, and on random programs an oracle check of each
rule's named failure with the substitution evaluator."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herbrand.api import load_database
from herbrand.evaluators.substitution import SubstitutionEvaluator
from herbrand.framework.parser import parse
from herbrand.framework.syntax import (
    Atom,
    Comparison,
    Const,
    Literal,
    Rule,
    Var,
    element_aggregates,
    element_variables,
    grounded_variables,
    injected_variables,
    term_variables,
)
from herbrand.provenance.derivations import substitute
from herbrand.provenance.explain import Explainer
from herbrand.provenance.proofs import NotDerived
from tests.strategies import DOMAIN, programs_with_facts

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
PROGRAM = """
.decl e(x: number, y: number)
.decl bad(x: number)
.decl tc(x: number, y: number)
.decl good(x: number)
.decl step(x: number, y: number)
.decl loop(x: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
bad(3).
good(x) :- e(x, _), !bad(x).
step(x, y) :- e(x, _), y = x + 10, y < 12.
loop(x) :- e(x, x).
loop(7) :- bad(7).
"""


def _why_not(goal: str) -> NotDerived:
    program = parse(PROGRAM, file="w.dl")
    answer = Explainer(program, load_database(program, {"e": [(1, 2), (2, 3), (3, 1)]})
                       ).explain(goal)
    assert isinstance(answer, NotDerived) and not answer.derived
    return answer


def test_each_rule_names_its_first_body_element_without_a_match():
    assert str(_why_not("tc(1, 4)")) == "\n".join([
        "tc(1, 4) is not derived: it is not among the facts",
        "  rule #1 at w.dl:8:1: tc(x, y) :- e(x, y).",
        "    no match for e(1, 4) (body element 1)",
        "  rule #2 at w.dl:9:1: tc(x, z) :- tc(x, y), e(y, z).",
        "    no match for e(y, 4) (body element 2)",
    ])


def test_negation_and_comparisons_are_named_when_they_fail():
    assert str(_why_not("good(3)")).splitlines()[2] == (
        "    !bad(3) fails: the atom holds for every match so far (body element 2)")
    assert str(_why_not("step(2, 12)")).splitlines()[2] == (
        "    12 < 12 is false for every match so far (body element 3)")
    assert str(_why_not("step(2, 13)")).splitlines()[2] == (
        "    13 = (2 + 10) is false for every match so far (body element 2)")


def test_a_head_constant_that_cannot_match_is_said_not_to_unify():
    assert str(_why_not("loop(2)")).splitlines()[1:] == [
        "  rule #6 at w.dl:13:1: loop(x) :- e(x, x).",
        "    no match for e(2, 2) (body element 1)",
        "  rule #7 at w.dl:14:1: loop(7) :- bad(7).",
        "    its head loop(7) does not unify with loop(2)",
    ]


def test_an_input_relation_says_the_tuple_is_not_among_the_facts():
    answer = _why_not("e(9, 9)")
    assert str(answer) == ("e(9, 9) is not derived: it is not among the facts, and no rule "
                           "derives e")
    assert answer.failures == ()


def test_to_dict_names_the_rule_and_the_element():
    data = json.loads(json.dumps(_why_not("tc(1, 4)").to_dict()))
    assert data["derived"] is False and data["tuple"] == [1, 4]
    assert data["rules"][1] == {
        "index": 1, "text": "tc(x, z) :- tc(x, y), e(y, z).", "location": "w.dl:9:1",
        "reason": "no match for e(y, 4) (body element 2)", "element": "e(y, z)",
        "position": 1}


# -- the oracle ----------------------------------------------------------------------------------


def _has_solution(rule: Rule, values: tuple, body, explainer: Explainer) -> bool:
    """Whether ``body`` (elements of ``rule``, head variables fixed to ``values``) has a
    solution in the model, by the substitution evaluator, keeping only the elements whose
    variables (and aggregates' injected ones) the kept positive atoms and bindings ground."""
    fixed = {t: Const(v) for t, v in zip(rule.head.terms, values, strict=True)
             if isinstance(t, Var)}
    body = [substitute(e, fixed) for e in body]
    grounded = grounded_variables(tuple(body))
    kept = [e for e in body if isinstance(e, Literal) and not e.negated or (
        all(set(term_variables(t)) <= grounded for t in (
            e.atom.terms if isinstance(e, Literal) else (e.left, e.right)))
        and all(injected_variables(a, tuple(body)) <= grounded for a in element_aggregates(e)))]
    query = Rule(Atom("@q", ()), tuple(kept) or (Comparison("=", Const(0), Const(0)),))
    return bool(len(SubstitutionEvaluator().evaluate([query], explainer.model.database)["@q"]))


@SETTINGS
@given(case=programs_with_facts(atom_expressions=True), data=st.data())
def test_every_named_failure_is_where_the_body_stops_matching(case, data):
    program, facts = case
    explainer = Explainer(program, load_database(program, facts))
    database = explainer.model.database
    relation = data.draw(st.sampled_from([d.name for d in program.declarations]))
    arity = program.declaration_of[relation].arity
    values = data.draw(st.tuples(*[st.sampled_from(DOMAIN + (4, 5))] * arity))
    answer = explainer.explain((relation, *values))
    if values in set(database.decoded_rows(relation)):
        assert answer.derived
        return
    assert isinstance(answer, NotDerived)
    rules = [(i, r) for i, r in enumerate(program.rules) if r.head.relation == relation
             and not r.is_fact]
    assert [(f.rule_index, f.rule) for f in answer.failures] == rules
    for failure in answer.failures:
        rule, position = failure.rule, failure.position
        unifies = explainer.derivations.start(rule, explainer.encode((relation, *values))[1])
        if failure.element is None:
            assert unifies is None
            continue
        assert unifies is not None and failure.element == rule.body[position]
        if _closed(rule.body[:position]):  # else why_not ran a later element before some
            assert _has_solution(rule, values, rule.body[:position], explainer)
        assert not _has_solution(rule, values, rule.body, explainer)


def _closed(body) -> bool:
    """Whether every variable of ``body`` is bound by ``body`` itself (its positive atoms and
    bindings): then ``why_not`` matched these elements in body order before the one it names,
    and they have a solution."""
    grounded = grounded_variables(tuple(body))
    return all(set(element_variables(e)) <= grounded for e in body)
