"""The galloping searches and the merge-sum of ``counting_merge`` against numpy."""

from __future__ import annotations

from bisect import bisect_left

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.counting_merge import (
    WALK_BLOCK,
    WALK_BLOCKS,
    ascending_weights_at,
    bag_sums,
    found_in,
    merge_added,
    segments_moved,
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


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.integers(-30, 30), st.integers(-100, 100), max_size=30), _values,
       st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.float64]), st.booleans())
def test_weights_at_reads_counts_of_every_width(entries, needles, dtype, order):
    """Narrow counts (the counting engine's) and counts of another type come back as int64,
    for sorted and unsorted needles, absent ones 0; ``ascending_weights_at`` reads sorted
    needles (repeats included) alike."""
    keys = np.array(sorted(entries), dtype=np.int64)
    counts = np.array([entries[k] for k in sorted(entries)], dtype=dtype)
    probe = np.array(sorted(needles) if order else needles, dtype=np.int64)
    expected = [entries.get(p, 0) for p in probe.tolist()]
    found = weights_at(keys, counts, probe)
    assert found.dtype == np.int64
    assert found.tolist() == expected
    if order:
        trusted = ascending_weights_at(keys, counts, probe)
        assert trusted.dtype == np.int64
        assert trusted.tolist() == expected


def test_sorted_positions_gallops_past_a_long_haystack():
    haystack = np.arange(0, 2_000_000, 2, dtype=np.int64)
    probe = np.array([-1, 0, 3, 1_999_998, 5_000_000], dtype=np.int64)
    assert sorted_positions(haystack, probe).tolist() == [0, 0, 2, 999_999, 1_000_000]


# keys of the dense merge: small ones, and the extreme int64s (it holds an exhausted run's head
# as the largest)
_merged_keys = st.integers(-30, 30) | st.sampled_from(
    [np.iinfo(np.int64).min, np.iinfo(np.int64).max - 1, np.iinfo(np.int64).max])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_merged_keys, st.integers(-3, 3).filter(bool), max_size=30),
       st.dictionaries(_merged_keys, st.integers(-3, 3).filter(bool), max_size=30))
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


def _assert_moved_is_delete_then_insert(segments, left, joined):
    """``segments_moved`` of ``segments`` (lists of sorted 2-tuples) without ``left`` and with
    ``joined`` (sorted (segment, row) pairs) equals np.delete then np.insert at the sorted
    positions, with the positions of the leaving rows and the kept counts before each joined
    row."""
    columns = np.array([row for rows in segments for row in rows],
                       dtype=np.int64).reshape(-1, 2).T
    bounds = np.concatenate([[0], np.cumsum([len(rows) for rows in segments])])
    index = [{row: i for i, row in enumerate(rows)} for rows in segments]
    positions = [int(bounds[s]) + index[s][row] for s, row in left]
    kept = np.delete(columns, positions, axis=1)
    kept_bounds = bounds - np.searchsorted(positions, bounds)
    gone = [set() for _ in segments]
    for s, row in left:
        gone[s].add(row)
    at = [int(kept_bounds[s]) + bisect_left(segments[s], row)
          - sum(1 for r in gone[s] if r < row) for s, row in joined]
    expected = np.insert(kept, at, np.array([row for _, row in joined],
                                            dtype=np.int64).reshape(-1, 2).T, axis=1)
    out, positions_found, before = segments_moved(
        columns, bounds, np.array([r for _, r in left], dtype=np.int64).reshape(-1, 2).T,
        np.array([s for s, _ in left], dtype=np.int64),
        np.array([r for _, r in joined], dtype=np.int64).reshape(-1, 2).T,
        np.array([s for s, _ in joined], dtype=np.int64))
    assert out.tolist() == expected.tolist()
    assert positions_found.tolist() == positions and before.tolist() == at


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sets(st.tuples(st.integers(-4, 4), st.integers(-4, 4))), max_size=4),
       st.data())
