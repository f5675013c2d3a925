"""Counts: per-row running sums of a dX stream equal the sums of its Z-sets, before and after
changes are added, for packed rows, unpacked rows (values too wide to pack) and arities 0-3."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.dbsp import counts, counts_kernels
from herbrand.evaluators.incremental.dbsp.count_reads import CountReads
from herbrand.evaluators.incremental.dbsp.counts import Counts
from herbrand.evaluators.incremental.dbsp.operators import accumulated
from herbrand.evaluators.incremental.dbsp.zset import ZSet

VALUES = st.sampled_from([0, 1, 2, 3, 2**40, -(2**40)])  # the wide ones defeat packing


@st.composite
def streams(draw, arity: int, max_length: int = 5) -> list[ZSet]:
    """A stream of Z-sets (one per iteration) over a few rows."""
    rows = draw(st.lists(st.tuples(*[VALUES] * arity), min_size=1, max_size=6, unique=True))
    out = []
    for _ in range(draw(st.integers(0, max_length))):
        entries = draw(st.lists(st.tuples(st.sampled_from(rows), st.integers(-3, 3)),
                                max_size=6))
        block = np.array([list(r) for r, _ in entries], dtype=np.int64).reshape(len(entries), arity).T
        out.append(ZSet.of(block, np.array([w for _, w in entries], dtype=np.int64)))
    return out


def _sums(stream: list[ZSet], upto: int) -> dict:
    """{(row, iteration): dX[iteration](row)} of a stream's non-zero entries up to ``upto``."""
    return {(row, j): w for j, z in enumerate(stream[:upto + 1])
            for row, w in zip(map(tuple, z.rows.T.tolist()), z.weights.tolist(), strict=True)}


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 3).flatmap(lambda a: st.tuples(st.just(a), streams(a), streams(a))))
def test_counts_are_the_integrated_stream_before_and_after_changes(case):
    arity, stream, changes = case
    before = Counts.of(arity, stream)
    after = before.plus(changes)
    length = max(len(stream), len(changes))
    pad = [ZSet.empty(arity)] * length
    summed = [a + b for a, b in zip([*stream, *pad][:length], [*changes, *pad][:length],
                                    strict=True)]
    assert before.differences() == _sums(stream, len(stream))
    assert after.differences() == _sums(summed, length)
    assert len(after) >= len(after.differences())  # pending changes may repeat an entry
    probe = sum(stream + changes, ZSet.empty(arity))
    for i in range(length + 1):
        assert before.at(probe, i).tolist() == accumulated(stream, probe, i).tolist()
        assert after.at(probe, i).tolist() == accumulated(summed, probe, i).tolist()
    # exact once merged; pending changes that cancel the last iterations may leave it above
    assert after.depth >= max((j + 1 for j, z in enumerate(summed) if len(z)), default=0)
    assert before.depth == max((j + 1 for j, z in enumerate(stream) if len(z)), default=0)


def test_doctests():
    for module in (counts, counts_kernels):
        assert doctest.testmod(module).failed == 0


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 3).flatmap(lambda a: st.tuples(st.just(a), streams(a),
                                                     st.lists(streams(a), max_size=5))),
       st.sampled_from([1, 2, 4, 10**9]))
def test_levelled_changes_read_as_merged_ones(case, share):
    """Rounds of changes, kept in pending levels (a share of 1 or 2: while they are fewer
    than the entries above them) or merged at once (10**9), give the integrated stream's
    counts and differences after every round (the plain model: the streams summed)."""
    arity, stream, rounds = case
    kept = Counts.PENDING_SHARE
    try:
        Counts.PENDING_SHARE = share
        after, summed = Counts.of(arity, stream), list(stream)
        for changes in rounds:
            after, summed = after.plus(changes), counts._summed(arity, summed, changes)
            assert after.differences() == _sums(summed, len(summed))
            probe = sum(summed, ZSet.empty(arity))
            for i in range(len(summed) + 1):
                assert after.at(probe, i).tolist() == accumulated(summed, probe, i).tolist()
            assert after.depth >= max((j + 1 for j, z in enumerate(summed) if len(z)),
                                      default=0)
    finally:
        Counts.PENDING_SHARE = kept


