"""The counting engine: per-iteration derivation counts, exact deletes in recursion, and the
state after any update sequence equal to a bootstrap from scratch."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from herbrand.evaluators.incremental import counting_walk
from herbrand.evaluators.incremental.counting import CountingEngine
from herbrand.evaluators.incremental.counting_semijoins import Semijoins
from herbrand.framework.analysis import analyse
from herbrand.framework.evaluator_checks import encode_facts
from herbrand.framework.testing import IncrementalSession
from tests.evaluators.incremental.engine_helpers import TC, reads_a_delta, record_rules
from tests.strategies import programs_with_updates


def test_counts_are_kept_per_iteration():
    session = IncrementalSession(CountingEngine, TC, {"e": [(1, 2), (2, 3), (1, 3)]})
    counts = session.engine.counts("tc")
    assert counts[(1, 3)] == {1: 1, 2: 1}  # the edge in iteration 1, via 2 in iteration 2
    assert counts[(1, 2)] == {1: 1} and counts[(2, 3)] == {1: 1}
    assert session.engine.state_size()[0] == 4


def test_a_cycle_does_not_keep_itself_alive():
    cycle = [(1, 2), (2, 3), (3, 1)]
    session = IncrementalSession(CountingEngine, TC, {"e": cycle + [(0, 1)]})
    session.update(delete={"e": [(0, 1)]})
    assert not any(row[0] == 0 for row in session.engine.counts("tc"))
    session.update(delete={"e": [(3, 1)]})
    assert set(session.engine.counts("tc")) == {(1, 2), (2, 3), (1, 3)}


def test_updates_run_only_variants_reading_changes(monkeypatch):
    session = IncrementalSession(CountingEngine, TC, {"e": [(i, i + 1) for i in range(20)]})
    evaluated = record_rules(monkeypatch, session.engine)
    session.update(insert={"e": [(20, 21)]}, delete={"e": [(10, 11)]})
    assert session.engine.last_strategy == "counting"
    assert evaluated and all(reads_a_delta(rule) for rule in evaluated), evaluated


def test_an_update_that_moves_no_tuple_keeps_the_relation_and_skips_empty_iterations(
        monkeypatch):
    program = TC + ".decl f(x: number, y: number)\ntc(x, y) :- f(x, y).\n"
    session = IncrementalSession(CountingEngine, program,
                                 {"e": [(i, i + 1) for i in range(6)], "f": [(7, 8)]})
    before = session.engine._state["tc"]
    evaluated = record_rules(monkeypatch, session.engine)
    session.update(insert={"f": [(0, 1)]})  # tc(0, 1) gains a derivation, no tuple moves
    assert session.engine._state["tc"] is before  # not copied, iteration by iteration
    # only iteration 1 evaluates (the rule over f's change): in later ones no tuple's
    # count or iteration changed, so no variant has a change to start from
    assert evaluated == [rule for rule in evaluated if "@plus:f" in str(rule)], evaluated
    assert session.engine.counts("tc")[(0, 1)] == {1: 2}


def test_an_update_copies_the_new_relation_once_and_reads_views_of_it(monkeypatch):
    built = []

    class Counted(counting_walk.GrowingColumns):
        def __init__(self, columns, capacity=0):
            super().__init__(columns, capacity)
            built.append(self)

    monkeypatch.setattr(counting_walk, "GrowingColumns", Counted)
    nonlinear = TC.replace("tc(x, y), e(y, z)", "tc(x, y), tc(y, z)")
    session = IncrementalSession(CountingEngine, nonlinear,
                                 {"e": [(i, i + 1) for i in range(16)]})
    prefixes = []  # X'_m handed to the variants
    new_prefix = counting_walk.Walk._new_prefix

    def recording(walk, name, m):
        prefixes.append(new_prefix(walk, name, m))
        return prefixes[-1]

    monkeypatch.setattr(counting_walk.Walk, "_new_prefix", recording)
    session.update(delete={"e": [(0, 1)]})  # X' differs from iteration 1 on
    assert len(built) == 1  # X' copied once, then each iteration's new tuples appended
    final = session.engine._state["tc"].columns
    assert len(prefixes) > 3 and all(np.shares_memory(final, prefix.columns)
                                     for prefix in prefixes if len(prefix))
    assert session.engine._state["tc"].to_set() == {
        (i, j) for i in range(1, 17) for j in range(i + 1, 17)}


def test_a_changed_aggregate_input_differences_the_rule_whole(monkeypatch):
    program = TC + ".decl size(n: number)\nsize(n) :- n = count : { tc(_, _) }.\n"
    session = IncrementalSession(CountingEngine, program, {"e": [(1, 2)]})
    evaluated = record_rules(monkeypatch, session.engine)
    session.update(insert={"e": [(2, 3)]})
    aggregate_rule = session.program.rules[-1]
    assert evaluated.count(aggregate_rule) == 2  # over the new state and over the old


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=programs_with_updates())
def test_the_state_after_updates_equals_a_bootstrap_from_scratch(case):
    program, facts, updates = case
    session = IncrementalSession(CountingEngine, program, facts)
    for insert, delete in updates:
        session.update(insert, delete)
    fresh = CountingEngine()
    fresh.bootstrap(program, encode_facts(program, session.facts))
    for name in (name for stratum in analyse(program) for name in stratum.relations):
        assert session.engine.counts(name) == fresh.counts(name), name
        _assert_bounds_hold_the_runs(session.engine._traces[name])


def _assert_bounds_hold_the_runs(trace):
    """Each run's column range (``Trace.bounds``, known for every run) holds its rows."""
    assert len(trace.bounds) == len(trace.firsts)
    for run, (lows, highs) in zip(trace.firsts, trace.bounds, strict=True):
        rows = run.rows()
        assert ((lows[:, None] <= rows) & (rows <= highs[:, None])).all()


