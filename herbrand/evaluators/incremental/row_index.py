"""RowIndex: row -> position lookups, and ``weighted_groups``: a bag of rows summed by row.

Incremental engines keep per-tuple numbers (iterations, counts, weights) in numpy arrays aligned
with a relation's rows, and must find where given rows sit. A RowIndex sorts the rows once, in
the encoding of ``herbrand.indexes.runs.RowCodec`` (one packed int64 per row when the values
fit, lexicographic columns otherwise), and answers a batch of m probes in O(m log n) with
``np.searchsorted`` (or the lexicographic numba search). Building costs O(n log n): the rows
are distinct, so their order needs no stable sort, and numpy's default argsort (vectorised
quicksort) of 262,144 packed rows took 3.3 ms against the stable one's 17 ms.

    >>> import numpy as np
    >>> index = RowIndex(np.array([[1, 2, 3], [5, 6, 7]]), np.array([10, 11, 12]))
    >>> index.find(np.array([[2, 9], [6, 9]])).tolist()
    [11, -1]
"""

from __future__ import annotations

import functools

import numpy as np

from herbrand.framework.storage import row_keys
from herbrand.indexes.kernels import searchsorted
from herbrand.indexes.runs import RowCodec

ABSENT = -1


@functools.cache
def identity_codec(arity: int) -> RowCodec:
    """The RowCodec of whole rows in column order: packed int64 order is the rows'
    lexicographic order. One per arity, made once (the codec is not changed by its users)."""
    return RowCodec(arity, tuple(range(arity)))


class RowIndex:
    """An immutable map from the distinct rows of an (arity, n) batch to int64 positions."""

    __slots__ = ("_codec", "_data", "_packed", "_positions")

    def __init__(self, rows: np.ndarray, positions: np.ndarray | None = None):
        """Index ``rows`` (distinct) with ``positions`` (default ``arange(n)``). O(n log n)."""
        arity, n = rows.shape
        if positions is None:
            positions = np.arange(n, dtype=np.int64)
        self._codec = identity_codec(arity)
        data, self._packed = self._codec.encode(rows)
        if arity == 0:
            order = np.arange(min(n, 1), dtype=np.int64)
        elif data.shape[0] == 1:
            order = np.argsort(data[0])  # distinct rows: no ties, no stable sort needed
        else:
            order = np.lexsort(data[::-1])
        self._data = np.ascontiguousarray(data[:, order])
        self._positions = np.asarray(positions, dtype=np.int64)[order]

    def __len__(self) -> int:
        return len(self._positions)

    @property
    def nbytes(self) -> int:
        return self._data.nbytes + self._positions.nbytes

    def sorted_run(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(packed rows, their positions) in row order when the rows are packed (one int64 per
        row, whose order is the rows' lexicographic order), else None. O(1): the arrays
        themselves."""
        return (self._data[0], self._positions) if self._packed else None

    def find(self, rows: np.ndarray) -> np.ndarray:
        """The position of each row of an (arity, m) batch, ABSENT (-1) where it is not
        indexed. O(m log n)."""
        m = rows.shape[1]
        found = np.full(m, ABSENT, dtype=np.int64)
        n = len(self._positions)
        if not n or not m:
            return found
        if rows.shape[0] == 0:
            found[:] = self._positions[0]
            return found
        probe, packed = self._codec.encode(rows)
        data = self._data
        if packed != self._packed:  # mixed encodings: compare plain columns
            data = self._codec.unpack(data) if self._packed else data
            probe = self._codec.unpack(probe) if packed else probe
        at = np.minimum(searchsorted(data, probe, "left"), n - 1)
        hit = np.all(data[:, at] == probe, axis=0)
        found[hit] = self._positions[at[hit]]
        return found


def weighted_groups(rows: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of an (arity, n) bag and, for each, the sum of its rows' ``weights``
    (in the order of the rows' keys). Rows whose sum is 0 are kept (callers decide).
    O(n log n), vectorised: one argsort of one key per row, not a stable one (any row of a
    group stands for it; ``np.unique`` with ``return_index`` sorts stably, 4x slower)."""
    n = rows.shape[1]
    if n == 0:
        return rows, np.zeros(0, dtype=np.int64)
    (keys,) = row_keys(rows)
    order = np.argsort(keys)
    ordered = keys[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    sums = np.add.reduceat(np.asarray(weights, dtype=np.int64)[order], starts)
    return rows[:, order[starts]], sums
