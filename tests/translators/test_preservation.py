"""Every pass preserves the evaluated result, and the pipeline's result is the rule's.

On random small databases: the plan after each pass evaluates (``interpreter.evaluate``) to the
same rows as before it, and those are the rows of a brute-force evaluation of the rule. Also
checked: the optimisation passes in any order and with any size hints, semi-naive delta
variants, and the rules of random programs (``tests.strategies``).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herbrand.framework.syntax import Literal
from herbrand.translators.aggregates_to_nodes import LOWERING_PASSES
from herbrand.translators.interpreter import evaluate
from herbrand.translators.join_ordering import DELTA_PREFIX, order_joins
from herbrand.translators.pending import Pending
from herbrand.translators.pipeline import (
    DEFAULT_PASSES,
    delta_variant,
    format_plan,
    translate_rule,
)
from herbrand.translators.selection_pushdown import push_down_selections
from herbrand.translators.selections_to_joins import selections_to_joins
from tests.strategies import DOMAIN, programs_with_facts
from tests.translators.brute_force import brute_force
from tests.translators.corpus import ARITIES, RULES, databases, rows, rule

OPTIMISATIONS = (selections_to_joins, order_joins, push_down_selections)
SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def check_every_pass(r, db, passes=DEFAULT_PASSES, **hints) -> None:
    expected = brute_force(r, db)
    plan = Pending.of(r)
    assert evaluate(plan, db) == expected, "the Pending of the rule means the rule"
    for step in passes:
        before, plan = plan, translate_rule(r, passes[: passes.index(step) + 1], **hints)
        assert evaluate(plan, db) == expected, (
            f"{step.__name__} changed the result of {r}\nbefore:\n{format_plan(before)}\n"
            f"after:\n{format_plan(plan)}")
    assert not isinstance(plan, Pending)


@pytest.mark.parametrize("name", sorted(RULES))
@SETTINGS
@given(db=databases)
def test_every_pass_preserves_the_result(name, db):
    check_every_pass(rule(name), db)


@pytest.mark.parametrize("name", sorted(RULES))
@SETTINGS
@given(db=databases, order=st.permutations(OPTIMISATIONS),
       sizes=st.dictionaries(st.sampled_from(sorted(ARITIES)), st.integers(0, 10**6)))
def test_optimisations_in_any_order_and_with_any_sizes(name, db, order, sizes):
    check_every_pass(rule(name), db, LOWERING_PASSES + tuple(order), sizes=sizes)


@pytest.mark.parametrize("name", sorted(RULES))
@SETTINGS
@given(db=databases, data=st.data())
def test_delta_variants(name, db, data):
    r = rule(name)
    positions = [i for i, e in enumerate(r.body) if isinstance(e, Literal) and not e.negated]
    if not positions:
        return
    delta = {data.draw(st.sampled_from(positions))}
    for relation in {r.body[i].atom.relation for i in delta}:
        db[DELTA_PREFIX + relation] = data.draw(rows(ARITIES[relation]))
    plan = translate_rule(r, delta=delta)
    assert evaluate(plan, db) == brute_force(delta_variant(r, delta), db)


@SETTINGS
@given(data=st.data())
def test_rules_of_random_programs(data):
    program, _ = data.draw(programs_with_facts())
    db = {d.name: data.draw(st.sets(st.tuples(*[st.sampled_from(DOMAIN)] * d.arity),
                                    max_size=1 if d.arity == 0 else 6))
          for d in program.declarations}
    for r in program.proper_rules:
        check_every_pass(r, db)
