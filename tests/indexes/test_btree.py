"""BTreeIndex: (key, rest) order, successor bounds at the int64 edge."""

from __future__ import annotations

import numpy as np

from herbrand.indexes.btree import BTreeIndex

MAX = 2**63 - 1


def test_rows_come_out_in_key_then_rest_order():
    index = BTreeIndex(arity=3, key=(2, 0))
    index.insert(np.array([[2, 1, 1], [0, 5, 4], [9, 9, 3]]))
    assert index.rows().T.tolist() == [[1, 4, 3], [1, 5, 9], [2, 0, 9]]
    assert list(index._tree)[0] == (3, 1, 4)  # stored permuted to (key..., rest...)


def test_the_largest_key_has_a_successor():
    index = BTreeIndex(arity=2, key=(0,))
    index.insert(np.array([[MAX, MAX, -MAX - 1], [1, 2, 3]]))
    positions, rows = index.join(np.array([[MAX]]), (0,))
    assert positions.tolist() == [0, 0] and rows.T.tolist() == [[MAX, 1], [MAX, 2]]
    assert index.range((MAX,), (MAX,)).T.tolist() == [[MAX, 1], [MAX, 2]]
    assert index.range((-MAX - 1,), (0,)).T.tolist() == [[-MAX - 1, 3]]


def test_bulk_and_small_batches_take_both_sortedset_paths():
    index = BTreeIndex(arity=2, key=(1,))
    index.insert(np.array([np.arange(100), np.arange(100) % 10]))
    for value in range(100, 110):
        index.insert(np.array([[value], [value % 10]]))
    assert len(index) == 110
    index.delete(np.array([[0, 1, 500], [0, 1, 0]]))
    assert len(index) == 108
    index._check_invariants()
