"""One update's reads of a relation's stored counts, iteration after iteration.

At iteration i an update reads X_i (``Counts.at``) of every row of its change ΔX_i, and on a
deep recursion ΔX_i holds mostly the rows of ΔX_{i-1} (TC over graph10000, 1% insert: 44.6k
and 44.5k rows at the last two iterations), whose stored counts rarely change from one
iteration to the next (the old stream dX has entries at iteration 5 for 106 of them). A row's
count read at iteration j holds until the next iteration at which its dX has an entry
(``Counts.reading``), so ``CountReads`` keeps the rows read at the last iteration with their
counts and those iterations, and looks up only the others: a galloping search of the sorted
keys of ΔX_i among those of the last read (O(m log(m' / m) + m), sequential) in place of one
per level of the counts (O(m log(N / m)), scattered over N entries).
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.counting_merge import sorted_positions
from herbrand.evaluators.incremental.dbsp.counts import Counts
from herbrand.evaluators.incremental.dbsp.zset import ZSet


class CountReads:
    """X_i of the rows of ``counts`` an update reads at iterations i = 0, 1, ... (in order)."""

    def __init__(self, counts: Counts):
        self.counts = counts
        self._keys = np.zeros(0, dtype=np.int64)  # the rows of the last read (sorted keys)
        self._found = self._keys  # their counts
        self._until = self._keys  # the iteration their counts change at

    def at(self, rows: ZSet, i: int) -> np.ndarray:
        """``counts.at(rows, i)``; ``i`` at least that of the last call. The rows read last,
        whose counts do not change between then and i, are not looked up again, unless they
        are under half of ``rows`` (then all are: the search among them would cost more than
        it saves), and rows not encoded in one key are looked up every time."""
        data, packed = rows.encoded()
        if (data.shape[0] != 1 or not len(rows)
                or 2 * np.count_nonzero(self._until > i) < len(rows)):
            return self._read(rows, data, i)  # most would be looked up again anyway
        keys = data[0]
        at = np.minimum(sorted_positions(self._keys, keys), len(self._keys) - 1)
        until = self._until[at]
        missed = np.flatnonzero((self._keys[at] != keys) | (until <= i))
        found = self._found[at]
        if len(missed):
            found[missed], until[missed] = self.counts.reading(ZSet(
                rows.arity, data[:, missed], packed, rows.weights[missed]), i)
        self._keys, self._found, self._until = keys, found, until
        return found

    def _read(self, rows: ZSet, data: np.ndarray, i: int) -> np.ndarray:
        found, until = self.counts.reading(rows, i)
        if data.shape[0] == 1:
            self._keys, self._found, self._until = data[0], found, until
        return found
