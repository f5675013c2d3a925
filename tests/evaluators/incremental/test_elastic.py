"""The elastic engine: Update agrees with Bootstrap (results, changes and the sparse state), deep
deletes, the switch, aggregates recomputed per stratum, atomicity."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from herbrand.evaluators.incremental import (
    elastic,
    elastic_derivations,
    elastic_native,
    elastic_stratum,
    elastic_universe,
)
from herbrand.evaluators.incremental.changes import apply_updates
from herbrand.evaluators.incremental.elastic import ElasticEngine
from herbrand.evaluators.incremental.elastic_setup import SetUpEvaluator
from herbrand.evaluators.incremental.elastic_state import NEVER, UNKNOWN, RelationState
from herbrand.evaluators.incremental.elastic_universe import InputNumbers
from herbrand.evaluators.incremental.relation_sets import RelationSets
from herbrand.evaluators.incremental.row_index import ABSENT
from herbrand.evaluators.native.store import NativeStore
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.errors import EvaluationError
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation
from herbrand.framework.testing import IncrementalSession, encode_facts
from tests.evaluators.incremental.engine_helpers import CONSTANT_ATOMS
from tests.strategies import programs_with_facts, programs_with_updates

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""
# the closure by a non-linear rule: the native Bootstrap leaves its proof counts UNKNOWN
SQUARING_TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), tc(y, z).
"""


def _engine(**options):
    return lambda: ElasticEngine(switch=1e9, **options)


def _state(engine: ElasticEngine) -> dict:
    """Each derived relation's tuples -> (first iteration, proof count or UNKNOWN)."""
    out = {}
    for name, state in engine._snapshot.states.items():
        live = state.iteration < NEVER
        rows = map(tuple, state.rows[:, live].T.tolist())
        out[name] = dict(zip(rows, zip(state.iteration[live].tolist(),
                                       state.count[live].tolist(), strict=True), strict=True))
        assert set(out[name]) == state.relation.to_set()
        per_iteration = np.bincount(state.iteration[live], minlength=len(state.per_iteration))
        assert per_iteration.tolist() == state.per_iteration.tolist(), name  # kept exactly
    return out


def _exact(program, facts) -> dict:
    """The state of Algorithm 2 run in Python over ``facts``: every proof counted."""
    engine = ElasticEngine(native_bootstrap=False)
    engine.bootstrap(program, encode_facts(program, facts))
    return _state(engine)


def _assert_agrees(state: dict, exact: dict, label: str) -> None:
    """Same tuples and first iterations as ``exact``, and its proof counts where known."""
    for name, tuples in exact.items():
        assert state[name].keys() == tuples.keys(), label
        for row, (iteration, count) in tuples.items():
            assert state[name][row][0] == iteration, (label, name, row)
            assert state[name][row][1] in (count, UNKNOWN), (label, name, row)


def _edges(rows) -> dict[str, np.ndarray]:
    return {"e": np.array(sorted(rows), dtype=np.int64).reshape(-1, 2).T}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=programs_with_updates())
def test_update_state_equals_bootstrap_of_the_updated_input(case):
    """Theorem 3.5: after each Update, the results, the returned changes (checked by the
    session against the oracle) and the (iteration, count) of every tuple are those of a
    Bootstrap from the updated input."""
    program, facts, updates = case
    session = IncrementalSession(_engine(), program, facts)
    _assert_agrees(_state(session.engine), _exact(program, session.facts), "bootstrap")
    for number, (insert, delete) in enumerate(updates, start=1):
        session.update(insert, delete, label=f"update {number}")
        _assert_agrees(_state(session.engine), _exact(program, session.facts),
                       f"update {number}")


@pytest.mark.parametrize("cycle", [False, True])
def test_deleting_a_middle_edge_of_a_long_chain(cycle):
    chain = [(i, i + 1) for i in range(24)] + ([(24, 0)] if cycle else [])
    session = IncrementalSession(_engine(), TC, {"e": chain})
    session.update(delete={"e": [(12, 13)]})
    session.update(insert={"e": [(12, 13)]})
    session.update(delete={"e": [(0, 1), (23, 24)]}, insert={"e": [(0, 2)]})


def test_insert_then_delete_restores_the_state():
    session = IncrementalSession(_engine(), TC, {"e": [(1, 2), (2, 3), (3, 1), (3, 4)]})
    before = _exact(parse(TC), session.facts)
    session.update(insert={"e": [(4, 5), (5, 1), (0, 4)]})
    session.update(delete={"e": [(4, 5), (5, 1), (0, 4)]})
    _assert_agrees(_state(session.engine), before, "restored")


def test_negation_and_arithmetic_follow_their_inputs():
    program = TC + """
    .decl n(x: number)
    .decl far(x: number, y: number)
    n(x) :- e(x, _).
    n(y) :- e(_, y).
    far(x, s) :- n(x), n(y), !tc(x, y), x != y, s = x + y, s < 9.
    """
    session = IncrementalSession(_engine(), program, {"e": [(1, 2), (2, 3), (4, 5)]})
    session.update(insert={"e": [(3, 4)]})
    session.update(delete={"e": [(2, 3)]}, insert={"e": [(5, 1)]})


