"""The backward/forward engine: checks before deleting, cycles that only support themselves,
negation and aggregates over a changing relation, and the lazy expansion of the checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental import bf, instance_rules, pair_saturation, two_step_proofs
from herbrand.evaluators.incremental.backward_forward import BackwardForward
from herbrand.evaluators.incremental.bf import BFEngine
from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.copy_proofs import CopyProofs
from herbrand.evaluators.incremental.expansion import Expansion
from herbrand.evaluators.incremental.near_heads import NEAR
from herbrand.evaluators.incremental.pair_saturation import HeadGrid
from herbrand.evaluators.incremental.step_reads import StepReads
from herbrand.framework.testing import IncrementalSession
from tests.evaluators.incremental.engine_helpers import TC, record_index_builds

REACH = """
.decl e(x: number, y: number)
.decl source(x: number)
.decl reach(x: number)
reach(x) :- source(x).
reach(y) :- reach(x), e(x, y).
"""
A, B, C = 1, 2, 3
CYCLE = {"e": [(A, B), (B, A), (C, A)], "source": [(C,)]}


def _rows(rows) -> set:
    return set(map(tuple, rows.T.tolist()))


def _without_unfolding(monkeypatch) -> None:
    """No unfolded rules in the step rules made from now on (instance_rules.unfolding): a
    test of the rounds after them, whose facts they would prove first."""
    monkeypatch.setattr(instance_rules, "unfolding", lambda *arguments: None)


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


def _probed_members(monkeypatch) -> list[int]:
    """The rows whose left-out atoms (``InstanceRule.members``) each probe of the old
    relations reads, from now on."""
    probed = []
    held = Expansion._held

    def recorded(self, found, rows):
        probed.append(len(rows))
        return held(self, found, rows)

    monkeypatch.setattr(Expansion, "_held", recorded)
    return probed


def test_a_fact_is_first_expanded_through_one_instance(checks, monkeypatch):
    monkeypatch.setattr(BackwardForward, "SMALL_FRONTIER", 0)  # every frontier is a large one
    _without_unfolding(monkeypatch)  # each fact has proofs of two steps from edges
    probed = _probed_members(monkeypatch)
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
    # and only the chosen instances' tc(x, y) are probed in the old tc, not all 50-odd
    assert sum(probed) <= 8, probed


def test_a_lazy_round_chooses_an_instance_whose_atoms_are_old_facts(checks, monkeypatch):
    monkeypatch.setattr(BackwardForward, "SMALL_FRONTIER", 0)
    _without_unfolding(monkeypatch)
    probed = _probed_members(monkeypatch)
    # tc(0, 3) loses e(0, 3); of its instances tc(0, y), e(y, 3), only y = 2 has an old
    # tc(0, y): the others (y = 4 .. 9, unreachable from 0) are no facts and never checked
    edges = [(0, 2), (2, 3), (0, 3), *((y, 3) for y in range(4, 10)), (11, 4)]
    session = IncrementalSession(BFEngine, TC, {"e": edges})
    changes = session.update(delete={"e": [(0, 3)]})
    assert set(changes) == {"e"}
    check, = checks
    facts = check._facts["tc"]
    assert _rows(facts.checked_rows()) == {(0, 3), (0, 2)} == _rows(facts.proved_rows())
    assert 1 <= sum(probed) <= 7, probed


def test_the_bootstrap_builds_the_indexes_an_insert_and_a_delete_probe(monkeypatch):
    session = IncrementalSession(BFEngine, TC, {"e": [(i, i + 1) for i in range(20)]
                                                + [(0, 5), (7, 3)]})
    built = record_index_builds(monkeypatch, session.engine)
    session.update(insert={"e": [(20, 21), (5, 0)]})
    session.update(delete={"e": [(3, 4), (12, 13)]})
    assert session.engine.last_strategy == "bf"
    # a saturation's cut of e is made by the step (near_heads): only its own index is new
    assert [(name, key) for name, key in built if not name.startswith(NEAR)] == []


def test_a_small_frontier_is_expanded_fully_in_fewer_rounds(checks, monkeypatch):
    # the facts tc(0, y) lost their derivation through e(0, 1); the shortcut e(0, 5) proves
    # those from y = 5 on: a lazy check follows the chain one fact per round
    chain = [(i, i + 1) for i in range(12)] + [(0, 5)]
    rounds = {}
    for small in (0, BackwardForward.SMALL_FRONTIER):
        monkeypatch.setattr(BackwardForward, "SMALL_FRONTIER", small)
        session = IncrementalSession(BFEngine, TC, {"e": chain})
        calls = _record_calls(monkeypatch, session.engine)
        original = CopyProofs.proved  # a pass of the copy rules costs a call too
        monkeypatch.setattr(CopyProofs, "proved", lambda self, *arguments, calls=calls,
                            original=original: calls.append(arguments)
                            or original(self, *arguments))
        changes = session.update(delete={"e": [(0, 1)]})
        added, removed = changes["tc"]
        assert sorted(map(tuple, removed.T.tolist())) == [(0, 1), (0, 2), (0, 3), (0, 4)]
        rounds[small] = len(calls)
        monkeypatch.setattr(CopyProofs, "proved", original)
    assert rounds[BackwardForward.SMALL_FRONTIER] < rounds[0], rounds


def _record_calls(monkeypatch, engine) -> list:
    """One entry per call of the engine's rule evaluator from now on."""
    calls, original = [], engine._evaluator.derive
    monkeypatch.setattr(engine._evaluator, "derive",
                        lambda rules, instance: calls.append(rules) or original(rules, instance))
    return calls


