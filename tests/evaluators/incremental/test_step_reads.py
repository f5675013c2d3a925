"""What one deletion step of the backward/forward engine reads (``step_reads``): every instance
of a frontier fact's rules with the positions of its atoms in C, the lower atoms probed in the
new relations, rules whose batches cannot drive them never evaluated, the hash sets taken
from the engine's kept ones and put back, and the constant selections added once."""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.instance_rules import StepRules
from herbrand.evaluators.incremental.relation_sets import RelationSets
from herbrand.evaluators.incremental.step_reads import NO_POSITIONS, StepReads
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.analysis import Stratum
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation
from tests.evaluators.incremental.engine_helpers import CONSTANT_ATOMS, TC

EDGES = [(0, 1), (1, 2), (2, 3), (1, 3)]
CLOSURE = [(0, 1), (1, 2), (2, 3), (1, 3), (0, 2), (0, 3)]


def rows(pairs) -> np.ndarray:
    return np.array(pairs, dtype=np.int64).reshape(-1, 2).T.copy()


def row_set(batch: np.ndarray) -> set[tuple[int, ...]]:
    return set(map(tuple, batch.T.tolist()))


def step_rules(text: str, relations: tuple[str, ...], selected=lambda name: False) -> StepRules:
    program = parse(text)
    return StepRules.of(Stratum(0, relations, program.rules, True), selected)


@pytest.fixture
def tc_step():
    """StepReads over the TC program's step: ``new`` holds EDGES and CLOSURE (the old tc), C
    holds ``checked`` (in this order: positions 0, 1, 2)."""
    rules = step_rules(TC, ("tc",))
    new = Database({"e": Relation(rows(EDGES)), "tc": Relation(rows(CLOSURE))})
    facts = {"tc": CheckedFacts(2)}
    checked = [(0, 3), (0, 2), (1, 3)]
    positions = facts["tc"].check(rows(checked))
    return StepReads(RelationalEvaluator(), rules, new, facts), rules, facts, positions


def test_instances_of_a_frontier_are_every_instance_of_its_facts_rules(tc_step):
    reads, rules, facts, positions = tc_step
    at = dict(zip([(0, 3), (0, 2), (1, 3)], positions.tolist(), strict=True))
    found = reads.instances_of({"tc": positions}, rules.instances)
    by_rule = {i.instance.rule: i for i in found}
    assert set(by_rule) == {i.rule for i in rules.instances}
    copy, recursive = (by_rule[i.rule] for i in rules.instances)
    # tc(x, y) :- e(x, y): e is probed in the new e, so (0, 3) and (0, 2), without an
    # edge, have no instance of it
    assert row_set(copy.rows) == {(1, 3, at[(1, 3)])}
    # tc(x, z) :- tc(x, y), e(y, z): one instance per edge into z, whatever tc holds (tc is
    # a member atom, read by its position in C)
    expected = {(x, z, at[(x, z)], x, y) for x, z in at for y, w in EDGES if w == z}
    assert row_set(recursive.rows) == expected
    for instance in (copy, recursive):
        assert instance.heads.tolist() == instance.rows[2].tolist()
    # each stratum atom's position in C: -1 where C does not hold it
    (relation, columns), = recursive.instance.atom_columns(recursive.rows)
    assert relation == "tc"
    expected_atoms = [at.get((x, y), -1) for x, y in columns.T.tolist()]
    assert recursive.atoms[0].tolist() == expected_atoms
    assert -1 in expected_atoms and set(expected_atoms) - {-1}


def test_instances_of_an_empty_frontier_evaluate_nothing(tc_step, monkeypatch):
    reads, rules, facts, positions = tc_step
    evaluated = []
    monkeypatch.setattr(reads._evaluator, "derive",
                        lambda rules, instance: evaluated.append(rules))
    assert reads.instances_of({"tc": NO_POSITIONS}, rules.instances) == []
    assert reads.instances_of({}, rules.instances) == []
    assert evaluated == []


def test_derive_runs_only_the_rules_their_batches_can_drive(tc_step, monkeypatch):
    reads, rules, facts, positions = tc_step
    delta = "@delta:tc"
    batch = rows([(0, 1)])
    with_delta = reads.new.with_relations({delta: Relation(batch)})
    derived = reads.derive(rules.consequences, with_delta, {delta: batch})
    # tc(x, z) :- @delta:tc(x, y), e(y, z): (0, 1) with e(1, 2), e(1, 3)
    assert row_set(derived["tc"]) == {(0, 2), (0, 3)}
    evaluated = []
    monkeypatch.setattr(reads._evaluator, "derive",
                        lambda rules, instance: evaluated.append(rules))
    empty = rows([])
    assert reads.derive(rules.consequences, reads.new.with_relations(
        {delta: Relation(empty)}), {delta: empty}) == {}
    assert evaluated == []


def test_member_sets_are_built_once_per_step(tc_step):
    reads, *_ = tc_step
    members = reads.member_set("tc")
    assert reads.member_set("tc") is members
    assert members.contains(rows([(0, 3), (3, 0)])).tolist() == [True, False]


def test_member_sets_are_the_engines_kept_ones_and_stay_kept():
    rules = step_rules(TC, ("tc",))
    new = Database({"e": Relation(rows(EDGES)), "tc": Relation(rows(CLOSURE))})
    kept = RelationSets.of({"tc": new["tc"]})
    kept_tc = kept.take("tc", new["tc"])
    kept.put("tc", kept_tc)
    reads = StepReads(RelationalEvaluator(), rules, new, {"tc": CheckedFacts(2)}, kept=kept)
    assert reads.member_set("tc") is kept_tc
    # put back: the engine's next step takes the same set
    assert kept.take("tc", new["tc"]) is kept_tc


def test_add_selections_adds_each_constant_selection_of_the_old_relation():
    rules = step_rules(CONSTANT_ATOMS, ("m",), lambda name: name == "m")
    assert rules.selections
    old = np.array([[1, 2, 3, 4, 5], [0, 0, 4, 4, 7], [2, 3, 1, 9, 9]], dtype=np.int64)
    new = Database({"t": Relation(old), "m": Relation(old)})
    reads = StepReads(RelationalEvaluator(), rules, new, {"m": CheckedFacts(3)})
    assert all(s.name not in reads.new for s in rules.selections)
    reads.add_selections()
    for selection in rules.selections:
        (column, value), = selection.constants
        others = [c for c in range(3) if c != column]
        expected = {tuple(row[others]) for row in old.T if row[column] == value}
        assert row_set(reads.new[selection.name].columns) == expected
    assert {value for s in rules.selections for _, value in s.constants} == {0, 4}
