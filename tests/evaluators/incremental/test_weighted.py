"""Weighted batches (Z-sets): consolidation and sums."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental import weighted


def test_consolidate_sums_and_drops_zeros():
    rows = np.array([[1, 2, 1, 2], [5, 6, 5, 6]])
    merged, weights = weighted.consolidate(rows, np.array([1, 2, 3, -2]))
    assert merged.T.tolist() == [[1, 5]] and weights.tolist() == [4]


def test_combine_of_nothing_has_the_arity():
    rows, weights = weighted.combine(3)
    assert rows.shape == (3, 0) and weights.shape == (0,)


# values that fit 32-bit packed fields and values that do not (the lexsort path)
VALUES = st.sampled_from([-(1 << 40), -3, 0, 1, 2, 3, (1 << 31) - 1, 1 << 40])


@settings(deadline=None)
@given(st.lists(st.tuples(VALUES, VALUES, st.integers(-2, 2)), max_size=30))
def test_consolidate_matches_a_counter_in_lexicographic_order(entries):
    rows = np.array([(a, b) for a, b, _ in entries], dtype=np.int64).reshape(-1, 2).T
    weights = np.array([w for _, _, w in entries], dtype=np.int64)
    merged, sums = weighted.consolidate(rows, weights)
    expected: dict = {}
    for a, b, w in entries:
        expected[(a, b)] = expected.get((a, b), 0) + w
    assert dict(zip(map(tuple, merged.T.tolist()), sums.tolist(), strict=True)) == {
        k: v for k, v in expected.items() if v}
    assert merged.T.tolist() == sorted(merged.T.tolist())


def test_negated_and_bag():
    rows, weights = weighted.negated(weighted.bag(np.array([[1, 1]]), 2))
    assert weights.tolist() == [-2, -2] and rows.tolist() == [[1, 1]]


_entries = st.lists(st.tuples(st.integers(-2, 2), st.integers(-2, 2), st.integers(-2, 2)),
                    max_size=20)


def _weighted_batch(entries):
    rows = np.array([(a, b) for a, b, _ in entries], dtype=np.int64).reshape(-1, 2).T
    return weighted.consolidate(rows, np.array([w for *_, w in entries], dtype=np.int64))


@settings(deadline=None)  # the first call compiles the numba search
@given(_entries, _entries)
def test_add_sorted_equals_combine_and_keeps_the_order(base, delta):
    base, delta = _weighted_batch(base), _weighted_batch(delta)
    rows, weights = weighted.add_sorted(base, delta)
    expected_rows, expected_weights = weighted.combine(2, base, delta)
    assert rows.tolist() == expected_rows.tolist()
    assert weights.tolist() == expected_weights.tolist()
    assert weighted.weights_of((rows, weights), delta[0]).tolist() == [
        dict(zip(map(tuple, rows.T.tolist()), weights.tolist(), strict=True)).get(row, 0)
        for row in map(tuple, delta[0].T.tolist())]


@settings(deadline=None)
@given(st.lists(st.lists(st.tuples(VALUES, VALUES), max_size=12), max_size=4),
       st.lists(st.integers(-2, 2), min_size=4, max_size=4), st.booleans())
def test_combine_of_bags_and_batches_matches_a_counter(rows_of_parts, signs, mixed):
    # bags (one weight each: summed by sorting keys, then merged) or, when ``mixed``, the
    # first part with weights that differ (an argsort); wide values take the lexsort path
    parts, expected = [], {}
    for number, (rows, sign) in enumerate(zip(rows_of_parts, signs, strict=False)):
        weights = [sign + (i % 3 if mixed and not number else 0) for i in range(len(rows))]
        parts.append((np.array(rows, dtype=np.int64).reshape(-1, 2).T,
                      np.array(weights, dtype=np.int64)))
        for row, weight in zip(rows, weights, strict=True):
            expected[row] = expected.get(row, 0) + weight
    merged, sums = weighted.combine(2, *parts)
    assert merged.T.tolist() == sorted(list(row) for row, weight in expected.items() if weight)
    assert sums.tolist() == [expected[tuple(row)] for row in merged.T.tolist()]
    assert sums.dtype == np.int64 and merged.dtype == np.int64


def test_combine_of_one_column_and_of_no_column():
    rows, weights = weighted.combine(1, (np.array([[3, 1, 3]]), np.array([1, 1, 1])),
                                     (np.array([[1]]), np.array([-1])))
    assert rows.tolist() == [[3]] and weights.tolist() == [2]
    rows, weights = weighted.combine(0, (np.zeros((0, 2), dtype=np.int64), np.array([1, 2])))
    assert rows.shape == (0, 1) and weights.tolist() == [3]
