"""bf_kernels: a lane's starts and the two-step proofs read through them or by search."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.bf_kernels import NO_STARTS, lane_starts, two_step_proved
from herbrand.evaluators.incremental.two_step_proofs import sorted_by


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=30))
def test_a_lane_s_starts_bound_the_positions_of_each_value(values):
    lane = np.sort(np.array(values, dtype=np.int64))
    starts = lane_starts(lane)
    if not len(lane):
        assert not len(starts)
        return
    assert len(starts) == lane[-1] + 2
    for value in range(lane[-1] + 1):
        held = np.flatnonzero(lane == value)
        assert starts[value + 1] - starts[value] == len(held)
        assert (lane[starts[value]:starts[value + 1]] == value).all()


def test_a_lane_with_a_negative_or_sparse_value_has_no_starts():
    assert not len(lane_starts(np.array([-1, 0, 3], dtype=np.int64)))
    assert not len(lane_starts(np.array([0, 2000], dtype=np.int64)))  # 2000 >= 4 x 2 + 1024
    assert len(lane_starts(np.array([0, 1031], dtype=np.int64))) == 1033


_EDGES = st.lists(st.tuples(st.integers(-2, 12), st.integers(-2, 12)), min_size=1, max_size=25)


@settings(max_examples=80, deadline=None)
@given(_EDGES, _EDGES, st.lists(st.tuples(st.integers(-4, 16), st.integers(-4, 16)), max_size=20))
def test_two_step_proofs_are_the_same_through_starts_and_by_search(first, second, heads):
    """A head (x, z) has a proof when first holds (x, y) and second (z, y): read through each
    lane's starts (where it has them: no negative value) or by binary search, the same."""
    a = np.array(first, dtype=np.int64).T.copy()
    b = np.array(second, dtype=np.int64).T.copy()
    xs = np.array([x for x, _ in heads], dtype=np.int64)
    zs = np.array([z for _, z in heads], dtype=np.int64)
    a_lane, a_shared = sorted_by(a, 0, 1)
    b_lane, b_shared = sorted_by(b, 0, 1)
    expected = [any((x, y) in first and (z, y) in second for y in range(-2, 13))
                for x, z in heads]
    searched = two_step_proved(xs, zs, a_lane, NO_STARTS, a_shared, b_lane, NO_STARTS, b_shared)
    started = two_step_proved(xs, zs, a_lane, lane_starts(a_lane), a_shared,
                              b_lane, lane_starts(b_lane), b_shared)
    assert searched.tolist() == expected
    assert started.tolist() == expected
