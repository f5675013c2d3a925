"""HashIndex: one bucket per key, amortised bucket growth, buckets dropped when emptied."""

from __future__ import annotations

import numpy as np

from herbrand.indexes.hash import HashIndex


def test_one_bucket_per_distinct_key():
    index = HashIndex(arity=3, key=(2, 0))
    index.insert(np.array([[1, 1, 2, 1], [5, 6, 7, 5], [0, 0, 0, 0]]))
    assert sorted(index._buckets) == [(0, 1), (0, 2)]
    assert index._buckets[(0, 1)].size == 2 and len(index) == 3
    index._check_invariants()


def test_buckets_grow_by_doubling():
    index = HashIndex(arity=2, key=(0,))
    capacities = set()
    for value in range(1000):
        index.insert(np.array([[7], [value]]))
        capacities.add(index._buckets[(7,)].buffer.shape[1])
    assert len(capacities) <= 12  # about log2(1000) reallocations
    bucket = index._buckets[(7,)]
    assert bucket.size == 1000 and sorted(bucket.rows[1].tolist()) == list(range(1000))


def test_emptied_buckets_are_dropped():
    index = HashIndex(arity=2, key=(1,))
    index.insert(np.array([[1, 2, 3], [9, 9, 8]]))
    index.delete(np.array([[1, 2, 5], [9, 9, 9]]))
    assert list(index._buckets) == [(8,)] and len(index) == 1
    index._check_invariants()


def test_empty_key_is_one_bucket():
    index = HashIndex(arity=2, key=())
    index.insert(np.array([[1, 2], [3, 4]]))
    assert list(index._buckets) == [()]
    positions, rows = index.join(np.zeros((1, 3), dtype=np.int64), ())
    assert len(positions) == 6 and rows.shape == (2, 6)
