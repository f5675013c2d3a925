"""SortedVectorIndex: the lazy tail merge, packed and lexicographic encodings, scale."""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.indexes.sorted_vector import SortedVectorIndex


def rows_of(batch: np.ndarray) -> set[tuple]:
    return set(map(tuple, batch.T.tolist()))


def test_inserts_wait_in_the_tail_until_a_read():
    index = SortedVectorIndex(arity=2, key=(0,))
    index.insert(np.array([[3, 1], [30, 10]]))
    index.insert(np.array([[1], [10]]))
    assert index.pending == 3
    positions, rows = index.join(np.array([[1]]), (0,))
    assert index.pending == 0
    assert positions.tolist() == [0] and rows.tolist() == [[1], [10]]
    assert len(index) == 2


def test_len_rows_range_and_delete_merge_the_tail_first():
    for read in (len, lambda i: i.rows(), lambda i: i.range((0,), (9,)),
                 lambda i: i.delete(np.zeros((2, 0), dtype=np.int64))):
        index = SortedVectorIndex(arity=2, key=(0,))
        index.insert(np.array([[1], [2]]))
        read(index)
        assert index.pending == 0


def test_delete_reaches_rows_still_in_the_tail():
    index = SortedVectorIndex(arity=2, key=(1,))
    index.insert(np.array([[1, 2], [5, 6]]))
    index.delete(np.array([[1], [5]]))
    assert rows_of(index.rows()) == {(2, 6)}


def test_flush_makes_joins_read_only():
    index = SortedVectorIndex(arity=2, key=(0,))
    index.insert(np.array([[1, 2], [3, 4]]))
    index.flush()
    main = index._main
    index.join(np.array([[1, 2]]), (0,))
    assert index._main is main and index.pending == 0


def test_32_bit_pairs_are_packed_and_wide_values_fall_back():
    index = SortedVectorIndex(arity=2, key=(1,))
    index.insert(np.array([[5, -(2**31)], [2**31 - 1, 0]]))
    index.flush()
    assert index._main.packed and index._main.data.shape == (1, 2)
    index.insert(np.array([[2**40], [1]]))
    positions, rows = index.join(np.array([[0, 1, 2**31 - 1]]), (0,))
    assert not index._main.packed
    assert sorted(zip(positions.tolist(), map(tuple, rows.T.tolist()), strict=True)) == [
        (0, (-(2**31), 0)), (1, (2**40, 1)), (2, (5, 2**31 - 1))]
    assert index.rows().T.tolist() == [[-(2**31), 0], [2**40, 1], [5, 2**31 - 1]]  # key order


def test_large_join_matches_a_counting_oracle():
    rng = np.random.default_rng(7)
    stored = rng.integers(0, 5000, size=(2, 200_000))
    probe = rng.integers(0, 5000, size=(3, 20_000))
    index = SortedVectorIndex(arity=2, key=(0,))
    for part in np.array_split(stored, 7, axis=1):
        index.insert(part)
    positions, rows = index.join(probe, (2,))
    distinct = np.unique(stored, axis=1)
    per_key = np.bincount(distinct[0], minlength=5000)
    assert len(index) == distinct.shape[1]
    assert len(positions) == per_key[probe[2]].sum()
    assert np.array_equal(rows[0], probe[2, positions])
    assert np.all(np.diff(positions) >= 0)


def test_rows_inserted_in_order_are_not_sorted_again(monkeypatch):
    from herbrand.indexes import runs

    sorts = []
    sort_unique = runs.sort_unique
    monkeypatch.setattr(runs, "sort_unique", lambda *args: sorts.append(1) or sort_unique(*args))
    index = SortedVectorIndex(2, (0,))
    index.insert(np.array([[1, 1, 2, 5], [3, 4, 0, 0]], dtype=np.int64))  # in (key, rest) order
    assert index.rows().tolist() == [[1, 1, 2, 5], [3, 4, 0, 0]] and not sorts
    unordered = SortedVectorIndex(2, (1,))  # the same rows are not in (1, 0) order
    unordered.insert(np.array([[1, 1, 2, 5], [3, 4, 0, 0]], dtype=np.int64))
    assert unordered.rows().tolist() == [[2, 5, 1, 1], [0, 0, 3, 4]] and sorts == [1]


