"""Append-only columns: rows that grow without copying, and an O(1) test that one block of
rows extends another.

``GrowingColumns`` owns an (arity, capacity) int64 buffer of which the first ``length``
columns hold rows; ``append`` writes new rows after them and never writes a row twice, so
every block it ever handed out (``columns``: ``buffer[:, :length]``, a view whose columns are
each contiguous, which ``Relation`` takes without copying) stays a prefix of the later ones.
When the buffer is full it moves to one half as large again (amortised O(1) per row; the
blocks handed out before keep the old buffer alive and stay valid).

``fork`` shares the buffer between two GrowingColumns holding the same rows (a committed
state's and the next run's): the buffer records how far it is written, so the first of them
to append writes in place and the other, finding rows past its end, moves to a buffer of its
own (a copy) before it appends: neither ever writes a row a block of the other holds.
``writable_columns`` is for an owner that hands no block out (its rows may be rewritten).

``extends(columns, previous)``: whether the rows of ``columns`` start with those of
``previous``. O(1) when both are views of one buffer from the same first row (as the blocks
of a ``GrowingColumns`` are), else a comparison of the prefix, O(n) (probes of its first and
last rows first).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _start(columns: np.ndarray) -> int:
    return columns.__array_interface__["data"][0]


def prefix_view(columns: np.ndarray, previous: np.ndarray) -> bool:
    """Whether the block ``previous`` is a view of the first rows of ``columns``' memory (the
    same first row and strides, no more rows), so that ``columns`` starts with its rows.
    O(1)."""
    return (previous.shape[0] == columns.shape[0] and previous.shape[1] <= columns.shape[1]
            and _start(columns) == _start(previous) and columns.strides == previous.strides)


def extends(columns: np.ndarray, previous: np.ndarray) -> bool:
    """Whether the (arity, m) block ``columns`` starts with the (arity, n) block ``previous``
    (see the module doc for the cost)."""
    n = previous.shape[1]
    if columns.shape[0] != previous.shape[0] or columns.shape[1] < n:
        return False
    if n == 0 or columns.shape[0] == 0:
        return True
    if prefix_view(columns, previous):
        return True
    if not (np.array_equal(columns[:, 0], previous[:, 0])
            and np.array_equal(columns[:, n - 1], previous[:, n - 1])):
        return False
    return np.array_equal(columns[:, :n], previous)


class GrowingColumns:
    """Rows appended to an (arity, capacity) buffer (see the module doc). ``capacity``: the
    first buffer's room in rows (at least the rows given)."""

    __slots__ = ("_buffer", "_length", "_written")

    def __init__(self, columns: np.ndarray | Sequence[np.ndarray], capacity: int = 0):
        """``columns``: an (arity, n) array, or arity 1-d arrays of n rows each (written into
        the buffer one by one, never stacked first). O(arity * n)."""
        arity = len(columns)
        n = columns.shape[1] if isinstance(columns, np.ndarray) else len(columns[0])
        self._buffer = np.empty((arity, max(capacity, n, 1)), dtype=np.int64)
        for i in range(arity):
            self._buffer[i, :n] = columns[i]
        self._length = n
        self._written = [n]  # how far the buffer is written, shared with forks

    def fork(self) -> GrowingColumns:
        """The same rows in the same buffer, appended to apart (see the module doc). O(1)."""
        twin = object.__new__(GrowingColumns)
        twin._buffer, twin._length, twin._written = self._buffer, self._length, self._written
        return twin

    def __len__(self) -> int:
        return self._length

    @property
    def capacity(self) -> int:
        """The rows the current buffer holds room for."""
        return self._buffer.shape[1]

    @property
    def nbytes(self) -> int:
        """The bytes of the current buffer, room included."""
        return self._buffer.nbytes

    @property
    def columns(self) -> np.ndarray:
        """The rows so far, a read-only view of the buffer. O(1)."""
        view = self._buffer[:, :self._length]
        view.setflags(write=False)
        return view

    def writable_columns(self) -> np.ndarray:
        """The rows so far, a writable view of the buffer, for an owner that hands no block
        out and forks none. O(1)."""
        return self._buffer[:, :self._length]

    def append(self, rows: np.ndarray) -> np.ndarray:
        """Write the (arity, m) block ``rows`` after the rows so far and return ``columns``.
        O(m), plus ``reserve``'s move of the buffer."""
        self.reserve(rows.shape[1])[:] = rows
        return self.columns

    def reserve(self, m: int) -> np.ndarray:
        """Count m more rows in and return their block, a writable view of the buffer that
        the caller fills before it hands out any block holding them (``columns``): rows
        computed in place, not copied in. O(1), plus O(length) when the buffer moves (to
        1.5 times its capacity, or to the rows needed if more; or, when a fork wrote past
        this one's rows, to a buffer of the same capacity)."""
        end = self._length + m
        capacity = self._buffer.shape[1]
        if end > capacity or self._written[0] != self._length:
            if end > capacity:
                capacity = max(end, capacity + capacity // 2)
            grown = np.empty((self._buffer.shape[0], capacity), dtype=np.int64)
            grown[:, :self._length] = self._buffer[:, :self._length]
            self._buffer, self._written = grown, [self._length]
        block = self._buffer[:, self._length:end]
        self._length = self._written[0] = end
        return block