def test_a_fresh_constant_scans_no_delta_it_is_outside_of(monkeypatch):
    # an edge of a fresh node joins no path: the reduction of Δ_2 (the paths 0..19 -> 40..59)
    # by it is empty without a scan; Δ'_1, which gains the fresh tc(99, 99), is scanned
    import herbrand.evaluators.incremental.member_kernels as member_kernels

    edges = [(i, 20 + j) for i in range(20) for j in range(20)]
    edges += [(20 + j, 40 + m) for j in range(20) for m in range(20)]
    session = IncrementalSession(CountingEngine, TC, {"e": edges})
    scanned = []
    matching = member_kernels.matching
    monkeypatch.setattr(member_kernels, "matching",
                        lambda values, seed: scanned.append(len(values)) or matching(values, seed))
    session.update(insert={"e": [(99, 99)]})
    assert scanned == [801]  # Δ'_1 at iteration 2; not Δ'_2 at iteration 3
    session.update(delete={"e": [(99, 99), (0, 20)]}, insert={"e": [(59, 0)]})
    _assert_bounds_hold_the_runs(session.engine._traces["tc"])


def test_the_relations_reduced_by_search_are_in_lexicographic_order(monkeypatch):
    # the engine's Semijoins search the first column of its reducible relations (deltas)
    checked = []
    reduced = Semijoins.reduced

    def checking(self, rules, instance, reducible, bounds=None):
        for name in reducible:
            if name in instance and len(instance[name]):
                columns = instance[name].columns
                assert (np.lexsort(columns[::-1]) == np.arange(columns.shape[1])).all(), name
                checked.append(name)
        return reduced(self, rules, instance, reducible, bounds)

    monkeypatch.setattr(Semijoins, "reduced", checking)
    nonlinear = TC.replace("tc(x, y), e(y, z)", "tc(x, y), tc(y, z)")
    edges = [(i, (7 * i) % 23) for i in range(23)]
    session = IncrementalSession(CountingEngine, nonlinear, {"e": edges})
    session.update(delete={"e": edges[:3]}, insert={"e": [(30, 1), (2, 31)]})
    session.update(insert={"e": edges[:3]})
    assert checked


def test_the_bootstrap_analyses_the_first_updates_variants_for_the_semijoins(monkeypatch):
    import herbrand.evaluators.incremental.counting_semijoins as counting_semijoins

    nonlinear = TC.replace("tc(x, y), e(y, z)", "tc(x, y), tc(y, z)")
    session = IncrementalSession(CountingEngine, nonlinear,
                                 {"e": [(i, i + 1) for i in range(30)]})

    def analysing(rule):
        raise AssertionError(f"{rule} analysed by the update")

    monkeypatch.setattr(counting_semijoins, "rule_literals", analysing)
    session.update(insert={"e": [(30, 31)]})
    session.update(delete={"e": [(0, 1), (30, 31)]})
    assert set(session.engine.counts("tc")) == {(i, j) for i in range(1, 31)
                                                 for j in range(i + 1, 31)}


def test_an_update_decodes_each_run_of_the_walk_once(monkeypatch):
    # the runs of the tuples that differ are read several times in a walk (as @gained: /
    # @plus:, for the bounds, the splice, the net changes): each is decoded once
    decoded = []
    rows = counting_walk.SortedRun.rows

    def recording(run):
        decoded.append(run)
        return rows(run)

    nonlinear = TC.replace("tc(x, y), e(y, z)", "tc(x, y), tc(y, z)")
    session = IncrementalSession(CountingEngine, nonlinear,
                                 {"e": [(i, i + 1) for i in range(16)]})
    monkeypatch.setattr(counting_walk.SortedRun, "rows", recording)
    session.update(delete={"e": [(0, 1)]})
    session.update(insert={"e": [(0, 1), (16, 17)]})
    assert len(decoded) > 4 and len(set(map(id, decoded))) == len(decoded)
    assert session.engine._state["tc"].to_set() == {
        (i, j) for i in range(18) for j in range(i + 1, 18)}
