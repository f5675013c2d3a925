"""SortedVectorIndex: one sorted numpy run plus an unsorted tail, merged lazily.

The paper's "regular vector that naively sorts itself before a join", made incremental: inserts
append to a tail; the first read after a write (join, range, len, rows, delete) sorts the tail,
drops its duplicates and merges it into the sorted main run with a linear numba merge that also
drops rows already present. Joins are ``np.searchsorted`` of the probe keys (left and right
bounds) and a vectorised expansion of the ranges into pairs; two 32-bit columns (generally, arity
columns of ``64 // arity`` bits) are packed into one int64 per row, and other values fall back to
the lexicographic numba search (see ``herbrand.indexes.runs``). No Python loop runs per row.

Costs, for n stored rows, a batch of m rows, m probe rows and k result pairs:

- ``insert``: O(m) (a copy appended to the tail), O(1) for a read-only batch.
- merge of a pending tail of t rows: O(t log t + n), paid by the next read.
- ``join``: O(m log n + k) after the merge.
- ``range``: O(log n) Python steps + O(k) after the merge.
- ``delete``: O(m log m + n): merge, sort the batch, search it, rebuild the run without it.
- ``len``, ``rows``: O(1) and O(n) after the merge.
- ``native_view``: O(1) after the merge: the run's array (``native``).

Not ``parallel_safe``: the lazy merge mutates the index on the first read after a write, so
concurrent joins on one instance are unsafe unless ``flush()`` was called after the last write
(joins on a flushed index only read).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from herbrand.framework.contracts import IndexBacking, IndexTags
from herbrand.framework.native_view import NativeView
from herbrand.indexes.kernels import as_batch, key_bounds, probe_key_columns, validate_key
from herbrand.indexes.runs import RowCodec, SortedRun


class SortedVectorIndex(IndexBacking):
    """Rows in one sorted, deduplicated numpy run; inserts wait in a tail until the next read."""

    tags: ClassVar[IndexTags] = IndexTags(ordered=True, supports_delete=True, native=True)

    def __init__(self, arity: int, key: tuple[int, ...]):
        super().__init__(arity, key)
        validate_key(arity, self.key)
        self._codec = RowCodec(arity, self.key)
        self._main = SortedRun.from_batch(self._codec, np.zeros((arity, 0), dtype=np.int64))
        self._tail: list[np.ndarray] = []

    @property
    def pending(self) -> int:
        """Rows waiting in the tail (duplicates included). O(batches)."""
        return sum(batch.shape[1] for batch in self._tail)

    def insert(self, rows: np.ndarray) -> None:
        """Append the batch to the tail until the next read sorts it into the run (which
        keeps no view of it). A read-only int64 batch (``flags.writeable`` unset, as
        ``Relation.columns``) is taken to be immutable and is kept as it is, in any layout
        (the sort reads it in place); a writeable one is copied (once: a batch that
        ``as_batch`` converted is its own). O(1) read-only, else O(m)."""
        batch = as_batch(rows, self.arity, contiguous=False)
        if batch.shape[1]:
            shared = batch.flags.writeable and np.may_share_memory(batch, rows)
            self._tail.append(batch.copy() if shared else batch)

    def flush(self) -> None:
        """Merge the tail into the sorted run now. O(t log t + n) for t pending rows."""
        if self._tail:
            tail = SortedRun.from_batch(self._codec, self._tail[0] if len(self._tail) == 1
                                        else np.concatenate(self._tail, axis=1))
            self._main = self._main.merge(tail)
            self._tail = []

    def join(self, probe: np.ndarray, probe_key: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Searchsorted bounds per probe row, expanded into pairs. O(m log n + k) after a flush."""
        keys = probe_key_columns(probe, probe_key, self.key)
        self.flush()
        return self._main.join(keys)

    def range(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> np.ndarray:
        """Rows with lo <= key <= hi, sorted by (key, other columns). O(log n + k) after a flush."""
        self.flush()
        return self._main.key_slice(*key_bounds(self.key, lo, hi)).rows()

    def native_view(self) -> NativeView:
        """The sorted run as a one-run NativeView (packed or columns). O(1) after a flush."""
        self.flush()
        return self._codec.view([self._main])

    def delete(self, rows: np.ndarray) -> None:
        """Rebuild the run without the batch's rows. O(m log m + n)."""
        gone = SortedRun.from_batch(self._codec, as_batch(rows, self.arity))
        self.flush()
        self._main = self._main.difference(gone)

    def __len__(self) -> int:
        """O(1) after a flush."""
        self.flush()
        return len(self._main)

    def rows(self) -> np.ndarray:
        """All rows sorted by (key, other columns). O(n) after a flush."""
        self.flush()
        return self._main.rows()

    def _check_invariants(self) -> None:
        """The run is strictly sorted in its encoding; tail batches have the index's arity."""
        self._main.check_invariants()
        for batch in self._tail:
            assert batch.dtype == np.int64 and batch.shape[0] == self.arity, batch.shape
