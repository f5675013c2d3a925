"""``counting_refresh.refreshed`` against the same formulas over Python sets and dicts."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.counting_refresh import refreshed


def _keys(values) -> np.ndarray:
    return np.array(sorted(values), dtype=np.int64)


@st.composite
def _iterations(draw):
    """(old runs, k, D_k, the change of D_k, plus, minus): disjoint runs, counts that stay
    at least 0, and the state's invariants: D_k counts tuples of X_k (the runs 1..k),
    minus_{k-1} is in X_{k-1}, plus_{k-1} is not."""
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
    return runs, k, counts, delta, plus, minus


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


def _call(runs, k, counts, delta, plus, minus, dtype=np.int8):
    ordered = sorted(counts)
    return refreshed(_keys(ordered), np.array([counts[key] for key in ordered], dtype=dtype),
                     _keys(delta), np.array([delta[key] for key in sorted(delta)],
                                            dtype=np.int64),
                     _keys(plus), _keys(minus),
                     np.concatenate([_keys(run) for run in runs] or [_keys([])]),
                     np.cumsum([len(run) for run in runs], dtype=np.int64), k)


@settings(max_examples=300, deadline=None)
@given(_iterations())
def test_refreshed_follows_the_formulas_over_sets(case):
    summed, first, gained, dropped, plus, minus = _expected(*case)
    out = _call(*case)
    if case[3]:  # a change of D_k: D'_k written, else it is D_k (nothing copied)
        assert dict(zip(out.keys.tolist(), out.counts.tolist(), strict=True)) == summed
        assert out.keys.tolist() == sorted(summed)
    else:
        assert not len(out.keys) and not len(out.counts)
    # Δ'_k written when a tuple joins or leaves Δ_k, else it is Δ_k (nothing copied)
    assert out.first.tolist() == (sorted(first) if gained or dropped else [])
    assert (out.gained.tolist(), out.dropped.tolist()) == (sorted(gained), sorted(dropped))
    assert (out.plus.tolist(), out.minus.tolist()) == (sorted(plus), sorted(minus))
    assert out.changed == bool(gained or dropped)


def test_counts_widen_when_a_sum_needs_it_and_keep_their_type_otherwise():
    case = ([{1, 2}], 1, {1: 120, 2: 3}, {1: 10}, set(), set())
    out = _call(*case)
    assert out.counts.dtype == np.int16 and out.counts.tolist() == [130, 3]
    out = _call([{1, 2}], 1, {1: 120, 2: 3}, {1: -100}, set(), set())
    assert out.counts.dtype == np.int8 and out.counts.tolist() == [20, 3]


def test_a_count_below_zero_is_a_caller_bug():
    with pytest.raises(AssertionError, match="below zero"):
        _call([{1}], 1, {1: 1}, {1: -2}, set(), set())