def test_an_aggregate_stratum_is_recomputed_and_its_changes_propagate(monkeypatch):
    program = TC + """
    .decl reach(x: number, c: number)
    .decl big(x: number)
    reach(x, c) :- e(x, _), c = count : { tc(x, _) }.
    big(x) :- reach(x, c), c >= 3.
    """
    session = IncrementalSession(_engine(), program, {"e": [(1, 2), (2, 3)]})
    bootstrapped = []
    original = ElasticEngine._bootstrap_stratum

    def spy(self, plan, instance):
        bootstrapped.append(plan.stratum.relations)
        return original(self, plan, instance)

    monkeypatch.setattr(ElasticEngine, "_bootstrap_stratum", spy)
    session.update(insert={"e": [(3, 4)]})
    assert session.engine.last_strategy == "update"
    assert bootstrapped == [("reach",)]  # only the aggregate's stratum was recomputed
    session.update(delete={"e": [(1, 2)]})


def _fake_clock(monkeypatch, engine, bootstrap_seconds: float) -> dict:
    """The engine's last Bootstrap made to have taken ``bootstrap_seconds``, and its clock a
    fake one: the returned dict's ``"t"``, which the test advances."""
    engine._bootstrap_seconds = bootstrap_seconds
    now = {"t": 0.0}
    monkeypatch.setattr(ElasticEngine, "clock", staticmethod(lambda: now["t"]))
    return now


def _tc_engine(switch: float, length: int = 30) -> ElasticEngine:
    engine = ElasticEngine(switch=switch)
    program = parse(TC)
    engine.bootstrap(program, Database({"e": Relation.from_rows([(i, i + 1)
                                                                 for i in range(length)])}))
    assert engine.last_strategy == "bootstrap"
    return engine


def test_switch_zero_always_bootstraps_and_stays_correct():
    engine = _tc_engine(0.0)
    changes = engine.update(_edges([(30, 31)]), {})
    assert engine.last_strategy == "switched-to-bootstrap"
    added, removed = changes["tc"]
    assert added.shape[1] == 31 and removed.shape[1] == 0
    assert (30, 31) in engine.database["tc"] and (0, 31) in engine.database["tc"]


def test_switched_updates_report_exact_changes():
    program = TC + """
    .decl n(x: number)
    .decl gap(x: number, y: number)
    n(x) :- e(x, _).
    gap(x, y) :- n(x), n(y), !tc(x, y).
    """
    session = IncrementalSession(lambda: ElasticEngine(switch=0.0), program,
                                 {"e": [(1, 2), (2, 3), (3, 1), (4, 5)]})
    session.update(delete={"e": [(3, 1)]}, insert={"e": [(5, 1)]})
    assert session.engine.last_strategy == "switched-to-bootstrap"
    session.update(delete={"e": [(4, 5), (1, 2)]}, insert={"e": [(3, 1)]})


def test_switch_fires_when_the_clock_passes_the_budget(monkeypatch):
    engine = _tc_engine(0.5)
    engine._bootstrap_seconds = 10.0
    ticks = iter(range(0, 10_000, 2))  # two seconds per reading: the budget (5 s) runs out
    monkeypatch.setattr(ElasticEngine, "clock", staticmethod(lambda: next(ticks)))
    engine.update({}, _edges([(10, 11)]))
    assert engine.last_strategy == "switched-to-bootstrap"
    assert (0, 11) not in engine.database["tc"] and (11, 30) in engine.database["tc"]
    assert engine.last_switch.strategy == "switched-to-bootstrap"
    record = engine.last_switch  # 5 s, and half the set-up it did for the Bootstrap
    assert record.budget == 0.5 * (10.0 + record.exempted) and record.counted > record.budget
    monkeypatch.setattr(ElasticEngine, "clock", staticmethod(lambda: 0.0))
    engine.update(_edges([(10, 11)]), {})  # an insert: attempted (deletes back off apart)
    assert engine.last_strategy == "update" and engine.last_switch.strategy == "update"
    assert (0, 30) in engine.database["tc"]


def test_after_abandoned_attempts_updates_bootstrap_without_one(monkeypatch):
    engine = _tc_engine(0.0, 60)
    ticks = itertools.count()  # a second per reading: every attempt is abandoned at once
    monkeypatch.setattr(ElasticEngine, "clock", staticmethod(lambda: next(ticks)))
    propagated = ElasticEngine._propagated
    attempts = []

    def counted(self, *args):
        attempts.append(1)
        return propagated(self, *args)

    monkeypatch.setattr(ElasticEngine, "_propagated", counted)
    strategies = []
    for edge in range(10, 20):  # two rows an update: one row would skip the most at once
        attempts.clear()
        engine.update({}, _edges([(edge, edge + 1), (edge + 30, edge + 31)]))
        strategies.append((engine.last_switch.strategy, bool(attempts)))
        assert engine.last_strategy == "switched-to-bootstrap"
    attempted = ("switched-to-bootstrap", True)
    skipped = ("skipped-to-bootstrap", False)
    assert strategies == [attempted, skipped, attempted] + [skipped] * 3 + [attempted] + [
        skipped] * 3
    assert (0, 10) in engine.database["tc"] and (0, 11) not in engine.database["tc"]
    engine.update(_edges([(10, 11)]), {})  # inserts back off apart: attempted
    assert engine.last_switch.strategy == "switched-to-bootstrap" and attempts
    engine.switch = 1e9
    for edge in range(20, 25):  # the other 4 of the deletes' 7 skips, then a completed attempt
        engine.update({}, _edges([(edge, edge + 1), (edge + 30, edge + 31)]))
    assert engine.last_switch.strategy == "update" and (0, 25) not in engine.database["tc"]
    engine.update({}, _edges([(25, 26), (55, 56)]))  # a completed Update resets the backoff
    assert engine.last_switch.strategy == "update"


