"""An int64 array sorted on threads equals numpy's sort, whatever the values, duplicates, skew
and number of threads; small arrays and no threads sort here."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from herbrand.framework import parallel_sort
from herbrand.framework.parallel_sort import sorted_on
from herbrand.framework.spread import Spread


@settings(max_examples=40, deadline=None)
@given(length=st.integers(0, 3_000), span=st.sampled_from([1, 7, 1_000, 1 << 62]),
       workers=st.integers(1, 4), overwrite=st.booleans(), seed=st.integers(0, 2**32 - 1))
@example(length=1, span=1, workers=2, overwrite=False, seed=0)  # a part with no values
def test_sorted_on_threads_equals_numpy(length, span, workers, overwrite, seed):
    rng = np.random.default_rng(seed)
    key = rng.integers(-span, span, length, dtype=np.int64)
    if length > 10:  # a run of one value: the pivots fall inside it
        key[: length // 2] = key[0]
    expected = np.sort(key)
    original = key.copy()
    with ThreadPoolExecutor(workers) as pool, pytest.MonkeyPatch.context() as patch:
        patch.setattr(parallel_sort, "PARALLEL_SORT_MIN", 1)  # arrays of any length cut
        result = sorted_on(key, Spread(pool, workers), overwrite=overwrite)
    assert np.array_equal(result, expected)
    if not overwrite:
        assert np.array_equal(key, original)  # left as it was


@pytest.mark.parametrize("spread_workers", [None, 1])
def test_without_threads_or_below_the_threshold_one_sort_here(spread_workers):
    key = np.array([3, 1, 2], dtype=np.int64)
    with ThreadPoolExecutor(2) as pool:
        spread = None if spread_workers is None else Spread(pool, 2)
        assert sorted_on(key, spread).tolist() == [1, 2, 3]
        assert key.tolist() == [3, 1, 2]
        assert sorted_on(key, spread, overwrite=True) is key
    assert key.tolist() == [1, 2, 3]


def test_a_large_key_sorts_on_two_threads():
    rng = np.random.default_rng(3)
    key = rng.integers(0, 1 << 40, parallel_sort.PARALLEL_SORT_MIN * 2, dtype=np.int64)
    with ThreadPoolExecutor(2) as pool:
        assert np.array_equal(sorted_on(key.copy(), Spread(pool, 2), overwrite=True),
                              np.sort(key))
