"""MagicSetsEvaluator and herbrand.query: on random stratified programs (negation,
comparisons, arithmetic, aggregates) and random goals (each argument bound to a value of the
domain, a variable, possibly repeated, or _), the answers equal the selection over the oracle's
full materialization, for every executor."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import herbrand
from herbrand.evaluators.substitution import SubstitutionEvaluator
from herbrand.evaluators.top_down import MagicSetsEvaluator, select_goal
from herbrand.framework.oracle import oracle_materialize
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Atom, Const, Var, Wildcard
from tests.strategies import DOMAIN, programs_with_facts

EXECUTORS = {
    "substitution": {"evaluator": "substitution"},
    "relational": {"evaluator": "relational", "index": "hash"},
    "native": {"evaluator": "native"},
}


@st.composite
def programs_with_goals(draw):
    program, facts = draw(programs_with_facts(atom_expressions=True))
    declaration = draw(st.sampled_from(program.declarations))
    terms = draw(st.lists(st.one_of(st.sampled_from(DOMAIN).map(Const),
                                    st.sampled_from((Var("x"), Var("y"), Wildcard()))),
                          min_size=declaration.arity, max_size=declaration.arity))
    return program, facts, Atom(declaration.name, tuple(terms))


def _matches(row: tuple, goal: Atom) -> bool:
    values: dict[Var, object] = {}
    for value, term in zip(row, goal.terms, strict=True):
        if isinstance(term, Const) and value != term.value:
            return False
        if isinstance(term, Var) and values.setdefault(term, value) != value:
            return False
    return True


@pytest.mark.parametrize("configuration", EXECUTORS.values(), ids=EXECUTORS.keys())
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=programs_with_goals())
def test_answers_equal_the_selection_over_the_full_model(configuration, case):
    program, facts, goal = case
    model = oracle_materialize(program, facts)
    expected = {row for row in model.get(goal.relation, set()) if _matches(row, goal)}
    answer = herbrand.query(program, goal, facts=facts, **configuration)
    assert set(answer.decoded_rows(goal.relation)) == expected


def test_select_goal_takes_constants_and_repeated_variables():
    relation = Relation.from_rows([(1, 1, 2), (1, 2, 2), (2, 2, 2), (1, 3, 3)])
    x = Var("x")
    assert select_goal(relation, Atom("r", (Const(1), x, x)), SymbolTable()).to_set() == {
        (1, 2, 2), (1, 3, 3)}
    assert select_goal(relation, Atom("r", (Wildcard(),) * 3), SymbolTable()) is relation
    assert len(select_goal(relation, Atom("r", (Const("a"), x, x)), SymbolTable())) == 0


def test_the_evaluator_keeps_the_rewrite_it_ran():
    program = herbrand.parse("""
        .decl e(x: number, y: number)
        .decl tc(x: number, y: number)
        tc(x, y) :- e(x, y).
        tc(x, z) :- e(x, y), tc(y, z).""")
    database = herbrand.load_database(program, {"e": [(1, 2), (2, 3), (4, 5)]})
    evaluator = MagicSetsEvaluator(SubstitutionEvaluator())
    rows = evaluator.query(program, database, Atom("tc", (Const(1), Var("y"))))
    assert rows.to_set() == {(1, 2), (1, 3)}
    assert evaluator.last_rewrite.answers == ("tc_bf",)
    assert repr(evaluator).startswith("MagicSetsEvaluator(evaluator=SubstitutionEvaluator(")
