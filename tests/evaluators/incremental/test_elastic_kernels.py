"""The elastic kernels against the paper's terms written as numpy masks over (elements, m)
arrays of body iterations (what ``elastic_derivations`` computed before them)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.elastic_kernels import (
    CHANGE,
    GROWTH,
    REDISCOVERY,
    fold,
    members,
    terms,
    undecided_sums,
)
from herbrand.evaluators.incremental.elastic_state import NEVER

_ITERATIONS = st.sampled_from([0, 1, 2, 3, NEVER])


def _member(old, new, h, kind):
    if kind == GROWTH:
        return new == h
    return ((old <= h) & (new > h)) | ((new <= h) & (old > h))


@st.composite
def _batches(draw):
    """(old, new iteration arrays of a universe, (elements, m) positions into them, h,
    kind, seed element)."""
    n = draw(st.integers(1, 12))
    old = np.array(draw(st.lists(_ITERATIONS, min_size=n, max_size=n)), dtype=np.int64)
    new = np.array(draw(st.lists(_ITERATIONS, min_size=n, max_size=n)), dtype=np.int64)
    elements, m = draw(st.integers(1, 3)), draw(st.integers(0, 20))
    positions = np.array(draw(st.lists(st.integers(0, n - 1), min_size=elements * m,
                                       max_size=elements * m)), dtype=np.int64)
    return (old, new, positions.reshape(elements, m), draw(st.integers(0, 3)),
            draw(st.sampled_from([GROWTH, CHANGE, REDISCOVERY])),
            draw(st.integers(0, elements - 1)))


@settings(max_examples=300, deadline=None)
@given(_batches())
def test_terms_match_the_numpy_masks(batch):
    old, new, positions, h, kind, seed = batch
    m = positions.shape[1]
    most_old, most_new = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
    earlier = np.zeros(m, dtype=np.bool_)
    if kind == REDISCOVERY:
        seed = 0
    for j, row in enumerate(positions):
        fold(row, old, new, most_old, most_new, earlier, h, kind, j < seed)
    olds, news = old[positions], new[positions]
    assert most_old.tolist() == olds.max(axis=0, initial=0).tolist()
    assert most_new.tolist() == news.max(axis=0, initial=0).tolist()
    before = (_member(olds[:seed], news[:seed], h, kind).any(axis=0) if kind != REDISCOVERY
              else np.zeros(m, dtype=bool))
    assert earlier.tolist() == before.tolist()

    wanted, signs, later = terms(most_old, most_new, earlier, h, kind)
    least = np.minimum(most_old, most_new)
    if kind == REDISCOVERY:
        expected = np.where((most_old <= h) & (most_new == h), 1, 0)
        assert later.tolist() == []
    else:
        expected = np.zeros(m, dtype=np.int64)
        chosen = (least == h) & ~before
        if kind == GROWTH:
            expected[chosen & (most_new == h)] = 1
        else:
            expected[chosen & (most_old == h) & (most_new > h)] = -1
            expected[chosen & (most_new == h) & (most_old > h)] = 1
        assert later.tolist() == np.flatnonzero(least >= h).tolist()
    assert wanted.tolist() == np.flatnonzero(expected).tolist()
    assert signs.tolist() == expected[expected != 0].tolist()


@settings(max_examples=200, deadline=None)
@given(_batches())
def test_members_keeps_the_seed_set_in_order(batch):
    old, new, positions, h, kind, _ = batch
    if kind == REDISCOVERY:
        kind = CHANGE
    chosen = positions[0]
    expected = chosen[_member(old[chosen], new[chosen], h, kind)]
    assert members(chosen, old, new, h, kind).tolist() == expected.tolist()


def test_fold_reads_a_strided_row_of_positions():
    batch = np.array([[0, 1, 2], [2, 1, 0]])[:, ::-1]  # rows are strided views
    old, new = np.array([5, 6, 7]), np.array([1, 2, 3])
    most_old, most_new = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    earlier = np.zeros(3, dtype=np.bool_)
    fold(batch[1], old, new, most_old, most_new, earlier, 0, CHANGE, False)
    assert most_old.tolist() == [5, 6, 7] and most_new.tolist() == [1, 2, 3]


@settings(max_examples=200, deadline=None)
@given(st.lists(_ITERATIONS, min_size=1, max_size=12), st.integers(0, 4),
       st.lists(st.tuples(st.integers(-1, 11), st.integers(-3, 3)), max_size=40))
def test_undecided_sums_match_a_counter_of_the_undecided_positions(new, k, bag):
    """ABSENT (-1) and decided positions (new iteration below k) are skipped, the others
    summed in the order first met, zero sums kept; the scratch is left zero."""
    new = np.array(new, dtype=np.int64)
    bag = [(p % len(new) if p >= 0 else p, w) for p, w in bag]
    expected: dict[int, int] = {}
    for position, weight in bag:
        if position >= 0 and new[position] >= k:
            expected[position] = expected.get(position, 0) + weight
    slots = np.zeros(len(new), dtype=np.int32)
    at, total = undecided_sums(np.array([b[0] for b in bag], dtype=np.int64),
                               np.array([b[1] for b in bag], dtype=np.int64), new, k, slots)
    assert at.tolist() == list(expected)
    assert total.tolist() == list(expected.values())
    assert not slots.any()
