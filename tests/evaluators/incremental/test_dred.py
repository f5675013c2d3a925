"""The delete-rederive engine: overdelete, rederive, insert; only change-driven rule variants."""

from __future__ import annotations

from herbrand.evaluators.incremental.dred import DRedEngine
from herbrand.framework.testing import IncrementalSession
from tests.evaluators.incremental.engine_helpers import (
    TC,
    reads_a_delta,
    record_index_builds,
    record_rules,
)


def test_an_alternative_derivation_is_rederived():
    session = IncrementalSession(DRedEngine, TC, {"e": [(1, 2), (2, 3), (1, 3), (3, 4)]})
    changes = session.update(delete={"e": [(1, 3)]})
    assert session.engine.last_strategy == "dred"
    # (1, 3) and (1, 4) were overdeleted and rederived through (1, 2), (2, 3): no net change
    assert set(changes) == {"e"}


def test_updates_run_only_variants_reading_changes(monkeypatch):
    session = IncrementalSession(DRedEngine, TC, {"e": [(i, i + 1) for i in range(20)]})
    evaluated = record_rules(monkeypatch, session.engine)
    session.update(insert={"e": [(20, 21)]}, delete={"e": [(10, 11)]})
    assert evaluated and all(reads_a_delta(rule) for rule in evaluated), evaluated


def test_state_is_the_base_facts_of_derived_relations_and_the_kept_tables():
    session = IncrementalSession(DRedEngine, TC + "tc(7, 7).\n", {"e": [(1, 2)]})
    # the base fact tc(7, 7) (16 bytes), and the hash tables of tc and of the input e, built
    # at bootstrap for the first update (16 slots of 8 bytes: a tag and a position)
    assert session.engine.state_size() == (1, 16 + 2 * 16 * 8)
    assert session.engine.last_strategy == "bootstrap"


def test_unchanged_strata_are_left_alone():
    program = TC + """
    .decl other(x: number)
    .decl copy(x: number)
    copy(x) :- other(x).
    """
    session = IncrementalSession(DRedEngine, program, {"e": [(1, 2)], "other": [(5,)]})
    before = session.engine.database["copy"]
    session.update(insert={"e": [(2, 3)]})
    assert session.engine.database["copy"] is before


def test_the_bootstrap_builds_the_indexes_an_insert_probes(monkeypatch):
    # the insert's variant tc(x, z) :- tc(x, y), +e(y, z) probes tc on its second column, an
    # index the bootstrap's own rules never probe: it is built by the bootstrap, not the update
    session = IncrementalSession(DRedEngine, TC, {"e": [(i, i + 1) for i in range(20)]})
    assert ("tc", (1,)) in session.engine._evaluator._indexes
    built = record_index_builds(monkeypatch, session.engine)
    session.update(insert={"e": [(20, 21), (5, 0)]})
    assert built == []


def test_without_prepare_the_first_insert_builds_its_index(monkeypatch):
    session = IncrementalSession(lambda: DRedEngine(prepare=False), TC,
                                 {"e": [(i, i + 1) for i in range(20)]})
    built = record_index_builds(monkeypatch, session.engine)
    session.update(insert={"e": [(20, 21)]})
    assert ("tc", (1,)) in built
