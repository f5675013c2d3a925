"""``member_kernels.matching`` against numpy's isin, by its table and by its search, and
``sorted_matching`` against it over ascending columns."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.member_kernels import (
    matching,
    matching_rows,
    sorted_matching,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-40, 40), max_size=30), st.lists(st.integers(-40, 40), max_size=5),
       st.sampled_from([1, 10 ** 12, 1 << 61]))
def test_matching_by_table_or_search_is_isin(values, seed, spread):
    # spread 1: a narrow seed range (the table); wider: the binary search, and values far
    # from the seed's range on either side (no overflow of their distance)
    values, seed = np.array(values, dtype=np.int64) * spread, np.array(seed, dtype=np.int64)
    seed = seed * min(spread, 10 ** 12)
    assert matching(values, seed).tolist() == np.flatnonzero(np.isin(values, seed)).tolist()


def test_matching_reads_a_row_of_a_block_in_place():
    block = np.arange(12, dtype=np.int64).reshape(3, 4)[:, 1:3]  # rows of a column slice
    assert matching(block[1], np.array([5, 6, 100])).tolist() == [0, 1]  # block[1]: 5, 6


def test_matching_rows_keeps_the_rows_whose_shared_columns_occur_in_the_seed():
    columns = np.array([[1, 2, 3, 2], [7, 8, 9, 9]])
    seed = np.array([[2, 3], [9, 9]])
    assert matching_rows(columns, seed, ((0, 0), (1, 1))).tolist() == [2, 3]
    assert matching_rows(columns, seed, ((1, 1),), np.array([0, 3])).tolist() == [3]
    assert matching_rows(columns, seed, ()) is None


_LOWEST, _HIGHEST = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([_LOWEST, -3, _HIGHEST - 40]),
       st.lists(st.integers(0, 40), min_size=1, max_size=5),
       st.lists(st.one_of(st.integers(0, 40), st.sampled_from(
           [_LOWEST, _LOWEST + 1, -1, 0, _HIGHEST - 1, _HIGHEST])), min_size=10, max_size=30),
       st.booleans())
def test_matching_by_table_at_either_end_of_int64_is_isin(base, offsets, values, near):
    # a narrow seed range (the table: its span at most 4 n) at the least or greatest int64s,
    # values near it or at either end: their distance to it, taken unsigned, does not wrap
    # into the table
    seed = np.array([base + offset for offset in offsets], dtype=np.int64)
    values = np.array([base + v if near and 0 <= v <= 40 else v for v in values],
                      dtype=np.int64)
    assert int(seed.max()) - int(seed.min()) <= 4 * len(values)  # the table, not the search
    assert matching(values, seed).tolist() == np.flatnonzero(np.isin(values, seed)).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-20, 20), max_size=40), st.sets(st.integers(-25, 25), max_size=8),
       st.sampled_from([1, 1 << 58]))
def test_sorted_matching_of_an_ascending_column_is_isin(values, seed, spread):
    # runs of equal values (a lexicographically sorted relation's first column), seed values
    # below, between and above them, and far apart (long gallops)
    values = np.sort(np.array(values, dtype=np.int64)) * spread
    distinct = np.array(sorted(seed), dtype=np.int64) * spread
    assert (sorted_matching(values, distinct).tolist()
            == np.flatnonzero(np.isin(values, distinct)).tolist())


def test_sorted_matching_reads_a_column_of_a_block_in_place():
    block = np.array([[1, 1, 2, 4, 4, 4, 9], [0, 1, 2, 3, 4, 5, 6]])
    assert sorted_matching(block[0], np.array([1, 4])).tolist() == [0, 1, 3, 4, 5]
    assert sorted_matching(block[0], np.array([], dtype=np.int64)).tolist() == []
