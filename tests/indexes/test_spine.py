"""SpineIndex: geometric run sizes, disjoint runs, merges after deletes, the merge factor."""

from __future__ import annotations

import math

import numpy as np
import pytest

from herbrand.indexes.runs import SortedRun
from herbrand.indexes.spine import SpineIndex


def one_row(value: int) -> np.ndarray:
    return np.array([[value], [value % 7]])


def test_single_row_inserts_keep_logarithmically_many_runs():
    index = SpineIndex(arity=2, key=(1,))
    for value in range(1000):
        index.insert(one_row(value))
        sizes = index.run_sizes()
        assert all(newer < SpineIndex.MERGE_FACTOR * older
                   for older, newer in zip(sizes, sizes[1:], strict=False))
    assert len(index) == 1000
    assert len(index.run_sizes()) <= math.log2(1000) + 1
    index._check_invariants()


def test_rows_already_stored_make_no_new_run():
    index = SpineIndex(arity=2, key=(0,))
    index.insert(np.array([[1, 2, 3, 4], [1, 2, 3, 4]]))
    index.insert(np.array([[1, 2], [1, 2]]))
    assert index.run_sizes() == (4,)
    index.insert(np.array([[2, 9], [2, 9]]))
    assert index.run_sizes() == (4, 1)


def test_a_large_batch_cascades_into_one_run():
    index = SpineIndex(arity=2, key=(0,))
    for value in range(7):
        index.insert(one_row(value))
    assert index.run_sizes() == (5, 2)  # a run merges once it is half its predecessor
    index.insert(np.array([np.arange(100, 200), np.zeros(100, dtype=np.int64)]))
    assert index.run_sizes() == (107,)


def test_delete_drops_empty_runs_and_restores_the_size_invariant():
    index = SpineIndex(arity=2, key=(0,))
    index.insert(np.array([np.arange(64), np.arange(64)]))
    index.insert(np.array([np.arange(100, 120), np.arange(20)]))
    index.insert(np.array([[500], [0]]))
    assert index.run_sizes() == (64, 20, 1)
    index.delete(np.array([np.arange(60), np.arange(60)]))  # the oldest run shrinks to 4
    index._check_invariants()
    assert index.run_sizes() == (24, 1)  # 20 >= 0.5 * 4: the first two runs merged
    index.delete(index.rows())
    assert index.run_sizes() == () and len(index) == 0


def test_a_delete_stops_at_the_run_that_held_its_last_row(monkeypatch):
    index = SpineIndex(arity=2, key=(0,))
    index.insert(np.array([np.arange(64), np.arange(64)]))
    index.insert(np.array([np.arange(100, 120), np.arange(20)]))
    index.insert(np.array([[500, 501], [0, 1]]))
    assert index.run_sizes() == (64, 20, 2)
    searched = []
    difference = SortedRun.difference
    monkeypatch.setattr(SortedRun, "difference",
                        lambda run, other: searched.append(len(run)) or difference(run, other))
    index.delete(np.array([[501, 110, 501], [1, 10, 1]]))  # newest two runs; a repeat
    assert searched == [2, 20]  # the oldest run cannot hold them: runs are disjoint
    assert index.run_sizes() == (64, 19, 1)
    searched.clear()
    index.delete(np.array([[500, 999], [0, 0]]))  # (999, 0) is stored nowhere: every run
    assert searched == [1, 19, 64]
    assert index.run_sizes() == (64, 19)
    index._check_invariants()


def test_join_and_range_span_every_run():
    index = SpineIndex(arity=2, key=(1,))
    for value in range(40):
        index.insert(one_row(value))
    assert len(index.run_sizes()) > 1
    positions, rows = index.join(np.array([[3, 8]]), (0,))
    expected = sorted((p, (v, v % 7)) for p, k in enumerate([3, 8]) for v in range(40) if v % 7 == k)
    assert sorted(zip(positions.tolist(), map(tuple, rows.T.tolist()), strict=True)) == expected
    ranged = index.range((2,), (3,)).T.tolist()
    assert ranged == sorted([[v, v % 7] for v in range(40) if v % 7 in (2, 3)],
                            key=lambda r: (r[1], r[0]))


@pytest.mark.parametrize("factor", [0.25, 1.0])
def test_the_merge_factor_is_a_tunable(factor):
    class Tuned(SpineIndex):
        MERGE_FACTOR = factor

    index = Tuned(arity=2, key=(0,))
    for value in range(300):
        index.insert(one_row(value))
        index._check_invariants()
    sizes = index.run_sizes()
    assert all(newer < factor * older for older, newer in zip(sizes, sizes[1:], strict=False))


def test_insert_new_searches_no_run_for_its_rows(monkeypatch):
    index = SpineIndex(arity=2, key=(0,))
    index.insert(np.array([np.arange(64), np.arange(64)]))
    monkeypatch.setattr(SortedRun, "difference", lambda *_: pytest.fail("runs searched"))
    index.insert_new(np.array([[70, 65, 70], [1, 2, 1]]))  # a repeat within the batch
    assert index.run_sizes() == (64, 2)
    positions, rows = index.join(np.array([[65, 70, 3]]), (0,))
    assert sorted(zip(positions.tolist(), map(tuple, rows.T.tolist()), strict=True)) == [
        (0, (65, 2)), (1, (70, 1)), (2, (3, 3))]
    index._check_invariants()

