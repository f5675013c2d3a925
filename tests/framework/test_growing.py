"""Append-only columns against a plain model (the concatenation of what was appended), the
views they hand out taken by ``Relation`` without a copy, and ``extends`` deciding views of
one buffer without comparing rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.framework import growing
from herbrand.framework.growing import GrowingColumns, extends
from herbrand.framework.storage import Relation

_BLOCKS = st.lists(st.integers(0, 9), min_size=0, max_size=12)


@settings(max_examples=60, deadline=None)
@given(first=st.integers(0, 5), blocks=st.lists(_BLOCKS, max_size=8), room=st.integers(0, 8))
def test_views_are_the_concatenation_so_far_and_stay_valid(first, blocks, room):
    start = np.arange(2 * first, dtype=np.int64).reshape(2, first)
    rows = GrowingColumns(start, first + room)
    model, views = [start], [(rows.columns, start)]
    for values in blocks:
        block = np.array([values, values[::-1]], dtype=np.int64).reshape(2, len(values))
        model.append(block)
        views.append((rows.append(block), np.concatenate(model, axis=1)))
    assert len(rows) == sum(part.shape[1] for part in model)
    for view, expected in views:  # earlier views unchanged by later appends and moves
        np.testing.assert_array_equal(view, expected)
        assert not view.flags.writeable
    for (before, _), (after, _) in zip(views, views[1:], strict=False):
        assert extends(after, before)


def test_relation_takes_a_view_without_copying_it():
    rows = GrowingColumns(np.arange(6, dtype=np.int64).reshape(2, 3), 10)
    view = rows.append(np.array([[7], [8]], dtype=np.int64))
    relation = Relation(view, unique=True)
    assert np.shares_memory(relation.columns, view)
    assert relation.to_rows() == [(0, 3), (1, 4), (2, 5), (7, 8)]
    # a strided view whose columns are not contiguous is still copied
    strided = Relation(np.arange(12, dtype=np.int64).reshape(2, 6)[:, ::2], unique=True)
    assert strided.columns.flags.c_contiguous and strided.to_rows() == [(0, 6), (2, 8), (4, 10)]


def test_views_of_one_buffer_extend_without_comparing_rows(monkeypatch):
    rows = GrowingColumns(np.zeros((3, 4), dtype=np.int64), 100)
    before = rows.columns
    after = rows.append(np.ones((3, 5), dtype=np.int64))

    def compared(*_):
        raise AssertionError("rows compared")

    monkeypatch.setattr(growing.np, "array_equal", compared)
    assert extends(after, before)
    assert extends(after, after[:, :0])
    assert not extends(before, after)  # shorter
    with pytest.raises(AssertionError):  # another buffer: compared
        extends(after.copy(), before)


def test_blocks_of_other_buffers_are_compared():
    base = np.arange(12, dtype=np.int64).reshape(3, 4)
    assert extends(np.concatenate([base, base], axis=1), base.copy())
    changed = np.concatenate([base, base], axis=1)
    changed[1, 2] = -1
    assert not extends(changed, base.copy())
    assert not extends(base[:2], base[:2, :2].copy()[::-1])


def test_forks_share_the_buffer_until_both_append():
    rows = GrowingColumns(np.arange(4, dtype=np.int64).reshape(2, 2), 10)
    before = rows.columns
    twin = rows.fork()
    first = twin.append(np.array([[7], [8]], dtype=np.int64))
    assert np.shares_memory(first, before)  # the first to append writes in place
    second = rows.append(np.array([[5], [6]], dtype=np.int64))
    assert not np.shares_memory(second, first)  # the other moved before writing
    assert first.tolist() == [[0, 1, 7], [2, 3, 8]] and second.tolist() == [[0, 1, 5], [2, 3, 6]]
    assert np.shares_memory(twin.append(np.zeros((2, 1), dtype=np.int64)), first)


def test_columns_may_be_given_one_by_one():
    rows = GrowingColumns([np.array([1, 2]), np.array([3, 4])], 5)
    assert rows.columns.tolist() == [[1, 2], [3, 4]] and rows.capacity == 5
    rows.writable_columns()[1, 0] = 9
    assert rows.columns.tolist() == [[1, 2], [9, 4]]


def test_a_reserved_block_is_filled_in_place_and_moves_like_an_append():
    rows = GrowingColumns(np.arange(4, dtype=np.int64).reshape(2, 2), 3)
    before = rows.columns
    block = rows.reserve(1)
    block[:] = [[7], [8]]
    assert np.shares_memory(rows.columns, before)  # room left: written in place
    assert rows.columns.tolist() == [[0, 1, 7], [2, 3, 8]] and before.shape == (2, 2)
    rows.reserve(2)[:] = [[5, 6], [5, 6]]  # no room: moved first, the rows kept
    assert not np.shares_memory(rows.columns, before)
    assert rows.columns.tolist() == [[0, 1, 7, 5, 6], [2, 3, 8, 5, 6]]
