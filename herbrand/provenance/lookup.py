"""``ColumnIndex``: the rows of a relation that hold given values in some of its columns.

Explaining a tuple looks up, again and again, the rows of a premise's relation that agree with
the values bound so far on a few columns. A ColumnIndex groups a relation's rows by their values
at ``positions`` once (O(n log n)): the distinct key tuples go into a ``RowIndex`` (sorted,
searched with ``np.searchsorted``) that maps each to its group, and the rows are ordered by
group. A batch of m probes is then answered in O(m log n + matches), without a Python loop.

    >>> import numpy as np
    >>> index = ColumnIndex(np.array([[1, 1, 2], [5, 6, 7]]), (0,))
    >>> owners, rows = index.lookup(np.array([[1, 3]]))
    >>> owners.tolist(), rows.tolist()
    ([0, 0], [0, 1])
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.row_index import ABSENT, RowIndex
from herbrand.framework.storage import row_keys


class ColumnIndex:
    """The rows of an (arity, n) block grouped by their values at ``positions`` (immutable)."""

    __slots__ = ("_groups", "_order", "_starts", "_counts", "_size")

    def __init__(self, columns: np.ndarray, positions: tuple[int, ...]):
        """Group the rows of ``columns`` on ``positions`` (distinct, in any order). O(n log n)."""
        n = columns.shape[1]
        self._size = n
        if not positions or not n:
            self._groups = None
            self._order = np.arange(n, dtype=np.int64)
            self._starts = np.zeros(1, dtype=np.int64)
            self._counts = np.array([n], dtype=np.int64)
            return
        keys = np.ascontiguousarray(columns[list(positions)])
        (packed,) = row_keys(keys)
        distinct, first, group = np.unique(packed, return_index=True, return_inverse=True)
        self._order = np.argsort(group.ravel(), kind="stable").astype(np.int64)
        self._counts = np.bincount(group.ravel(), minlength=len(distinct)).astype(np.int64)
        self._starts = np.cumsum(self._counts) - self._counts
        self._groups = RowIndex(keys[:, first])

    def lookup(self, probes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For a (len(positions), m) batch of key values: (owners, rows), one pair per stored
        row whose key equals probe ``owners[i]``'s, rows as positions into the indexed block.
        Without positions every row matches every probe. O(m log n + matches)."""
        m = probes.shape[1]
        if self._groups is None:
            group = np.zeros(m, dtype=np.int64) if self._size else np.full(m, ABSENT)
        else:
            group = self._groups.find(probes)
        found = np.flatnonzero(group != ABSENT)
        counts = self._counts[group[found]]
        owners = np.repeat(found, counts)
        offsets = np.arange(len(owners), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts,
                                                                     counts)
        return owners, self._order[np.repeat(self._starts[group[found]], counts) + offsets]
