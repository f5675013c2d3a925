"""The galloping searches and the merge-sum of ``counting_merge`` against numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.counting_merge import (
    found_in,
    merge_added,
    run_lengths,
    segment_positions,
    sorted_positions,
    spliced,
    union,
    weights_at,
)

_values = st.lists(st.integers(-50, 50), max_size=60)


@settings(max_examples=200, deadline=None)
@given(_values, _values, st.booleans())
def test_sorted_positions_is_searchsorted_for_sorted_and_unsorted_needles(hay, needles, order):
    haystack = np.sort(np.array(hay, dtype=np.int64))
    probe = np.array(sorted(needles) if order else needles, dtype=np.int64)
    assert sorted_positions(haystack, probe).tolist() == np.searchsorted(haystack, probe).tolist()
    assert found_in(haystack, probe).tolist() == np.isin(probe, haystack).tolist()
    keys = np.unique(haystack)
    counts = keys * 3 + 1000
    assert weights_at(keys, counts, probe).tolist() == [
        3 * p + 1000 if p in set(hay) else 0 for p in probe.tolist()]


def test_sorted_positions_gallops_past_a_long_haystack():
    haystack = np.arange(0, 2_000_000, 2, dtype=np.int64)
    probe = np.array([-1, 0, 3, 1_999_998, 5_000_000], dtype=np.int64)
    assert sorted_positions(haystack, probe).tolist() == [0, 0, 2, 999_999, 1_000_000]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(-30, 30), st.integers(-3, 3).filter(bool), max_size=30),
       st.dictionaries(st.integers(-30, 30), st.integers(-3, 3).filter(bool), max_size=30))
def test_merge_added_sums_counts_and_drops_zeros(base, delta):
    def arrays(counts):
        keys = sorted(counts)
        return (np.array(keys, dtype=np.int64),
                np.array([counts[k] for k in keys], dtype=np.int8))
    keys, counts = merge_added(*arrays(base), *arrays(delta))
    expected = {k: base.get(k, 0) + delta.get(k, 0) for k in base.keys() | delta.keys()}
    expected = {k: v for k, v in expected.items() if v}
    assert keys.tolist() == sorted(expected)
    assert counts.tolist() == [expected[k] for k in sorted(expected)]
    assert counts.dtype == np.int64


def _keyed(counts):
    keys = sorted(counts)
    return np.array(keys, dtype=np.int64), np.array([counts[k] for k in keys], dtype=np.int8)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(-300, 300), st.integers(-3, 3).filter(bool), min_size=100,
                       max_size=300),
       st.dictionaries(st.integers(-320, 320), st.integers(-3, 3).filter(bool), max_size=6))
def test_merge_added_of_a_small_delta_copies_between_its_positions(base, delta):
    # 16 * len(delta) < len(base): the galloping path with block copies
    keys, counts = merge_added(*_keyed(base), *_keyed(delta))
    expected = {k: base.get(k, 0) + delta.get(k, 0) for k in base.keys() | delta.keys()}
    expected = {k: v for k, v in expected.items() if v}
    assert keys.tolist() == sorted(expected)
    assert counts.tolist() == [expected[k] for k in sorted(expected)]


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(-30, 30)), st.sets(st.integers(-30, 30)))
def test_union_of_ascending_keys(a, b):
    merged = union(np.array(sorted(a), dtype=np.int64), np.array(sorted(b), dtype=np.int64))
    assert merged.tolist() == sorted(a | b)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sets(st.tuples(st.integers(-4, 4), st.integers(-4, 4))), min_size=1,
                max_size=4),
       st.lists(st.tuples(st.integers(0, 3), st.integers(-5, 5), st.integers(-5, 5)),
                max_size=12))
def test_segment_positions_search_each_row_in_its_own_sorted_segment(segments, probes):
    blocks = [np.array(sorted(rows), dtype=np.int64).reshape(-1, 2).T for rows in segments]
    columns = np.concatenate(blocks, axis=1)
    bounds = np.concatenate([[0], np.cumsum([b.shape[1] for b in blocks])])
    probes = [(s % len(blocks), x, y) for s, x, y in probes]
    needles = np.array([[x for _, x, _ in probes], [y for _, _, y in probes]],
                       dtype=np.int64).reshape(2, -1)
    segment = np.array([s for s, _, _ in probes], dtype=np.int64)
    at = segment_positions(columns, bounds[segment], bounds[segment + 1], needles)
    expected = [int(bounds[s]) + sum(1 for row in sorted(segments[s]) if row < (x, y))
                for s, x, y in probes]
    assert at.tolist() == expected


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3), st.integers(0, 30), st.data())
def test_spliced_is_delete_then_insert(arity, n, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    columns = rng.integers(-100, 100, (arity, n))
    left = np.flatnonzero(rng.random(n) < data.draw(st.floats(0, 1)))
    m = data.draw(st.integers(0, 6))
    at = np.sort(rng.integers(0, n - len(left) + 1, m))
    joined = rng.integers(-100, 100, (arity, m))
    expected = np.insert(np.delete(columns, left, axis=1), at, joined, axis=1)
    assert spliced(columns, left, joined, at).tolist() == expected.tolist()
    # into a strided block, from a strided view (a relation's slice, a growing buffer's tail)
    wide = np.zeros((arity, n + 9), dtype=np.int64)
    wide[:, 2:2 + n] = columns
    out = np.full((arity, expected.shape[1] + 5), -1, dtype=np.int64)
    spliced(wide[:, 2:2 + n], left, joined, at, out=out[:, 3:3 + expected.shape[1]])
    assert out[:, 3:3 + expected.shape[1]].tolist() == expected.tolist()
    assert (out[:, :3] == -1).all() and (out[:, 3 + expected.shape[1]:] == -1).all()


@settings(max_examples=100, deadline=None)
@given(_values)
def test_run_lengths_are_unique_with_counts(values):
    ordered = np.sort(np.array(values, dtype=np.int64))
    distinct, lengths = run_lengths(ordered)
    expected = np.unique(ordered, return_counts=True)
    assert distinct.tolist() == expected[0].tolist()
    assert lengths.tolist() == expected[1].tolist()
