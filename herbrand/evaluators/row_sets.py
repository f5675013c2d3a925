"""RowSet: the rows a fixpoint already holds for one relation, to tell which derived rows are new.

A fixpoint's inner step is "of the rows just derived, which are new?" followed by "add them".
Answering with set operations over the whole relation each iteration (``Relation.difference``)
costs O(n log n) in the relation's size n every iteration. A RowSet keeps the relation's rows
as one sorted, duplicate-free run (``herbrand.indexes.runs.SortedRun``: one packed int64 per row
when the values fit, lexicographic numba kernels otherwise), so an iteration costs
O(m log m + m log n) to sort and search m derived rows, plus an O(n + m) numba merge to add the
new ones.

``new_run`` only reads the set, so threads may call it concurrently on one RowSet (the parallel
backend does); ``add`` replaces the run and must not overlap other calls.

    >>> import numpy as np
    >>> known = RowSet(np.array([[1, 2], [2, 3]]))          # rows (1, 2) and (2, 3)
    >>> new = known.new_run(np.array([[1, 5, 5], [2, 6, 6]]))  # (1, 2) is known; (5, 6) twice
    >>> new.rows().tolist()
    [[5], [6]]
    >>> known.add(new)
    >>> len(known)
    3
"""

from __future__ import annotations

import numpy as np

from herbrand.indexes.runs import RowCodec, SortedRun


class RowSet:
    """A growing duplicate-free set of (arity,)-rows. ``len`` O(1)."""

    __slots__ = ("_codec", "_run")

    def __init__(self, rows: np.ndarray):
        """The set of an (arity, n) batch's rows. O(n log n)."""
        arity = rows.shape[0]
        self._codec = RowCodec(arity, tuple(range(arity)))
        self._run = SortedRun.from_batch(self._codec, rows)

    def __len__(self) -> int:
        return len(self._run)

    def run_of(self, rows: np.ndarray) -> SortedRun:
        """The distinct rows of an (arity, m) batch as a sorted run in this set's encoding.
        O(m log m)."""
        return SortedRun.from_batch(self._codec, rows)

    def new_run(self, rows: np.ndarray) -> SortedRun:
        """The distinct rows of an (arity, m) batch that are not in the set, as a sorted run.
        O(m log m + m log n); reads only."""
        return self.run_of(rows).difference(self._run)

    def add(self, run: SortedRun) -> None:
        """Add the rows of a run made by ``run_of`` or ``new_run``. O(n + m), numba merge."""
        self._run = self._run.merge(run)


def merge_runs(runs: list[SortedRun]) -> SortedRun:
    """The union of runs of one RowSet's encoding, merged pairwise. O(total · log(len(runs)))."""
    while len(runs) > 1:
        runs = [runs[i].merge(runs[i + 1]) if i + 1 < len(runs) else runs[i]
                for i in range(0, len(runs), 2)]
    return runs[0]
