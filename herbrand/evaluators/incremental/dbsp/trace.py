"""One relation's nested-time state in a stratum's DBSP circuit (see ``circuit``): its rows
ordered by first iteration, the iteration offsets, the derivation counts and the kept constant
selections of its rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from herbrand.evaluators.incremental.counting_merge import segments_moved
from herbrand.evaluators.incremental.dbsp.counts import Counts
from herbrand.evaluators.incremental.dbsp.trace_selections import Constants, TraceSelections
from herbrand.evaluators.incremental.dbsp.zset import ZSet
from herbrand.evaluators.incremental.row_index import identity_codec
from herbrand.framework.storage import Relation


@dataclass(frozen=True)
class Trace:
    """One relation's nested-time state: rows ordered by first iteration (the relation; rows
    of one iteration sorted as ``RowCodec`` encodes them, as a Z-set's are, so rows are found
    by searching their iteration's rows without a stored index), ``offsets[i]`` = |R_i|, and
    the derivation counts ``counts`` (dX integrated per row); ``selections``: the constant
    selections of the rows read so far (a cache, carried to the trace an update moves them
    to)."""

    relation: Relation
    offsets: np.ndarray
    counts: Counts
    selections: TraceSelections = field(default_factory=TraceSelections, compare=False,
                                        repr=False)

    @classmethod
    def of(cls, rows: np.ndarray, iteration: np.ndarray, dx: Sequence[ZSet]) -> Trace:
        """From distinct rows, their first iterations and the stream dX. O(n log n)."""
        data, _ = identity_codec(rows.shape[0]).encode(rows)
        order = np.lexsort(np.vstack([data[::-1], iteration[None, :]]))
        rows, iteration = np.ascontiguousarray(rows[:, order]), iteration[order]
        depth = int(iteration[-1]) + 1 if len(iteration) else 0
        offsets = np.searchsorted(iteration, np.arange(depth), side="right")
        return cls(Relation(rows, unique=True), offsets, Counts.of(rows.shape[0], dx))

    def with_counts(self, counts: Counts) -> Trace:
        """The same rows with other derivation counts."""
        return Trace(self.relation, self.offsets, counts, self.selections)

    def moved(self, left: np.ndarray, left_at: np.ndarray, joined: np.ndarray,
              joined_at: np.ndarray, counts: Counts) -> Trace:
        """The trace without the rows ``left``, each first derived at its iteration in
        ``left_at`` (it must be there, as the rows an update moves out of an iteration are),
        and with the rows ``joined`` at iterations ``joined_at``; both sorted by iteration,
        then as the iterations' rows are (a Z-set's order, iteration by iteration). One pass
        over the iterations' rows (``segments_moved``): each leaving or joining row is found
        by galloping from the last, and the kept rows between them are block-copied; the
        kept selections are carried (``TraceSelections.moved``). O(n + m log(n / m))."""
        columns = self.relation.columns
        n = columns.shape[1]
        depth = max(len(self.offsets), int(joined_at.max()) + 1 if len(joined_at) else 0)
        bounds = np.concatenate([[0], self.offsets, np.full(depth - len(self.offsets), n)])
        rows, left, at = segments_moved(columns, bounds, left, left_at, joined, joined_at)
        sizes = (np.diff(bounds) + np.bincount(joined_at, minlength=depth)
                 - np.bincount(left_at, minlength=depth))
        depth = int(np.flatnonzero(sizes)[-1]) + 1 if sizes.any() else 0
        return Trace(Relation(rows, unique=True), np.cumsum(sizes[:depth]), counts,
                     self.selections.moved(rows, left, joined, at))

    @property
    def settled_from(self) -> int:
        """The first iteration i from which the previous epoch's streams no longer move the
        next iteration: R_{i-1} = R_i (i >= |offsets|) and X_i = X_{i+1} (i + 1 >= the
        counts' depth). An update whose ΔR_i equals ΔR_{i-1} there has reached its
        fixpoint: ΔX_{i+1}, read from the same values and changes, equals ΔX_i."""
        return max(len(self.offsets), self.counts.depth - 1)

    def value(self, i: int) -> Relation:
        """R_i (empty for i < 0)."""
        columns = self.relation.columns
        if i < 0:
            return Relation(columns[:, :0], unique=True)
        if i >= len(self.offsets) - 1:
            return self.relation
        return Relation(columns[:, :self.offsets[i]], unique=True)

    def selected(self, constants: Constants, i: int) -> Relation:
        """The rows of R_i (none for i < 0) holding ``constants`` ((column, value) pairs),
        without their columns: a prefix of the trace's kept selection (``TraceSelections``).
        O(n) the first time for these constants, then O(log n + rows selected)."""
        columns = self.relation.columns
        stop = 0 if i < 0 else columns.shape[1] if i >= len(self.offsets) - 1 else int(
            self.offsets[i])
        return self.selections.prefix(columns, constants, stop)

    def iterations(self) -> np.ndarray:
        """The first iteration of each row, aligned with the relation."""
        return np.repeat(np.arange(len(self.offsets)), np.diff(self.offsets, prepend=0))

    @property
    def nbytes(self) -> int:
        """Bytes beyond the rows: offsets, the counts and the kept selections."""
        return self.offsets.nbytes + self.counts.nbytes + self.selections.nbytes

    @property
    def tuples(self) -> int:
        return len(self.counts)


def rows_at(trace: Trace, i: int) -> np.ndarray:
    """dR[i]: the rows first derived at iteration ``i`` (none for i < 0)."""
    columns = trace.relation.columns
    if i < 0 or i >= len(trace.offsets):
        return columns[:, :0]
    return columns[:, (trace.offsets[i - 1] if i else 0):trace.offsets[i]]
