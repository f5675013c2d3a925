"""The backward/forward engine: checks before deleting, cycles that only support themselves,
negation and aggregates over a changing relation, and the lazy expansion of the checks."""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.evaluators.incremental import bf
from herbrand.evaluators.incremental.backward_forward import (
    FOCUS,
    BackwardForward,
    _driven,
    instance_rule,
    reading_proved,
)
from herbrand.evaluators.incremental.bf import BFEngine
from herbrand.framework.parser import parse
from herbrand.framework.testing import IncrementalSession
from tests.evaluators.incremental.engine_helpers import TC

REACH = """
.decl e(x: number, y: number)
.decl source(x: number)
.decl reach(x: number)
reach(x) :- source(x).
reach(y) :- reach(x), e(x, y).
"""
A, B, C = 1, 2, 3
CYCLE = {"e": [(A, B), (B, A), (C, A)], "source": [(C,)]}


@pytest.fixture
def checks(monkeypatch) -> list[BackwardForward]:
    """Every BackwardForward the engine runs from now on."""
    made = []

    class Recorded(BackwardForward):
        def __init__(self, *args):
            super().__init__(*args)
            made.append(self)

    monkeypatch.setattr(bf, "BackwardForward", Recorded)
    return made


def _rows(rows) -> set:
    return set(map(tuple, rows.T.tolist()))


def test_a_fact_with_another_proof_is_checked_and_kept(checks):
    session = IncrementalSession(BFEngine, TC, {"e": [(1, 2), (2, 3), (1, 3), (3, 4)]})
    changes = session.update(delete={"e": [(1, 3)]})
    assert session.engine.last_strategy == "bf"
    assert set(changes) == {"e"}
    check, = checks
    facts = check._facts["tc"]
    assert (1, 3) in _rows(facts.checked_rows()) and (1, 3) in _rows(facts.proved_rows())
    assert (2, 3) not in _rows(facts.checked_rows())  # it lost no derivation


def test_a_cycle_that_only_supports_itself_is_deleted(checks):
    session = IncrementalSession(BFEngine, REACH, CYCLE)
    changes = session.update(delete={"e": [(C, A)]})
    added, removed = changes["reach"]
    assert not added.size and sorted(removed[0].tolist()) == [A, B]
    check, = checks
    facts = check._facts["reach"]
    assert _rows(facts.checked_rows()) == {(A,), (B,)} and not facts.proved_count
    session.update(insert={"e": [(C, A)]})
    assert len(session.engine.database["reach"]) == 3


def test_a_negated_relation_that_changes():
    program = REACH + """
    .decl node(x: number)
    .decl unreached(x: number)
    unreached(x) :- node(x), !reach(x).
    """
    facts = {**CYCLE, "node": [(A,), (B,), (C,)]}
    session = IncrementalSession(BFEngine, program, facts)
    changes = session.update(delete={"e": [(C, A)]})
    assert sorted(changes["unreached"][0][0].tolist()) == [A, B]
    changes = session.update(insert={"e": [(C, B)]})
    assert sorted(changes["unreached"][1][0].tolist()) == [A, B]


def test_an_aggregate_over_a_relation_that_changes():
    program = REACH + """
    .decl total(n: number)
    total(n) :- n = count : { reach(_) }.
    """
    session = IncrementalSession(BFEngine, program, CYCLE)
    session.update(delete={"e": [(C, A)]})
    assert session.engine.database["total"].to_rows() == [(1,)]
    session.update(insert={"e": [(C, A)]}, delete={"source": [(C,)]})
    assert session.engine.database["total"].to_rows() == [(0,)]


def test_a_fact_is_first_expanded_through_one_instance(checks):
    nodes = range(8)
    complete = [(x, y) for x in nodes for y in nodes if x != y]
    session = IncrementalSession(BFEngine, TC, {"e": complete})
    session.update(delete={"e": [(0, 1)]})
    check, = checks
    # the eight facts tc(x, 1) lost the derivation through e(0, 1); each has six or seven
    # instances tc(x, y), e(y, 1), whose atoms a full expansion would check (most of the 64
    # facts); the lazy round checks the atoms of one instance per fact, at most eight more
    facts = check._facts["tc"]
    assert 8 < facts.checked_count <= 16
    assert facts.proved_count == facts.checked_count


def test_rewrites():
    program = parse(TC + ".decl p(x: number)\np(x) :- tc(x, _), tc(_, x).\n")
    relations = ("tc", "p")
    # e(x, y) has only head variables: probed in the new e, not joined
    base = instance_rule(program.rules[0], 0, relations)
    assert str(base.rule) == "@instance:0(x, y) :- @delta:focus:tc(x, y)."
    assert base.lower_members == (("e", (0, 1)),)
    # tc(x, y): the focus and e(y, z) bind it, so it is probed in the old tc, not joined
    recursive = instance_rule(program.rules[1], 1, relations)
    assert str(recursive.rule) == "@instance:1(x, z, x, y) :- @delta:focus:tc(x, z), e(y, z)."
    assert recursive.atoms == (("tc", 2),) and recursive.members == (0,)
    both = instance_rule(program.rules[2], 2, relations)
    assert str(both.rule) == (
        "@instance:2(x, x, @w2, @w3, x) :- @delta:focus:p(x), tc(x, @w2), tc(@w3, x).")
    assert both.members == ()
    # a literal with a constant stays joined (a small selection) and binds the other's
    rdfs = parse(".decl m(s: number, p: number, o: number)\n"
                 "m(x, b, y) :- m(a, 1, b), m(x, a, y).\n").rules[0]
    sub_property = instance_rule(rdfs, 0, ("m",))
    assert str(sub_property.rule) == (
        "@instance:0(x, b, y, a, 1, b, x, a, y) :- @delta:focus:m(x, b, y), m(a, 1, b).")
    assert sub_property.members == (1,)
    # a lower literal not joined to the focus would make a product: nothing is left out
    apart = parse(TC + ".decl q(x: number)\nq(x) :- tc(x, y), e(z, y), e(y, w).\n").rules[2]
    assert instance_rule(apart, 2, relations + ("q",)).members == ()
    assert str(reading_proved(program.rules[1], relations)) == (
        "tc(x, z) :- @proved:tc(x, y), e(y, z).")


def test_a_rule_whose_constants_match_no_focus_row_is_not_run():
    rule = parse(".decl m(s: number, p: number, o: number)\n"
                 "m(x, 0, z) :- m(x, 0, y), m(y, 0, z).\n").rules[0]
    instance = instance_rule(rule, 0, ("m",)).rule
    assert not _driven(instance, {FOCUS + "m": np.array([[1], [4], [2]])})
    assert _driven(instance, {FOCUS + "m": np.array([[1, 1], [4, 0], [2, 3]])})
    assert not _driven(instance, {FOCUS + "m": np.zeros((3, 0), dtype=np.int64)})
