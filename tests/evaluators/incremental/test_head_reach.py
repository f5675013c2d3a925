"""What a saturation rule can prove in a round (``head_reach``): a rule is run only when a
checked fact outside P holds its head's constants and the values its delta binds."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.fixpoint import delta_variants
from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.head_reach import HeadReach
from herbrand.evaluators.incremental.instance_rules import StepRules, reading_proved
from herbrand.framework.analysis import Stratum
from herbrand.framework.parser import parse

RDFS = (".decl m(s: number, p: number, o: number)\n"
        "m(x, 0, z) :- m(x, 0, y), m(y, 0, z).\n"
        "m(y, 4, x) :- m(y, a, z), m(a, 2, x).\n"
        "m(x, b, y) :- m(x, a, y), m(a, 1, b).\n")


def _variants() -> list:
    program = parse(RDFS)
    return [reading_proved(v, ("m",)) for rule in program.rules
            for v in delta_variants(rule, ("m",))]


def test_the_fields_of_a_rule():
    by_text = {str(v): HeadReach.of(v, ("m",)) for v in _variants()}
    reach = by_text["m(x, 0, z) :- @delta:m(x, 0, y), @proved:m(y, 0, z)."]
    assert (reach.head, reach.source) == ("m", "m")
    assert reach.head_at.tolist() == [1] and reach.head_value.tolist() == [0]
    assert reach.delta_at.tolist() == [1] and reach.delta_value.tolist() == [0]
    assert reach.head_bound.tolist() == [0] and reach.delta_bound.tolist() == [0]
    # the delta binds no head column here, but the head holds a constant
    reach = by_text["m(y, 4, x) :- @delta:m(a, 2, x), @proved:m(y, a, z)."]
    assert reach.head_bound.tolist() == [2] and reach.delta_bound.tolist() == [2]
    # a head with no constant and no column the delta binds has nothing to test
    copy = parse(".decl e(x: number, y: number)\n.decl p(x: number)\n"
                 "p(x) :- e(x, y), p(y).\n").rules[0]
    (variant,) = delta_variants(copy, ("p",))
    assert HeadReach.of(reading_proved(variant, ("p",)), ("p",)) is None


def test_step_rules_hold_the_saturation_rules_heads():
    rules = StepRules.of(Stratum(0, ("m",), parse(RDFS).rules, True), lambda name: False)
    assert len(rules.saturation) == 6
    assert {id(r) for r in rules.saturation} == set(rules.heads)


def _oracle(reach: HeadReach, checked: np.ndarray, proved: np.ndarray,
            delta: np.ndarray) -> bool:
    """The test of ``head_reach``'s doc, row by row."""
    for p in range(checked.shape[1]):
        if proved[p] or any(checked[c, p] != v
                            for c, v in zip(reach.head_at, reach.head_value, strict=True)):
            continue
        for j in range(delta.shape[1]):
            if all(delta[c, j] == v for c, v in zip(reach.delta_at, reach.delta_value,
                                                     strict=True)) and all(
                    checked[h, p] == delta[d, j]
                    for h, d in zip(reach.head_bound, reach.delta_bound, strict=True)):
                return True
    return False


_rows = st.lists(st.tuples(*[st.integers(0, 4)] * 3), max_size=40)


@settings(max_examples=60, deadline=None)
@given(_rows, _rows, st.lists(st.booleans(), min_size=40, max_size=40))
def test_may_prove_is_the_test_row_by_row(checked, delta, proved):
    facts = CheckedFacts(3)
    facts.check(np.array(checked, dtype=np.int64).reshape(-1, 3).T)
    rows = facts.checked_rows()
    facts.prove(rows[:, np.array(proved[:rows.shape[1]], dtype=bool)])
    delta = np.array(delta, dtype=np.int64).reshape(-1, 3).T
    mask = facts.proved_mask()[:rows.shape[1]]
    assert facts.unproved_positions().tolist() == np.flatnonzero(~mask).tolist()
    for variant in _variants():
        reach = HeadReach.of(variant, ("m",))
        # C's positions outside P, and (a superset) all of C
        for positions in (facts.unproved_positions(), np.arange(rows.shape[1])):
            assert reach.may_prove(facts, positions, delta) == _oracle(
                reach, rows, mask, delta), variant
