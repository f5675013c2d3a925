"""Properties of the join order: a cross product only where no join is possible, and the delta
relation first."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.framework.syntax import Atom, Comparison, Literal, Rule, Var, rule_aggregates
from herbrand.translators.ir import Product, Scan, walk
from herbrand.translators.join_ordering import DELTA_PREFIX, selection_name
from herbrand.translators.pipeline import translate_rule
from tests.strategies import programs_with_facts
from tests.translators.corpus import RULES, rule


def components(r: Rule) -> int:
    """The connected components of the positive atoms, linked by a shared variable or by a
    variable equality of the body."""
    atoms = [e.atom for e in r.body if isinstance(e, Literal) and not e.negated]
    variables = [{t for t in a.terms if isinstance(t, Var)} for a in atoms]
    equalities = [(e.left, e.right) for e in r.body if isinstance(e, Comparison)
                  and e.op == "=" and isinstance(e.left, Var) and isinstance(e.right, Var)]
    parent = list(range(len(atoms)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, j in combinations(range(len(atoms)), 2):
        linked = variables[i] & variables[j] or any(
            (x in variables[i] and y in variables[j]) or (y in variables[i] and x in variables[j])
            for x, y in equalities)
        if linked:
            parent[find(i)] = find(j)
    return len({find(i) for i in range(len(atoms))})


def check_cross_products(r: Rule) -> None:
    if any(rule_aggregates(r)):
        return
    products = sum(isinstance(node, Product) for node, _ in walk(translate_rule(r)))
    assert products == max(components(r) - 1, 0), str(r)


@pytest.mark.parametrize("name", sorted(RULES))
def test_corpus_has_a_cross_product_only_between_components(name):
    check_cross_products(rule(name))


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_random_rules_have_a_cross_product_only_between_components(data):
    program, _ = data.draw(programs_with_facts())
    for r in program.proper_rules:
        check_cross_products(r)


@pytest.mark.parametrize("name", sorted(RULES))
def test_the_delta_relation_is_read_first(name):
    r = rule(name)
    for position, element in enumerate(r.body):
        if isinstance(element, Literal) and not element.negated:
            plan = translate_rule(r, delta={position})
            first = next(node for node, _ in walk(plan) if isinstance(node, Scan))
            assert first.relation == DELTA_PREFIX + element.atom.relation, str(r)


def _scans(plan) -> list[str]:
    return [node.relation for node, _ in walk(plan) if isinstance(node, Scan)]


def _rule(*atoms: tuple[str, str]) -> Rule:
    """h(x, b, y) :- the atoms, each (relation, variable names)."""
    body = tuple(Literal(Atom(name, tuple(Var(v) for v in terms))) for name, terms in atoms)
    return Rule(Atom("h", (Var("x"), Var("b"), Var("y"))), body)


def test_a_selection_relations_constants_count_as_bound_columns():
    # after d binds x, b, y: the selection binds b and its constant (two columns), m binds x
    # and y (two): a tie, which the size hint breaks for the small selection. Counted as one
    # bound column, the selection would come last and m would be joined on (0, 2)
    selected = selection_name("m", ((1, 1),))
    delta = (DELTA_PREFIX + "d", "xby")
    plan = translate_rule(_rule(delta, (selected, "ab"), ("m", "xay")),
                          sizes={"m": 100_000, selected: 10})
    assert _scans(plan) == [DELTA_PREFIX + "d", selected, "m"]
    plain = translate_rule(_rule(delta, ("s", "ab"), ("m", "xay")), sizes={"m": 100_000, "s": 10})
    assert _scans(plain) == [DELTA_PREFIX + "d", "m", "s"]
