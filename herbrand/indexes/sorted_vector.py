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
- ``insert_new`` of rows known not stored (a relation's appended rows): as ``insert``, but a
  join sorts them into a run of their own, kept apart from the main one while the fresh
  runs hold at most 1 / ``FRESH_RATIO`` of its rows (at most ``FRESH_RUNS`` of them, merged
  with each other beyond): O(t log t), not the O(n) merge of a few rows into a large run (a
  row a one-fact update appends to TC graph10000's closure, 262,144 rows: 0.76 ms).
- ``join``: O(m log n + k) after the merge, plus O(m log t) per fresh run.
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

FRESH_RATIO = 16  # fresh runs are kept apart while they hold at most 1/16 of the main run's rows
FRESH_RUNS = 8  # and at most this many of them (more are merged with each other)


def _joined(batches: list[np.ndarray]) -> np.ndarray:
    return batches[0] if len(batches) == 1 else np.concatenate(batches, axis=1)


def _merged(runs: list[SortedRun]) -> SortedRun:
    """One run of the disjoint ``runs`` (at least one), the small ones merged first.
    O(their rows) per merge."""
    runs = sorted(runs, key=len)
    merged = runs[0]
    for run in runs[1:]:
        merged = merged.merge(run)
    return merged


class SortedVectorIndex(IndexBacking):
    """Rows in one sorted, deduplicated numpy run; inserts wait in a tail until the next read."""

    tags: ClassVar[IndexTags] = IndexTags(ordered=True, supports_delete=True, native=True)

    def __init__(self, arity: int, key: tuple[int, ...]):
        super().__init__(arity, key)
        validate_key(arity, self.key)
        self._codec = RowCodec(arity, self.key)
        self._main = SortedRun.from_batch(self._codec, np.zeros((arity, 0), dtype=np.int64))
        self._tail: list[np.ndarray] = []
        # rows known not stored (``insert_new``), unsorted, then sorted into fresh runs kept
        # apart from the main run (disjoint from it and from each other) until a read merges
        self._new: list[np.ndarray] = []
        self._fresh: list[SortedRun] = []

    @property
    def pending(self) -> int:
        """Rows waiting in the tails (duplicates included). O(batches)."""
        return sum(batch.shape[1] for batch in (*self._tail, *self._new))

    def insert_new(self, rows: np.ndarray) -> None:
        """``insert`` of rows known not stored: a join keeps them in a run of their own while
        it is small (see the module doc). O(1) read-only, else O(m)."""
        if self._tail:  # rows that may be stored wait already: one merge takes them all
            self.insert(rows)
            return
        batch = as_batch(rows, self.arity, contiguous=False)
        if batch.shape[1]:
            shared = batch.flags.writeable and np.may_share_memory(batch, rows)
            self._new.append(batch.copy() if shared else batch)

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
        """Merge the tails and the fresh runs into the sorted run now. O(t log t + n) for t
        pending rows."""
        self._sort_new()
        if self._tail or self._fresh:
            runs = self._fresh
            if self._tail:
                runs = [*runs, SortedRun.from_batch(self._codec, _joined(self._tail))]
            self._main = _merged([self._main, *runs])
            self._tail, self._fresh = [], []

    def _sort_new(self) -> None:
        """Sort the rows known new into a fresh run; merge the fresh runs with each other
        beyond ``FRESH_RUNS``, and into the main run once they hold more than 1 /
        ``FRESH_RATIO`` of its rows. O(t log t) for t new rows, plus those merges."""
        if not self._new:
            return
        self._fresh.append(SortedRun.from_batch(self._codec, _joined(self._new)))
        self._new = []
        if len(self._fresh) > FRESH_RUNS:
            self._fresh = [_merged(self._fresh)]
        if sum(len(run) for run in self._fresh) * FRESH_RATIO > len(self._main):
            self._main = _merged([self._main, *self._fresh])
            self._fresh = []

    def join(self, probe: np.ndarray, probe_key: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Searchsorted bounds per probe row, expanded into pairs, in the main run and in each
        fresh run. O(m log n + k) after a flush of the tail."""
        keys = probe_key_columns(probe, probe_key, self.key)
        if self._tail:
            self.flush()
        self._sort_new()
        if not self._fresh:
            return self._main.join(keys)
        parts = [run.join(keys) for run in (self._main, *self._fresh)]
        return (np.concatenate([positions for positions, _ in parts]),
                np.concatenate([rows for _, rows in parts], axis=1))

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
        """The runs are strictly sorted in their encoding; tail batches have the index's
        arity."""
        self._main.check_invariants()
        for run in self._fresh:
            run.check_invariants()
        for batch in (*self._tail, *self._new):
            assert batch.dtype == np.int64 and batch.shape[0] == self.arity, batch.shape
