"""One update's reads of a relation's stored counts, iteration after iteration.

At iteration i an update reads X_i (``Counts.at``) of every row of its change ΔX_i, and on a
deep recursion ΔX_i holds many of the rows of ΔX_{i-1} (TC over graph10000, 1% insert: 26k
of 46.6k rows at iteration 3, 43.7k of 44.6k at iteration 4). A row's count read at iteration
j holds until the next iteration at which its dX has an entry (``Counts.reading``), and its
entries at later iterations follow, in its run, the last one read. So ``CountReads`` keeps
the rows read at the last iteration with their counts, those iterations and, per level of the
counts, where the row's scan stopped: a row read again whose count holds is not looked up,
one whose count changed since scans on from there, and only the rows not read at the last
iteration are searched for among the entries (by galloping: O(s log(N / s)), scattered over
N entries); one kernel pass per level (``counts_resumed``).

The recent changes of the counts (``Counts.recent``: dX not yet in the levels, one Z-set per
iteration) are not sorted into a level of their own (TC over graph10000: the 89k entries of a
1% insert, sorted when the delete that follows first reads them, then searched for every row
besides the entries): each read looks its rows up in their sum up to i by one galloping pass
(``Counts.recent_sum``: the running sums of the update that made them, ΔX_i, kept with them;
or grown by one merge per iteration when they sum several updates' changes).
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.dbsp.counts import Counts
from herbrand.evaluators.incremental.dbsp.counts_kernels import NEVER, counts_resumed
from herbrand.evaluators.incremental.dbsp.zset import ZSet

_EMPTY = np.zeros(0, dtype=np.int64)


class CountReads:
    """X_i of the rows of ``counts`` an update reads at iterations i = 0, 1, ... (in order)."""

    def __init__(self, counts: Counts):
        self.counts = counts
        self._keys = _EMPTY  # the rows of the last read (sorted keys)
        self._found = _EMPTY  # their counts
        self._until = _EMPTY  # the iteration their counts change at
        self._ends: list[np.ndarray] = []  # per level, the position where their scans stopped
        self._rows: ZSet | None = None  # the Z-set read last (None: looked up in full)
        self._settled = NEVER  # the first iteration at which a count read last changes
        self._read_at = -1  # the iteration of the last read
        self._recent = counts.recent
        # summed over the levels and calls: the rows searched for among the entries, and the
        # rows whose runs were scanned (for tests and statistics)
        self.work = np.zeros(2, dtype=np.int64)

    def at(self, rows: ZSet, i: int) -> np.ndarray:
        """``counts.at(rows, i)``; ``i`` at least that of the last call. Of the rows read
        last, those whose counts hold are not looked up and the others resume their scans;
        the rest are searched for. Rows not encoded in one key are looked up in full every
        time. Per level of the counts, O(m log(m' / m) + s log(N / s) + the entries scanned)
        for m rows, m' read last, s of them not read last, and N entries."""
        data, packed = rows.encoded()
        levels = self.counts.levels(packed) if data.shape[0] == 1 else None
        if levels is None:
            self._rows = None
            return self.counts.at(rows, i)
        keys, m = data[0], len(rows)
        found, until = np.zeros(m, dtype=np.int64), np.full(m, NEVER, dtype=np.int64)
        ends = [np.empty(m, dtype=np.int64) for _ in levels]
        last_ends = self._ends or [_EMPTY] * len(levels)
        for (level, iterations, counts), level_ends, before in zip(levels, ends, last_ends,
                                                                   strict=True):
            counts_resumed(level, iterations, counts, keys, self._keys, self._found,
                           self._until, before, i, found, until, level_ends, self.work)
        self._keys, self._found, self._until, self._ends = keys, found, until, ends
        self._rows, self._settled, self._read_at = rows, int(until.min()) if m else NEVER, i
        recent = self.counts.recent_sum(i)
        return found + recent.weights_at(rows) if len(recent) else found

    def holds(self, rows: ZSet, i: int) -> bool:
        """Whether ``at(rows, i)`` would return the counts of the last read: ``rows`` is the
        Z-set read last and none of its rows' counts changes by iteration ``i`` (in the
        levels, nor in the recent changes since the last read). Skipping that read leaves
        the next one resuming from the last. O(i - the last read's iteration)."""
        return (rows is self._rows and i < self._settled
                and not any(len(z) for z in self._recent[self._read_at + 1:i + 1]))

    def settled(self, rows: ZSet) -> bool:
        """Whether ``holds(rows, i)`` for every later iteration i: no count of the rows read
        last changes after that read. O(the recent changes' iterations)."""
        return (rows is self._rows and self._settled == NEVER
                and not any(len(z) for z in self._recent[self._read_at + 1:]))