def test_a_bootstrap_resets_the_backoff():
    engine = _tc_engine(0.0)
    engine.update({}, _edges([(10, 11)]))
    engine.update({}, _edges([(11, 12)]))
    assert engine.last_switch.strategy == "skipped-to-bootstrap"
    engine.bootstrap(parse(TC), engine.database)
    engine.update({}, _edges([(12, 13)]))
    assert engine.last_switch.strategy == "switched-to-bootstrap"


def test_proof_counts_for_the_native_bootstrap_are_charged_to_it(monkeypatch):
    # a diamond: deleting (0, 1) lowers the counts of tc(0, 1), tc(0, 2) and tc(0, 4), which
    # Bootstrap left unknown (a non-linear rule)
    engine = ElasticEngine(switch=0.05)  # a budget of 0.5 s
    engine.bootstrap(parse(SQUARING_TC), Database({"e": Relation.from_rows(
        [(0, 1), (0, 3), (1, 2), (3, 2), (2, 4)])}))
    now = _fake_clock(monkeypatch, engine, 10.0)
    resolve = elastic_stratum.StratumRun._resolve_counts
    calls = []

    def slow(self, head, k, positions):  # each computation takes 0.4 s on the fake clock
        if len(positions):
            calls.append(head)
            now["t"] += 0.4
        return resolve(self, head, k, positions)

    monkeypatch.setattr(elastic_stratum.StratumRun, "_resolve_counts", slow)
    engine.update({}, _edges([(0, 1)]))
    # three computations (iterations 1 to 3): 1.2 s, past the budget if they counted
    assert engine.last_strategy == "update" and calls == ["tc", "tc", "tc"]
    assert engine._bootstrap_seconds == pytest.approx(11.2)
    assert (0, 2) in engine.database["tc"] and (0, 1) not in engine.database["tc"]


def test_lowered_proof_counts_are_computed_exactly():
    """Two diamonds in a row, closed by a non-linear rule: deleting (0, 1) lowers tc(0, 2) (two
    proofs in iteration 2), whose old count is computed from its derivations, so its new one
    is exact; tc(0, 7) (one proof in iteration 3, through tc(0, 2)) loses none and its count
    stays UNKNOWN."""
    edges = [(0, 1), (0, 3), (1, 2), (3, 2), (2, 5), (2, 9), (5, 7), (9, 7)]
    engine = ElasticEngine(switch=1e9)
    engine.bootstrap(parse(SQUARING_TC), Database({"e": Relation.from_rows(edges)}))
    engine.update({}, _edges([(0, 1)]))
    assert engine.last_strategy == "update"
    state = _state(engine)["tc"]
    assert state[(0, 2)] == (2, 1) and state[(0, 7)] == (3, UNKNOWN) and (0, 1) not in state
    _assert_agrees(_state(engine), _exact(parse(SQUARING_TC), {"e": edges[1:]}), "lowered")


@pytest.mark.parametrize(("program", "known"), [(TC, True), (SQUARING_TC, False)])
def test_the_native_bootstrap_counts_the_proofs_of_linear_rules(program, known):
    """Two diamonds in a row: tc(0, 2) has two proofs, tc(0, 7) two (linear) or one (squaring);
    the native Bootstrap counts them all with a linear rule and none with a non-linear one."""
    edges = [(0, 1), (0, 3), (1, 2), (3, 2), (2, 5), (2, 9), (5, 7), (9, 7)]
    engine = ElasticEngine()
    engine.bootstrap(parse(program), Database({"e": Relation.from_rows(edges)}))
    state, exact = _state(engine), _exact(parse(program), {"e": edges})
    assert state["tc"].keys() == exact["tc"].keys()
    assert state == exact if known else all(
        count == UNKNOWN and iteration == exact["tc"][row][0]
        for row, (iteration, count) in state["tc"].items())
    assert exact["tc"][(0, 2)][1] == 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=programs_with_facts())
def test_native_proof_counts_are_algorithm_2s_in_strata_of_linear_rules(case):
    """Every tuple of a stratum whose rules are linear has Algorithm 2's iteration and proof
    count after a native Bootstrap; others have its iteration and its count or UNKNOWN."""
    program, facts = case
    engine = ElasticEngine()
    engine.bootstrap(program, encode_facts(program, facts))
    state, exact = _state(engine), _exact(program, facts)
    _assert_agrees(state, exact, "bootstrap")
    for plan in engine._snapshot.plans:
        if all(elastic_native._linear(rule, plan.stratum.relations)
               for rule in plan.stratum.rules):
            for name in plan.stratum.relations:
                assert state[name] == exact[name], name


