"""CountReads: an update's reads of stored counts along its iterations equal fresh lookups;
rows read at the last iteration are not searched for again, and scanned again only when their
counts changed since."""

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
    stream's counts, with the changes recent (share 1 and 4) or merged (10**9)."""
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


def test_rows_read_again_resume_their_runs():
    """100 rows counted at iteration 0, ten of them changed at iteration 2: reading all at
    iterations 0 to 3 searches the 100 rows once; the ten whose counts change are scanned
    again at 2 (from where the last read stopped), the others never."""
    rows = np.arange(100)[None, :]
    counts = Counts.of(1, [ZSet.of_set(rows), ZSet.empty(1),
                           ZSet.of(rows[:, :10], np.ones(10, dtype=np.int64))])
    reads = CountReads(counts)
    got, work = [], []
    for i in range(4):
        got.append(reads.at(ZSet.of_set(rows), i).tolist())
        work.append(reads.work.tolist())
    assert got == [[1] * 100, [1] * 100, [2] * 10 + [1] * 90, [2] * 10 + [1] * 90]
    assert work == [[100, 100], [100, 100], [100, 110], [100, 110]]


def test_a_read_holds_until_a_count_of_its_rows_changes():
    """Rows counted at 0 with ten of them changed at 2: the Z-set read at 0 holds at 1 but not
    at 2; another Z-set of the same rows does not hold (the circuit skips a read only when
    ΔX_i is the Z-set it read); a read skipped at 1 leaves the read at 3 right."""
    rows = np.arange(100)[None, :]
    counts = Counts.of(1, [ZSet.of_set(rows), ZSet.empty(1),
                           ZSet.of(rows[:, :10], np.ones(10, dtype=np.int64))])
    reads, probe = CountReads(counts), ZSet.of_set(rows)
    assert not reads.holds(probe, 0)
    reads.at(probe, 0)
    assert reads.holds(probe, 1) and not reads.holds(probe, 2)
    assert not reads.holds(ZSet.of_set(rows), 1)
    assert reads.at(probe, 3).tolist() == [2] * 10 + [1] * 90
    assert reads.holds(probe, 10**6)  # no count changes after 2
    empty = ZSet.empty(1)
    reads.at(empty, 5)
    assert reads.holds(empty, 6) and not reads.holds(probe, 6)


def test_a_read_does_not_hold_past_a_recent_change_of_its_rows():
    """Row 0 counted again at 1 by a recent change (not in the levels): a read at 0 does not
    hold at 1, and the read at 1 adds the recent change."""
    rows = np.arange(100)[None, :]
    counts = Counts.of(1, [ZSet.of_set(rows)]).plus([ZSet.empty(1), ZSet.of_set(rows[:, :1])])
    assert len(counts.recent) == 2
    reads, probe = CountReads(counts), ZSet.of_set(rows[:, :3])
    assert reads.at(probe, 0).tolist() == [1, 1, 1]
    assert not reads.holds(probe, 1)
    assert reads.at(probe, 1).tolist() == [2, 1, 1] and reads.holds(probe, 2)


def test_only_rows_not_read_last_are_searched():
    """Reading rows 0..49 at iteration 0, then 0..99 at 1 and 2, then 50..149 at 3, of 100
    rows counted at 0 and 1, ten more at 0 (a pending level: a smaller change came after
    them) and row 0 once more at 1 (the recent change, read from its running sum, not as a
    level): 50, 50, none and 50 rows searched for in each of the two levels."""
    rows = np.arange(100)[None, :]
    counts = Counts.of(1, [ZSet.of_set(rows), ZSet.of_set(rows)]).plus(
        [ZSet.of_set(rows[:, :10])]).plus([ZSet.empty(1), ZSet.of_set(rows[:, :1])])
    reads = CountReads(counts)
    probes = [np.arange(50), np.arange(100), np.arange(100), np.arange(50, 150)]
    got, searched = [], []
    for i, p in enumerate(probes):
        got.append(reads.at(ZSet.of_set(p[None, :]), i).tolist())
        searched.append(int(reads.work[0]))
    assert len(counts.levels(False)) == 2 and len(counts.recent) == 2
    assert got == [[2] * 10 + [1] * 40, [4] + [3] * 9 + [2] * 90, [4] + [3] * 9 + [2] * 90,
                   [2] * 50 + [0] * 50]
    assert searched == [100, 200, 200, 300]
