"""RowSet: the rows a fixpoint already holds for one relation, to tell which derived rows are new.

A fixpoint's inner step is "of the rows just derived, which are new?" followed by "add them".
Answering with set operations over the whole relation (``Relation.difference``) costs
O(n log n) in the relation's size every iteration, and even a sorted run costs a sort of the m
derived rows. A RowSet is an open-addressing hash table of row numbers (linear probing, at most
half full) over a growing (arity, capacity) copy of the rows (both double when full), probed by
numba kernels that release the GIL: ``insert`` costs O(m) expected for m derived rows, whatever
n is, with one hash of the row's columns and, on a hit, a comparison of the columns.

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

from herbrand.evaluators.native.exported import exported, helper

_EMPTY = -1
CHUNK = 1 << 22  # rows hashed at a time: bounds the scratch memory of a huge derived bag
_MIX = np.uint64(0xFF51AFD7ED558CCD)
_SEED = np.uint64(0x9E3779B97F4A7C15)
_NONE = np.zeros(0, dtype=np.int64)


@helper(inline="always")
def row_hash(block, i):
    """The 64-bit hash of column i of an (arity, m) block (a murmur-style finaliser per
    value): the hash every table of this module keys rows by."""
    h = _SEED
    for c in range(block.shape[0]):
        h ^= np.uint64(block[c, i])
        h *= _MIX
        h ^= h >> np.uint64(33)
    return h


@exported("u8[::1](i8[:, ::1])")
def _hashes(block):
    """One ``row_hash`` per column of an (arity, m) block."""
    out = np.empty(block.shape[1], dtype=np.uint64)
    for i in range(block.shape[1]):
        out[i] = row_hash(block, i)
    return out


@helper
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


@exported("UniTuple(i8, 2)(i8[::1], i8[:, ::1], i8, i8[:, ::1], u8[::1], i8, i8[::1])",
          writes=("slots", "stored", "at"))
def _insert(slots, stored, count, block, hashes, start, at):
    """Insert rows ``start``, ... of ``block`` absent from the table, recording each row's
    position in the set in ``at``, until the block ends or the storage is full; returns (the
    next row, the count)."""
    limit = min(stored.shape[1], len(slots) // 2)
    i = start
    while i < block.shape[1] and count < limit:
        s = _find(slots, stored, block, i, hashes[i])
        if slots[s] == _EMPTY:
            slots[s] = count
            for c in range(block.shape[0]):
                stored[c, count] = block[c, i]
            count += 1
        at[i] = slots[s]
        i += 1
    return i, count


@exported("b1[::1](i8[::1], i8[:, ::1], i8[:, ::1], u8[::1])")
def _absent(slots, stored, block, hashes):
    """Mask of the rows of ``block`` absent from the table (reads only)."""
    out = np.empty(block.shape[1], dtype=np.bool_)
    for i in range(block.shape[1]):
        out[i] = slots[_find(slots, stored, block, i, hashes[i])] == _EMPTY
    return out


@exported("i8[::1](i8[::1], i8[:, ::1], i8[:, ::1], u8[::1])")
def _positions(slots, stored, block, hashes):
    """The position (insertion number) of each row of ``block`` in the set, -1 where absent
    (reads only)."""
    out = np.empty(block.shape[1], dtype=np.int64)
    for i in range(block.shape[1]):
        out[i] = slots[_find(slots, stored, block, i, hashes[i])]
    return out


@exported("void(i8[::1], i8[:, ::1], i8)", writes=("slots",))
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
        self._slots = np.full(1, _EMPTY, dtype=np.int64)  # full at once: the first insert grows
        self._count = 0
        self.insert(rows)

    def __len__(self) -> int:
        return self._count

    def rows(self) -> np.ndarray:
        """The rows in insertion order, as an (arity, n) batch (a view). O(1)."""
        return self._stored[:, :self._count]

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """``(slots, stored)``: the hash table and the stored rows, for a kernel that probes
        the set in place with ``_find`` (reads only; valid until the next ``insert``)."""
        return self._slots, self._stored

    def _grow(self) -> None:
        """Double the storage and the table (kept at twice the storage). O(n), amortised."""
        capacity = max(16, 2 * self._stored.shape[1])
        grown = np.empty((self._stored.shape[0], capacity), dtype=np.int64)
        grown[:, :self._count] = self.rows()
        self._stored = grown
        self._slots = np.full(2 * capacity, _EMPTY, dtype=np.int64)
        _rehash(self._slots, self._stored, self._count)

    @staticmethod
    def _block(rows: np.ndarray) -> np.ndarray:
        """Rows as a contiguous int64 block; rows of arity 0 are all equal, so one is kept."""
        block = np.ascontiguousarray(rows, dtype=np.int64)
        return block[:, :1] if block.shape[0] == 0 else block

    def insert(self, rows: np.ndarray) -> np.ndarray:
        """Add an (arity, m) batch; the rows that were not in the set, each once, in the
        batch's order. O(m) expected, plus an amortised O(n) when the storage grows (it grows
        with the rows kept, not with m); O(min(m, CHUNK)) scratch memory."""
        before = self._count
        self.intern(rows)
        return self._stored[:, before:self._count].copy()

    def intern(self, rows: np.ndarray) -> np.ndarray:
        """Add an (arity, m) batch; the position of each of its rows in ``rows()`` (as
        ``positions`` after ``insert``, in one probe per row). Costs as ``insert``, plus the
        m positions."""
        block = self._block(rows)
        if not rows.shape[0]:  # rows of arity 0 are all equal: one is kept, at position 0
            self._intern_chunk(block)
            return np.zeros(rows.shape[1], dtype=np.int64)
        parts = [self._intern_chunk(block[:, i:i + CHUNK])
                 for i in range(0, block.shape[1], CHUNK)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts or [_NONE])

    def _intern_chunk(self, block: np.ndarray) -> np.ndarray:
        m = block.shape[1]
        hashes = _hashes(block)
        at = np.empty(m, dtype=np.int64)
        start = 0
        while True:
            start, self._count = _insert(self._slots, self._stored, self._count, block,
                                         hashes, start, at)
            if start == m:
                return at
            self._grow()

    def unseen(self, rows: np.ndarray) -> np.ndarray:
        """The rows of an (arity, m) batch that are not in the set (repeats may be kept). O(m)
        expected; reads only, so concurrent calls are safe while no ``insert`` runs."""
        block = self._block(rows)
        if not block.shape[1] or not self._count:
            return block
        return block[:, self._absent(block)]

    def contains(self, rows: np.ndarray) -> np.ndarray:
        """One bool per row of an (arity, m) batch: whether the set holds it. O(m) expected;
        reads only, as ``unseen``."""
        if rows.shape[0] == 0:
            return np.full(rows.shape[1], self._count > 0)
        if not rows.shape[1] or not self._count:
            return np.zeros(rows.shape[1], dtype=bool)
        return ~self._absent(self._block(rows))

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """The position of each row of an (arity, m) batch in ``rows()`` (positions never
        change: the set only grows), -1 where absent. O(m) expected; reads only, as
        ``unseen``."""
        if rows.shape[0] == 0:
            return np.full(rows.shape[1], 0 if self._count else _EMPTY, dtype=np.int64)
        if not rows.shape[1] or not self._count:
            return np.full(rows.shape[1], _EMPTY, dtype=np.int64)
        block = self._block(rows)
        return np.concatenate([
            _positions(self._slots, self._stored, block[:, i:i + CHUNK],
                       _hashes(block[:, i:i + CHUNK]))
            for i in range(0, block.shape[1], CHUNK)
        ])

    def _absent(self, block: np.ndarray) -> np.ndarray:
        return np.concatenate([
            _absent(self._slots, self._stored, block[:, i:i + CHUNK],
                    _hashes(block[:, i:i + CHUNK]))
            for i in range(0, block.shape[1], CHUNK)
        ])
