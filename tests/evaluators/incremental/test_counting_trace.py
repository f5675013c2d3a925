"""The counting engine's state: traces, their sizes, and run helpers."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental import weighted
from herbrand.evaluators.incremental.counting_trace import (
    PackedCounts,
    Trace,
    codec_of,
    run_minus,
    run_union,
    trimmed,
    without_runs,
)
from herbrand.indexes.runs import SortedRun


def _run(*rows):
    return SortedRun.from_batch(codec_of(2), np.array(rows, dtype=np.int64).T.reshape(2, -1))


_pairs = st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(_pairs, _pairs, st.booleans())
def test_run_minus_is_the_set_difference_either_way_round_and_in_either_encoding(
        mine, theirs, wide):
    if wide:  # a value too wide for 32-bit fields: both runs in columns, not packed
        mine, theirs = [*mine, (0, 1 << 40)], [*theirs, (1, 1 << 40)]
    left = run_minus(_run(*mine), _run(*theirs))
    assert left.packed == (not wide)
    assert sorted(map(tuple, left.rows().T.tolist())) == sorted(set(mine) - set(theirs))


@settings(max_examples=150, deadline=None)
@given(_pairs, _pairs, st.booleans())
def test_run_union_is_the_set_union_in_either_encoding(mine, theirs, wide):
    if wide:
        mine, theirs = [*mine, (0, 1 << 40)], [*theirs, (1, 1 << 40)]
    both = run_union(_run(*mine), _run(*theirs))
    assert both.packed == (not wide)
    assert both.rows().T.tolist() == [list(r) for r in sorted(set(mine) | set(theirs))]


def test_without_runs_removes_the_rows_of_every_run():
    left = without_runs(_run((1, 2), (3, 4), (5, 6)), [_run((1, 2)), _run((5, 6), (7, 8))])
    assert left.rows().T.tolist() == [[3, 4]]


def _packed(rows, weights) -> PackedCounts:
    return PackedCounts.of(codec_of(2), (np.array(rows, dtype=np.int64).T.reshape(2, -1),
                                         np.array(weights, dtype=np.int64)))


def test_trimmed_drops_trailing_iterations_without_counts():
    counts = [_packed([(1, 2)], [1]), _packed([], []), _packed([], [])]
    trace = trimmed(counts, [_run((1, 2)), _run(), _run()])
    assert len(trace.counts) == len(trace.firsts) == 1


def test_trace_size_counts_packed_entries_and_runs():
    trace = Trace((_packed([(1, 2), (3, 4)], [1, 2]),), (_run((1, 2), (3, 4)),))
    tuples, nbytes = trace.size()
    assert tuples == 2 and nbytes == 2 * 8 + 2 * 1 + trace.firsts[0].data.nbytes


def test_packed_counts_round_trip_and_narrow_to_the_largest_count():
    rows = [(-5, 2), (1, 2), (3, 1 << 40)]  # the last row does not fit 32-bit fields
    for chosen, weights in (([0, 1], [1, 3]), ([0, 1, 2], [1, -300, 70_000])):
        packed = _packed([rows[i] for i in chosen], weights)
        assert packed.packed == (len(chosen) == 2)
        assert packed.counts.dtype == (np.int8 if max(map(abs, weights)) < 128 else np.int32)
        decoded, counts = packed.unpacked(codec_of(2))
        assert decoded.T.tolist() == [list(rows[i]) for i in chosen]
        assert counts.tolist() == weights and counts.dtype == np.int64


def test_packed_counts_add_and_look_up_in_either_encoding():
    codec = codec_of(2)
    for big in (7, 1 << 40):  # packed keys, then plain rows (a value too wide to pack)
        counts = _packed([(1, 2), (3, big)], [2, 1])
        summed = counts.plus(codec, weighted.consolidate(
            np.array([[1, 0, 3], [2, 5, big]]), np.array([-2, 4, 1])))
        assert summed.unpacked(codec)[0].T.tolist() == [[0, 5], [3, big]]
        assert summed.counts.tolist() == [4, 2]
        probe = np.array([[3, 1, 0], [big, 2, 5]])
        assert summed.weights_of(codec, probe).tolist() == [2, 0, 4]
