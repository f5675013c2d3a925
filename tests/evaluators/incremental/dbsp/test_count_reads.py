"""CountReads: an update's reads of stored counts along its iterations equal fresh lookups,
and rows whose counts did not change since the last read are not looked up again."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.dbsp.count_reads import CountReads
from herbrand.evaluators.incremental.dbsp.counts import Counts
from herbrand.evaluators.incremental.dbsp.operators import accumulated
from herbrand.evaluators.incremental.dbsp.zset import ZSet
from tests.evaluators.incremental.dbsp.test_counts import streams


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 3).flatmap(lambda a: st.tuples(st.just(a), streams(a), streams(a),
                                                     streams(a, max_length=7))),
       st.sampled_from([1, 4, 10**9]))
def test_reads_along_iterations_equal_lookups(case, share):
    """Each iteration's probe (a Z-set of the rows of a random stream) reads the integrated
    stream's counts, with pending levels (share 1) or without."""
    arity, stream, changes, probes = case
    kept = Counts.PENDING_SHARE
    try:
        Counts.PENDING_SHARE = share
        counts = Counts.of(arity, stream).plus(changes)
    finally:
        Counts.PENDING_SHARE = kept
    width = max(len(stream), len(changes))
    pad = [ZSet.empty(arity)] * width
    summed = [a + b for a, b in zip([*stream, *pad][:width], [*changes, *pad][:width],
                                    strict=True)]
    reads = CountReads(counts)
    for i, probe in enumerate(probes):
        rows = ZSet.of_set(probe.rows)
        assert reads.at(rows, i).tolist() == accumulated(summed, rows, i).tolist()


def test_rows_whose_counts_hold_are_read_once(monkeypatch):
    """100 rows counted at iteration 0, ten of them changed at iteration 2: reading all at
    iterations 0 to 3 looks up 100 rows, then none, then the ten, then none."""
    rows = np.arange(100)[None, :]
    counts = Counts.of(1, [ZSet.of_set(rows), ZSet.empty(1),
                           ZSet.of(rows[:, :10], np.ones(10, dtype=np.int64))])
    looked_up = []
    reading = Counts.reading

    def counted(self, probe, i):
        looked_up.append(len(probe))
        return reading(self, probe, i)

    monkeypatch.setattr(Counts, "reading", counted)
    reads = CountReads(counts)
    got = [reads.at(ZSet.of_set(rows), i).tolist() for i in range(4)]
    assert got == [[1] * 100, [1] * 100, [2] * 10 + [1] * 90, [2] * 10 + [1] * 90]
    assert [n for n in looked_up if n] == [100, 10]
