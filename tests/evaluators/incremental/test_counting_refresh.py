"""``counting_refresh.refreshed`` against the same formulas over Python sets and dicts."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.counting_refresh import _gallop_near, refreshed
from herbrand.evaluators.incremental.counting_trace import PackedCounts


def _keys(values) -> np.ndarray:
    return np.array(sorted(values), dtype=np.int64)


@st.composite
def _iterations(draw):
    """(old runs, k, D_k, the change of D_k, plus, minus, D_k's layout): disjoint runs,
    counts that stay at least 0, and the state's invariants: D_k counts tuples of X_k (the
    runs 1..k), minus_{k-1} is in X_{k-1}, plus_{k-1} is not. The layout: the keys of D_k
    kept pending (outside the base), and base keys of count 0 (zeros: any other keys)."""
    universe = draw(st.lists(st.integers(-30, 30), unique=True, max_size=40))
    runs = [set() for _ in range(draw(st.integers(0, 4)))]
    for value in universe:
        at = draw(st.integers(-1, len(runs) - 1))
        if at >= 0:
            runs[at].add(value)
    k = draw(st.integers(1, len(runs) + 2))
    earlier = set().union(*runs[:k - 1])
    counted = sorted(earlier | (runs[k - 1] if k <= len(runs) else set()))
    counts = draw(st.dictionaries(st.sampled_from(counted), st.integers(1, 120), max_size=20)
                  ) if counted else {}
    delta = {}
    for value in draw(st.sets(st.integers(-30, 30), max_size=20)):
        low = -counts.get(value, 0)
        weight = draw(st.integers(low, 10).filter(lambda w: w != 0))
        delta[value] = weight
    outside = sorted(set(universe) - earlier)
    plus = draw(st.sets(st.sampled_from(outside), max_size=8)) if outside else set()
    minus = draw(st.sets(st.sampled_from(sorted(earlier)), max_size=8)) if earlier else set()
    pending = draw(st.sets(st.sampled_from(sorted(counts)), max_size=6)) if counts else set()
    zeros = draw(st.sets(st.integers(-30, 30).filter(lambda key: key not in counts),
                         max_size=6))
    return runs, k, counts, delta, plus, minus, (pending, zeros)


def _expected(runs, k, counts, delta, plus, minus):
    summed = {key: counts.get(key, 0) + delta.get(key, 0) for key in counts.keys() | delta}
    summed = {key: count for key, count in summed.items() if count}
    earlier = set().union(*runs[:k - 1])
    first = runs[k - 1] if k <= len(runs) else set()
    gained, dropped, new_plus, new_minus = set(), set(), set(), set()
    for key in delta.keys() | plus | minus:
        was_in, was_first = key in earlier, key in first
        is_in = (was_in and key not in minus) or key in plus
        entering = summed.get(key, 0) > 0 and not is_in
        gain, drop = entering and not was_first, was_first and not entering
        gained |= {key} if gain else set()
        dropped |= {key} if drop else set()
        if (key in plus and not was_first) or (gain and not was_in):
            new_plus.add(key)
        if (key in minus and not entering) or (drop and not is_in):
            new_minus.add(key)
    return summed, (first - dropped) | gained, gained, dropped, new_plus, new_minus


def _packed(counts, layout=(set(), set()), dtype=np.int8) -> PackedCounts:
    """D_k of ``counts`` (key -> count) with the ``layout`` of ``_iterations``."""
    pending, zeros = layout
    base = sorted((counts.keys() - pending) | zeros)
    return PackedCounts(_keys(base)[None, :], True,
                        np.array([counts.get(key, 0) for key in base], dtype=dtype),
                        (_keys(pending), np.array([counts[key] for key in sorted(pending)],
                                                  dtype=dtype)) if pending else None,
                        len(zeros))


def _call(runs, k, counts, delta, plus, minus, layout=(set(), set()), dtype=np.int8,
          packed=None):
    """``refreshed`` of D_k = ``counts`` (``packed``, or packed with ``layout``)."""
    return refreshed(_packed(counts, layout, dtype) if packed is None else packed, _keys(delta),
                     np.array([delta[key] for key in sorted(delta)], dtype=np.int64),
                     _keys(plus), _keys(minus),
                     np.concatenate([_keys(run) for run in runs] or [_keys([])]),
                     np.cumsum([len(run) for run in runs], dtype=np.int64), k)


def _committed(out) -> dict[int, int]:
    """D'_k once its patch is written, as key -> count (entries of count 0 left out)."""
    if out.patch is not None:
        counts, positions, values = out.patch
        counts[positions] = values
    whole = out.counts.consolidated()
    assert len(whole) == len(out.counts)
    return dict(zip(whole.data[0].tolist(), whole.counts.tolist(), strict=True))


@settings(max_examples=300, deadline=None)
@given(_iterations(), st.sampled_from([0, 64]))
def test_refreshed_follows_the_formulas_over_sets(case, least):
    """Whether D'_k is a new base (``least`` 0: a budget that little changes overflows) or
    D_k's patched (the old base unchanged until the patch is written), the same sets."""
    summed, first, gained, dropped, plus, minus = _expected(*case[:6])
    old = _packed(case[2], case[6])
    before = old.counts.copy()
    with mock.patch.object(PackedCounts, "PENDING_LEAST", least):
        out = _call(*case, packed=old)
    assert (old.counts == before).all()
    if not case[3]:  # no change of D_k: it is D_k (nothing copied)
        assert out.patch is None and out.counts is old
    assert _committed(out) == summed
    # Δ'_k written when a tuple joins or leaves Δ_k, else it is Δ_k (nothing copied)
    assert out.first.tolist() == (sorted(first) if gained or dropped else [])
    assert (out.gained.tolist(), out.dropped.tolist()) == (sorted(gained), sorted(dropped))
    assert (out.plus.tolist(), out.minus.tolist()) == (sorted(plus), sorted(minus))
    assert out.changed == bool(gained or dropped)
    # where they move: Δ_k without the dropped positions, the gained at their places
    old_first = _keys(case[0][case[1] - 1] if case[1] <= len(case[0]) else [])
    moved = np.insert(np.delete(old_first, out.left), out.kept_before, out.gained)
    assert moved.tolist() == sorted(first)


