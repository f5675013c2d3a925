"""The batch operations of the batch executor: the sort join's search of equal ranges, columns."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from herbrand.evaluators import batch_joins


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-5, 40), max_size=30),
       st.lists(st.integers(-2**63, 2**63 - 1) | st.integers(-5, 40), max_size=30))
@example([-2**63, -2**63 + 1], [-2**63, 5, -2**63 + 1])  # the range starts at int64's least
def test_equal_ranges_match_binary_searches(ordered, keys):
    ordered, keys = np.sort(np.array(ordered, dtype=np.int64)), np.array(keys, dtype=np.int64)
    starts, lengths = batch_joins.equal_ranges(ordered, keys)
    lo = np.searchsorted(ordered, keys, side="left")
    expected = np.searchsorted(ordered, keys, side="right") - lo
    assert lengths.tolist() == expected.tolist()
    assert starts[lengths > 0].tolist() == lo[lengths > 0].tolist()


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4), st.integers(0, 150), st.integers(0, 8), st.data())
def test_columns_at_are_the_fancy_indexed_columns_of_any_batch(arity, n, spare, data):
    """Of a C-contiguous batch and of a view of a wider buffer's first columns (not
    contiguous: gathered a row at a time from ``ROWWISE_COLUMNS`` columns), by column
    indexes (repeated, in any order) and by a mask; always a new C-contiguous batch."""
    buffer = np.arange((arity + 1) * (n + spare), dtype=np.int64).reshape(arity + 1, n + spare)
    at = np.array(data.draw(st.lists(st.integers(0, n - 1), max_size=150)) if n else [],
                  dtype=np.int64)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    for batch in (np.ascontiguousarray(buffer[:arity, :n]), buffer[:arity, :n]):
        for chosen in (at, mask):
            columns = batch_joins.columns_at(batch, chosen)
            assert columns.flags.c_contiguous and columns.shape[0] == arity
            assert columns.tolist() == batch[:, chosen].tolist()
            assert not np.shares_memory(columns, buffer)


def test_columns_at_gathers_many_columns_of_a_batch_that_is_not_contiguous_a_row_at_a_time():
    """From ``ROWWISE_COLUMNS`` chosen columns of a view of a growing buffer's rows: by
    indexes, by a mask's positions, and by a mask leaving out at most 1 / ``DENSE_MASK`` of
    the columns (a boolean index) or just more."""
    rng = np.random.default_rng(3)
    buffer = rng.integers(-1000, 1000, (4, 300))
    batch = buffer[:3, :250]
    at = rng.integers(0, 250, 2 * batch_joins.ROWWISE_COLUMNS)
    mask = rng.random(250) < 0.5
    dense, sparser = np.ones(250, dtype=bool), np.ones(250, dtype=bool)
    dense[[7, 100, 249]] = False  # 250 // DENSE_MASK = 3 left out
    sparser[[0, 7, 100, 249]] = False
    for chosen in (at, mask, dense, sparser):
        columns = batch_joins.columns_at(batch, chosen)
        assert columns.flags.c_contiguous
        assert columns.tolist() == batch[:, chosen].tolist()


def test_columns_at_refuses_a_mask_of_another_length_as_numpy_s_index_does():
    batch = np.arange(12, dtype=np.int64).reshape(3, 4)
    for short in (np.array([True, False]), np.ones(5, dtype=bool)):
        with pytest.raises(IndexError):
            batch[:, short]
        with pytest.raises(IndexError):
            batch_joins.columns_at(batch, short)
