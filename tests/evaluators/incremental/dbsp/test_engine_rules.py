"""The dbsp engine's rule changes as circuit inputs: after adding or removing a rule, the
traces, the relations and the reported changes are those of a fresh bootstrap of the new
program; the re-run is kept only where the strata change."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.dbsp import engine as engine_module
from herbrand.evaluators.incremental.dbsp.circuit import StratumCircuit
from herbrand.evaluators.incremental.dbsp.engine import DbspEngine
from herbrand.framework.evaluator_checks import encode_facts
from herbrand.framework.parser import parse
from herbrand.framework.syntax import Program
from herbrand.framework.testing import IncrementalSession
from herbrand.workloads.programs import RDFS_DL
from tests.evaluators.incremental.dbsp.test_circuit import _traces
from tests.strategies import programs_with_facts

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
.decl n(x: number)
.decl gap(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
n(x) :- e(x, _).
gap(x, y) :- n(x), n(y), !tc(x, y).
"""
EDGES = [(i, i + 1) for i in range(9)] + [(9, 3), (4, 0)]

RDFS = RDFS_DL  # the dyre RDFS program, as the bench runs it
# subClassOf chain 10 < 11 < 12, subPropertyOf 20 < 21, domain of 21 is 10, range of 20 is 11
TRIPLES = [(10, 0, 11), (11, 0, 12), (20, 1, 21), (21, 2, 10), (20, 3, 11),
           (1, 20, 2), (3, 21, 1), (5, 4, 10), (6, 4, 11)]

MUTUAL = """
.decl e(x: number, y: number)
.decl even(x: number, y: number)
.decl odd(x: number, y: number)
.decl top(x: number)
odd(x, y) :- e(x, y).
even(x, z) :- odd(x, y), e(y, z).
odd(x, z) :- even(x, y), e(y, z).
top(x) :- even(x, x).
"""


def _rule(text: str, rule: str):
    return parse(text + rule).rules[-1:]


def _session(text: str, facts) -> IncrementalSession:
    return IncrementalSession(DbspEngine, text, facts)


def _assert_fresh(session: IncrementalSession, program: Program, before, changes) -> None:
    """Traces and relations equal a fresh bootstrap of ``program``; ``changes`` are the
    difference from ``before`` (decoded relations)."""
    fresh = DbspEngine()
    fresh.bootstrap(program, encode_facts(program, session.facts))
    engine = session.engine
    assert _traces(engine) == _traces(fresh)
    after = {name: set(engine.database.decoded_rows(name)) for name in before}
    assert after == {name: set(fresh.database.decoded_rows(name)) for name in before}
    for name in before:
        added, removed = changes.get(name, (None, None))
        reported = (set(map(tuple, added.T.tolist())) if added is not None else set(),
                    set(map(tuple, removed.T.tolist())) if removed is not None else set())
        assert reported == (after[name] - before[name], before[name] - after[name]), name


def _decoded(engine) -> dict:
    return {name: set(engine.database.decoded_rows(name)) for name in engine.database}


def _change(session, text: str, rule: str, add: bool, rerun: bool = False) -> None:
    """Add or remove ``rule`` and check the result against a fresh bootstrap; unless
    ``rerun``, without the circuit's bootstrap (the change runs as the circuit's input)."""
    rules = _rule(text, rule)
    before = _decoded(session.engine)
    with pytest.MonkeyPatch.context() as patch:
        if not rerun:
            patch.setattr(StratumCircuit, "bootstrap", _no_bootstrap)
        changes = (session.engine.add_rules if add else session.engine.remove_rules)(rules)
    program = parse(text + rule) if add else _without(parse(text), rules[0])
    _assert_fresh(session, program, before, changes)


def _no_bootstrap(*_):
    raise AssertionError("a stratum was bootstrapped again")


def _without(program: Program, rule) -> Program:
    rules = list(program.rules)
    rules.remove(rule)
    return Program(program.declarations, tuple(rules), program.directives)


@pytest.mark.parametrize("edges", [EDGES, EDGES[:9]])
def test_removing_and_adding_back_the_recursive_tc_rule(edges):
    session = _session(TC, {"e": edges})
    rule = "tc(x, z) :- tc(x, y), e(y, z)."
    text = TC.replace(rule, "")
    _change(session, TC, rule, add=False)
    _change(session, text, rule, add=True)
    session.update(insert={"e": [(8, 2)]}, delete={"e": [(0, 1)]})  # facts still maintained