@settings(max_examples=200, deadline=None)
@given(_iterations())
def test_a_change_within_plus_and_minus_refreshes_the_same_with_delta_k_alone(case):
    """``Walk._searched_runs``: when every key of D_k's change is of plus_{k-1} or
    minus_{k-1} (or there is none), so is every touched tuple, no earlier run is searched,
    and Δ_k alone, passed as the run of an iteration 1, gives what every old run gives."""
    runs, k, counts, delta, plus, minus, layout = case
    delta = {key: weight for key, weight in delta.items() if key in plus | minus}
    whole = _call(runs, k, counts, delta, plus, minus, layout)
    first = runs[k - 1] if k <= len(runs) else set()
    alone = _call([first], 1, counts, delta, plus, minus, layout)
    for field in ("first", "plus", "minus", "gained", "dropped", "left", "kept_before"):
        assert getattr(alone, field).tolist() == getattr(whole, field).tolist(), field
    assert _committed(alone) == _committed(whole)


def test_only_keys_counted_before_and_after_outside_plus_and_minus_keep_their_place():
    # X_1 = {1, 2}, Δ_2 = {3, 4, 5}, minus_1 = {2}, plus_1 = {4}; D_2's change: 1 and 5
    # stay counted (out of Δ_2 and in it: neither moves, their search is skipped), 3 drops
    # to 0 (leaves Δ_2, in minus_2), 2 and 4 stay counted but X'_1 lacks 2 (joins Δ'_2)
    # and holds 4 (leaves it), 6 is new (joins it, in plus_2)
    case = ([{1, 2}, {3, 4, 5}], 2, {1: 2, 2: 1, 3: 1, 4: 2, 5: 3},
            {1: 1, 2: 1, 3: -1, 4: 1, 5: -2, 6: 1}, {4}, {2})
    out = _call(*case)
    assert (out.gained.tolist(), out.dropped.tolist()) == ([2, 6], [3, 4])
    assert out.first.tolist() == [2, 5, 6]
    assert (out.plus.tolist(), out.minus.tolist()) == ([6], [3])
    summed, first, gained, dropped, plus, minus = _expected(*case)
    assert (sorted(first), sorted(plus), sorted(minus)) == ([2, 5, 6], [6], [3])
    assert _committed(out) == summed


def test_a_change_within_the_budget_patches_the_base_and_keeps_new_keys_pending():
    # D_1 = {1: 2, 3: 1, 5: 1}; the change: 3 drops to 0 (a zero of the base), 4 is new
    out = _call([{1, 3, 5}], 1, {1: 2, 3: 1, 5: 1}, {3: -1, 4: 2}, set(), set())
    base, positions, values = out.patch
    assert out.counts.counts is base and (positions.tolist(), values.tolist()) == ([1], [0])
    assert out.counts.pending[0].tolist() == [4] and out.counts.zeros == 1
    assert _committed(out) == {1: 2, 4: 2, 5: 1}
    with mock.patch.object(PackedCounts, "PENDING_LEAST", 1):  # over the budget: merged
        out = _call([{1, 3, 5}], 1, {1: 2, 3: 1, 5: 1}, {3: -1, 4: 2}, set(), set())
    assert out.patch is None and out.counts.pending is None and not out.counts.zeros
    assert out.counts.data[0].tolist() == [1, 4, 5]


def test_counts_widen_when_a_sum_needs_it_and_keep_their_type_otherwise():
    case = ([{1, 2}], 1, {1: 120, 2: 3}, {1: 10}, set(), set(), ({2}, set()))
    out = _call(*case)
    assert out.counts.counts.dtype == out.counts.pending[1].dtype == np.int16
    assert _committed(out) == {1: 130, 2: 3}
    out = _call([{1, 2}], 1, {1: 120, 2: 3}, {1: -100}, set(), set())
    assert out.counts.counts.dtype == np.int8 and _committed(out) == {1: 20, 2: 3}


def test_a_count_below_zero_is_a_caller_bug():
    with pytest.raises(AssertionError, match="below zero"):
        _call([{1}], 1, {1: 1}, {1: -2}, set(), set())


def test_gallop_near_finds_the_left_insertion_position():
    """Every start ``lo`` at or before the position, every end ``hi`` and key, over keys
    with repeats that are longer than two windows: within the window, past it, at ``hi``,
    beyond the keys, the position of ``np.searchsorted`` (the kernel run as Python)."""
    haystack = np.repeat(np.arange(0, 40, 2, dtype=np.int64), [1, 2, 1, 3] * 5)
    for hi in range(len(haystack) + 1):
        for x in range(-1, 42):
            position = int(np.searchsorted(haystack[:hi], x))
            for lo in range(position + 1):
                assert _gallop_near(haystack, lo, hi, x) == position
