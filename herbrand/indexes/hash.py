"""HashIndex: a dict from key tuples to buckets of rows, plus a set of all rows for dedup.

The paper's HashMap index. A bucket holds its rows as a growable (arity, capacity) numpy buffer
(capacity doubles when full), so a join gathers whole buckets with one ``np.concatenate`` and never
touches rows one at a time in Python. Batches are grouped by key with numpy first, so each batch
costs one dict operation per distinct key; deduplication against stored rows uses a Python set of
row tuples (C-speed set algebra, but one tuple object per row).

Costs, for n stored rows, a batch of m rows with d distinct keys, m probe rows with d distinct
keys, k result pairs:

- ``insert``: O(m log m) to group, O(m) set work, O(d) dict operations, amortised O(m) copying.
- ``join``: O(m log m) to group the probe, O(d) dict lookups, O(k) to gather.
- ``delete``: O(m log m + sum of the sizes of the touched buckets) (each is compacted).
- ``len``: O(1); ``rows``: O(n + number of keys).

Not ordered. Reads do not mutate, so concurrent joins are safe (``parallel_safe``).
"""

from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np

from herbrand.framework.contracts import IndexBacking, IndexTags
from herbrand.framework.storage import row_keys
from herbrand.indexes.kernels import (
    as_batch,
    distinct,
    join_by_groups,
    split_by_key,
    to_tuples,
    validate_key,
)


class _Bucket:
    """The rows of one key: ``buffer[:, :size]``, capacity doubling on overflow."""

    __slots__ = ("buffer", "size")

    def __init__(self, rows: np.ndarray):
        self.buffer = rows
        self.size = rows.shape[1]

    @property
    def rows(self) -> np.ndarray:
        return self.buffer[:, : self.size]

    def extend(self, rows: np.ndarray) -> None:
        """Append rows; amortised O(len(rows))."""
        end = self.size + rows.shape[1]
        if end > self.buffer.shape[1]:
            grown = np.empty((self.buffer.shape[0], max(end, 2 * self.size)), dtype=np.int64)
            grown[:, : self.size] = self.rows
            self.buffer = grown
        self.buffer[:, self.size : end] = rows
        self.size = end

    def remove(self, rows: np.ndarray) -> None:
        """Drop the given rows (all present). O(size + len(rows))."""
        mine, gone = row_keys(self.rows, rows)
        kept = self.rows[:, ~np.isin(mine, gone)]
        self.buffer, self.size = kept, kept.shape[1]


class HashIndex(IndexBacking):
    """Key tuple -> bucket of rows, with a global row set for deduplication."""

    tags: ClassVar[IndexTags] = IndexTags(supports_delete=True, parallel_safe=True)

    def __init__(self, arity: int, key: tuple[int, ...]):
        super().__init__(arity, key)
        validate_key(arity, self.key)
        self._rows: set[tuple[int, ...]] = set()
        self._buckets: dict[tuple[int, ...], _Bucket] = {}

    def _partition(self, rows: np.ndarray, stored: bool):
        """The batch's distinct rows that are (or are not) stored, as (tuples, (arity, m) batch)."""
        batch = distinct(as_batch(rows, self.arity))
        tuples = to_tuples(batch)
        hits = np.fromiter(map(self._rows.__contains__, tuples), dtype=bool, count=len(tuples))
        keep = hits if stored else ~hits
        return list(itertools.compress(tuples, keep)), batch[:, keep]

    def _groups(self, batch: np.ndarray):
        """(key tuple, (arity, g) rows) per distinct key of a batch; the rows are views."""
        keys, grouped, bounds = split_by_key(batch, self.key)
        spans = zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
        return ((key, grouped[:, a:b]) for key, (a, b) in zip(keys, spans, strict=True))

    def insert(self, rows: np.ndarray) -> None:
        """Add the new rows, one dict operation per distinct key. See the module docstring."""
        tuples, new = self._partition(rows, stored=False)
        self._rows.update(tuples)
        for key, group in self._groups(new):
            bucket = self._buckets.get(key)
            if bucket is None:
                self._buckets[key] = _Bucket(group)
            else:
                bucket.extend(group)

    def delete(self, rows: np.ndarray) -> None:
        """Remove the stored rows of the batch, compacting each touched bucket."""
        tuples, gone = self._partition(rows, stored=True)
        self._rows.difference_update(tuples)
        for key, group in self._groups(gone):
            bucket = self._buckets[key]
            bucket.remove(group)
            if not bucket.size:
                del self._buckets[key]

    def _fetch(self, keys: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
        buckets = [self._buckets.get(key) for key in keys]
        found = [bucket.rows for bucket in buckets if bucket is not None]
        sizes = [0 if bucket is None else bucket.size for bucket in buckets]
        empty = np.zeros((self.arity, 0), dtype=np.int64)
        return np.array(sizes, dtype=np.int64), np.concatenate([empty, *found], axis=1)

    def join(self, probe: np.ndarray, probe_key: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """One dict lookup per distinct probe key, buckets gathered with numpy. O(m log m + k)."""
        return join_by_groups(probe, probe_key, self.key, self._fetch)

    def __len__(self) -> int:
        """O(1)."""
        return len(self._rows)

    def rows(self) -> np.ndarray:
        """All rows, bucket after bucket. O(n + number of keys)."""
        return self._fetch(list(self._buckets))[1]

    def _check_invariants(self) -> None:
        """Buckets are non-empty, hold rows of their key only, and together equal the row set."""
        stored: list[tuple[int, ...]] = []
        for key, bucket in self._buckets.items():
            assert bucket.size > 0, f"empty bucket for key {key}"
            rows = to_tuples(bucket.rows)
            assert all(tuple(row[c] for c in self.key) == key for row in rows), key
            stored.extend(rows)
        assert len(stored) == len(self._rows), "bucket rows repeat or miss rows of the set"
        assert set(stored) == self._rows, "bucket rows differ from the row set"
