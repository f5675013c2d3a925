"""Append-only columns: rows that grow without copying, and an O(1) test that one block of
rows extends another.

``GrowingColumns`` owns an (arity, capacity) int64 buffer of which the first ``length``
columns hold rows; ``append`` writes new rows after them and never writes a row twice, so
every block it ever handed out (``columns``: ``buffer[:, :length]``, a view whose columns are
each contiguous, which ``Relation`` takes without copying) stays a prefix of the later ones.
When the buffer is full it moves to one half as large again (amortised O(1) per row; the
blocks handed out before keep the old buffer alive and stay valid).

``extends(columns, previous)``: whether the rows of ``columns`` start with those of
``previous``. O(1) when both are views of one buffer from the same first row (as the blocks
of a ``GrowingColumns`` are), else a comparison of the prefix, O(n) (probes of its first and
last rows first).
"""

from __future__ import annotations

import numpy as np


def _start(columns: np.ndarray) -> int:
    return columns.__array_interface__["data"][0]


def extends(columns: np.ndarray, previous: np.ndarray) -> bool:
    """Whether the (arity, m) block ``columns`` starts with the (arity, n) block ``previous``
    (see the module doc for the cost)."""
    n = previous.shape[1]
    if columns.shape[0] != previous.shape[0] or columns.shape[1] < n:
        return False
    if n == 0 or columns.shape[0] == 0:
        return True
    if _start(columns) == _start(previous) and columns.strides == previous.strides:
        return True  # the same memory: previous's rows are columns' first n rows
    if not (np.array_equal(columns[:, 0], previous[:, 0])
            and np.array_equal(columns[:, n - 1], previous[:, n - 1])):
        return False
    return np.array_equal(columns[:, :n], previous)


class GrowingColumns:
    """Rows appended to an (arity, capacity) buffer (see the module doc). ``capacity``: the
    first buffer's room in rows (at least the rows given)."""

    __slots__ = ("_buffer", "_length")

    def __init__(self, columns: np.ndarray, capacity: int = 0):
        arity, n = columns.shape
        self._buffer = np.empty((arity, max(capacity, n, 1)), dtype=np.int64)
        self._buffer[:, :n] = columns
        self._length = n

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

    def append(self, rows: np.ndarray) -> np.ndarray:
        """Write the (arity, m) block ``rows`` after the rows so far and return ``columns``.
        O(m), plus O(length) when the buffer moves (to 1.5 times its capacity, or to the
        rows needed if more)."""
        m = rows.shape[1]
        end = self._length + m
        if end > self._buffer.shape[1]:
            capacity = self._buffer.shape[1]
            grown = np.empty((self._buffer.shape[0], max(end, capacity + capacity // 2)),
                             dtype=np.int64)
            grown[:, :self._length] = self._buffer[:, :self._length]
            self._buffer = grown
        self._buffer[:, self._length:end] = rows
        self._length = end
        return self.columns
