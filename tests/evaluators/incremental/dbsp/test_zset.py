"""Z-sets: the group laws, consolidation, lookups and the incremental distinct."""

from __future__ import annotations

import doctest

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.dbsp import zset, zset_kernels
from herbrand.evaluators.incremental.dbsp.zset import ZSet, incremental_distinct, summed

weights = st.integers(-3, 3)
zsets = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), weights), max_size=12).map(
    lambda entries: ZSet.of(np.array([[a for a, _, _ in entries], [b for _, b, _ in entries]],
                                     dtype=np.int64).reshape(2, -1),
                            np.array([w for _, _, w in entries], dtype=np.int64)))


def _as_dict(z: ZSet) -> dict:
    return dict(zip(map(tuple, z.rows.T.tolist()), z.weights.tolist(), strict=True))


@settings(max_examples=60, deadline=None)
@given(zsets, zsets, zsets)
def test_group_laws(a, b, c):
    zero = ZSet.empty(2)
    assert a + b == b + a
    assert (a + b) + c == a + (b + c)
    assert a + zero == a
    assert not len(a + (-a))
    assert a - b == a + (-b)


@settings(max_examples=60, deadline=None)
@given(zsets)
def test_consolidation_sums_equal_rows_and_drops_zeros(z):
    entries = _as_dict(z)
    assert 0 not in entries.values()
    assert len(entries) == len(z)
    doubled = ZSet.of(np.concatenate([z.rows, z.rows], axis=1),
                      np.concatenate([z.weights, z.weights]))
    assert _as_dict(doubled) == {row: 2 * w for row, w in entries.items()}


@settings(max_examples=60, deadline=None)
@given(zsets, zsets)
def test_weights_of_and_incremental_distinct_match_the_definitions(a, delta):
    entries, changes = _as_dict(a), _as_dict(delta)
    assert a.weights_of(delta.rows).tolist() == [entries.get(r, 0) for r in changes]
    assert a.weights_at(delta).tolist() == [entries.get(r, 0) for r in changes]
    out = _as_dict(incremental_distinct(a.weights_of(delta.rows), delta))
    before = {r for r, w in entries.items() if w > 0}
    after = {r for r, w in _as_dict(a + delta).items() if w > 0}
    assert out == {**{r: 1 for r in after - before}, **{r: -1 for r in before - after}}


wide = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(-2**40, 2**40),
                          weights), max_size=12).map(  # too wide to pack
    lambda entries: ZSet.of(np.array([list(e[:3]) for e in entries],
                                     dtype=np.int64).T.reshape(3, -1),
                            np.array([e[3] for e in entries], dtype=np.int64)))
large = st.integers(0, 40).map(lambda n: ZSet.of(
    np.array([np.arange(200) // 50, np.arange(200) % 50 + n]), np.ones(200, dtype=np.int64)))


@settings(max_examples=80, deadline=None)
@given(st.one_of(zsets, large), st.lists(zsets, max_size=5))
def test_summed_is_the_parts_sum_and_the_total_plus_it(total, parts):
    """Up to five parts (more than the kernel's three are summed first), onto small totals
    (one pass) and onto totals over ``_MERGE_RATIO`` times the parts (the parts summed, then
    added); the sums one by one are the reference."""
    delta, after = summed(total, parts)
    expected = ZSet.empty(2)
    for part in parts:
        expected = expected + part
    assert _as_dict(delta) == _as_dict(expected)
    assert _as_dict(after) == _as_dict(total + expected)


@settings(max_examples=30, deadline=None)
@given(wide, st.lists(wide, max_size=4))
def test_summed_of_unpacked_rows_sums_one_by_one(total, parts):
    delta, after = summed(total, parts)
    expected = ZSet.empty(3)
    for part in parts:
        expected = expected + part
    assert _as_dict(delta) == _as_dict(expected) and _as_dict(after) == _as_dict(total + expected)


# weighted runs of strictly ascending keys, among them the extreme int64s (the kernel holds an
# exhausted run's head as the largest)
_EXTREMES = [np.iinfo(np.int64).min, -1, 0, 3, 7, np.iinfo(np.int64).max - 1,
             np.iinfo(np.int64).max]
runs = st.dictionaries(st.sampled_from(_EXTREMES) | st.integers(-8, 8), weights,
                       max_size=8).map(
    lambda entries: (np.array(sorted(entries), dtype=np.int64),
                     np.array([entries[k] for k in sorted(entries)], dtype=np.int64)))


@settings(max_examples=150, deadline=None)
@given(runs, runs, runs, runs)
def test_sums_kernel_adds_four_runs_up_to_the_largest_int64(a, b, c, total):
    """δ = a + b + c and total + δ by one dict per key (zero weights in a run included, and
    keys equal to the largest int64, which the loop sums after it)."""
    delta: dict[int, int] = {}
    for keys, ws in (a, b, c):
        for key, w in zip(keys.tolist(), ws.tolist(), strict=True):
            delta[key] = delta.get(key, 0) + w
    after = dict(delta)
    for key, w in zip(total[0].tolist(), total[1].tolist(), strict=True):
        after[key] = after.get(key, 0) + w
    dk, dw, tk, tw = zset_kernels.sums(*a, *b, *c, *total)
    for keys, ws, expected in ((dk, dw, delta), (tk, tw, after)):
        assert keys.tolist() == sorted(k for k, w in expected.items() if w)
        assert ws.tolist() == [expected[k] for k in keys.tolist()]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_EXTREMES) | st.integers(-3, 3), weights),
                max_size=16))