def test_changes_that_cancel_copy_no_entries(monkeypatch):
    """A change of a tenth of the entries and its negation (an insert and its delete) meet
    in the recent changes: adding them sorts nothing into a level and merges nothing into
    the 1000 entries (a read sorts the recent ones alone), and the counts are the ones
    before (no pending or recent entries left)."""
    rows = np.arange(1000)[None, :]
    before = Counts.of(1, [ZSet.of(rows, np.ones(1000, dtype=np.int64))])
    change = [ZSet.empty(1), ZSet.of(rows[:, ::10], np.full(100, 2, dtype=np.int64))]
    copied = []
    merge = counts.counts_plus

    def counted(keys, *args):
        copied.append(len(keys))
        return merge(keys, *args)

    monkeypatch.setattr(counts, "counts_plus", counted)
    held = before.plus(change)
    assert not copied
    assert held.at(ZSet.of_set(rows), 1).tolist() == [3, 1, 1, 1, 1, 1, 1, 1, 1, 1] * 100
    assert max(copied) < 1000
    copied.clear()
    after = held.plus([-z for z in change])
    assert not copied
    assert len(after) == len(before) == 1000 and after.depth == before.depth == 1
    assert after.differences() == before.differences()
    assert after.at(ZSet.of_set(rows), 1).tolist() == [1] * 1000


def test_recent_changes_go_down_before_a_much_smaller_change():
    """A hundred recent changes, then one: the hundred are sorted into a pending level once
    (the one stays recent), so that a small update never copies a far larger recent stream;
    the counts are the summed streams'."""
    rows = np.arange(1000)[None, :]
    before = Counts.of(1, [ZSet.of(rows, np.ones(1000, dtype=np.int64))])
    many = [ZSet.of(rows[:, ::10], np.ones(100, dtype=np.int64))]
    one = [ZSet.empty(1), ZSet.of_set(rows[:, :1])]
    after = before.plus(many).plus(one)
    assert len(after.recent) == 2 and len(after.recent[1]) == 1
    assert len(after.levels(False)) == 2  # the entries and the pending level
    assert after.differences() == _sums(counts._summed(1, counts._summed(
        1, [ZSet.of(rows, np.ones(1000, dtype=np.int64))], many), one), 1)


@pytest.mark.parametrize(("weight", "width"), [(50, "i1"), (100, "i8"), (2**33, "i8")])
def test_counts_are_stored_in_the_narrowest_type_that_holds_them(weight, width):
    """The running counts (here -weight to 2 * weight) are stored in the narrowest of
    ``COUNT_TYPES`` (one byte or eight) holding them, and read as they were, by lookups and
    by an update's resumed reads."""
    stream = [ZSet.of(np.array([[1, 2, 3]]), np.array([weight, -weight, 1])),
              ZSet.of(np.array([[1, 2]]), np.array([weight, weight]))]
    stored = Counts.of(1, stream)
    assert stored.levels(False)[0][2].dtype == np.dtype(width)
    assert stored.differences() == _sums(stream, 1)
    probe, reads = ZSet.of_set(np.array([[1, 2, 3]])), CountReads(stored)
    for i, expected in enumerate([[weight, -weight, 1], [2 * weight, 0, 1]]):
        assert stored.at(probe, i).tolist() == expected
        assert reads.at(probe, i).tolist() == expected


def _running(stream: list[ZSet], arity: int) -> list[ZSet]:
    out, total = [], ZSet.empty(arity)
    for z in stream:
        total = total + z
        out.append(total)
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3).flatmap(lambda a: st.tuples(st.just(a), streams(a), streams(a))))
def test_recent_sums_are_the_running_sums_of_the_recent_changes(case):
    """Given to ``plus`` onto no recent changes, the running sums are kept (the same Z-sets);
    onto recent changes, they are summed from the summed stream; either way ``recent_sum(i)``
    is Σ recent[j] for j <= i, also past the stream's end. (The entries are many, so that
    the changes wait as recent ones.)"""
    arity, first, second = case
    counts = Counts.of(arity, [ZSet.of_set(np.arange(10, 10 + 120 * arity).reshape(arity, -1))])
    sums = _running(first, arity)
    once = counts.plus(first, sums)
    assert all(once.recent_sum(i) is sums[i] for i in range(len(once.recent)))
    twice = once.plus(second, _running(second, arity))
    for after in (once, twice):
        expected = _running(list(after.recent), arity)
        for i in range(len(expected) + 2):
            want = expected[min(i, len(expected) - 1)] if expected else ZSet.empty(arity)
            assert after.recent_sum(i) == want
