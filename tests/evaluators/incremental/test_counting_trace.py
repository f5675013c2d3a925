"""The counting engine's state: packed counts, traces and their sizes."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental import weighted
from herbrand.evaluators.incremental.counting_runs import sorted_run
from herbrand.evaluators.incremental.counting_trace import PackedCounts, Trace, trimmed
from herbrand.evaluators.incremental.row_index import identity_codec
from tests.evaluators.incremental.test_counting_runs import _run


def _packed(rows, weights) -> PackedCounts:
    return PackedCounts.of(identity_codec(2), (np.array(rows, dtype=np.int64).T.reshape(2, -1),
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
        decoded, counts = packed.unpacked(identity_codec(2))
        assert decoded.T.tolist() == [list(rows[i]) for i in chosen]
        assert counts.tolist() == weights and counts.dtype == np.int64


def test_packed_counts_add_and_look_up_in_either_encoding():
    codec = identity_codec(2)
    for big in (7, 1 << 40):  # packed keys, then plain rows (a value too wide to pack)
        counts = _packed([(1, 2), (3, big)], [2, 1])
        rows, weights = weighted.consolidate(np.array([[1, 0, 3], [2, 5, big]]),
                                             np.array([-2, 4, 1]))
        summed = counts.plus(sorted_run(codec, rows), weights)
        assert summed.unpacked(codec)[0].T.tolist() == [[0, 5], [3, big]]
        assert summed.counts.tolist() == [4, 2]
        probe = np.array([[3, 1, 0], [big, 2, 5]])
        assert summed.weights_of(codec, probe).tolist() == [2, 0, 4]