def test_run_sums_kernel_sums_each_run_of_sorted_keys(entries):
    """Ascending keys with repeats (runs of one key at either end, the int64 extremes
    included, and none at all): each distinct key once, in order, with its weights' sum,
    zero sums kept."""
    entries = sorted(entries, key=lambda e: e[0])
    expected: dict[int, int] = {}
    for key, w in entries:
        expected[key] = expected.get(key, 0) + w
    keys, ws = zset_kernels.run_sums(np.array([k for k, _ in entries], dtype=np.int64),
                                     np.array([w for _, w in entries], dtype=np.int64))
    assert keys.tolist() == sorted(expected)
    assert ws.tolist() == [expected[k] for k in sorted(expected)]


def test_distinct_positive_negative_and_change():
    z = ZSet.of(np.array([[1, 2, 3]]), np.array([2, -1, 1]))
    assert sorted(z.distinct().to_rows()) == [(1,), (3,)]
    assert z.negative().tolist() == [[2]]
    change = ZSet.change(np.array([[5]]), np.array([[6]]))
    assert _as_dict(change) == {(5,): 1, (6,): -1}


def test_doctests():
    for module in (zset, zset_kernels):
        assert doctest.testmod(module).failed == 0


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-2**31, 2**31 - 1) | st.integers(-2**40, 2**40),
                          st.integers(0, 4), weights),
                max_size=12), st.booleans(), st.sampled_from([None, -2, 1]))
def test_consolidation_of_sorted_or_wide_rows_matches_a_dict(entries, presorted, shared):
    """Rows given in order (kept without a sort) or not, packed or with values too wide to
    pack, with one weight shared by all (keys sorted alone) or not: the same consolidation
    as a plain dict of summed weights."""
    if presorted:
        entries = sorted(entries)
    if shared is not None:
        entries = [(a, b, shared) for a, b, _ in entries]
    rows = np.array([[a for a, _, _ in entries], [b for _, b, _ in entries]],
                    dtype=np.int64).reshape(2, -1)
    z = ZSet.of(rows, np.array([w for _, _, w in entries], dtype=np.int64))
    expected: dict = {}
    for a, b, w in entries:
        expected[(a, b)] = expected.get((a, b), 0) + w
    assert _as_dict(z) == {row: w for row, w in expected.items() if w}
    assert z.rows.T.tolist() == sorted(map(list, _as_dict(z)))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 5), weights), max_size=12), st.booleans())
def test_consolidation_of_one_column_matches_a_dict(entries, shared):
    """One column (never packed: its values are the keys), with or without a shared weight."""
    if shared:
        entries = [(a, 3) for a, _ in entries]
    z = ZSet.of(np.array([[a for a, _ in entries]], dtype=np.int64).reshape(1, -1),
                np.array([w for _, w in entries], dtype=np.int64))
    expected: dict = {}
    for a, w in entries:
        expected[(a,)] = expected.get((a,), 0) + w
    assert _as_dict(z) == {row: w for row, w in expected.items() if w}
    assert z.rows[0].tolist() == sorted(a for (a,) in _as_dict(z))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-5, 5) | st.integers(-2**63, 2**63 - 1), max_size=40))
def test_sorted_order_is_a_stable_sort(keys):
    """Narrow keys (packed with their positions into one sort) and keys spanning the int64
    range (a stable argsort): the sorted keys and the stable permutation."""
    keys = np.array(keys, dtype=np.int64)
    ordered, order = zset.sorted_order(keys)
    assert order.tolist() == np.argsort(keys, kind="stable").tolist()
    assert ordered.tolist() == sorted(keys.tolist())


def test_rows_of_an_empty_z_set_are_an_empty_block_of_its_arity():
    """Packed or not, a Z-set without rows gives an (arity, 0) int64 block (not unpacked)."""
    for arity in range(4):
        z = ZSet.of(np.arange(3 * arity).reshape(arity, 3), np.ones(3, dtype=np.int64))
        for empty in (ZSet.empty(arity), z.where(np.zeros(len(z), dtype=bool)), z - z):
            assert empty.rows.shape == (arity, 0) and empty.rows.dtype == np.int64
            assert not empty.positive().shape[1] and not empty.negative().shape[1]