def test_join_indexes_for_the_native_bootstrap_are_charged_to_it(monkeypatch):
    engine = _tc_engine(0.05)
    now = _fake_clock(monkeypatch, engine, 10.0)  # a budget of 0.5 s
    build = SetUpEvaluator._built
    built = []

    def slow(self, name, relation, key):  # each first build takes 1 s on the fake clock
        built.append(name)
        now["t"] += 1.0
        return build(self, name, relation, key)

    monkeypatch.setattr(SetUpEvaluator, "_built", slow)
    engine.update(_edges([(30, 31)]), {})
    assert engine.last_strategy == "update" and built
    assert engine._bootstrap_seconds == pytest.approx(10.0 + len(built))
    built.clear()
    engine.update(_edges([(31, 32)]), {})  # the indexes are built: nothing is set-up again
    assert engine.last_strategy == "update" and not built
    assert (0, 32) in engine.database["tc"]


def test_the_first_bootstrap_sets_up_its_states_and_a_switched_one_leaves_them():
    engine = _tc_engine(0.0)
    assert all(state.is_set_up and state.indexes for state in engine._snapshot.states.values())
    engine.update(_edges([(30, 31)]), {})
    assert engine.last_strategy == "switched-to-bootstrap"
    assert not any(state.is_set_up for state in engine._snapshot.states.values())


def test_plans_and_universes_for_the_native_bootstrap_are_charged_to_it(monkeypatch):
    monkeypatch.setattr(elastic, "_set_up", lambda snapshot: None)  # a switched Bootstrap's
    engine = _tc_engine(0.05)
    now = _fake_clock(monkeypatch, engine, 10.0)  # a budget of 0.5 s
    translate, table = RelationalEvaluator._translated, RelationState.table.fget
    made = []

    def slow_translation(self, rule, instance):  # each first plan takes 1 s on the fake clock
        made.append("plan")
        now["t"] += 1.0
        return translate(self, rule, instance)

    def slow_table(state):  # so does building a universe table
        if state.built_table is None:
            made.append("universe")
            now["t"] += 1.0
        return table(state)

    monkeypatch.setattr(RelationalEvaluator, "_translated", slow_translation)
    monkeypatch.setattr(RelationState, "table", property(slow_table))
    engine.update(_edges([(30, 31)]), {})
    assert engine.last_strategy == "update" and "plan" in made and "universe" in made
    assert engine._bootstrap_seconds == pytest.approx(10.0 + len(made))
    made.clear()
    engine.update(_edges([(31, 32)]), {})  # planned, and the state's universe is built
    assert engine.last_strategy == "update" and not made
    assert (0, 32) in engine.database["tc"]


def test_a_large_seed_is_joined_in_two_parts_with_the_same_state(monkeypatch):
    monkeypatch.setattr(elastic_derivations, "MORSEL_ROWS", 2)
    engine = _tc_engine(1e9)
    derivations = SetUpEvaluator.derivations
    calls = []

    def counted(self, rules, instance):
        calls.append(1)
        return derivations(self, rules, instance)

    monkeypatch.setattr(SetUpEvaluator, "derivations", counted)
    inserted = [(30 + i, 40 + i) for i in range(9)] + [(5, 30), (40, 3)]
    engine.update(_edges(inserted), {})
    engine.update({}, _edges([(5, 30), (2, 3)]))
    assert engine.last_strategy == "update" and len(calls) > 20
    facts = {"e": [(i, i + 1) for i in range(30) if i != 2] + inserted[:-2] + [(40, 3)]}
    _assert_agrees(_state(engine), _exact(parse(TC), facts), "two parts")


def test_a_join_expected_to_pass_the_budget_is_abandoned_after_its_first_part(monkeypatch):
    monkeypatch.setattr(elastic_derivations, "MORSEL_ROWS", 2)
    engine = _tc_engine(0.5)
    now = _fake_clock(monkeypatch, engine, 10.0)  # a budget of 5 s
    derivations = SetUpEvaluator.derivations
    calls = []

    def slow(self, rules, instance):  # each join (or part of one) takes 1 s on the fake clock
        calls.append(1)
        now["t"] += 1.0
        return derivations(self, rules, instance)

    monkeypatch.setattr(SetUpEvaluator, "derivations", slow)
    # the first join's seed: 20 new edges; after 2 of them in 1 s, 18 more would take 9 s
    engine.update(_edges([(100 + 2 * i, 101 + 2 * i) for i in range(20)]), {})
    assert engine.last_switch.strategy == "switched-to-bootstrap"
    assert calls == [1] and engine.last_switch.counted == 1.0
    assert (100, 101) in engine.database["tc"] and (0, 30) in engine.database["tc"]


