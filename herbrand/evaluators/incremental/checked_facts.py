"""``CheckedFacts``: the facts of one relation that a backward/forward deletion step has checked
(the paper's C) and which of them it has proved (P), in one structure.

C is a ``RowSet`` (a hash table of row positions over the rows in the order they were checked);
P is a mask over those positions plus a copy of the proved rows in the order they were proved
(grown by doubling, so that a reader of P as a relation gets a view). Every question the step
asks ("checked?", "proved?", "prove the checked ones of these") is then one hash probe per row,
where two sets would take one probe each, and proving a bag of derived rows marks and collects
them in one pass (``_mark``), not a filter, a second hash insert and a copy.

    >>> import numpy as np
    >>> facts = CheckedFacts(2)
    >>> facts.check(np.array([[1, 2, 1], [5, 6, 5]])).tolist()   # (1, 5) twice, (2, 6)
    [0, 1]
    >>> facts.prove(np.array([[2, 2, 3], [6, 6, 7]])).tolist()   # (3, 7) is not checked
    [[2], [6]]
    >>> facts.proved_at(facts.positions(np.array([[1, 2], [5, 6]]))).tolist()
    [False, True]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from herbrand.evaluators.native.exported import exported
from herbrand.evaluators.row_sets import RowSet


@exported("i8(i8[::1], b1[::1], i8[::1])", writes=("proved", "out"))
def _mark(positions, proved, out):
    """Mark the checked, unproved ``positions`` (-1: not checked) as proved, each once,
    writing them to ``out``; returns how many."""
    k = 0
    for p in positions:
        if p >= 0 and not proved[p]:
            proved[p] = True
            out[k] = p
            k += 1
    return k


@exported("b1[::1](i8[::1], b1[::1], i8)")
def first_per_key(keys, candidate, count):
    """Mask of the first ``candidate`` entry of each key (keys in ``0 .. count - 1``, such as
    positions in C). O(len(keys) + count)."""
    taken = np.zeros(count, dtype=np.bool_)
    take = np.zeros(len(keys), dtype=np.bool_)
    for i in range(len(keys)):
        if candidate[i] and not taken[keys[i]]:
            taken[keys[i]] = True
            take[i] = True
    return take


class CheckedFacts:
    """C and P of one relation of ``arity`` (see the module doc). Memory: the checked rows,
    their table (two slots per row), a byte per checked row and a copy of the proved rows."""

    __slots__ = ("_checked", "_proved", "_proved_count", "_proved_rows", "_unproved",
                 "_unproved_upto")

    def __init__(self, arity: int):
        self._checked = RowSet(np.zeros((arity, 0), dtype=np.int64))
        self._proved = np.zeros(16, dtype=np.bool_)  # by position in C
        self._proved_rows = np.zeros((arity, 16), dtype=np.int64)  # in proving order
        self._proved_count = 0
        self._unproved = np.zeros(0, dtype=np.int64)  # as of ``unproved_positions``' last call
        self._unproved_upto = 0  # C's count then

    @property
    def checked_count(self) -> int:
        return len(self._checked)

    @property
    def proved_count(self) -> int:
        return self._proved_count

    def check(self, rows: np.ndarray) -> np.ndarray:
        """Put an (arity, m) batch into C; the positions in C (``checked_rows()``) of the rows
        that were not in it, each once, in the batch's order: consecutive, after the others.
        O(m) expected (amortised growth)."""
        before = len(self._checked)
        self._checked.insert(rows)
        if len(self._checked) > len(self._proved):
            grown = np.zeros(2 * len(self._checked), dtype=np.bool_)
            grown[:len(self._proved)] = self._proved
            self._proved = grown
        return np.arange(before, len(self._checked), dtype=np.int64)

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """The position of each row of an (arity, m) batch in ``checked_rows()``, -1 where not
        checked. O(m) expected."""
        return self._checked.positions(rows)

    def rows_at(self, positions: np.ndarray) -> np.ndarray:
        """The rows of C at ``positions`` (none -1), in that order. O(m)."""
        return self._checked.rows()[:, positions]

    def proved_at(self, positions: np.ndarray) -> np.ndarray:
        """Whether the checked fact at each of ``positions`` (-1: none) is in P. O(m)."""
        return (positions >= 0) & self._proved[np.maximum(positions, 0)]

    def prove(self, rows: np.ndarray) -> np.ndarray:
        """Put the checked rows of an (arity, m) bag into P; those that were not in it, each
        once. O(m) expected."""
        positions = self._checked.positions(rows)
        out = np.empty(len(positions), dtype=np.int64)
        k = _mark(positions, self._proved, out)
        fresh = self._checked.rows()[:, out[:k]]
        count = self._proved_count
        self._reserve(count + k)
        self._proved_rows[:, count:count + k] = fresh
        self._proved_count += k
        return fresh

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """C's hash table and rows (``RowSet.table``), for a kernel that probes C in place."""
        return self._checked.table()

    def prove_forwards(self, source: CheckedFacts, start: int, kernel: Callable,
                       arguments: tuple) -> int:
        """Run a saturation ``kernel`` of ``bf_kernels`` (its ``arguments`` between the
        source's and P's) forwards from ``source``'s proved facts from position ``start`` on
        into this P: to the fixpoint when ``source`` is this relation. Where the source's P
        was read up to. O(the kernel)."""
        self._reserve(len(self._checked))
        read, self._proved_count = kernel(
            source._proved_rows, start, source._proved_count, *arguments, self._proved,
            self._proved_rows, self._proved_count, source is self)
        return read

    def _reserve(self, rows: int) -> None:
        """Room for ``rows`` proved rows (doubling). O(proved rows) when it grows."""
        if rows > self._proved_rows.shape[1]:
            grown = np.empty((self._proved_rows.shape[0], 2 * rows), dtype=np.int64)
            grown[:, :self._proved_count] = self._proved_rows[:, :self._proved_count]
            self._proved_rows = grown

    def unproved(self, positions: np.ndarray) -> np.ndarray:
        """The ``positions`` in C (none -1) of facts not in P, in that order. O(m), no
        hashing."""
        return positions[~self._proved[positions]]

    def unproved_positions(self) -> np.ndarray:
        """The positions in C of the facts not in P, ascending. O(the previous call's answer
        + facts checked since), no hashing."""
        count = len(self._checked)
        positions = np.concatenate((self._unproved, np.arange(self._unproved_upto, count)))
        self._unproved, self._unproved_upto = self.unproved(positions), count
        return self._unproved

    def proved_mask(self) -> np.ndarray:
        """Whether each position of C is in P (a view, longer than C; only read). O(1)."""
        return self._proved

    def unproved_since(self, start: int) -> np.ndarray:
        """The rows of C checked from position ``start`` on that are not in P, in checking
        order. O(rows since), no hashing."""
        return self._checked.rows()[:, start:][:, ~self._proved[start:len(self._checked)]]

    def checked_rows(self) -> np.ndarray:
        """The rows of C in the order they were checked (a view). O(1)."""
        return self._checked.rows()

    def proved_rows(self) -> np.ndarray:
        """The rows of P in the order they were proved (a view: earlier calls' rows are a
        prefix of later ones'). O(1)."""
        return self._proved_rows[:, :self._proved_count]