def test_a_round_probes_c_once_per_instance_row_and_atom(checks, monkeypatch):
    monkeypatch.setattr(BackwardForward, "SMALL_FRONTIER", 0)  # lazy rounds, as on TC
    _without_unfolding(monkeypatch)  # each fact has proofs of two steps from edges
    probed = []
    original_positions = CheckedFacts.positions

    def recorded(self, rows):
        probed.append(rows.shape[1])
        return original_positions(self, rows)

    monkeypatch.setattr(CheckedFacts, "positions", recorded)
    nodes = range(8)
    session = IncrementalSession(BFEngine, TC,
                                 {"e": [(x, y) for x in nodes for y in nodes if x != y]})
    calls = _record_calls(monkeypatch, session.engine)
    instances = []
    original = session.engine._evaluator.derive

    def derive(rules, instance):
        derived = original(rules, instance)
        instances.extend(rows.shape[1] for name, rows in derived.items()
                         if name.startswith("@instance:"))
        return derived

    monkeypatch.setattr(session.engine._evaluator, "derive", derive)
    session.update(delete={"e": [(0, 1)]})
    check, = checks
    # each instance row tc(x, 1), @at, tc(x, y), e(y, 1) is probed in C for its one stratum
    # atom (which serves every question of the round: proved? checked?); its head's position
    # comes with it from the focus, and the frontier is read by position, never probed (the
    # copy rule tc(x, y) :- e(x, y) makes no instance rows: ``CopyProofs``)
    assert calls and sum(instances) > check._facts["tc"].checked_count
    assert sum(probed) <= sum(instances), (probed, instances)


def test_no_rule_that_reads_an_empty_relation_is_run(checks, monkeypatch):
    # f is empty: the saturation's tc(x, z) :- @delta:tc(x, y), f(y, z) derives nothing
    program = TC + ".decl f(x: number, y: number)\ntc(x, z) :- tc(x, y), f(y, z).\n"
    session = IncrementalSession(BFEngine, program, {"e": [(1, 2), (2, 3), (1, 3), (3, 4)],
                                                      "f": []})
    runs = []
    original = session.engine._evaluator.derive

    def derive(rules, instance):
        runs.extend((rule, instance) for rule in rules)
        return original(rules, instance)

    monkeypatch.setattr(session.engine._evaluator, "derive", derive)
    session.update(delete={"e": [(1, 3)]})
    check, = checks
    assert check._facts["tc"].proved_count  # the saturation ran
    assert runs and all(len(instance[literal.atom.relation])
                        for rule, instance in runs for literal in rule.body
                        if not literal.negated and literal.atom.relation in instance), [
        str(rule) for rule, _ in runs]


def test_the_step_rules_are_made_once_per_stratum_and_kept_across_updates(monkeypatch):
    made = []
    original = bf.StepRules.of
    monkeypatch.setattr(bf.StepRules, "of", lambda *a: made.append(a[0]) or original(*a))
    session = IncrementalSession(BFEngine, REACH, CYCLE)
    assert len(made) == 1  # the bootstrap prepares the step of reach's stratum
    session.update(delete={"e": [(C, A)]})
    session.update(insert={"e": [(C, A)]})
    session.update(delete={"e": [(B, A)]})
    assert len(made) == 1


