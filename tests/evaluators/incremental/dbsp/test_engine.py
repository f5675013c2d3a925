"""The dbsp engine: fact updates against the oracle, rules added and removed at runtime,
rejected rule changes, atomicity."""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.evaluators.incremental import relation_sets
from herbrand.evaluators.incremental.dbsp import operators
from herbrand.evaluators.incremental.dbsp.circuit import StratumCircuit
from herbrand.evaluators.incremental.dbsp.engine import DbspEngine
from herbrand.evaluators.incremental.dbsp.input_terms import tagged_name
from herbrand.evaluators.incremental.dbsp.operators import delta_name
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.errors import EvaluationError, StratificationError, UnsafeRuleError
from herbrand.framework.oracle import oracle_materialize
from herbrand.framework.parser import parse
from herbrand.framework.syntax import Literal
from herbrand.framework.testing import IncrementalSession, encode_facts
from tests.evaluators.incremental.dbsp.test_circuit import _traces

PROGRAM = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
.decl n(x: number)
.decl gap(x: number, y: number)
.decl back(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
n(x) :- e(x, _).
gap(x, y) :- n(x), n(y), !tc(x, y).
"""
CHAIN = [(i, i + 1) for i in range(14)]


def _rules(text: str):
    return parse(PROGRAM + text).rules[-1:]


def _check_against_oracle(session: IncrementalSession, program_text: str) -> None:
    """The engine's relations equal the oracle's model of ``program_text`` over the facts."""
    model = oracle_materialize(parse(program_text), session.facts)
    for name, rows in model.items():
        assert set(session.engine.database.decoded_rows(name)) == rows, name


@pytest.mark.parametrize("cycle", [False, True])
def test_deletes_deep_in_recursion(cycle):
    session = IncrementalSession(DbspEngine, PROGRAM, {"e": CHAIN + ([(14, 0)] if cycle else [])})
    session.update(delete={"e": [(7, 8)]})
    session.update(insert={"e": [(7, 8), (3, 1)]}, delete={"e": [(0, 1)]})


def test_insert_then_delete_restores_the_traces():
    session = IncrementalSession(DbspEngine, PROGRAM, {"e": CHAIN})
    before = _traces(session.engine)
    session.update(insert={"e": [(14, 0), (7, 2)]})
    session.update(delete={"e": [(14, 0), (7, 2)]})
    assert _traces(session.engine) == before


def test_adding_then_removing_a_rule_restores_the_state():
    session = IncrementalSession(DbspEngine, PROGRAM, {"e": [(1, 2), (2, 3), (3, 4)]})
    before, database = _traces(session.engine), session.engine.database
    rule = _rules("tc(y, x) :- tc(x, y).")
    changes = session.engine.add_rules(rule)
    assert session.engine.last_strategy == "rules"
    _check_against_oracle(session, PROGRAM + "tc(y, x) :- tc(x, y).")
    added, removed = changes["tc"]
    assert added.shape[1] == 9 and not removed.shape[1]  # 15 pairs of {1..4} but (1, 1); 6 before
    assert "gap" in changes  # the stratum above followed
    session.engine.remove_rules(rule)
    assert _traces(session.engine) == before
    assert all(session.engine.database[n] == database[n] for n in database)
    session.update(insert={"e": [(4, 1)]})  # facts still maintained afterwards


def test_a_rule_change_keeps_the_traces_of_unaffected_strata():
    session = IncrementalSession(DbspEngine, PROGRAM, {"e": CHAIN})
    traces = dict(session.engine._snapshot.traces)
    session.engine.add_rules(_rules("back(y, x) :- e(x, y), !gap(x, y)."))
    kept = session.engine._snapshot.traces
    assert all(kept[name] is traces[name] for name in ("tc", "n", "gap"))
    _check_against_oracle(session, PROGRAM + "back(y, x) :- e(x, y), !gap(x, y).")


def test_an_unstratifiable_rule_is_rejected_and_changes_nothing():
    session = IncrementalSession(DbspEngine, PROGRAM, {"e": CHAIN[:5]})
    before, database = _traces(session.engine), session.engine.database
    with pytest.raises(StratificationError, match="gap -> tc -> gap"):
        session.engine.add_rules(_rules("tc(x, y) :- gap(x, y)."))
    with pytest.raises(UnsafeRuleError):
        session.engine.add_rules(_rules("tc(x, y) :- n(x)."))
    with pytest.raises(EvaluationError, match="not in the program"):
        session.engine.remove_rules(_rules("tc(x, x) :- n(x)."))
    assert _traces(session.engine) == before
    assert all(session.engine.database[n] == database[n] for n in database)
    session.update(insert={"e": [(9, 9)]})


@pytest.mark.parametrize("action", ["update", "add_rules"])
def test_a_fault_mid_propagation_leaves_the_state(monkeypatch, action):
    session = IncrementalSession(DbspEngine, PROGRAM, {"e": CHAIN[:10]})
    before, database = _traces(session.engine), session.engine.database
    change = operators.LiftedEvaluation.change
    calls = {"n": 0}

    def failing(self, lifted, terms=None):
        calls["n"] += 1
        if calls["n"] == 4:
            raise RuntimeError("injected")
        return change(self, lifted, terms)

    monkeypatch.setattr(operators.LiftedEvaluation, "change", failing)
    with pytest.raises(RuntimeError, match="injected"):
        if action == "update":
            session.engine.update({"e": np.array([[10], [11]])}, {"e": np.array([[4], [5]])})
        else:
            session.engine.add_rules(_rules("tc(y, x) :- tc(x, y)."))
    assert _traces(session.engine) == before
    assert all(session.engine.database[n] == database[n] for n in database)
    monkeypatch.setattr(operators.LiftedEvaluation, "change", change)
    session.update(insert={"e": [(10, 11)]}, delete={"e": [(4, 5)]})


def test_rules_are_data_in_the_tags_and_state_size():
    engine = DbspEngine()
    assert DbspEngine.tags.dynamic_rules
    session = IncrementalSession(lambda: engine, PROGRAM, {"e": CHAIN[:5]})
    tuples, size = session.engine.state_size()
    assert tuples > 0 and size > 0


def test_iterations_whose_terms_read_repeated_inputs_reuse_their_value(monkeypatch):
    """A fresh self-loop e(99, 99) makes ΔR_i = {tc(99, 99)} at every iteration: the terms
    driven by Δtc read no old tc, so they are evaluated at iterations 0 and 1 only (the
    chain's trace is 14 iterations deep), and the result is still the oracle's."""
    session = IncrementalSession(DbspEngine, PROGRAM, {"e": CHAIN})
    evaluated = []
    changes = StratumCircuit._changes

    def counted(self, lifted, terms=None):
        if terms is not None and any(terms) and "tc" in self.relations:
            evaluated.append(terms)
        return changes(self, lifted, terms)

    monkeypatch.setattr(StratumCircuit, "_changes", counted)
    session.update(insert={"e": [(99, 99)]})
    assert len(evaluated) == 2
    _check_against_oracle(session, PROGRAM)


SQUARED = """
.decl e(x: number, y: number)
.decl p(x: number, y: number)
p(x, y) :- e(x, y).
p(x, z) :- p(x, y), p(y, z).
"""


@pytest.mark.parametrize(("text", "edge", "iterations"), [
    (PROGRAM, (99, 99), 2), (PROGRAM, (14, 15), 16), (SQUARED, (99, 99), 2),
    (SQUARED, (14, 15), 6)])
def test_an_update_stops_once_no_term_can_change_and_its_counts_hold(monkeypatch, text, edge,
                                                                      iterations):
    """A fresh self-loop e(99, 99) changes the closure at iterations 0 and 1 only: Δe keeps
    no row of tc's trace, and p's terms over its old value, read slice by slice while ΔR
    repeats, keep none either; the new row has no count that changes later. So the update
    stops at 1 (two iterations), not at the trace's depth (14 for tc, 5 for p). e(14, 15)
    joins tc(0, 14), first derived at 13, and p(0, 14) at 4: those updates run past them.
    All leave the oracle's relations and the traces a bootstrap makes."""
    session = IncrementalSession(DbspEngine, text, {"e": CHAIN})
    runs = []
    retraced = StratumCircuit._retraced

    def counted(self, trace, dx_stream, x_stream, moves):
        if {"tc", "p"} & set(self.relations):
            runs.append(len(dx_stream))
        return retraced(self, trace, dx_stream, x_stream, moves)

    monkeypatch.setattr(StratumCircuit, "_retraced", counted)
    session.update(insert={"e": [edge]})
    assert runs == [iterations]
    _check_against_oracle(session, text)
    fresh = DbspEngine()
    fresh.bootstrap(parse(text), encode_facts(parse(text), session.facts))
    assert _traces(session.engine) == _traces(fresh)


def test_input_driven_terms_read_their_kept_slices_unreduced_in_one_evaluation(monkeypatch):
    """The slices of tc that the terms driven by Δe read hold only the rows that
    ``kept_rows`` semi-joined with Δe: they are not reduced by a semi-join again. The kept
    rows of all the slices (tc(x, 3), tc(x, 10) and tc(x, 14), first derived at several
    iterations) are read in one evaluation, and the result is still the oracle's."""
    session = IncrementalSession(DbspEngine, PROGRAM, {"e": CHAIN})
    reductions = []  # per evaluation over tc's slices, its semi-join reductions (None: none)
    evaluation = operators.LiftedEvaluation.__init__

    def recorded(self, evaluator, symbols, old, deltas, selections=None, semijoins=None,
                 reducible=frozenset(), *args, **kwargs):
        if tagged_name("tc") in reducible:
            reductions.append(semijoins)
        evaluation(self, evaluator, symbols, old, deltas, selections, semijoins, reducible,
                   *args, **kwargs)

    monkeypatch.setattr(operators.LiftedEvaluation, "__init__", recorded)
    session.update(insert={"e": [(3, 9), (14, 20)]}, delete={"e": [(10, 11)]})
    assert reductions == [None]
    _check_against_oracle(session, PROGRAM)


def test_an_update_runs_only_the_stratum_it_reaches_on_circuits_built_once(monkeypatch):
    """Updating ``f`` evaluates terms of the stratum reading it and nothing of the others
    (their inputs carry no change); no circuit is built again for the update. (``h``'s rule
    has a comparison: a plain copy's term would be read off its delta, not evaluated.)"""
    text = PROGRAM + ".decl f(x: number)\n.decl h(x: number)\nh(x) :- f(x), x > 0.\n"
    session = IncrementalSession(DbspEngine, text, {"e": CHAIN, "f": [(1,)]})
    reads, built = [], []
    derivations, init = RelationalEvaluator.derivations, StratumCircuit.__init__

    def counted(self, rules, instance, *transient):
        reads.append({e.atom.relation for r in rules for e in r.body if isinstance(e, Literal)})
        return derivations(self, rules, instance, *transient)

    def counted_init(self, *args, **kwargs):
        built.append(args)
        init(self, *args, **kwargs)

    monkeypatch.setattr(RelationalEvaluator, "derivations", counted)
    monkeypatch.setattr(StratumCircuit, "__init__", counted_init)
    for _ in range(2):
        session.update(insert={"f": [(2,)]})
        session.update(delete={"f": [(2,)]})
    assert reads and all(delta_name("f") in relations for relations in reads)
    assert not built
    session.update(insert={"e": [(99, 98)]})
    assert any(delta_name("e") in relations for relations in reads) and not built
    _check_against_oracle(session, text)


def test_the_first_update_finds_the_inputs_hash_tables_built(monkeypatch):
    """The bootstrap builds each input's RelationSet; the first update builds none (it
    probes the kept ones) and still agrees with the oracle."""
    session = IncrementalSession(DbspEngine, PROGRAM, {"e": CHAIN})
    built = []
    init = relation_sets.RelationSet.__init__

    def counted(self, relation, slots=None, layout=None):
        built.append(slots is None)
        init(self, relation, slots, layout)

    monkeypatch.setattr(relation_sets.RelationSet, "__init__", counted)
    session.update(insert={"e": [(3, 1)]}, delete={"e": [(7, 8)]})
    assert not any(built)
    _check_against_oracle(session, PROGRAM)
