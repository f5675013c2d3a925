"""PersistentIndex: O(1) snapshots sharing structure, old versions valid, bucket kinds."""

from __future__ import annotations

import numpy as np

from herbrand.indexes.persistent import PersistentIndex


def rows_of(index) -> set[tuple]:
    return set(map(tuple, index.rows().T.tolist()))


def test_snapshot_shares_the_map_and_is_isolated():
    index = PersistentIndex(arity=2, key=(0,))
    index.insert(np.array([[1, 2], [10, 20]]))
    snapshot = index.snapshot()
    assert snapshot._buckets is index._buckets  # O(1): the same immutable map
    index.insert(np.array([[1], [11]]))
    index.delete(np.array([[2], [20]]))
    assert rows_of(snapshot) == {(1, 10), (2, 20)} and len(snapshot) == 2
    assert rows_of(index) == {(1, 10), (1, 11)}
    snapshot.insert(np.array([[9], [9]]))  # a snapshot is an index too; writes stay local
    assert rows_of(index) == {(1, 10), (1, 11)}


def test_every_version_stays_valid():
    rng = np.random.default_rng(3)
    index = PersistentIndex(arity=2, key=(1,))
    model: set[tuple] = set()
    versions = []
    for step in range(60):
        batch = rng.integers(0, 6, size=(2, 5))
        if step % 3 == 2:
            index.delete(batch)
            model -= set(map(tuple, batch.T.tolist()))
        else:
            index.insert(batch)
            model |= set(map(tuple, batch.T.tolist()))
        versions.append((index.snapshot(), set(model)))
    for snapshot, expected in versions:
        snapshot._check_invariants()
        assert rows_of(snapshot) == expected and len(snapshot) == len(expected)


def test_small_buckets_are_tuples_and_large_ones_psets():
    index = PersistentIndex(arity=2, key=(0,))
    small = PersistentIndex.SMALL_BUCKET
    index.insert(np.array([np.zeros(small, dtype=np.int64), np.arange(small)]))
    assert isinstance(index._buckets[(0,)], tuple)
    index.insert(np.array([[0], [small]]))
    assert not isinstance(index._buckets[(0,)], tuple) and len(index._buckets[(0,)]) == small + 1
    index.delete(np.array([np.zeros(small, dtype=np.int64), np.arange(small)]))
    assert rows_of(index) == {(0, small)}
    index.delete(np.array([[0], [small]]))
    assert (0,) not in index._buckets and len(index) == 0
    index._check_invariants()