def test_a_fault_mid_update_leaves_the_state_and_a_later_update_works(monkeypatch):
    session = IncrementalSession(_engine(), TC, {"e": [(i, i + 1) for i in range(10)]})
    before = _state(session.engine)
    database = session.engine.database
    calls = {"n": 0}
    settle = elastic_stratum.StratumRun._settle

    def failing(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("injected")
        return settle(self, *args, **kwargs)

    monkeypatch.setattr(elastic_stratum.StratumRun, "_settle", failing)
    with pytest.raises(RuntimeError, match="injected"):
        session.engine.update(_edges([(10, 11)]), _edges([(4, 5)]))
    assert _state(session.engine) == before
    assert session.engine.database["tc"] == database["tc"]
    monkeypatch.setattr(elastic_stratum.StratumRun, "_settle", settle)
    session.update(insert={"e": [(10, 11)]}, delete={"e": [(4, 5)]})


def test_updating_a_derived_relation_is_an_error():
    engine = _tc_engine(1.0)
    with pytest.raises(EvaluationError, match="tc is not an input"):
        engine.update({"tc": np.array([[1], [2]])}, {})


def test_state_is_two_numbers_per_tuple_plus_the_row_index():
    engine = _tc_engine(1.0)
    tuples, size = engine.state_size()
    assert tuples == len(engine.database["tc"]) == 465
    assert 16 * tuples <= size <= (16 + 4 * 12) * tuples  # a row index: 2-4 slots of 12 bytes


def test_an_input_universe_is_searched_through_the_inputs_kept_table(monkeypatch):
    built, searched = [], []
    relation_index, find = RelationalEvaluator.relation_index, elastic._KeptRows.find

    def recording_index(self, name, relation, key):
        built.append((name, key))
        return relation_index(self, name, relation, key)

    def recording_find(self, rows):
        searched.append(rows.shape[1])
        return find(self, rows)

    monkeypatch.setattr(RelationalEvaluator, "relation_index", recording_index)
    monkeypatch.setattr(elastic._KeptRows, "find", recording_find)
    engine = _tc_engine(1e9)
    engine.update(_edges([(30, 31)]), _edges([(15, 16), (3, 4)]))
    assert engine.last_strategy == "update"
    # the provenance query of tc(x, y) :- e(x, y) joins whole rows of e: no index of them
    assert searched and ("@U:e", (0, 1)) not in built
    assert engine.database["tc"].to_set() == {
        (a, b) for a in range(32) for b in range(a + 1, 32)
        if not (a <= 3 < b) and not (a <= 15 < b)}


def test_an_input_read_by_whole_row_joins_only_is_never_copied_with_its_positions(
        monkeypatch):
    program = parse(TC.replace("tc(x, z) :- tc(x, y), e(y, z).", "tc(x, z) :- tc(x, y), tc(y, z)."))
    engine = ElasticEngine(switch=1e9)
    engine.bootstrap(program, Database({"e": Relation.from_rows([(i, i + 1) for i in range(9)])}))
    tables = []
    positioned = elastic_universe.positioned
    monkeypatch.setattr(elastic_universe, "positioned",
                        lambda rows: tables.append(rows.shape) or positioned(rows))
    engine.update(_edges([(20, 21)]), _edges([(4, 5)]))
    assert engine.last_strategy == "update" and tables == []
    assert engine.database["tc"].to_set() == {
        (a, b) for a in range(10) for b in range(a + 1, 10) if not a <= 4 < b} | {(20, 21)}
    engine.bootstrap(parse(TC), Database({"e": Relation.from_rows([(0, 1)])}))
    engine.update(_edges([(1, 2)]), {})  # tc(x, z) :- tc(x, y), e(y, z) joins e on y
    assert tables == [(2, 2)] and engine.database["tc"].to_set() == {(0, 1), (1, 2), (0, 2)}


def test_an_input_universe_is_in_its_new_relations_order_then_its_removed_rows():
    old = Relation.from_rows([(1, 2), (2, 3), (3, 4), (4, 5)])
    sets = RelationSets.of({"e": old})
    new, added, removed = apply_updates(Database({"e": old}), _edges([(7, 7)]),
                                        _edges([(2, 3)]), sets)
    kept = sets.take("e", new["e"])
    universe = elastic._input_universe(kept, old, added["e"].columns, removed["e"].columns,
                                       InputNumbers())
    rows = [tuple(row) for row in universe.rows.T]
    assert rows == [tuple(row) for row in new["e"].columns.T] + [(2, 3)]
    assert rows[-2] == (7, 7)
    assert universe.old_iteration.tolist() == [0, 0, 0, NEVER, 0]
    assert universe.new_iteration.tolist() == [0, 0, 0, 0, NEVER]
    assert sorted(universe.moved().tolist()) == [3, 4]
    assert universe.find(universe.rows).tolist() == list(range(5))
    assert universe.find(np.array([[9], [9]])).tolist() == [ABSENT]
    unchanged = elastic._input_universe(kept, new["e"], None, None, InputNumbers())
    assert unchanged.moved().tolist() == [] and len(unchanged) == 4


def test_a_delete_of_an_inputs_last_rows_gives_a_universe_of_its_old_rows():
    old = Relation.from_rows([(1, 2), (2, 3), (3, 4), (4, 5)])
    sets = RelationSets.of({"e": old})
    new, _, removed = apply_updates(Database({"e": old}), {}, _edges([(4, 5)]), sets)
    kept = sets.take("e", new["e"])
    universe = elastic._input_universe(kept, old, None, removed["e"].columns, InputNumbers())
    assert universe.rows is old.columns  # the kept rows are a prefix of them: no copy
    assert universe.new_iteration.tolist() == [0, 0, 0, NEVER]
    assert universe.find(np.array([[4, 3, 1], [5, 4, 2]])).tolist() == [3, 2, 0]
    new, _, removed = apply_updates(Database({"e": old}), {}, _edges([(1, 2)]), sets)
    universe = elastic._input_universe(sets.take("e", new["e"]), old, None,
                                       removed["e"].columns, InputNumbers())
    assert universe.rows is not old.columns  # (4, 5) moved into (1, 2)'s position
    assert [tuple(row) for row in universe.rows.T] == [(4, 5), (2, 3), (3, 4), (1, 2)]


def test_tombstones_are_compacted_and_the_state_stays_exact():
    engine = _tc_engine(1e9)  # a chain 0 -> 30: 465 paths
    engine.update({}, _edges([(15, 16)]))  # 16 * 15 paths go: tombstones outnumber live rows
    state = engine._snapshot.states["tc"]
    assert len(state.iteration) == len(state.relation) == 465 - 240
    engine.update(_edges([(15, 16)]), {})
    engine.update({}, _edges([(29, 30)]))  # 30 paths go: kept as tombstones
    state = engine._snapshot.states["tc"]
    assert len(state.iteration) == 465 and len(state.relation) == 435
    fresh = ElasticEngine(native_bootstrap=False)
    fresh.bootstrap(parse(TC), Database({"e": Relation.from_rows([(i, i + 1) for i in range(29)])}))
    _assert_agrees(_state(engine), _state(fresh), "compacted")
    assert engine.database["tc"] == fresh.database["tc"]


def test_constant_atoms_read_selections_of_the_universes(monkeypatch):
    program = CONSTANT_ATOMS
    facts = {"t": [(1, 0, 2), (2, 0, 3), (3, 0, 4), (9, 4, 1), (8, 4, 2), (7, 5, 1)]}
    session = IncrementalSession(_engine(), program, facts)
    read = []
    derivations = elastic_derivations.RelationalEvaluator.derivations

    def recording(self, rules, instance):
        read.extend(atom.relation for rule in rules for atom in _body_atoms(rule))
        return derivations(self, rules, instance)

    monkeypatch.setattr(elastic_derivations.RelationalEvaluator, "derivations", recording)
    session.update(insert={"t": [(4, 0, 5)]}, delete={"t": [(2, 0, 3)]})
    session.update(insert={"t": [(2, 0, 3), (6, 4, 5)]})
    assert "@selected:@U:m:1=0" in read and "@selected:@U:m:1=4" in read
    assert "@U:m" not in read  # every atom over m has a constant


def _body_atoms(rule):
    return [element.atom for element in rule.body if hasattr(element, "atom")]


def test_the_native_bootstrap_numbers_many_iterations_per_kernel_call(monkeypatch):
    """The kernel records where each iteration ends, so a chain of 300 edges (300 iterations
    and a last one deriving nothing) is numbered in 1 + ceil(300 / 64) kernel runs, not one per
    iteration, with Algorithm 2's iterations."""
    monkeypatch.setattr(elastic_native, "ITERATIONS_PER_CALL", 64)
    runs = []
    run = NativeStore.run

    def counting(self, *args):
        runs.append(args[6])  # the budget: 0 for a pass
        return run(self, *args)

    monkeypatch.setattr(NativeStore, "run", counting)
    facts = {"e": [(i, i + 1) for i in range(300)]}
    engine = ElasticEngine()
    engine.bootstrap(parse(TC), encode_facts(parse(TC), facts))
    assert runs == [0] + [64] * 5
    _assert_agrees(_state(engine), _exact(parse(TC), facts), "numbered")


def _seeded_joins(monkeypatch) -> list[str]:
    """Records the seed of each seeded join an Update runs (its seed relation's name)."""
    joined = []
    derivations = elastic_derivations.StratumDerivations._derivations

    def recording(self, rule, seeds):
        joined.extend(seeds)
        return derivations(self, rule, seeds)

    monkeypatch.setattr(elastic_derivations.StratumDerivations, "_derivations", recording)
    return joined


def test_a_seed_repeated_by_later_iterations_is_joined_once(monkeypatch):
    """A new edge at the end of a 12-edge chain is in the seed set of every iteration of the
    Update (13 of them); its join with the closure runs in the first one and is kept."""
    chain = [(i, i + 1) for i in range(12)]
    session = IncrementalSession(_engine(), TC, {"e": chain})
    joined = _seeded_joins(monkeypatch)
    session.update(insert={"e": [(12, 13)]})
    assert joined.count("@delta:seed:e") == 2  # the base rule's variant and the recursive one
    _assert_agrees(_state(session.engine), _exact(parse(TC), session.facts), "inserted")
    joined.clear()
    session.update(delete={"e": [(12, 13)]})
    assert joined.count("@delta:seed:e") == 2
    _assert_agrees(_state(session.engine), _exact(parse(TC), session.facts), "deleted")


def test_a_seed_holding_none_of_its_atoms_constants_is_not_joined(monkeypatch):
    """A triple of predicate 2 changes m, whose rule reads m only with predicates 0 and 1: no
    seeded or head-seeded join of that rule runs, and the results stay exact."""
    program = """
.decl t(s: number, p: number, o: number)
.decl m(s: number, p: number, o: number)
m(s, p, o) :- t(s, p, o).
m(x, 0, z) :- m(x, 0, y), m(y, 1, z).
"""
    session = IncrementalSession(_engine(), program,
                                 {"t": [(1, 0, 2), (2, 1, 3), (3, 1, 4)]})
    joined = []
    derivations = elastic_derivations.StratumDerivations._derivations

    def recording(self, rule, seeds):
        joined.append(str(rule.head))
        return derivations(self, rule, seeds)

    monkeypatch.setattr(elastic_derivations.StratumDerivations, "_derivations", recording)
    recursive = "@probe(x, 0, z, @pos0, @pos1"  # the head of the recursive rule's variants
    session.update(insert={"t": [(5, 2, 6)]})
    session.update(delete={"t": [(5, 2, 6)]})
    assert joined and not any(head.startswith(recursive) for head in joined)
    session.update(insert={"t": [(4, 1, 7)]})  # predicate 1: the recursive rule joins it
    assert any(head.startswith(recursive) for head in joined)
    _assert_agrees(_state(session.engine), _exact(parse(program), session.facts), "updated")


def test_a_kept_join_is_run_again_when_a_universe_after_its_seed_grows(monkeypatch):
    """Right-recursive TC: the edge atom comes first, and the closure it joins grows in every
    iteration of an insert, so the kept join of the new edge is not reused."""
    program = """
    .decl e(x: number, y: number)
    .decl tc(x: number, y: number)
    tc(x, y) :- e(x, y).
    tc(x, z) :- e(x, y), tc(y, z).
    """
    session = IncrementalSession(_engine(), program, {"e": [(i, i + 1) for i in range(8)]})
    joined = _seeded_joins(monkeypatch)
    session.update(insert={"e": [(20, 0)]})
    assert joined.count("@delta:seed:e") > 2
    _assert_agrees(_state(session.engine), _exact(parse(program), session.facts), "inserted")


def test_constant_selections_of_a_universe_are_kept_across_updates(monkeypatch):
    """An Update extends the selections the last one took of its stratum's universes by the
    rows appended since, instead of selecting from every row again."""
    from herbrand.evaluators.incremental import counting_selections

    program = parse(""".decl e(x: number, y: number)
.decl p(x: number, k: number, y: number)
.input e
p(x, 0, y) :- e(x, y).
p(x, 0, z) :- p(x, 0, y), e(y, z).""")
    engine = ElasticEngine(switch=1e9)
    engine.bootstrap(program, Database({"e": Relation.from_rows([(i, i + 1) for i in range(20)])}))
    scanned = []
    selected = counting_selections._selected
    monkeypatch.setattr(counting_selections, "_selected",
                        lambda columns, wanted: scanned.append(columns.shape[1] if wanted else 0)
                        or selected(columns, wanted))
    engine.update(_edges([(20, 21)]), {})
    first = sum(scanned)
    assert first >= 210  # the first Update selects from every row of p's universe
    scanned.clear()
    engine.update(_edges([(21, 22)]), {})
    assert 0 < sum(scanned) < 50  # the second one from the rows appended since only
    recomputed = ElasticEngine()
    recomputed.bootstrap(program, Database({"e": Relation.from_rows(
        [(i, i + 1) for i in range(22)])}))
    assert engine.database["p"] == recomputed.database["p"]
    assert engine.state_size()[1] > recomputed.state_size()[1]  # the selections count


@pytest.mark.parametrize("program", [TC, SQUARING_TC])
def test_a_deleted_head_is_joined_by_its_provenance_queries_once(monkeypatch, program):
    """Deleting the first edge of a chain deletes tc(0, k) in iteration k - 1 for every k:
    the re-discovery term asks for every head deleted so far in each later iteration, and
    (squaring) the proof counts for the heads they lower. Each rule's head-seeded join runs
    once per head in the Update, the later queries reading the derivations kept."""
    chain = [(i, i + 1) for i in range(12)] + [(0, 5)]
    session = IncrementalSession(_engine(), program, {"e": chain})
    queried = []
    derivations = elastic_derivations.StratumDerivations._derivations

    def recording(self, rule, seeds):
        queried.extend((str(rule), tuple(row)) for name, seed in seeds.items()
                       if name.startswith("@delta:head:") for row in seed.columns.T.tolist())
        return derivations(self, rule, seeds)

    monkeypatch.setattr(elastic_derivations.StratumDerivations, "_derivations", recording)
    session.update(delete={"e": [(0, 1)]})
    assert queried and len(set(queried)) == len(queried)
    _assert_agrees(_state(session.engine), _exact(parse(program), session.facts), "deleted")
    session.update(insert={"e": [(0, 1)]})
    session.update(delete={"e": [(0, 1), (5, 6)]})
    _assert_agrees(_state(session.engine), _exact(parse(program), session.facts), "again")


def _counted_iterations(monkeypatch) -> list[int]:
    """The iterations each Update settles (``StratumRun._settle`` calls with weights)."""
    settled = []
    settle = elastic_stratum.StratumRun._settle

    def counted(self, k, found, weights=None, located=None):
        if weights is not None:
            settled.append(k)
        return settle(self, k, found, weights, located)

    monkeypatch.setattr(elastic_stratum.StratumRun, "_settle", counted)
    return settled


@pytest.mark.parametrize("program", [TC, SQUARING_TC])
def test_an_update_ends_once_later_iterations_can_change_nothing(monkeypatch, program):
    """A fresh edge on a chain of 12 (tuples of iterations up to 11 with the linear rule):
    inserting or deleting it changes iteration 1 only, so the Update ends after iteration 2
    (nothing kept, nothing moved later, nothing to re-discover) instead of walking the
    untouched iterations up to 12; the state stays Algorithm 2's."""
    chain = [(i, i + 1) for i in range(12)]
    session = IncrementalSession(_engine(), program, {"e": chain})
    settled = _counted_iterations(monkeypatch)
    for insert, delete in (({"e": [(50, 51)]}, {}), ({}, {"e": [(50, 51)]})):
        settled.clear()
        session.update(insert, delete)
        assert session.engine.last_strategy == "update" and settled == [1, 2]
        _assert_agrees(_state(session.engine), _exact(parse(program), session.facts), "fresh")


def test_an_update_goes_on_while_a_deleted_head_can_be_rediscovered(monkeypatch):
    """Deleting the shortcut (0, 3) of the chain 0 -> 1 -> 2 -> 3 -> 4 deletes tc(0, 3) at
    iteration 1; iteration 2 finds nothing, but tc(0, 3) has a derivation of iteration 2
    (tc(0, 2), e(2, 3)), which re-discovers it at iteration 3: the Update must not end at 2."""
    chain = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 3)]
    session = IncrementalSession(_engine(), TC, {"e": chain})
    settled = _counted_iterations(monkeypatch)
    session.update(delete={"e": [(0, 3)]})
    assert settled[:3] == [1, 2, 3]
    assert _state(session.engine)["tc"][(0, 3)] == (3, 1)
    _assert_agrees(_state(session.engine), _exact(parse(TC), session.facts), "rediscovered")


