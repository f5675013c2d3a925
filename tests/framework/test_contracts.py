"""framework.contracts: Changes is a read-only Mapping of relation name -> RelationChanges."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Mapping

import pytest

from herbrand.framework.contracts import Changes, RelationChanges

PATH = RelationChanges(added=frozenset({(1, 2)}), removed=frozenset({(3, 4), (5, 6)}))
EMPTY = RelationChanges()


def test_changes_is_a_mapping_of_relation_names():
    changes = Changes({"path": PATH, "heavy": EMPTY})
    assert isinstance(changes, Mapping)
    assert list(changes) == ["path", "heavy"] and len(changes) == 2
    assert dict(changes.items()) == {"path": PATH, "heavy": EMPTY}
    assert changes.get("nope") is None and changes["path"] is PATH and "heavy" in changes
    assert changes == {"path": PATH, "heavy": EMPTY} and changes != {"path": PATH}
    assert changes.relations == {"path": PATH, "heavy": EMPTY}
    assert changes.size == 3 and Changes().size == 0 and list(Changes()) == []


def test_changes_cannot_be_changed():
    given = {"path": PATH}
    changes = Changes(given)
    given["heavy"] = EMPTY  # the caller's dict is copied
    assert list(changes) == ["path"]
    with pytest.raises(TypeError):
        changes.relations["heavy"] = EMPTY
    with pytest.raises(AttributeError):
        changes.relations = {}


def test_changes_pickle_copy_and_print():
    changes = Changes({"path": PATH})
    assert pickle.loads(pickle.dumps(changes)) == changes
    assert copy.deepcopy(changes) == changes
    assert repr(changes).startswith("Changes({'path': RelationChanges(")
