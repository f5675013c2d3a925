"""Set changes of relations: apply_update, database_changes, as_batch_changes, visible."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.changes import (
    apply_update,
    apply_updates,
    as_batch_changes,
    database_changes,
    membership,
    visible,
    without,
)
from herbrand.evaluators.incremental.relation_sets import RelationSets
from herbrand.framework.storage import Database, Relation


def _batch(*rows):
    return np.array(rows, dtype=np.int64).T.reshape(2, -1)


def test_apply_update_deletes_before_inserts():
    old = Relation.from_rows([(1, 2), (2, 3)])
    new, added, removed = apply_update(old, _batch((2, 3), (5, 5)), _batch((2, 3), (3, 4)))
    assert new.to_set() == {(1, 2), (2, 3), (3, 4)}
    assert added.to_set() == {(3, 4)} and not len(removed)


def test_kept_sets_apply_updates_and_keep_the_new_relations_table():
    old = Relation.from_rows([(1, 2), (2, 3), (3, 4), (4, 5)])
    database = Database({"e": old})
    sets = RelationSets.of({"e": old})
    # (9, 9) is absent, (2, 3) is deleted and inserted again: neither is removed
    new, added, removed = apply_updates(
        database, {"e": _batch((2, 3), (7, 7))}, {"e": _batch((4, 5), (9, 9), (2, 3), (1, 2))},
        sets)
    assert removed["e"].to_set() == {(4, 5), (1, 2)} and added["e"].to_set() == {(7, 7)}
    assert new["e"].to_set() == {(2, 3), (3, 4), (7, 7)}
    assert apply_updates(new, {}, {"e": _batch((7, 7))}, sets)[0]["e"].to_set() == {
        (2, 3), (3, 4)}  # the kept table of the new relation


def test_apply_update_noop_returns_the_same_relation():
    old = Relation.from_rows([(1, 2)])
    new, added, removed = apply_update(old, _batch((9, 9)), _batch((1, 2)))
    assert new is old and not len(added) and not len(removed)


def test_database_changes_lists_only_changed_relations():
    old = Database({"a": Relation.from_rows([(1, 2)]), "b": Relation.from_rows([(1, 1)])})
    new = old.with_relations({"a": Relation.from_rows([(1, 3)])})
    changes = database_changes(old, new, ["a", "b"])
    assert set(changes) == {"a"}
    added, removed = changes["a"]
    assert added.T.tolist() == [[1, 3]] and removed.T.tolist() == [[1, 2]]


def test_as_batch_changes_drops_empty_sides():
    changes = as_batch_changes({"a": Relation.empty(1), "b": Relation.from_rows([(1,)])},
                               {"a": Relation.empty(1)})
    assert set(changes) == {"b"} and changes["b"][1].shape == (1, 0)


def test_visible_hides_reserved_relations():
    database = Database({"a": Relation.empty(1), "@base:a": Relation.empty(1)})
    assert list(visible(database)) == ["a"]


def test_membership_of_a_small_set_in_a_large_relation():
    big = Relation.from_rows([(i, i + 1, i + 2) for i in range(100)] + [(2**40, 0, 0)])
    small = Relation.from_rows([(5, 6, 7), (2**40, 0, 0), (5, 6, 8)])
    in_small, in_big = membership(big, small)
    assert in_small.sum() == 2 and big.columns[:, in_small].T.tolist() == [[5, 6, 7], [2**40, 0, 0]]
    assert in_big.tolist() == [small.to_rows()[i] in big for i in range(3)]
    assert without(big, small).to_set() == big.to_set() - small.to_set()