def test_segments_moved_is_delete_then_insert_in_each_sorted_segment(segments, data):
    """Rows leave their segments and others join theirs (both sorted by segment, then row,
    as an update moves rows of a trace)."""
    segments = [sorted(rows) for rows in segments] + [[]]  # a last segment to grow into
    left = sorted((s, row) for s, rows in enumerate(segments) for row in rows
                  if data.draw(st.booleans()))
    joined = sorted({(s, row) for s, row in data.draw(st.lists(st.tuples(
        st.integers(0, len(segments) - 1), st.tuples(st.integers(-5, 5), st.integers(-5, 5))),
        max_size=8)) if row not in segments[s] or (s, row) in left})
    _assert_moved_is_delete_then_insert(segments, left, joined)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0.0005, 0.01, 0.2]))
def test_segments_moved_walks_blocks_and_gallops_past_long_gaps(seed, share):
    """Segments of many blocks (``WALK_BLOCK`` rows each) with moves dense and sparse: a
    leaving or joining row at a block's first or last row, rows found block by block, and
    gaps of more than ``WALK_BLOCKS`` blocks, which the kernel gallops across."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, 3 * WALK_BLOCK * WALK_BLOCKS, 3)
    segments = [sorted({(int(a), int(b)) for a, b in rng.integers(0, 40, (size, 2))})
                for size in sizes] + [[]]
    left = [(s, row) for s, rows in enumerate(segments) for i, row in enumerate(rows)
            if rng.random() < share or i % WALK_BLOCK in (0, WALK_BLOCK - 1) and
            rng.random() < 10 * share]
    fresh = {(int(s), (int(a), int(b))) for s, a, b in zip(
        rng.integers(0, len(segments), 40), rng.integers(0, 41, 40), rng.integers(40, 42, 40),
        strict=True)}
    joined = sorted(fresh | {(s, row) for s, row in left if rng.random() < 0.5})
    _assert_moved_is_delete_then_insert(segments, left, joined)


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
    # into a strided block, from a strided view (a relation's slice, a growing buffer's tail)
    wide = np.zeros((arity, n + 9), dtype=np.int64)
    wide[:, 2:2 + n] = columns
    out = np.full((arity, expected.shape[1] + 5), -1, dtype=np.int64)
    spliced(wide[:, 2:2 + n], left, joined, at, out=out[:, 3:3 + expected.shape[1]])
    assert out[:, 3:3 + expected.shape[1]].tolist() == expected.tolist()
    assert (out[:, :3] == -1).all() and (out[:, 3 + expected.shape[1]:] == -1).all()


@settings(max_examples=200, deadline=None)
@given(_values, st.sampled_from([1, -1, 2]), _values, st.sampled_from([0, 1, -1, -2]))
def test_bag_sums_are_the_summed_weights_of_both_bags(a, a_weight, b, b_weight):
    """Against a dict of sums: keys in both bags, weights that cancel (1 and -1, or 2 once
    against -2 once, or twice against -1), an empty bag (one bag's run lengths)."""
    sums: dict[int, int] = {}
    for values, weight in ((a, a_weight), (b, b_weight)):
        for value in values:
            sums[value] = sums.get(value, 0) + weight
    expected = sorted((key, total) for key, total in sums.items() if total)
    keys, totals = bag_sums(np.sort(np.array(a, dtype=np.int64)), a_weight,
                            np.sort(np.array(b, dtype=np.int64)), b_weight)
    assert list(zip(keys.tolist(), totals.tolist(), strict=True)) == expected


def test_bag_sums_hold_the_extreme_keys_and_a_last_key_that_cancels():
    """The merge keeps no sentinel: the least and the greatest int64 are keys like any other,
    in either bag, and a total that cancels on the last key, or on the only one, is left
    out."""
    low, high = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    a = np.array([low, low, 0, high], dtype=np.int64)
    b = np.array([low, 5, high, high], dtype=np.int64)
    keys, totals = bag_sums(a, 1, b, -1)
    assert keys.tolist() == [low, 0, 5, high] and totals.tolist() == [1, 1, -1, -1]
    keys, totals = bag_sums(a, 2, b, -1)
    assert keys.tolist() == [low, 0, 5] and totals.tolist() == [3, 2, -1]
    keys, totals = bag_sums(np.array([high], dtype=np.int64), 1,
                            np.array([high], dtype=np.int64), -1)
    assert not len(keys) and not len(totals)
    keys, totals = bag_sums(b, 3, b[:0], 0)
    assert keys.tolist() == [low, 5, high] and totals.tolist() == [3, 3, 6]
