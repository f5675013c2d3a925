"""RowIndex finds rows in every encoding; weighted_groups sums a bag by row."""

from __future__ import annotations

import doctest

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental import row_index
from herbrand.evaluators.incremental.row_index import (
    ABSENT,
    RowIndex,
    weighted_groups,
)

BIG = 2**40  # does not fit a packed field: forces the lexicographic encoding


def test_doctests():
    assert doctest.testmod(row_index).failed == 0


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5),
                                            st.integers(0, 5)), max_size=20),
       st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(0, 6)),
                max_size=10), st.booleans(), st.booleans())
def test_find_matches_a_dict(arity, stored, probes, big_stored, big_probe):
    rows = sorted({r[:arity] for r in stored})
    if big_stored and rows:
        rows[0] = (BIG,) + rows[0][1:]
    probe_rows = [p[:arity] for p in probes] + rows[:2]
    if big_probe and probe_rows:
        probe_rows.append((BIG,) + probe_rows[0][1:])
    positions = np.arange(100, 100 + len(rows))
    index = RowIndex(np.array(rows, dtype=np.int64).reshape(-1, arity).T, positions)
    expected = dict(zip(rows, positions.tolist(), strict=True))
    found = index.find(np.array(probe_rows, dtype=np.int64).reshape(-1, arity).T)
    assert found.tolist() == [expected.get(p, ABSENT) for p in probe_rows]


def test_arity_zero_has_at_most_one_row():
    assert RowIndex(np.zeros((0, 1), dtype=np.int64)).find(np.zeros((0, 3))).tolist() == [0] * 3
    assert RowIndex(np.zeros((0, 0), dtype=np.int64)).find(np.zeros((0, 2))).tolist() == [-1] * 2


def test_weighted_groups_sums_weights_of_equal_rows():
    rows, sums = weighted_groups(np.array([[1, 2, 1, 3], [5, 6, 5, 7]]), np.array([1, 2, -1, 4]))
    assert dict(zip(map(tuple, rows.T.tolist()), sums.tolist(), strict=True)) == {
        (1, 5): 0, (2, 6): 2, (3, 7): 4}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 3), st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4),
                                             st.integers(0, 4), st.integers(-3, 3)),
                                   max_size=30), st.booleans())
def test_weighted_groups_matches_a_counter(arity, bag, big):
    rows = [r[:arity] for r in bag]
    if big and rows and arity:
        rows[0] = (BIG,) + rows[0][1:]
    expected: dict[tuple, int] = {}
    for row, (*_, weight) in zip(rows, bag, strict=True):
        expected[row] = expected.get(row, 0) + weight
    batch = np.array(rows, dtype=np.int64).reshape(len(rows), arity).T
    grouped, sums = weighted_groups(batch, np.array([b[3] for b in bag], dtype=np.int64))
    assert grouped.shape == (arity, len(expected))
    assert dict(zip(map(tuple, grouped.T.tolist()), sums.tolist(), strict=True)) == expected
