"""The counting engine's state: traces, their sizes, and run helpers."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental import weighted
from herbrand.evaluators.incremental.counting_trace import (
    Trace,
    codec_of,
    trimmed,
    without_runs,
)
from herbrand.indexes.runs import SortedRun


def _run(*rows):
    return SortedRun.from_batch(codec_of(2), np.array(rows, dtype=np.int64).T.reshape(2, -1))


def test_without_runs_removes_the_rows_of_every_run():
    left = without_runs(_run((1, 2), (3, 4), (5, 6)), [_run((1, 2)), _run((5, 6), (7, 8))])
    assert left.rows().T.tolist() == [[3, 4]]


def test_trimmed_drops_trailing_iterations_without_counts():
    counts = [weighted.bag(np.array([[1], [2]])), weighted.empty(2), weighted.empty(2)]
    trace = trimmed(counts, [_run((1, 2)), _run(), _run()])
    assert len(trace.counts) == len(trace.firsts) == 1


def test_trace_size_counts_entries_and_runs():
    trace = Trace((weighted.bag(np.array([[1, 3], [2, 4]])),), (_run((1, 2), (3, 4)),))
    tuples, nbytes = trace.size()
    assert tuples == 2 and nbytes == 2 * 16 + 2 * 8 + trace.firsts[0].data.nbytes
