"""BTreeIndex: row tuples in a sortedcontainers ``SortedSet``, ordered on (key, other columns).

The paper's BTreeMap index. Each row is stored as a tuple permuted to (key columns, other
columns), so rows sharing a key are contiguous; a join finds each distinct probe key's rows with
two bisections (the key, and its successor: the key with its last value plus one) and slices
them out. ``SortedSet`` keeps a hash set beside the sorted list, so membership is O(1) and bulk
``update`` sorts a large batch in once instead of adding rows one by one.

Costs, for n stored rows, a batch of m rows, m probe rows with d distinct keys, k pairs:

- ``insert``: O(m) tuples plus either O(m log n) adds or, for a batch of at least a quarter of n,
  an O((n + m) log(n + m)) rebuild (sortedcontainers' own rule).
- ``join``: O(m log m) to group the probe, O(d log n) bisections, O(k) tuples converted back.
- ``range``: O(log n + k).
- ``delete``: like insert.
- ``len``: O(1); ``rows``: O(n) tuples.

Ordered. Reads do not mutate, so concurrent joins are safe (``parallel_safe``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sortedcontainers import SortedSet

from herbrand.framework.contracts import IndexBacking, IndexTags
from herbrand.indexes.kernels import (
    as_batch,
    from_tuples,
    join_by_groups,
    key_bounds,
    to_tuples,
    validate_key,
)


class BTreeIndex(IndexBacking):
    """A SortedSet of row tuples in (key, other columns) order; joins by bisection per key."""

    tags: ClassVar[IndexTags] = IndexTags(ordered=True, supports_delete=True, parallel_safe=True)

    def __init__(self, arity: int, key: tuple[int, ...]):
        super().__init__(arity, key)
        validate_key(arity, self.key)
        self._order = list(self.key) + [c for c in range(arity) if c not in self.key]
        self._inverse = np.argsort(np.array(self._order, dtype=np.int64))
        self._tree: SortedSet = SortedSet()

    def _tuples(self, rows: np.ndarray) -> list[tuple[int, ...]]:
        return to_tuples(as_batch(rows, self.arity)[self._order])

    def _batch(self, tuples: list[tuple[int, ...]]) -> np.ndarray:
        return from_tuples(tuples, self.arity)[self._inverse]

    def _span(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> tuple[int, int]:
        """Positions of the rows whose key lies in [lo, hi]. O(log n)."""
        if not hi:
            return 0, len(self._tree)
        successor = hi[:-1] + (hi[-1] + 1,)
        return self._tree.bisect_left(lo), self._tree.bisect_left(successor)

    def insert(self, rows: np.ndarray) -> None:
        """``SortedSet.update`` with the permuted row tuples."""
        self._tree.update(self._tuples(rows))

    def delete(self, rows: np.ndarray) -> None:
        """``SortedSet.difference_update`` with the permuted row tuples."""
        self._tree.difference_update(self._tuples(rows))

    def _fetch(self, keys: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
        spans = [self._span(key, key) for key in keys]
        stacked: list[tuple[int, ...]] = []
        for start, stop in spans:
            stacked.extend(self._tree.islice(start, stop))
        sizes = np.array([stop - start for start, stop in spans], dtype=np.int64)
        return sizes, self._batch(stacked)

    def join(self, probe: np.ndarray, probe_key: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Two bisections per distinct probe key, then slices. O(m log m + d log n + k)."""
        return join_by_groups(probe, probe_key, self.key, self._fetch)

    def range(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> np.ndarray:
        """Rows with lo <= key <= hi, in (key, other columns) order. O(log n + k)."""
        start, stop = self._span(*key_bounds(self.key, lo, hi))
        return self._batch(list(self._tree.islice(start, max(start, stop))))

    def __len__(self) -> int:
        """O(1)."""
        return len(self._tree)

    def rows(self) -> np.ndarray:
        """All rows in (key, other columns) order. O(n) tuples."""
        return self._batch(list(self._tree))

    def _check_invariants(self) -> None:
        """sortedcontainers' own structural check, and every entry is a row of the arity."""
        self._tree._check()
        assert all(len(row) == self.arity for row in self._tree), "row of the wrong arity"