@pytest.mark.parametrize("rule", [
    "m(z, 4, y) :- m(x, 0, y), m(z, 4, x).",
    "m(x, b, y) :- m(a, 1, b), m(x, a, y).",
    "m(y, 4, x) :- m(a, 2, x), m(y, a, z).",
])
def test_removing_and_adding_back_an_rdfs_rule(rule):
    session = _session(RDFS, {"t": TRIPLES})
    _change(session, RDFS, rule, add=False)
    _change(session, RDFS.replace(rule, ""), rule, add=True)


def test_a_rule_inside_a_mutual_recursion():
    session = _session(MUTUAL, {"e": [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4)]})
    rule = "even(x, y) :- odd(x, z), odd(z, y)."
    _change(session, MUTUAL, rule, add=True)
    _change(session, MUTUAL + rule, rule, add=False)


def test_a_rule_of_a_lower_stratum_feeds_the_upper_one():
    session = _session(TC, {"e": EDGES[:6]})
    rule = "tc(y, x) :- tc(x, y)."
    _change(session, TC, rule, add=True)  # gap (negation over tc, above) follows
    assert set(session.engine.database.decoded_rows("gap")) <= {(x, x) for x in range(7)}
    _change(session, TC + rule, rule, add=False)


def test_rules_that_reorder_then_merge_strata():
    session = _session(TC, {"e": EDGES})
    reorder, merge = "n(y) :- tc(_, y).", "tc(x, y) :- n(x), n(y), e(y, x)."
    _change(session, TC, reorder, add=True)  # n now above tc: its stratum is the same
    _change(session, TC + reorder, merge, add=True, rerun=True)  # tc and n one stratum
    _change(session, TC + reorder + merge, merge, add=False, rerun=True)  # split
    _change(session, TC + reorder, reorder, add=False)


@pytest.mark.parametrize("budget", [engine_module.RULE_CHANGE_BUDGET, 0])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=programs_with_facts(), data=st.data())
def test_random_rule_removed_and_added_back(budget, case, data):
    """A random rule of a random program removed, then added back: both equal a fresh
    bootstrap of the program of that moment, and the reported changes its difference (with
    the default budget, and with none beyond half the stratum's derivations, so that the
    circuit also gives up mid-change)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine_module, "RULE_CHANGE_BUDGET", budget)
        _remove_and_add_back(case, data)


def _remove_and_add_back(case, data) -> None:
    program, facts = case
    proper = [rule for rule in program.rules if rule.body]
    if not proper:
        return
    rule = data.draw(st.sampled_from(proper))
    session = IncrementalSession(DbspEngine, program, facts)
    kept = _without(program, rule)
    before = _decoded(session.engine)
    changes = session.engine.remove_rules([rule])
    _assert_fresh(session, kept, before, changes)
    before = _decoded(session.engine)
    changes = session.engine.add_rules([rule])
    _assert_fresh(session, Program(kept.declarations, kept.rules + (rule,),
                                   kept.directives), before, changes)


@pytest.mark.parametrize("budget", [0, 5])
def test_a_change_over_budget_bootstraps_the_stratum(monkeypatch, budget):
    """Past its budget the circuit gives up mid-change; the stratum's bootstrap then gives the
    same result, and the strata above still follow."""
    session = _session(TC, {"e": EDGES})
    monkeypatch.setattr(engine_module, "RULE_CHANGE_BUDGET", budget)
    bootstrap, calls = StratumCircuit.bootstrap, []

    def recorded(self, *args):
        calls.append(self.relations)
        return bootstrap(self, *args)

    rule, recursive = "tc(y, x) :- tc(x, y).", "tc(x, z) :- tc(x, y), e(y, z)."
    for text, changed, add in [(TC, rule, True), (TC + rule, rule, False),
                               (TC, recursive, False)]:
        rules, before = _rule(text, changed), _decoded(session.engine)
        calls.clear()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(StratumCircuit, "bootstrap", recorded)
            changes = (session.engine.add_rules if add else session.engine.remove_rules)(rules)
        assert calls == [("tc",)]
        program = parse(text + changed) if add else _without(parse(text), rules[0])
        _assert_fresh(session, program, before, changes)