@pytest.mark.parametrize("strided", [False, True])
def test_an_inserted_batch_changed_afterwards_changes_nothing(strided):
    buffer = np.array([[3, 1, 2, 9], [30, 10, 20, 90]], dtype=np.int64)
    batch = buffer[:, :3] if strided else buffer[:, :3].copy()  # a prefix view is strided
    index = SortedVectorIndex(2, (0,))
    index.insert(batch)
    batch[:] = 7
    buffer[:] = 7
    assert index.rows().tolist() == [[1, 2, 3], [10, 20, 30]]


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("scale", [1, 2**40])  # packed rows, columns
def test_a_read_only_batch_waits_in_the_tail_uncopied_and_the_run_is_new(scale, strided):
    """A read-only batch (a Relation's columns, a prefix view of a growing buffer) is kept as
    it is until the next read; the run then holds new arrays, not a view of it, sorted on
    (key, rest)."""
    buffer = np.array([[3, 1, 2, 1, 0], [30, 10, 20, 10, 0], [5, 6, 7, 6, 0]]) * scale
    batch = buffer[:, :4] if strided else buffer[:, :4].copy()
    batch.setflags(write=False)
    index = SortedVectorIndex(3, (1, 2))
    index.insert(batch)
    assert index._tail[0] is batch
    assert (index.rows() // scale).tolist() == [[1, 2, 3], [10, 20, 30], [6, 7, 5]]
    assert index._main.packed == (scale == 1)
    assert not index._tail and not np.may_share_memory(index._main.data, buffer)


def test_few_new_rows_are_joined_in_a_run_of_their_own_until_they_grow(monkeypatch):
    from herbrand.indexes import sorted_vector

    index = SortedVectorIndex(arity=2, key=(0,))
    index.insert_new(np.array([np.arange(100), np.arange(100) * 10]))
    index.join(np.zeros((1, 0), dtype=np.int64), (0,))  # the first rows make the main run
    main = index._main
    index.insert_new(np.array([[5, 200], [7, 2000]]))
    index.insert_new(np.array([[5], [8]]))
    positions, rows = index.join(np.array([[5, 200, 9]]), (0,))
    assert index._main is main and len(index._fresh) == 1  # not merged into the main run
    assert sorted(zip(positions.tolist(), map(tuple, rows.T.tolist()), strict=True)) == [
        (0, (5, 7)), (0, (5, 8)), (0, (5, 50)), (1, (200, 2000)), (2, (9, 90))]
    index.insert_new(np.array([[300], [1]]))
    assert index.join(np.array([[300]]), (0,))[1].tolist() == [[300], [1]]
    assert index._main is main and len(index._fresh) == 2
    monkeypatch.setattr(sorted_vector, "FRESH_RUNS", 2)
    index.insert_new(np.array([[301], [1]]))
    index.join(np.array([[301]]), (0,))
    assert index._main is main and len(index._fresh) == 1  # three runs, merged together
    index._check_invariants()
    index.insert_new(np.array([np.arange(1000, 1010), np.zeros(10, dtype=np.int64)]))
    assert index.join(np.array([[1009]]), (0,))[1].tolist() == [[1009], [0]]
    assert index._main is not main and not index._fresh  # 15 > 100 / 16 rows: merged
    assert len(index) == 115


def test_new_rows_after_rows_that_may_be_stored_wait_for_one_merge():
    index = SortedVectorIndex(arity=1, key=(0,))
    index.insert_new(np.arange(100)[None, :])
    assert len(index) == 100
    index.insert(np.array([[3, 500]]))  # 3 is stored already
    index.insert_new(np.array([[600]]))
    assert index.pending == 3
    assert index.join(np.array([[3, 600]]), (0,))[0].tolist() == [0, 1]
    assert not index._fresh and len(index) == 102
