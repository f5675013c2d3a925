"""The constant selections of a trace's rows, kept with the trace and carried to the next one.

An update reads a stratum relation's old value R_{i-1} (a prefix of the previous epoch's trace,
``Trace.value``) in every iteration, and a body literal with integer constants, such as
``m(a, 1, b)``, reads it through a constant selection (``counting_selections``): the rows
holding the constants, without their columns. Taken from each prefix, those are a scan of
the whole trace per selection and update, with a comparison of the prefix so far per
iteration (RDFS over LUBM(1): about a tenth of a 1% update).

Trace rows are ordered by iteration and a selection keeps their order, so the selection of
R_{i-1} is a prefix of the selection of the whole trace. ``TraceSelections`` keeps, per
constants, the positions of the trace's rows holding them (ascending) and those rows: the
first use scans the trace once (O(n)); each later prefix is a binary search and a copy of the
selected rows before it. When an update moves rows of the trace (``Trace.moved``), the
selections read since the trace was made are carried to the new trace by mapping their
positions (the rows that left dropped, the others shifted by the rows that left and joined
before them) and adding the joined rows that hold the constants: O(s log m + m) for s
selected and m moved rows, in place of a scan of the new trace; their rows are gathered
again on first read (O(s)). A selection that an update does not read is dropped, so that a
large one that a large update read is not carried through the small updates after it.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from herbrand.evaluators.incremental.counting_selections import (
    Constants,
    holding,
    other_columns,
)
from herbrand.framework.storage import Relation


def _gathered(columns: np.ndarray, positions: np.ndarray, constants: Constants) -> np.ndarray:
    """The rows at ``positions`` without the constant columns, in one gather.
    O(arity · len(positions))."""
    return columns[np.ix_(other_columns(columns.shape[0], constants), positions)]


class _Selection:
    """The positions (ascending) of the trace's rows holding some constants, those rows
    without the constant columns (gathered on first use), and the last prefix handed out
    (so that the evaluations of one iteration share one Relation, and the evaluator's index
    on it)."""

    __slots__ = ("positions", "rows", "last")

    def __init__(self, positions: np.ndarray):
        self.positions = positions
        self.rows: np.ndarray | None = None
        self.last: tuple[int, Relation] | None = None


class TraceSelections:
    """The constant selections of one trace's rows, made on first use (see the module doc).
    A cache: it holds nothing a trace cannot give again, and is shared by traces with the
    same rows."""

    __slots__ = ("_entries",)

    def __init__(self, entries: dict[Constants, _Selection] | None = None):
        self._entries = {} if entries is None else entries

    def prefix(self, columns: np.ndarray, constants: Constants, stop: int) -> Relation:
        """The rows among the first ``stop`` of (arity, n) ``columns`` (the trace's rows)
        that hold ``constants``, without their columns. O(n) the first time for these
        constants, then O(log s + k) for k rows selected."""
        self.take(columns, (constants,))
        entry = self._entries[constants]
        if entry.rows is None:
            entry.rows = _gathered(columns, entry.positions, constants)
        k = int(np.searchsorted(entry.positions, stop))
        if entry.last is None or entry.last[0] != k:
            entry.last = k, Relation(entry.rows[:, :k], unique=True)
        return entry.last[1]

    def take(self, columns: np.ndarray, wanted: Iterable[Constants]) -> None:
        """Find the positions of the trace's rows (``columns``) that hold each of ``wanted``
        now (a bootstrap's, so that the first update's reads gather their rows only, as the
        reads of later updates do; one that the update does not read is not carried).
        O(n) each."""
        for constants in wanted:
            if constants not in self._entries:
                self._entries[constants] = _Selection(
                    np.flatnonzero(holding(columns, constants)))

    def moved(self, columns: np.ndarray, left: np.ndarray, joined: np.ndarray,
              at: np.ndarray) -> TraceSelections:
        """The selections of the rows ``columns`` that ``spliced`` made from this trace's:
        without the rows at the ascending positions ``left``, with ``joined[:, j]`` inserted
        before the kept row of index ``at[j]`` (ascending). Only the selections read since
        this trace was made are carried (a selection no update reads costs nothing), their
        positions alone (their rows are gathered when read). O(s log m + m) per selection."""
        entries = {}
        for constants, entry in self._entries.items():
            if entry.rows is None:
                continue
            kept = entry.positions
            if len(left):
                slot = np.minimum(np.searchsorted(left, kept), len(left) - 1)
                kept = kept[left[slot] != kept]
                kept = kept - np.searchsorted(left, kept)
            kept = kept + np.searchsorted(at, kept, side="right")
            added = (at + np.arange(len(at)))[holding(joined, constants)]
            if len(added):  # both ascending and disjoint: one insertion
                kept = np.insert(kept, np.searchsorted(kept, added), added)
            entries[constants] = _Selection(kept)
        return TraceSelections(entries)

    @property
    def nbytes(self) -> int:
        """The bytes of the kept positions and rows. O(selections)."""
        return sum(e.positions.nbytes + (0 if e.rows is None else e.rows.nbytes)
                   for e in self._entries.values())
