"""The elastic engine's sparse state of one derived relation, committed between runs.

``RelationState``: for one derived relation, the materialized rows and two int64 arrays aligned
with them: the iteration in which each tuple is first derived and its proof count (the number
of rule instantiations deriving it in that iteration), as Algorithm 2 of the elastic paper
defines them (a derived relation's own facts come from a base rule, so every tuple has
iteration >= 1). Immutable; 16 bytes per tuple, plus tombstones and row indexes (see the
class). A run reads and grows it through an ``elastic_universe.Universe``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from herbrand.evaluators.batch_joins import columns_at
from herbrand.evaluators.incremental.relation_sets import hashed_changes
from herbrand.evaluators.incremental.row_index import RowIndex
from herbrand.framework.growing import GrowingColumns
from herbrand.framework.storage import Relation

NEVER = np.iinfo(np.int64).max // 4  # the iteration of a tuple that is not derived
# the proof count of a tuple that has one (it is derived) not computed yet: Bootstrap leaves
# every count unknown and an Update computes those it must lower (``elastic_stratum``); large
# enough that adding an update's weights keeps it positive
UNKNOWN = np.iinfo(np.int64).max // 4

_COMPACT_MINIMUM = 64  # tombstones always tolerated
_MAX_RUNS = 8  # row indexes of appended runs kept before they are merged into one


@dataclass(frozen=True)
class RelationState:
    """A derived relation's rows with their first iteration and proof count (aligned).

    ``rows`` holds every row the relation has held since the last compaction: a removed row
    stays as a tombstone (iteration NEVER), so the next Update's universe extends this one and
    the evaluator's indexes on it only grow. Tombstones are dropped (an O(n) compaction)
    once they outnumber the live rows. ``table`` is ``rows`` with each row's position as a
    last column, growable (``GrowingColumns``: the next Update's universe forks it and appends
    in place), built by ``set_up`` (the engine's first Bootstrap) or when an Update first
    reads it (a state a switched epoch bootstraps and the next one replaces never needs it);
    ``rows`` is then a view of it. ``numbers`` is the same for ``iteration`` and ``count`` (a
    growable pair, views of it), and ``per_iteration`` the live tuples of each iteration
    (kept by an Update from the positions it moved, else counted when first read).
    ``relation`` is the live rows; ``indexes`` find rows of the universe (the last few
    appended runs apart); none until ``index`` or an Update's first search of the rows.
    """

    rows: np.ndarray
    iteration: np.ndarray
    count: np.ndarray
    indexes: tuple[RowIndex, ...]
    relation: Relation
    built_table: GrowingColumns | None = field(default=None, compare=False, repr=False)
    built_numbers: GrowingColumns | None = field(default=None, compare=False, repr=False)
    counted: np.ndarray | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, rows: np.ndarray, iteration: np.ndarray, count: np.ndarray,
           indexes: tuple[RowIndex, ...] | None = None, table: GrowingColumns | None = None,
           numbers: GrowingColumns | None = None,
           per_iteration: np.ndarray | None = None) -> RelationState:
        """The state of distinct ``rows`` (tombstones included), found by ``indexes`` (None:
        indexed when first searched), with ``table`` and ``numbers`` when they are built
        already (``rows``, ``iteration`` and ``count`` their views) and ``per_iteration``
        when known. O(iterations) with ``per_iteration`` (the live rows are counted by it, and
        those of a state with tombstones are taken when first read: ``LiveRows``), else O(n)
        to count them; O(n) to compact, plus O(n) expected to merge too many index runs."""
        live_rows = (int(per_iteration.sum()) if per_iteration is not None
                     else int(np.count_nonzero(iteration < NEVER)))
        if len(iteration) - live_rows > max(live_rows, _COMPACT_MINIMUM):
            live = iteration < NEVER
            rows, iteration, count = columns_at(rows, live), iteration[live], count[live]
            indexes, table, numbers = None, None, None
        if indexes is None:
            indexes = ()
        elif len(indexes) > _MAX_RUNS:
            indexes = (RowIndex(rows),)
        for array in (iteration, count):
            array.setflags(write=False)
        relation = (Relation(rows, unique=True) if live_rows == len(iteration)
                    else LiveRows(rows, iteration, live_rows))
        return cls(rows, iteration, count, tuple(indexes), relation, table, numbers,
                   per_iteration)

    @property
    def table(self) -> GrowingColumns:
        """The rows with their positions as a last row, growable. O(n) on the first call."""
        if self.built_table is None:
            object.__setattr__(self, "built_table", positioned(self.rows))
        return self.built_table

    @property
    def numbers(self) -> GrowingColumns:
        """``iteration`` and ``count`` as a growable pair (the next Update's universe forks
        it: its appended rows' old numbers are written in place). O(n) on the first call
        (a Bootstrap's state), which makes ``iteration`` and ``count`` views of it."""
        if self.built_numbers is None:
            numbers = GrowingColumns([self.iteration, self.count], room(len(self.iteration)))
            iteration, count = numbers.columns
            object.__setattr__(self, "built_numbers", numbers)
            object.__setattr__(self, "iteration", iteration)
            object.__setattr__(self, "count", count)
        return self.built_numbers

    @property
    def per_iteration(self) -> np.ndarray:
        """The live tuples first derived in each iteration (indexed by iteration). O(n) on
        the first call of a state whose Update did not keep them (a Bootstrap's)."""
        if self.counted is None:
            object.__setattr__(self, "counted",
                               np.bincount(self.iteration[self.iteration < NEVER]))
        return self.counted

    @property
    def is_set_up(self) -> bool:
        """Whether ``set_up`` has nothing left to build. O(1)."""
        return (self.built_table is not None and self.built_numbers is not None
                and self.counted is not None)

    def set_up(self) -> None:
        """Build what an Update reads of this state (``table``, ``numbers``,
        ``per_iteration``): O(n) for a Bootstrap's state, O(1) afterwards."""
        _ = self.table, self.numbers, self.per_iteration

    def index(self) -> None:
        """Index the rows when no row index finds them (an Update's first search would):
        O(n) expected then, else O(1)."""
        if not self.indexes and len(self.iteration):
            object.__setattr__(self, "indexes", (RowIndex(self.rows),))

    def changes_to(self, new: RelationState) -> tuple[np.ndarray, np.ndarray]:
        """(added, removed) live rows from this state to ``new``, by one hash table of this
        state's live rows (``hashed_changes``): O(n + m) expected, and no row index of either
        state is built (a switched epoch's fresh state has none; sorting for one cost 48 of
        RDFS LUBM(1)'s 123 ms)."""
        added, removed = hashed_changes(self.relation, new.relation)
        return added.columns, removed.columns

    @property
    def nbytes(self) -> int:
        """Bytes kept beyond the live rows: iterations, counts, tombstones, row indexes."""
        # the table's bytes (built or not, room not counted) beyond the live rows
        arity, n = self.rows.shape
        tombstones = 8 * ((arity + 1) * n - arity * len(self.relation))
        return (self.iteration.nbytes + self.count.nbytes + tombstones
                + sum(index.nbytes for index in self.indexes))


class LiveRows(Relation):
    """The live rows of a state with tombstones (the rows whose iteration is not NEVER),
    copied out of the state's rows when first read. An Update commits a new state per changed
    relation, and most of their relations nobody reads before the next Update replaces them
    (one no higher stratum reads, between a user's reads): the copy of every live row (a
    millisecond of RDFS LUBM(1)'s one-fact update once its relation has a tombstone), and
    the mask of the live ones, are paid only when read. O(1); ``len`` O(1); the first other
    read O(n)."""

    __slots__ = ("_count", "_iteration", "_rows")

    def __init__(self, rows: np.ndarray, iteration: np.ndarray, count: int):
        """The rows of (arity, n) ``rows`` whose ``iteration`` is below NEVER (``count`` of
        them); neither array is written afterwards."""
        self._rows, self._iteration, self._count = rows, iteration, count
        self._set = None

    def __len__(self) -> int:
        return self._count

    def __getattr__(self, name: str) -> np.ndarray:
        """``_columns``, the live rows, copied on the first read (an unset slot's read
        lands here)."""
        if name != "_columns":
            raise AttributeError(name)
        columns = columns_at(self._rows, self._iteration < NEVER)
        columns.setflags(write=False)
        self._columns, self._rows, self._iteration = columns, None, None
        return columns


def positioned(rows: np.ndarray) -> GrowingColumns:
    """``rows`` with their positions as a last row, with room for an eighth more. O(n)."""
    n = rows.shape[1]
    return GrowingColumns([*rows, np.arange(n, dtype=np.int64)], room(n))


def room(n: int) -> int:
    """The capacity a growable array of n entries is made with: an eighth more, and 64."""
    return n + n // 8 + 64
