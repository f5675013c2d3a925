"""Random operation sequences on every index against a Python set, with _check_invariants()
after each operation: hypothesis for small shrinkable cases, a seeded loop for larger ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.indexes.btree import BTreeIndex
from herbrand.indexes.hash import HashIndex
from herbrand.indexes.persistent import PersistentIndex
from herbrand.indexes.sorted_vector import SortedVectorIndex
from herbrand.indexes.spine import SpineIndex

INDEXES = [HashIndex, BTreeIndex, SortedVectorIndex, PersistentIndex, SpineIndex]
VALUES = st.sampled_from([0, 1, 2, -1, 2**31, -(2**40), 2**63 - 1])
ROWS = st.lists(st.tuples(VALUES, VALUES, VALUES), max_size=12)
OPERATIONS = st.lists(st.tuples(st.sampled_from(["insert", "delete", "join"]), ROWS), max_size=25)


def batch(rows: list[tuple]) -> np.ndarray:
    return np.array(rows, dtype=np.int64).reshape(len(rows), 3).T.copy()


def contents(index) -> set[tuple]:
    stored = index.rows().T.tolist()
    assert len(stored) == len(index)
    return set(map(tuple, stored))


def expected_join(model: set[tuple], probe: list[tuple], key, probe_key) -> list:
    return sorted((i, row) for i, p in enumerate(probe) for row in model
                  if all(row[k] == p[q] for k, q in zip(key, probe_key, strict=True)))


def run(index, operations) -> None:
    model: set[tuple] = set()
    for operation, rows in operations:
        if operation == "insert":
            index.insert(batch(rows))
            model |= set(rows)
        elif operation == "delete":
            index.delete(batch(rows + sorted(model)[:3]))
            model -= set(rows + sorted(model)[:3])
        else:
            positions, matched = index.join(batch(rows), (1, 2)[: len(index.key)])
            got = sorted(zip(positions.tolist(), map(tuple, matched.T.tolist()), strict=True))
            assert got == expected_join(model, rows, index.key, (1, 2)[: len(index.key)])
        index._check_invariants()
        assert contents(index) == model


@pytest.mark.parametrize("index_class", INDEXES, ids=lambda c: c.__name__)
@settings(max_examples=40, deadline=None)
@given(operations=OPERATIONS, key=st.sampled_from([(0,), (2, 1), ()]))
def test_random_operations_match_a_set(index_class, operations, key):
    run(index_class(arity=3, key=key), operations)


@pytest.mark.parametrize("index_class", INDEXES, ids=lambda c: c.__name__)
def test_larger_random_operations_match_a_set(index_class):
    rng = np.random.default_rng(11)
    operations = []
    for _ in range(150):
        rows = [tuple(int(v) for v in row) for row in rng.integers(0, 12, size=(rng.integers(0, 60), 3))]
        operations.append((str(rng.choice(["insert", "insert", "delete", "join"])), rows))
    run(index_class(arity=3, key=(1,)), operations)
