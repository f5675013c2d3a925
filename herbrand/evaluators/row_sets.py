"""RowSet: the rows a fixpoint already holds for one relation, to tell which derived rows are new.

A fixpoint's inner step is "of the rows just derived, which are new?" followed by "add them".
Answering with set operations over the whole relation (``Relation.difference``) costs
O(n log n) in the relation's size every iteration, and even a sorted run costs a sort of the m
derived rows. A RowSet is an open-addressing hash table of row numbers (linear probing, at most
half full) over a growing (arity, capacity) copy of the rows, probed by numba kernels that
release the GIL: ``insert`` costs O(m) expected for m derived rows, whatever n is, with one
hash of the row's columns and, on a hit, a comparison of the columns.

``unseen`` only reads the table, so threads may call it concurrently on one RowSet (the parallel
backend filters its tasks' rows this way); ``insert`` mutates and must not overlap other calls.

    >>> import numpy as np
    >>> known = RowSet(np.array([[1, 2], [2, 3]]))               # rows (1, 2) and (2, 3)
    >>> known.insert(np.array([[1, 5, 5], [2, 6, 6]])).tolist()  # (1, 2) known, (5, 6) twice
    [[5], [6]]
    >>> len(known)
    3
"""

from __future__ import annotations

import numpy as np
from numba import njit

_EMPTY = -1
_MIX = np.uint64(0xFF51AFD7ED558CCD)
_SEED = np.uint64(0x9E3779B97F4A7C15)


@njit(nogil=True, cache=True)
def _hashes(block):
    """One 64-bit hash per column of a (arity, m) block (a murmur-style finaliser per value)."""
    arity, m = block.shape
    out = np.empty(m, dtype=np.uint64)
    for i in range(m):
        h = _SEED
        for c in range(arity):
            h ^= np.uint64(block[c, i])
            h *= _MIX
            h ^= h >> np.uint64(33)
        out[i] = h
    return out


@njit(nogil=True, cache=True)
def _find(slots, stored, block, i, h):
    """The slot holding row i of ``block``, or the empty slot where it would go."""
    mask = np.uint64(len(slots) - 1)
    s = h & mask
    arity = block.shape[0]
    while True:
        at = slots[s]
        if at == _EMPTY:
            return s
        same = True
        for c in range(arity):
            if stored[c, at] != block[c, i]:
                same = False
                break
        if same:
            return s
        s = (s + np.uint64(1)) & mask


@njit(nogil=True, cache=True)
def _insert(slots, stored, count, block, hashes):
    """Insert the rows of ``block`` absent from the table; their positions in ``block``."""
    new = np.empty(block.shape[1], dtype=np.int64)
    k = 0
    for i in range(block.shape[1]):
        s = _find(slots, stored, block, i, hashes[i])
        if slots[s] == _EMPTY:
            slots[s] = count
            for c in range(block.shape[0]):
                stored[c, count] = block[c, i]
            count += 1
            new[k] = i
            k += 1
    return new[:k]


@njit(nogil=True, cache=True)
def _absent(slots, stored, block, hashes):
    """Mask of the rows of ``block`` absent from the table (reads only)."""
    out = np.empty(block.shape[1], dtype=np.bool_)
    for i in range(block.shape[1]):
        out[i] = slots[_find(slots, stored, block, i, hashes[i])] == _EMPTY
    return out


@njit(nogil=True, cache=True)
def _rehash(slots, stored, count):
    """Fill an empty table with the first ``count`` stored rows (all distinct)."""
    mask = np.uint64(len(slots) - 1)
    hashes = _hashes(stored[:, :count])
    for j in range(count):
        s = hashes[j] & mask
        while slots[s] != _EMPTY:
            s = (s + np.uint64(1)) & mask
        slots[s] = j


class RowSet:
    """A growing duplicate-free set of rows of one arity. ``len`` O(1)."""

    __slots__ = ("_count", "_slots", "_stored")

    def __init__(self, rows: np.ndarray):
        """The set of an (arity, n) batch's rows. O(n) expected."""
        self._stored = np.empty((rows.shape[0], 0), dtype=np.int64)
        self._slots = np.full(16, _EMPTY, dtype=np.int64)
        self._count = 0
        self.insert(rows)

    def __len__(self) -> int:
        return self._count

    def rows(self) -> np.ndarray:
        """The rows in insertion order, as an (arity, n) batch (a view). O(1)."""
        return self._stored[:, :self._count]

    def _reserve(self, extra: int) -> None:
        """Room for ``extra`` more rows: storage doubles, the table stays at most half full."""
        needed = self._count + extra
        if needed > self._stored.shape[1]:
            grown = np.empty((self._stored.shape[0], max(needed, 2 * self._stored.shape[1])),
                             dtype=np.int64)
            grown[:, :self._count] = self.rows()
            self._stored = grown
        if 2 * needed > len(self._slots):
            size = len(self._slots)
            while 2 * needed > size:
                size *= 2
            self._slots = np.full(size, _EMPTY, dtype=np.int64)
            _rehash(self._slots, self._stored, self._count)

    def insert(self, rows: np.ndarray) -> np.ndarray:
        """Add an (arity, m) batch; the rows that were not in the set, each once, in the
        batch's order. O(m) expected (plus an amortised O(n) when the table grows)."""
        block = np.ascontiguousarray(rows, dtype=np.int64)
        if not block.shape[1]:
            return block
        self._reserve(block.shape[1])
        new = _insert(self._slots, self._stored, self._count, block, _hashes(block))
        self._count += len(new)
        return block[:, new]

    def unseen(self, rows: np.ndarray) -> np.ndarray:
        """The rows of an (arity, m) batch that are not in the set (repeats kept). O(m)
        expected; reads only, so concurrent calls are safe while no ``insert`` runs."""
        block = np.ascontiguousarray(rows, dtype=np.int64)
        if not block.shape[1] or not self._count:
            return block
        return block[:, _absent(self._slots, self._stored, block, _hashes(block))]
