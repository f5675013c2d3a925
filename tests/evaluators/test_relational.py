"""The relational evaluator: the conformance checks with every index and random programs against
the oracle."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herbrand.evaluators import relational
from herbrand.evaluators.fixpoint import NaiveFixpoint, SemiNaiveFixpoint
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.parser import parse
from herbrand.framework.storage import Relation
from herbrand.framework.testing import (
    encode_facts,
    evaluator_check_params,
    oracle_materialize,
)
from herbrand.indexes.runs import SortedRun
from tests.strategies import programs_with_facts

INDEX_NAMES = ("hash", "btree", "sorted_vector", "persistent", "spine")


@pytest.mark.parametrize("index", INDEX_NAMES)
@pytest.mark.parametrize("check", evaluator_check_params())
def test_conformance(check, index):
    check(functools.partial(RelationalEvaluator, index=index), SemiNaiveFixpoint)


def test_repr_and_tags():
    evaluator = RelationalEvaluator(index="hash")
    assert repr(evaluator) == "RelationalEvaluator(index='hash')"
    assert RelationalEvaluator.tags.uses_index


def _model(result, program):
    names = {d.name for d in program.declarations}
    return {name: set(result.decoded_rows(name)) for name in names}


@pytest.mark.parametrize("fixpoint", [NaiveFixpoint, SemiNaiveFixpoint])
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=programs_with_facts(atom_expressions=True), index=st.sampled_from(INDEX_NAMES))
def test_random_programs_match_the_oracle(fixpoint, case, index):
    program, facts = case
    expected = oracle_materialize(program, facts)
    database = encode_facts(program, facts)
    result = fixpoint(RelationalEvaluator(index=index)).materialize(program, database)
    actual = _model(result, program)
    assert actual == {name: set(expected.get(name, set())) for name in actual}


def test_indexes_grow_by_the_appended_tail():
    evaluator = RelationalEvaluator()
    program = parse("p(x, z) :- q(x, y), e(y, z).")
    rule = program.rules[0]
    e1 = Relation.from_rows([(1, 2), (2, 3)])
    q = Relation.from_rows([(0, 1), (0, 2)])
    instance = encode_facts(parse(".decl q(x: number, y: number)"), {})
    instance = instance.with_relations({"q": q, "e": e1})
    first = evaluator.evaluate([rule], instance)["p"].to_set()
    (entry,) = evaluator._indexes.values()
    index = entry.index
    e2 = e1.union(Relation.from_rows([(1, 5)]))
    second = evaluator.evaluate([rule], instance.with_relations({"e": e2}))["p"].to_set()
    (entry,) = evaluator._indexes.values()
    assert entry.index is index and len(index) == 3
    assert first == {(0, 2), (0, 3)} and second == {(0, 2), (0, 3), (0, 5)}
    other = Relation.from_rows([(2, 9)])
    third = evaluator.evaluate([rule], instance.with_relations({"e": other}))["p"].to_set()
    assert third == {(0, 9)}


def test_equal_rules_are_translated_once_and_the_identity_cache_stays_bounded(monkeypatch):
    translated = []
    original = relational.translate_rule
    monkeypatch.setattr(relational, "translate_rule",
                        lambda rule, **kw: translated.append(rule) or original(rule, **kw))
    evaluator = RelationalEvaluator()
    text = "p(x, z) :- q(x, y), q(y, z)."
    instance = encode_facts(parse(".decl q(x: number, y: number)"), {})
    instance = instance.with_relations({"q": Relation.from_rows([(1, 2), (2, 3)])})
    for _ in range(300):  # a fresh, equal rule object each time, as an engine's rewrites
        derived = evaluator.evaluate(parse(text).rules, instance)
        assert derived["p"].to_set() == {(1, 3)}
    assert len(translated) == 1
    assert len(evaluator._by_identity) <= 4 * len(evaluator._plans) + 65


@pytest.mark.parametrize("index", ["sorted_vector", "spine", "hash"])
def test_indexes_told_of_a_change_take_it_instead_of_a_rebuild(index):
    evaluator = RelationalEvaluator(index=index)
    rule = parse("p(x, z) :- q(x, y), e(y, z).").rules[0]
    before = Relation.from_rows([(1, 2), (2, 3), (1, 4)])
    instance = encode_facts(parse(".decl q(x: number, y: number)"), {})
    instance = instance.with_relations({"q": Relation.from_rows([(0, 1), (0, 2)]), "e": before})
    assert evaluator.evaluate([rule], instance)["p"].to_set() == {(0, 2), (0, 3), (0, 4)}
    (entry,) = evaluator._indexes.values()
    kept = entry.index
    after = Relation.from_rows([(2, 3), (1, 7)])  # (1, 2) and (1, 4) out, (1, 7) in
    told = []
    kept.insert_new = lambda rows: told.append(rows.tolist()) or type(kept).insert_new(kept, rows)
    evaluator.relation_changed("e", before, after, np.array([[1, 1], [2, 4]]),
                               np.array([[1], [7]]))
    evaluator.relation_changed("q", before, after, before.columns, after.columns)  # no index
    result = evaluator.evaluate([rule], instance.with_relations({"e": after}))["p"].to_set()
    assert result == {(0, 3), (0, 7)}
    (entry,) = evaluator._indexes.values()
    assert entry.index is kept  # every built-in index supports delete
    assert told == [[[1], [7]]]  # the rows added are new: not searched for in the index


def _joined_into_e(index: str = "spine"):
    """(evaluator, rule, e, instance, the index of e): a join of q into e has built it."""
    evaluator = RelationalEvaluator(index=index)
    rule = parse("p(x, z) :- q(x, y), e(y, z).").rules[0]
    before = Relation.from_rows([(1, 2), (2, 3)])
    instance = encode_facts(parse(".decl q(x: number, y: number)"), {})
    instance = instance.with_relations({"q": Relation.from_rows([(0, 1), (0, 2)]), "e": before})
    evaluator.evaluate([rule], instance)
    (entry,) = evaluator._indexes.values()
    return evaluator, rule, before, instance, entry.index


def test_an_index_told_its_relation_was_extended_catches_up_without_comparing_rows(
        monkeypatch):
    evaluator, rule, before, instance, kept = _joined_into_e()
    middle = before.extend(Relation.from_rows([(1, 5)]))
    after = middle.extend(Relation.from_rows([(2, 6)]))
    evaluator.relation_extended("e", before, middle)  # a fixpoint's two appends
    evaluator.relation_extended("e", middle, after)
    monkeypatch.setattr(relational, "extends", lambda *_: pytest.fail("rows compared"))
    # nor are the appended rows searched for in the index: a Relation's rows are distinct
    monkeypatch.setattr(SortedRun, "difference", lambda *_: pytest.fail("rows searched"))
    result = evaluator.evaluate([rule], instance.with_relations({"e": after}))["p"].to_set()
    assert result == {(0, 2), (0, 3), (0, 5), (0, 6)}
    (entry,) = evaluator._indexes.values()
    assert entry.index is kept and len(kept) == 4


def test_an_extension_of_rows_that_then_changed_otherwise_is_not_trusted():
    evaluator, rule, before, instance, kept = _joined_into_e()
    grown = before.extend(Relation.from_rows([(1, 5)]))
    evaluator.relation_extended("e", before, grown)
    other = Relation.from_rows([(2, 3)])  # before without (1, 2), told as a change
    evaluator.relation_changed("e", before, other, before.columns[:, :1], before.columns[:, :0])
    result = evaluator.evaluate([rule], instance.with_relations({"e": grown}))["p"].to_set()
    assert result == {(0, 2), (0, 3), (0, 5)}


@pytest.mark.parametrize("index", ["sorted_vector", "spine", "hash"])
def test_a_delete_of_the_rows_an_extension_added_leaves_the_unextended_index(index, monkeypatch):
    evaluator, rule, before, instance, kept = _joined_into_e(index)
    grown = before.extend(Relation.from_rows([(1, 5), (2, 6)]))
    evaluator.relation_extended("e", before, grown)
    prefix = Relation(grown.columns[:, :2], unique=True)  # as RelationSet.remove leaves it
    monkeypatch.setattr(type(kept), "delete", lambda *_: pytest.fail("index changed"))
    evaluator.relation_changed("e", grown, prefix, grown.columns[:, 2:], grown.columns[:, :0])
    monkeypatch.setattr(relational, "extends", lambda *_: pytest.fail("rows compared"))
    result = evaluator.evaluate([rule], instance.with_relations({"e": prefix}))["p"].to_set()
    assert result == {(0, 2), (0, 3)}
    (entry,) = evaluator._indexes.values()
    assert entry.index is kept and len(kept) == 2
    other = Relation(grown.columns[:, [0, 3]], unique=True)  # not a prefix: rows compared
    evaluator.relation_extended("e", prefix, grown)
    evaluator.relation_changed("e", grown, other, grown.columns[:, 1:3], grown.columns[:, :0])
    monkeypatch.undo()
    result = evaluator.evaluate([rule], instance.with_relations({"e": other}))["p"].to_set()
    assert result == {(0, 2), (0, 6)}


@pytest.mark.parametrize("index", INDEX_NAMES)
def test_a_negation_of_whole_rows_probes_the_kept_index_of_its_relation(index):
    evaluator = RelationalEvaluator(index=index)
    rule = parse("p(x, y) :- q(x, y), !r(y, x).").rules[0]
    instance = encode_facts(parse(".decl q(x: number, y: number)"), {})
    q = Relation.from_rows([(1, 2), (2, 1), (3, 4), (5, 5)])
    r = Relation.from_rows([(2, 1), (5, 5), (9, 9)])
    instance = instance.with_relations({"q": q, "r": r})
    assert evaluator.evaluate([rule], instance)["p"].to_set() == {(2, 1), (3, 4)}
    (slot,) = evaluator._indexes
    assert slot[0] == "r" and sorted(slot[1]) == [0, 1]
    empty = instance.with_relations({"r": Relation.from_rows([], arity=2)})
    assert len(evaluator.evaluate([rule], empty)["p"]) == 4
    partial = parse("p(x, y) :- q(x, y), !r(y, _).").rules[0]  # not whole rows: hashed
    assert evaluator.evaluate([partial], instance)["p"].to_set() == {(2, 1), (3, 4)}


def test_prepare_builds_the_indexes_a_derive_probes_and_derives_nothing(monkeypatch):
    translated = []
    original = relational.translate_rule
    monkeypatch.setattr(relational, "translate_rule",
                        lambda rule, **kw: translated.append(rule) or original(rule, **kw))
    evaluator = RelationalEvaluator(index="spine")
    rule = parse("p(x, z) :- dq(x, y), e(y, z), !f(x, z).").rules[0]
    instance = encode_facts(parse(".decl q(x: number, y: number)"), {})
    instance = instance.with_relations({
        "dq": Relation.from_rows([(0, 1)]), "e": Relation.from_rows([(1, 2), (1, 3), (4, 4)]),
        "f": Relation.from_rows([(0, 3)])})
    evaluator.prepare([rule], instance)
    assert set(evaluator._indexes) == {("e", (0,)), ("f", (0, 1))}
    kept = {slot: entry.index for slot, entry in evaluator._indexes.items()}
    assert evaluator.evaluate([rule], instance)["p"].to_set() == {(0, 2)}
    assert {slot: entry.index for slot, entry in evaluator._indexes.items()} == kept
    assert len(translated) == 1


def test_a_join_into_a_transient_relation_builds_no_index_and_comes_in_its_order():
    evaluator = RelationalEvaluator()
    rule = parse("p(x, z) :- q(x, y), e(y, z).").rules[0]
    rng = np.random.default_rng(3)
    q = Relation.from_rows([(0, 1), (0, 2)])
    e = Relation(np.vstack([rng.integers(0, 4, 64), np.arange(64)]))
    instance = encode_facts(parse(".decl q(x: number, y: number)"), {})
    instance = instance.with_relations({"q": q, "e": e})
    plain = evaluator.derivations([rule], instance)["p"]
    assert len(evaluator._indexes) == 1
    evaluator.clear()
    transient = evaluator.derivations([rule], instance, transient={"e"})["p"]
    assert not evaluator._indexes
    # the same bag, in e's order
    assert sorted(map(tuple, plain.T.tolist())) == sorted(map(tuple, transient.T.tolist()))
    assert transient[1].tolist() == sorted(transient[1].tolist())
