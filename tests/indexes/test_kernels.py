"""The shared routines: range expansion, grouping, the lexicographic numba kernels, the codec."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.indexes.kernels import (
    SORTED_PROBES_MIN_KEYS,
    SORTED_PROBES_MIN_ROWS,
    expand_ranges,
    gallop,
    gallop_past,
    group_rows,
    is_strictly_sorted,
    join_by_groups,
    merge_unique,
    row_bounds,
    searchsorted,
    sort_unique,
)
from herbrand.indexes.runs import RowCodec, SortedRun

INT64 = st.integers(-(2**63), 2**63 - 1)
SMALL = st.integers(-3, 3)


def blocks(c: int, values=SMALL, max_size: int = 30):
    """Strategy: a (c, n) int64 block as a list of rows (tuples of c values)."""
    return st.lists(st.tuples(*[values] * c), max_size=max_size)


def as_block(rows: list[tuple], c: int) -> np.ndarray:
    return np.array(rows, dtype=np.int64).reshape(len(rows), c).T.copy()


def as_rows(block: np.ndarray) -> list[tuple]:
    return [tuple(int(v) for v in block[:, j]) for j in range(block.shape[1])]


def test_expand_ranges_pairs_every_index_of_every_range():
    positions, indices = expand_ranges(np.array([2, 5, 0, 7]), np.array([4, 5, 1, 6]))
    assert positions.tolist() == [0, 0, 2]
    assert indices.tolist() == [2, 3, 0]
    assert positions.dtype == indices.dtype == np.int64


def test_expand_ranges_of_nothing():
    positions, indices = expand_ranges(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert positions.shape == indices.shape == (0,)


@settings(deadline=None)
@given(st.integers(0, 3).flatmap(lambda c: st.tuples(st.just(c), blocks(c))))
def test_group_rows_groups_equal_columns(case):
    c, rows = case
    order, bounds = group_rows(as_block(rows, c))
    groups = [[rows[i] for i in order[a:b]] for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    assert all(len(set(g)) == 1 for g in groups)
    assert len({g[0] for g in groups}) == len(groups) == len(set(rows))
    assert sorted(order.tolist()) == list(range(len(rows)))


@settings(deadline=None)
@given(st.integers(0, 3).flatmap(lambda c: st.tuples(st.just(c), blocks(c), blocks(c))))
def test_lexicographic_kernels_match_python(case):
    c, left, right = case
    a = sort_unique(as_block(left, c))
    b = sort_unique(as_block(right, c))
    assert as_rows(a) == sorted(set(left))
    assert is_strictly_sorted(a) and is_strictly_sorted(b)
    assert as_rows(merge_unique(a, b)) == sorted(set(left) | set(right))
    if c:
        needles = as_block(right, c)
        haystack = as_rows(a)
        assert searchsorted(a, needles, "left").tolist() == [
            sum(row < needle for row in haystack) for needle in right]
        assert searchsorted(a, needles, "right").tolist() == [
            sum(row <= needle for row in haystack) for needle in right]


def test_is_strictly_sorted_rejects_ties_and_descents():
    assert not is_strictly_sorted(np.array([[1, 1]]))
    assert is_strictly_sorted(np.array([[1, 2], [5, 4]]))
    assert not is_strictly_sorted(np.array([[2, 1], [0, 9]]))
    assert not is_strictly_sorted(np.zeros((0, 2), dtype=np.int64))


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 6).flatmap(lambda a: st.tuples(st.just(a), blocks(a, INT64, 20))))
def test_codec_packs_in_row_order_and_round_trips(case):
    arity, rows = case
    codec = RowCodec(arity, key=tuple(range(arity))[::-1])
    run = SortedRun.from_batch(codec, as_block(rows, arity))
    half = 1 << (64 // arity - 1)
    assert run.packed == all(-half <= v < half for row in rows for v in row)
    assert as_rows(run.rows()) == sorted(set(rows), key=lambda r: r[::-1])
    run.check_invariants()


def fitting_blocks(arity: int):
    """Strategy: a (arity, n) block whose values fit the packed fields, their ends likely."""
    half = 1 << (64 // arity - 1)
    return blocks(arity, st.integers(-half, half - 1) | st.sampled_from([-half, half - 1]), 40)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 6).flatmap(lambda a: st.tuples(st.just(a), fitting_blocks(a))),
       st.booleans())
def test_codec_packs_small_batches_as_large_ones_and_unpacks_them(case, strided):
    arity, rows = case
    codec = RowCodec(arity, key=tuple(range(arity))[::-1])
    block = as_block(rows, arity)
    if strided:  # a slice of a wider block, as a relation's prefix is
        block = np.concatenate([block, block], axis=1)[:, : len(rows)]
    large = RowCodec(arity, key=codec.key)
    large.SMALL_BATCH = 0  # numpy's passes, as for large batches
    packed = codec.packed(block)
    assert packed.tolist() == large.packed(block).tolist()
    assert codec.unpack(packed).tolist() == block[list(codec.order)].tolist()


def edge_values(arity: int):
    """Strategy: int64 values likely at the packed fields' ends, just past them, or at
    int64's (where adding a field's offset wraps)."""
    half = 1 << (64 // arity - 1)
    ends = {-half - 1, -half, half - 1, half, -(2**63), 2**63 - 1}
    return (st.integers(max(-half, -(2**63)), min(half, 2**63) - 1)
            | st.sampled_from(sorted(v for v in ends if -(2**63) <= v < 2**63)))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6).flatmap(lambda a: st.tuples(st.just(a), blocks(a, edge_values(a), 12))),
       st.booleans())
def test_codec_encodes_packed_exactly_when_every_value_fits(case, strided):
    """``encode`` (one pass that checks as it packs) against ``packs`` and ``packed``."""
    arity, rows = case
    codec = RowCodec(arity, key=tuple(range(arity))[::-1])
    block = as_block(rows, arity)
    if strided:
        block = np.concatenate([block, block], axis=1)[:, : len(rows)]
    data, packed = codec.encode(block)
    assert packed == codec.packs(block)
    expected = codec.packed(block) if packed else block[list(codec.order)]
    assert data.tolist() == expected.tolist()


def test_packing_uses_the_field_width_of_the_arity():
    assert RowCodec(2, (0,)).width == 32 and RowCodec(3, (0,)).width == 21
    assert RowCodec(1, (0,)).width == 0  # one column is already one int64
    fits = SortedRun.from_batch(RowCodec(2, (1,)), np.array([[2**31 - 1, -(2**31)], [0, 0]]))
    wide = SortedRun.from_batch(RowCodec(2, (1,)), np.array([[2**31], [0]]))
    assert fits.packed and not wide.packed
    assert fits.data.shape == (1, 2) and wide.data.shape == (2, 1)


def test_probe_values_that_cannot_be_packed_match_nothing():
    codec = RowCodec(2, (0,))
    run = SortedRun.from_batch(codec, np.array([[0, 1, -1], [5, 6, 7]]))
    assert run.packed
    keys = np.array([[1, 2**40 + 1, -(2**40) - 1, -1]])
    positions, rows = run.join(keys)
    assert positions.tolist() == [0, 3] and as_rows(rows) == [(1, 6), (-1, 7)]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4).flatmap(lambda a: st.tuples(
    st.just(a), st.permutations(range(a)), st.integers(0, a), blocks(a, st.sampled_from(
        [-(2**62), -(2**20), -2, -1, 0, 1, 2, 2**20 - 1, 2**40]), 25),
    blocks(a, st.sampled_from([-(2**62), -1, 0, 1, 2, 2**40]), 8))))
def test_run_join_matches_a_nested_loop(case):
    """Packed and column runs, every key length and column order, probes that cannot pack."""
    arity, order, length, rows, probes = case
    key = tuple(order[:length])
    run = SortedRun.from_batch(RowCodec(arity, key), as_block(rows, arity))
    keys = as_block(probes, arity)[list(key)] if key else np.zeros((0, len(probes)), np.int64)
    positions, matched = run.join(keys)
    expected = sorted((j, row) for j, probe in enumerate(probes) for row in set(rows)
                      if all(row[c] == probe[c] for c in key))
    assert sorted(zip(positions.tolist(), as_rows(matched), strict=True)) == expected
    assert positions.tolist() == sorted(positions.tolist())  # pairs in probe order


@pytest.mark.parametrize("key", [(1,), (0, 1), (2, 0, 1)])
def test_a_large_run_probed_by_many_keys_in_key_order_matches_a_dict(key):
    """A packed run of SORTED_PROBES_MIN_ROWS rows or more, probed by many keys (some
    repeated, some absent, some that cannot pack): searched in key order, pairs in probe
    order."""
    rng = np.random.default_rng(len(key))
    rows = np.unique(rng.integers(0, 60, (3, SORTED_PROBES_MIN_ROWS + 5000)), axis=1)
    assert rows.shape[1] >= SORTED_PROBES_MIN_ROWS
    run = SortedRun.from_batch(RowCodec(3, key), rows)
    assert run.packed
    keys = rng.integers(-1, 61, (len(key), 4 * SORTED_PROBES_MIN_KEYS))
    keys[:, ::9] = 2**40  # cannot pack: matches nothing
    keys[:, 1::9] = keys[:, :1]  # repeated
    positions, matched = run.join(keys)
    by_key: dict[tuple, list[tuple]] = {}
    for row in as_rows(rows):
        by_key.setdefault(tuple(row[c] for c in key), []).append(row)
    expected = [(j, row) for j, probe in enumerate(as_rows(keys))
                for row in sorted(by_key.get(probe, []))]
    assert sorted(zip(positions.tolist(), as_rows(matched), strict=True)) == expected
    assert positions.tolist() == sorted(positions.tolist())  # pairs in probe order


def test_runs_of_different_encodings_merge_and_subtract():
    codec = RowCodec(2, (0,))
    packed = SortedRun.from_batch(codec, np.array([[1, 2, 3], [1, 2, 3]]))
    wide = SortedRun.from_batch(codec, np.array([[2, 2**40], [2, 0]]))
    merged = packed.merge(wide)
    assert not merged.packed
    assert as_rows(merged.rows()) == [(1, 1), (2, 2), (3, 3), (2**40, 0)]
    assert as_rows(packed.difference(wide).rows()) == [(1, 1), (3, 3)]
    assert packed.difference(SortedRun.from_batch(codec, np.array([[9], [9]]))) is packed


def test_key_slice_bisects_on_python_tuples():
    codec = RowCodec(2, (1,))
    run = SortedRun.from_batch(codec, np.array([[5, 6, 7, 8], [-3, 0, 0, 2**33]]))
    assert as_rows(run.key_slice((0,), (0,)).rows()) == [(6, 0), (7, 0)]
    assert as_rows(run.key_slice((1,), (2**62,)).rows()) == [(8, 2**33)]
    assert len(run.key_slice((3,), (-3,))) == 0


def test_join_by_groups_fetches_each_distinct_key_once():
    fetched = []

    def fetch(keys):
        fetched.append(keys)
        sizes = np.array([2 if k == (1,) else 0 for k in keys])
        return sizes, np.array([[1, 1], [10, 11]])

    probe = np.array([[1, 3, 1], [0, 0, 0]])
    positions, rows = join_by_groups(probe, (0,), (0,), fetch)
    assert fetched == [[(1,), (3,)]]
    pairs = sorted(zip(positions.tolist(), map(tuple, rows.T.tolist()), strict=True))
    assert pairs == [(0, (1, 10)), (0, (1, 11)), (2, (1, 10)), (2, (1, 11))]


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 4), st.integers(1, 64), st.data())
def test_sort_unique_in_bit_fields_or_not_is_pythons_sorted_set(c, bits, data):
    """Values spanning ``bits`` bits per column: the columns' fields fit 63 bits (packed in
    bit fields) or do not (``sorted_distinct``), negative values and repeats included; the
    rows read in place in a drawn order, or all in turn. The block is left as it was."""
    low = data.draw(st.integers(-(2**63), 2**63 - 2**(bits - 1)))
    values = st.integers(low, min(low + 2**bits - 1, 2**63 - 1))
    rows = data.draw(blocks(c, values, max_size=40).filter(len))
    rows = rows + rows[: len(rows) // 3]  # repeats
    order = data.draw(st.none() | st.permutations(range(c)))
    block = as_block(rows, c)
    got = sort_unique(block, None if order is None else np.array(order, dtype=np.int64))
    reordered = rows if order is None else [tuple(row[r] for r in order) for row in rows]
    assert as_rows(got) == sorted(set(reordered)) and got.flags.c_contiguous
    assert as_rows(block) == rows and not np.may_share_memory(got, block)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4).flatmap(lambda c: st.tuples(st.just(c), blocks(c, INT64).filter(len))),
       st.booleans())
def test_row_bounds_are_each_rows_least_and_greatest_value(case, strided):
    c, rows = case
    block = as_block(rows, c)
    if strided:  # a prefix view of a wider buffer, as a growing relation's columns are
        block = np.concatenate([block, np.full((c, 2), 2**63 - 1)], axis=1)[:, : len(rows)]
    lowest, highest = row_bounds(block)
    assert lowest.tolist() == [min(column) for column in zip(*rows, strict=True)]
    assert highest.tolist() == [max(column) for column in zip(*rows, strict=True)]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 3).flatmap(lambda c: st.tuples(
    blocks(c, st.integers(-2, 2), max_size=6), st.permutations(range(c)))))
def test_is_strictly_sorted_in_an_order_reads_the_rows_in_that_order(case):
    rows, order = case
    c = len(order)
    reordered = [tuple(row[r] for r in order) for row in rows]
    expected = all(a < b for a, b in zip(reordered, reordered[1:], strict=False))
    block = as_block(rows, c)
    assert is_strictly_sorted(block, np.array(order, dtype=np.int64)) == expected


@pytest.mark.parametrize("arity", [0, 1, 3])
def test_sort_unique_of_tiny_blocks(arity):
    assert sort_unique(np.zeros((arity, 0), dtype=np.int64)).shape == (arity, 0)
    assert sort_unique(np.zeros((arity, 3), dtype=np.int64)).shape == (arity, 1)


_INT64_MAX = (1 << 63) - 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([-(1 << 63), -3, 0, 2, 5, _INT64_MAX]), max_size=12),
       st.sampled_from([-(1 << 63), -3, -1, 0, 2, 4, 5, _INT64_MAX]), st.data())
def test_galloping_finds_numpys_insertion_points(values, x, data):
    """``gallop`` and ``gallop_past`` (the plain Python of the helpers) are ``searchsorted``
    left and right from any start before the answer, the greatest int64 included."""
    haystack = np.array(sorted(values), dtype=np.int64)
    left = int(np.searchsorted(haystack, x, "left"))
    right = int(np.searchsorted(haystack, x, "right"))
    assert gallop(haystack, data.draw(st.integers(0, left)), np.int64(x)) == left
    assert gallop_past(haystack, data.draw(st.integers(0, right)), np.int64(x)) == right