def _instance_calls(monkeypatch, batch_outright_first: int) -> list[tuple[bool, ...]]:
    """Per ``StepReads.instances_of`` call from now on, which of its rules have stratum atoms
    (filled in as the calls come), and ``(False,)`` per pass of the copy rules
    (``CopyProofs``: REACH's ``reach(x) :- source(x)``, its outright rule); no unfolded
    rules."""
    calls = []
    original, copied = StepReads.instances_of, CopyProofs.proved

    def recorded(self, frontier, rules):
        calls.append(tuple(bool(i.atoms) for i in rules))
        return original(self, frontier, rules)

    def recorded_copies(self, facts, frontier):
        calls.append((False,))
        return copied(self, facts, frontier)

    monkeypatch.setattr(StepReads, "instances_of", recorded)
    monkeypatch.setattr(CopyProofs, "proved", recorded_copies)
    monkeypatch.setattr(BackwardForward, "BATCH_OUTRIGHT_FIRST", batch_outright_first)
    _without_unfolding(monkeypatch)
    return calls


def test_a_frontier_from_outright_first_finds_those_instances_first(monkeypatch):
    calls = _instance_calls(monkeypatch, batch_outright_first=2)
    facts = {"e": [(1, 2), (2, 3), (1, 3), (3, 4)], "source": [(1,), (2,), (3,)]}
    session = IncrementalSession(BFEngine, REACH, facts)
    session.update(delete={"source": [(2,), (3,)]})  # reach(2), reach(3): two seeds
    assert calls[0] == (False,)  # reach(x) :- source(x) alone
    assert calls[1] == (True,)  # then reach(y) :- reach(x), e(x, y) for those left unproved
    monkeypatch.setattr(BackwardForward, "BATCH_OUTRIGHT_FIRST", 3)
    calls.clear()
    session.update(insert={"source": [(2,), (3,)]})
    session.update(delete={"source": [(2,), (3,)]})
    assert calls[0] == (False, True)  # a smaller frontier: every rule in one call


def test_a_frontier_its_batch_s_expansion_reaches_finds_every_instance_in_one_call(
        monkeypatch):
    calls = _instance_calls(monkeypatch, batch_outright_first=1)
    facts = {"e": [(1, 2), (1, 3), (3, 5), (5, 2)], "source": [(1,), (3,)]}
    session = IncrementalSession(BFEngine, REACH, facts)
    session.update(delete={"e": [(1, 2), (1, 3)]})
    # the seeds reach(2), reach(3): their outright pass (it proves reach(3)), then the
    # others' instances; then reach(5), an atom of reach(2)'s, no fact of the batch: every
    # rule in one call
    assert calls == [(False,), (True,), (False, True)]


def test_a_batch_s_pass_runs_again_only_while_it_proves_a_fact(monkeypatch):
    calls = _instance_calls(monkeypatch, batch_outright_first=1)
    session = IncrementalSession(BFEngine, REACH, {"e": [(1, 2), (2, 3)], "source": [(1,)]})
    session.update(delete={"source": [(1,)]})
    # batch 1, reach(1): its outright pass proves nothing, so batch 2, reach(2), and batch 3,
    # reach(3), find their outright instances with the others
    assert calls == [(False,), (True,), (False, True), (False, True)]
    calls.clear()
    session.update(insert={"source": [(1,)]})
    session.update(delete={"source": [(1,)]})  # a new step: the pass runs again first
    assert calls[:2] == [(False,), (True,)]


def test_a_fact_with_a_proof_of_two_steps_from_lower_facts_is_proved_before_expanding(
        checks, monkeypatch):
    calls = []
    original = StepReads.instances_of

    def recorded(self, frontier, rules):
        if any(len(positions) for positions in frontier.values()):
            calls.append([str(i.rule) for i in rules])
        return original(self, frontier, rules)

    def recorded_copies(self, facts, frontier):
        calls.append(["copies"])
        return copied(self, facts, frontier)

    copied = CopyProofs.proved
    monkeypatch.setattr(StepReads, "instances_of", recorded)
    monkeypatch.setattr(CopyProofs, "proved", recorded_copies)
    monkeypatch.setattr(BackwardForward, "BATCH_OUTRIGHT_FIRST", 2)
    facts = {"e": [(1, 2), (2, 3), (1, 3), (3, 4)], "source": [(1,), (2,), (3,)]}
    session = IncrementalSession(BFEngine, REACH, facts)
    session.update(delete={"source": [(2,), (3,)]})  # reach(2), reach(3): two seeds
    # reach(x) :- source(x) (a copy rule) proves neither; the recursive rule with reach(x)
    # read as the source it copies, reach(y) :- source(x), e(x, y), proves both through
    # source(1): no instance of the recursive rule is enumerated, no other fact is checked
    assert calls == [["copies"],
                     ["@instance:2(y, @at, x) :- @delta:focus:reach(y, @at), e(x, y)."]]
    check, = checks
    facts = check._facts["reach"]
    assert _rows(facts.checked_rows()) == {(2,), (3,)} == _rows(facts.proved_rows())


