"""The batch operations of the batch executor: the sort join's search of equal ranges."""

from __future__ import annotations

import numpy as np
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