def test_an_update_settles_heads_by_the_positions_found_with_them_and_searches_none_again(
        monkeypatch):
    """The heads an Update's terms find come with their positions (the deletion and insertion
    terms search each head once, the re-discovery term reports them): ``_settle`` reads
    those, which are where a search of the universe finds the heads."""
    chain = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 3)]
    session = IncrementalSession(_engine(), TC, {"e": chain})
    settle, find = elastic_stratum.StratumRun._settle, elastic_stratum.StratumRun._find
    located_rows, searched = [], []

    def checked(self, k, found, weights=None, located=None):
        for head in self.heads:
            if weights is not None:
                rows = np.concatenate([np.zeros((2, 0), dtype=np.int64), *found[head]], axis=1)
                at = np.concatenate([np.zeros(0, dtype=np.int64), *located[head]])
                assert at.tolist() == self.universes[head].find(rows).tolist()
                located_rows.append(rows.shape[1])
        searched.clear()
        result = settle(self, k, found, weights, located)
        assert weights is None or searched == []
        return result

    monkeypatch.setattr(elastic_stratum.StratumRun, "_settle", checked)
    monkeypatch.setattr(elastic_stratum.StratumRun, "_find",
                        lambda self, universe, rows: searched.append(1) or find(
                            self, universe, rows))
    session.update(insert={"e": [(4, 0)]}, delete={"e": [(0, 3)]})
    assert sum(located_rows) > 0
    _assert_agrees(_state(session.engine), _exact(parse(TC), session.facts), "located")


def test_a_join_of_deleted_input_rows_is_read_by_buckets_of_its_latest_old_iteration(
        monkeypatch):
    """Deleting the last edge of a 12-edge chain: its join with the closure, tc(x, 11) with
    e(11, 12) for x = 0 .. 10, is folded whole in iteration 0, then kept with each
    derivation's Mo (its Mn is NEVER for good), and each later iteration h folds only the one
    derivation of Mo = h, while the Update goes on to delete tc(0, 12) at the far end."""
    session = IncrementalSession(_engine(), TC, {"e": [(i, i + 1) for i in range(12)]})
    maxima, widths = elastic_derivations.StratumDerivations._maxima, []

    def recorded(self, probe, batch, step, seed=0):
        if seed == 1:  # the variant seeded by the edge
            widths.append(batch.shape[1])
        return maxima(self, probe, batch, step, seed)

    monkeypatch.setattr(elastic_derivations.StratumDerivations, "_maxima", recorded)
    session.update(delete={"e": [(11, 12)]})
    assert widths == [11] + [1] * 11  # iteration 0, then Mo = 1 .. 11
    _assert_agrees(_state(session.engine), _exact(parse(TC), session.facts), "deleted")
