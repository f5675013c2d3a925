"""Every built-in index passes the conformance suite, and each is registered by name."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import herbrand.indexes  # noqa: F401 - registers the built-in names
from herbrand.framework.errors import ArityError
from herbrand.framework.index_checks import check_index, index_check_params
from herbrand.framework.registry import INDEXES
from herbrand.indexes.btree import BTreeIndex
from herbrand.indexes.hash import HashIndex
from herbrand.indexes.open_hash import OpenHashIndex
from herbrand.indexes.persistent import PersistentIndex
from herbrand.indexes.sorted_vector import SortedVectorIndex
from herbrand.indexes.spine import SpineIndex

BUILTINS = {
    "hash": HashIndex,
    "btree": BTreeIndex,
    "sorted_vector": SortedVectorIndex,
    "persistent": PersistentIndex,
    "spine": SpineIndex,
    "open_hash": OpenHashIndex,
}


@pytest.mark.parametrize(
    ("index_class", "check"), [p for cls in BUILTINS.values() for p in index_check_params(cls)]
)
def test_conformance(index_class, check):
    check(index_class)


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_check_index_passes_without_declared_failures(name):
    outcomes = check_index(BUILTINS[name])
    assert set(outcomes.values()) == {"passed"}


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_registered_by_name(name):
    assert INDEXES.get(name) is BUILTINS[name]


def _fresh_interpreter(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True).stdout.strip()


def test_builtins_register_the_indexes_and_the_package_imports_lazily():
    names = json.dumps(sorted(BUILTINS))
    output = _fresh_interpreter(
        "import json, sys, herbrand.builtins\n"
        "from herbrand.framework.registry import INDEXES\n"
        "before = 'herbrand.indexes' in sys.modules\n"
        f"print(json.dumps([before, [INDEXES.get(n).__name__ for n in {names}]]))"
    )
    assert json.loads(output) == [False, [BUILTINS[n].__name__ for n in sorted(BUILTINS)]]
    loaded = _fresh_interpreter("import sys, herbrand.indexes; print('numba' in sys.modules)")
    assert loaded == "False"


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_tags_and_cost_docs(name):
    cls = BUILTINS[name]
    module = sys.modules[cls.__module__]
    assert "Costs" in module.__doc__ and "O(" in module.__doc__
    assert cls.tags.supports_delete
    assert cls.tags.ordered == (name in {"btree", "sorted_vector", "spine"})
    assert cls.tags.persistent == (name == "persistent")
    assert cls.tags.parallel_safe == (name != "sorted_vector")
    assert cls.tags.native == (name in {"sorted_vector", "spine", "open_hash"})


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_bad_arguments_raise_clear_errors(name):
    cls = BUILTINS[name]
    with pytest.raises(ValueError, match="distinct column positions"):
        cls(arity=2, key=(0, 0))
    with pytest.raises(ValueError, match="distinct column positions"):
        cls(arity=2, key=(2,))
    index = cls(arity=2, key=(0,))
    with pytest.raises(ArityError, match=r"expected an \(2, n\) batch"):
        index.insert(np.zeros((3, 4), dtype=np.int64))
    with pytest.raises(TypeError, match="integers"):
        index.insert(np.zeros((2, 1), dtype=float))
    with pytest.raises(ArityError, match="probe_key"):
        index.join(np.zeros((2, 1), dtype=np.int64), (0, 1))
    with pytest.raises(ArityError, match="out of range"):
        index.join(np.zeros((2, 1), dtype=np.int64), (5,))
    with pytest.raises(TypeError, match="integers"):
        index.join(np.zeros((2, 1), dtype=float), (0,))
    if cls.tags.ordered:
        with pytest.raises(ValueError, match="need 1 values"):
            index.range((1, 2), (3,))


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_insert_new_stores_what_insert_stores(name):
    cls = BUILTINS[name]
    rows = np.array([[1, 2, 3], [4, 5, 6]])
    told, plain = cls(arity=2, key=(1,)), cls(arity=2, key=(1,))
    told.insert(rows[:, :1])
    plain.insert(rows[:, :1])
    told.insert_new(rows[:, 1:])
    plain.insert(rows[:, 1:])
    assert sorted(map(tuple, told.rows().T.tolist())) == sorted(
        map(tuple, plain.rows().T.tolist())) == [(1, 4), (2, 5), (3, 6)]
    assert len(told) == 3