# a pair rule over two join columns from b into a, and b's general rule from a: they take turns
TURNS = """
.decl e(x: number, y: number)
.decl w(x: number, y: number, z: number)
.decl a(x: number, y: number)
.decl b(x: number, y: number)
a(x, y) :- e(x, y).
b(y, x) :- a(x, y), x != y.
a(x, z) :- b(y, x), w(x, y, z).
"""


def _checked_and_proved(checks) -> list:
    return [{name: (_rows(facts.checked_rows()), _rows(facts.proved_rows()))
             for name, facts in check._facts.items()} for check in checks]


CHAIN_WITH_SHORTCUTS = {"e": [(i, i + 1) for i in range(40)] + [(0, 5), (7, 3), (9, 2), (30, 12)]}


@pytest.mark.parametrize("grid", [True, False])
@pytest.mark.parametrize(("program", "facts", "deleted"), [
    (TC, CHAIN_WITH_SHORTCUTS, {"e": [(3, 4), (0, 1), (20, 21)]}),
    (TURNS, {"e": [(i, (i * 3) % 7) for i in range(7)] + [(1, 2), (2, 1)],
             "w": [(x, y, (x + y) % 7) for x in range(7) for y in range(7) if x != y]},
     {"e": [(1, 3), (2, 6)]})])
def test_the_pair_rules_saturate_natively_to_the_same_checked_and_proved_facts(
        checks, monkeypatch, program, facts, deleted, grid):
    # through a grid of C's heads (grown as C grows), or C's hash table (a grid too large)
    monkeypatch.setattr(HeadGrid, "LIMIT", HeadGrid.LIMIT if grid else 0)
    session = IncrementalSession(BFEngine, program, facts)
    session.update(delete=deleted)
    assert all(check._rules.pairs for check in checks)
    grids = [g is not None for check in checks for g in check._forward._pairs._grids]
    assert all(grids) if grid else not all(grids)
    native = _checked_and_proved(checks)
    assert any(proved for check in native for _, proved in check.values())
    checks.clear()
    monkeypatch.setattr(instance_rules.PairRule, "of", lambda *arguments: None)
    session = IncrementalSession(BFEngine, program, facts)  # the evaluator saturates
    session.update(delete=deleted)
    assert not any(check._rules.pairs for check in checks)
    assert _checked_and_proved(checks) == native


def test_a_pair_rule_whose_grid_would_grow_too_large_goes_on_through_c_s_table(monkeypatch):
    monkeypatch.setattr(HeadGrid, "LIMIT", 1024)  # passed as C grows, on these facts
    ran = []
    for name in ("saturate_pair_on_grid", "saturate_pair"):
        kernel = getattr(pair_saturation, name)
        monkeypatch.setattr(pair_saturation, name,
                            lambda *arguments, k=kernel, n=name: ran.append(n) or k(*arguments))
    session = IncrementalSession(BFEngine, TC, CHAIN_WITH_SHORTCUTS)
    session.update(delete={"e": [(3, 4), (0, 1), (20, 21)]})  # checked against the oracle
    switch = ran.index("saturate_pair")
    assert switch > 0 and set(ran[:switch]) == {"saturate_pair_on_grid"}
    assert set(ran[switch:]) == {"saturate_pair"}


# 90 nodes, each with edges to the next three and a jump: many lower rows per key, and a
# grid of more than 64 columns once C holds the heads of the first nodes (rows of two words)
DENSE_DAG = {"e": [(i, j) for i in range(90) for j in (i + 1, i + 2, i + 3, i + 29) if j < 90]}


@pytest.mark.parametrize(("facts", "deleted", "words"), [
    (DENSE_DAG, {"e": [(0, 1), (0, 2), (0, 3), (1, 3), (1, 4)]}, 2),
    ({"e": [(i, j) for i, j in DENSE_DAG["e"] if j < 12]}, {"e": [(0, 1), (0, 2)]}, 1)])
def test_the_grid_kernel_proves_the_same_facts_a_word_of_heads_at_a_time(
        checks, monkeypatch, facts, deleted, words):
    # with successors' bits (every node has more out-edges than a row has words: a word at a
    # time), and without (every lower row read)
    shapes = []
    successors = pair_saturation.SortedLower.successors
    monkeypatch.setattr(pair_saturation.SortedLower, "successors", lambda self, w: (
        lambda bits: shapes.append(bits[0].shape) or bits)(successors(self, w)))
    session = IncrementalSession(BFEngine, TC, facts)
    session.update(delete=deleted)  # checked against the oracle
    assert max(shape[1] for shape in shapes) == words
    with_bits = _checked_and_proved(checks)
    assert any(proved for check in with_bits for _, proved in check.values())
    checks.clear()
    monkeypatch.setattr(pair_saturation.SortedLower, "SUCCESSORS", 0)
    session = IncrementalSession(BFEngine, TC, facts)
    session.update(delete=deleted)
    assert max(shape[1] for shape in shapes[-1:]) == 0
    assert _checked_and_proved(checks) == with_bits


