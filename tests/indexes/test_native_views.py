"""Native views: the layouts the three tagged backings expose, the reference reader, and that
``check_native_view_matches_join`` catches a wrong view and applies to tagged backings only."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from herbrand.framework.errors import HerbrandError
from herbrand.framework.index_checks import (
    check_index,
    check_native_view_matches_join,
    index_checks,
)
from herbrand.framework.native_view import (
    HASH_RUN,
    PACKED_RUN,
    SORTED_RUN,
    NoNativeView,
    key_hash,
)
from herbrand.indexes.hash import HashIndex
from herbrand.indexes.open_hash import OpenHashIndex
from herbrand.indexes.sorted_vector import SortedVectorIndex
from herbrand.indexes.spine import SpineIndex

ROWS = np.array([[1, 1, 2, 9, -5], [10, 11, 20, 90, 7], [0, 3, 0, 3, 2**40]])


def _as_set(batch: np.ndarray) -> set[tuple]:
    return set(map(tuple, batch.T.tolist()))


@pytest.mark.parametrize("cls", [SortedVectorIndex, SpineIndex, OpenHashIndex])
@pytest.mark.parametrize("rows", [ROWS[:2], ROWS], ids=["packed", "wide"])
def test_lookup_reads_the_rows_of_a_key(cls, rows):
    index = cls(arity=rows.shape[0], key=(0,))
    index.insert(rows[:, :3])
    index.insert(rows[:, 3:])
    view = index.native_view()
    assert view.order[0] == 0 and sorted(view.order) == list(range(rows.shape[0]))
    assert _as_set(view.lookup((1,))) == _as_set(rows[:, rows[0] == 1])
    assert _as_set(view.lookup((4,))) == set()
    assert sum(run.rows for run in view.runs) == rows.shape[1]


def test_the_run_kinds_of_each_backing():
    packed = SortedVectorIndex(arity=2, key=(1,))
    packed.insert(ROWS[:2])
    wide = SortedVectorIndex(arity=3, key=(1,))
    wide.insert(ROWS)
    spine = SpineIndex(arity=2, key=(0,))
    for start, size in [(0, 64), (100, 16), (200, 4)]:  # shrinking batches stay runs
        spine.insert(np.array([np.arange(start, start + size), np.arange(size)]))
    hashed = OpenHashIndex(arity=2, key=(1,))
    hashed.insert(ROWS[:2])
    assert [run.kind for run in packed.native_view().runs] == [PACKED_RUN]
    assert [run.kind for run in wide.native_view().runs] == [SORTED_RUN]
    assert len(spine.native_view().runs) == len(spine.run_sizes()) > 1
    run = hashed.native_view().runs[0]
    assert run.kind == HASH_RUN and run.rows == 5 and hashed.native_view().order == (1, 0)
    slot = key_hash((20,)) >> (64 - (len(run.slots).bit_length() - 1))
    assert run.slots[slot] != -1  # the key's first slot: probing starts at the hash's top bits


def test_a_view_shares_the_backings_arrays():
    index = SortedVectorIndex(arity=2, key=(0,))
    index.insert(ROWS[:2])
    assert np.shares_memory(index.native_view().runs[0].data, index._main.data)
    hashed = OpenHashIndex(arity=2, key=(0,))
    hashed.insert(ROWS[:2])
    assert hashed.native_view().runs[0].data is hashed._data


def test_untagged_backings_raise_and_the_check_does_not_apply_to_them():
    with pytest.raises(NoNativeView, match="HashIndex has no native view") as raised:
        HashIndex(arity=2, key=(0,)).native_view()
    assert isinstance(raised.value, HerbrandError)
    assert "check_native_view_matches_join" not in dict(index_checks(HashIndex))
    assert "check_native_view_matches_join" in dict(index_checks(OpenHashIndex))


class _DropsARun(SpineIndex):
    """A view that loses the newest run: its rows are not reachable through the view."""

    def native_view(self):
        view = super().native_view()
        return dataclasses.replace(view, runs=view.runs[:-1])


class _Unsorted(SortedVectorIndex):
    """A sorted run whose rows are out of order: bisection misses rows."""

    def native_view(self):
        view = super().native_view()
        run = view.runs[0]
        return dataclasses.replace(view, runs=(dataclasses.replace(
            run, data=np.ascontiguousarray(run.data[:, ::-1])),))


@pytest.mark.parametrize("broken", [_DropsARun, _Unsorted])
def test_the_check_catches_a_wrong_view(broken):
    with pytest.raises(AssertionError, match="native_view"):
        check_native_view_matches_join(broken)
    outcomes = check_index(broken, expected_failures={
        "check_native_view_matches_join": "a deliberately wrong view"})
    assert outcomes["check_native_view_matches_join"].startswith("expected failure")