@settings(max_examples=30, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=20, max_size=240),
       st.data())
def test_the_grid_kernel_s_bits_keep_random_graphs_deletes_exact(edges, data):
    # dense random graphs (cycles too): many out-edges per node, and grids of up to 82
    # columns (two words); with the successors' bits and without, against the oracle
    facts = {"e": sorted(edges)}
    deleted = {"e": data.draw(st.lists(st.sampled_from(facts["e"]), max_size=8, unique=True))}
    for room in (pair_saturation.SortedLower.SUCCESSORS, 0):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(pair_saturation.SortedLower, "SUCCESSORS", room)
            IncrementalSession(BFEngine, TC, facts).update(delete=deleted)


@settings(max_examples=30, deadline=None)
@given(st.sets(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=20, max_size=240),
       st.data(), st.sampled_from([0, -20, 1 << 22]))
def test_the_grid_kernel_finds_x_by_value_as_through_the_hash_table(edges, data, shift):
    # every grid call with the map of x by value (HeadGrid.x_map, MAP_ROWS 0), against the
    # oracle; a negative x, or one beyond the cells plus MAP_SLACK, gives the map up for good
    # (a grid whose calls have read only x >= 0 so far keeps it, whatever comes later)
    facts = {"e": [(x + shift, y + shift) for x, y in sorted(edges)]}
    deleted = {"e": data.draw(st.lists(st.sampled_from(facts["e"]), min_size=1, max_size=8,
                                       unique=True))}
    maps, given_up = [], set()
    x_map = HeadGrid.x_map

    def recorded(grid, rows):
        found = x_map(grid, rows)
        xs = grid.xs.rows()[0]
        if len(xs) and (xs.min() < 0 or xs.max() >= len(grid.cells) + HeadGrid.MAP_SLACK):
            given_up.add(id(grid))
        maps.append((len(found) > 0, id(grid) not in given_up))
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(HeadGrid, "MAP_ROWS", 0)
        patch.setattr(HeadGrid, "x_map", recorded)
        IncrementalSession(BFEngine, TC, facts).update(delete=deleted)
    assert all(mapped == expected for mapped, expected in maps)
    if shift == 0:
        assert all(mapped for mapped, _ in maps)
    if shift == 1 << 22:  # beyond any grid's cells (LIMIT) plus MAP_SLACK
        assert not any(mapped for mapped, _ in maps)


@pytest.mark.parametrize("shift", [0, -100])  # negative values sort without packing
def test_the_two_step_proofs_are_found_natively_as_the_evaluator_finds_them(
        checks, monkeypatch, shift):
    monkeypatch.setattr(BackwardForward, "SMALL_FRONTIER", 0)  # every frontier's passes
    ran = []
    kernel = two_step_proofs.two_step_proved
    monkeypatch.setattr(two_step_proofs, "two_step_proved",
                        lambda *arguments: ran.append(arguments) or kernel(*arguments))
    facts = {"e": [(x + shift, y + shift) for x, y in CHAIN_WITH_SHORTCUTS["e"]]}
    deleted = {"e": [(x + shift, y + shift) for x, y in [(3, 4), (0, 1), (20, 21)]]}
    session = IncrementalSession(BFEngine, TC, facts)
    session.update(delete=deleted)  # checked against the oracle
    assert ran and any(found.any() for found in map(lambda a: kernel(*a), ran))
    native = _checked_and_proved(checks)
    checks.clear()
    monkeypatch.setattr(instance_rules.TwoStepRule, "of", lambda *arguments: None)
    session = IncrementalSession(BFEngine, TC, facts)  # the evaluator's unfolded rule
    session.update(delete=deleted)
    assert _checked_and_proved(checks) == native


def test_sorted_by_orders_by_the_head_column_then_the_shared_one():
    columns = np.array([[3, 1, 3, 1, 2], [0, 7, -1, 2, 5]])
    for block in (columns, columns + 10):
        head, shared = two_step_proofs.sorted_by(block, 0, 1)
        order = sorted(zip(block[0].tolist(), block[1].tolist(), strict=True))
        assert list(zip(head.tolist(), shared.tolist(), strict=True)) == order
