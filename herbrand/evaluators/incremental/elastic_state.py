"""The elastic engine's sparse state, and the working sets one stratum's run reads and grows.

``RelationState``: for one derived relation, the materialized rows and two int64 arrays aligned
with them: the iteration in which each tuple is first derived and its proof count (the number
of rule instantiations deriving it in that iteration), as Algorithm 2 of the elastic paper
defines them (a derived relation's own facts come from a base rule, so every tuple has
iteration >= 1). Immutable; 16 bytes per tuple, plus tombstones and row indexes (see the
class).

``Universe``: during one Bootstrap or Update of a stratum, the rows of one relation of either
epoch (a derived relation's: previous epoch's rows first, rows new in this epoch appended; an
input's: see ``elastic._input_universe``) with their first
iteration in the previous epoch (``old_iteration``; NEVER when absent) and in this epoch
(``new_iteration``: the old one until the run decides otherwise; NEVER when absent). It is the
working copy of one run: it is created per run and never shared with a committed state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from herbrand.evaluators.incremental.relation_sets import hashed_changes
from herbrand.evaluators.incremental.row_index import ABSENT, RowIndex
from herbrand.framework.growing import GrowingColumns
from herbrand.framework.storage import Relation

NEVER = np.iinfo(np.int64).max // 4  # the iteration of a tuple that is not derived
# the proof count of a tuple that has one (it is derived) not computed yet: Bootstrap leaves
# every count unknown and an Update computes those it must lower (``elastic_stratum``); large
# enough that adding an update's weights keeps it positive
UNKNOWN = np.iinfo(np.int64).max // 4


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
        when known. O(n) (no copy when every row is live), plus O(n) expected to merge too
        many index runs."""
        live = iteration < NEVER
        live_rows = int(live.sum())
        if len(live) - live_rows > max(live_rows, _COMPACT_MINIMUM):
            rows, iteration, count = rows[:, live], iteration[live], count[live]
            indexes, table, numbers, live = None, None, None, None
        elif live_rows == len(live):
            live = None
        if indexes is None:
            indexes = ()
        elif len(indexes) > _MAX_RUNS:
            indexes = (RowIndex(rows),)
        for array in (iteration, count):
            array.setflags(write=False)
        relation = (Relation(rows, unique=True) if live is None
                    else LiveRows(rows, live, live_rows))
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
            numbers = GrowingColumns([self.iteration, self.count], _room(len(self.iteration)))
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
    """The live rows of a state with tombstones (``rows[:, live]``), copied out of ``rows``
    when first read. An Update commits a new state per changed relation, and most of their
    relations nobody reads before the next Update replaces them (one no higher stratum
    reads, between a user's reads): the copy of every live row (a millisecond of RDFS
    LUBM(1)'s one-fact update once its relation has a tombstone) is paid only when read.
    O(1); ``len`` O(1); the first other read O(n)."""

    __slots__ = ("_count", "_live", "_rows")

    def __init__(self, rows: np.ndarray, live: np.ndarray, count: int):
        """The rows of (arity, n) ``rows`` where the bool mask ``live`` holds (``count`` of
        them: its sum); neither is written afterwards."""
        self._rows, self._live, self._count = rows, live, count
        self._set = None

    def __len__(self) -> int:
        return self._count

    def __getattr__(self, name: str) -> np.ndarray:
        """``_columns``, the live rows, copied on the first read (an unset slot's read
        lands here)."""
        if name != "_columns":
            raise AttributeError(name)
        columns = self._rows[:, self._live]
        columns.setflags(write=False)
        self._columns, self._rows, self._live = columns, None, None
        return columns


def positioned(rows: np.ndarray) -> GrowingColumns:
    """``rows`` with their positions as a last row, with room for an eighth more. O(n)."""
    n = rows.shape[1]
    return GrowingColumns([*rows, np.arange(n, dtype=np.int64)], _room(n))


def _room(n: int) -> int:
    return n + n // 8 + 64


def find_in(indexes, rows: np.ndarray) -> np.ndarray:
    """Positions of ``rows`` in the first of ``indexes`` holding them (ABSENT if none). The
    first index is searched for every row, each next one for the rows still missing: O(m)
    for the first, O(missing) for each next (no pass over all m rows per index)."""
    if not indexes:
        return np.full(rows.shape[1], ABSENT, dtype=np.int64)
    found = indexes[0].find(rows)
    missing = np.flatnonzero(found == ABSENT)
    for index in indexes[1:]:
        if not len(missing):
            break
        at = index.find(rows[:, missing])
        found[missing] = at
        missing = missing[at == ABSENT]
    return found


_COMPACT_MINIMUM = 64  # tombstones always tolerated
_MAX_RUNS = 8  # row indexes of appended runs kept before they are merged into one


class Universe:
    """One relation's rows of both epochs during a run (see the module docstring).

    ``new_iteration`` starts as the old iteration (an Update) and is overridden only where the
    run decides otherwise (``settle``, ``append``, an input's changes): a tuple the run never
    touches keeps its iteration and count, as Algorithm 3 would give them. ``moved`` lists the
    positions where the two may differ, so the per-iteration work of a run (its seeds, its
    deleted heads) follows the changes rather than the relation.

    Appends grow in place: the rows with their positions live in a ``GrowingColumns`` table
    (``relation`` is a view of it, so an evaluator's index on it grows by the appended rows),
    and so do the number arrays: the old ones are a fork of the committed state's
    (``RelationState.numbers``), extended in place, and the new ones a growable copy made
    when the run starts (the run's one O(n) copy of them; copying all four again on the
    first append cost TC graph10000's 1% insert about 2 ms). The work per run follows the
    moved positions: the tuples per old iteration come from the state (``kept_at``), the
    changes and the next state's tuples per iteration from the moved positions.
    """

    def __init__(self, rows: np.ndarray, old_iteration: np.ndarray, old_count: np.ndarray,
                 new_iteration: np.ndarray, index: RowIndex | tuple[RowIndex, ...] | None,
                 table: GrowingColumns | None = None, moved: np.ndarray | None = None,
                 numbers: GrowingColumns | None = None,
                 per_iteration: np.ndarray | None = None):
        """``index``: finds the rows (None: built on the first ``find``); ``table``: the
        rows with their positions (``positioned``; None: made when first needed), appended
        to by this run; ``moved``: the distinct positions whose new iteration may differ
        from the old one (default none); ``numbers``: the old iterations and counts, growable
        (a fork of the committed state's, never written but past its rows; None: made on
        the first append); ``per_iteration``: the old tuples per iteration (None: counted
        on the first ``kept_at``)."""
        self.rows = rows
        self.old_iteration = old_iteration
        self.old_count = old_count
        self._old = numbers
        self._old_owned = False  # whether ``_old`` is this run's own (else read-only)
        self._new = GrowingColumns([new_iteration, old_count], _room(len(new_iteration)))
        self.new_iteration, self.new_count = self._new.writable_columns()
        self._indexes = list(index) if isinstance(index, tuple) else (
            [] if index is None else [index])
        # the first rows, which no index holds yet (``find`` indexes them first)
        self._unindexed = 0 if self._indexes else rows.shape[1]
        self._table = table
        self._relation: Relation | None = None
        # the moved positions: a mask over the rows (allocated on the first move) and the
        # distinct positions in the order they first moved, in chunks
        self._moved_mask: np.ndarray | None = None
        self._moved: list[np.ndarray] = []
        self._moved_positions: np.ndarray | None = None
        if moved is not None:
            self._mark_moved(moved)
        self._per_iteration = per_iteration  # old tuples per iteration (read-only)
        self._away: np.ndarray | None = None  # of those, how many moved to another iteration

    @classmethod
    def of_state(cls, state: RelationState) -> Universe:
        """A derived relation at the start of an Update: every tuple where it was. O(n) to
        copy the numbers the run writes (``set_up`` the state first: O(1) then)."""
        numbers = state.numbers.fork()
        old_iteration, old_count = numbers.columns
        return cls(state.rows, old_iteration, old_count, old_iteration, state.indexes,
                   state.table.fork(), numbers=numbers, per_iteration=state.per_iteration)

    @classmethod
    def of_empty(cls, arity: int) -> Universe:
        """A derived relation at the start of a Bootstrap."""
        rows = np.zeros((arity, 0), dtype=np.int64)
        nothing = np.zeros(0, dtype=np.int64)
        return cls(rows, nothing, nothing, nothing, RowIndex(rows))

    @classmethod
    def of_input(cls, old: Relation, added: np.ndarray, removed: np.ndarray) -> Universe:
        """A relation of a lower stratum, read by this one (all at iteration 0), that lost
        ``removed`` and gained ``added`` rows (both already exact set differences): the old
        rows are searched among the removed ones, O(n) expected. Plus O(n) copies; the
        universe is indexed only if searched. (The engine's inputs have universes of their
        own, searched by their kept hash tables: ``elastic._input_universe``.)"""
        n, a = len(old), added.shape[1]
        old_iteration = np.concatenate([np.zeros(n, dtype=np.int64), np.full(a, NEVER)])
        new_iteration = np.zeros(n + a, dtype=np.int64)
        gone = (np.flatnonzero(RowIndex(removed).find(old.columns) != ABSENT)
                if removed.shape[1] else np.zeros(0, dtype=np.int64))
        new_iteration[gone] = NEVER
        rows = np.concatenate([old.columns, added], axis=1) if a else old.columns
        moved = np.concatenate([gone, np.arange(n, n + a, dtype=np.int64)])
        return cls(rows, old_iteration, np.zeros(n + a, dtype=np.int64), new_iteration, None,
                   moved=moved)

    @classmethod
    def of_current(cls, relation: Relation) -> Universe:
        """An unchanged input: every row at iteration 0 in both epochs."""
        zeros = np.zeros(len(relation), dtype=np.int64)
        return cls(relation.columns, zeros, zeros, zeros, None)

    def __len__(self) -> int:
        return self.rows.shape[1]

    @property
    def indexed(self) -> bool:
        """Whether ``find`` has its row index already (else the first one builds it, O(n log
        n))."""
        return not self._unindexed

    def find(self, rows: np.ndarray) -> np.ndarray:
        """Positions of ``rows`` (ABSENT where not in the universe). O(m) expected, plus O(n)
        on the first call of a universe without its row index."""
        if self._unindexed:
            self._indexes.insert(0, RowIndex(self.rows[:, :self._unindexed]))
            self._unindexed = 0
        return find_in(self._indexes, rows)

    def holds(self, columns: np.ndarray) -> bool:
        """Whether ``columns`` are the columns of ``relation()`` as it is now (so ``find``
        gives their rows' positions in them). O(1)."""
        return self._relation is not None and columns is self._relation.columns

    def moved(self) -> np.ndarray:
        """The distinct positions whose new iteration may differ from the old one (in no
        particular order). O(moved) after a change, O(1) otherwise."""
        if self._moved_positions is None:
            self._moved_positions = (self._moved[0] if len(self._moved) == 1 else np.concatenate(
                [*self._moved, np.zeros(0, dtype=np.int64)]))
            self._moved = [self._moved_positions]
        return self._moved_positions

    def _mark_moved(self, positions: np.ndarray) -> None:
        """Add distinct ``positions`` to the moved ones: O(len(positions)), and O(n) for the
        mask on the first call of a run (no sort: ``np.unique`` of every moved position on
        each call cost TC graph10000's 1% insert a fifth of its Update)."""
        if self._moved_mask is None or len(self._moved_mask) < len(self):
            grown = np.zeros(_room(len(self)), dtype=bool)
            if self._moved_mask is not None:
                grown[:len(self._moved_mask)] = self._moved_mask
            self._moved_mask = grown
        fresh = positions[~self._moved_mask[positions]]
        self._moved_mask[fresh] = True
        self._moved.append(fresh)
        self._moved_positions = None

    def settle(self, positions: np.ndarray, iterations: np.ndarray, counts: np.ndarray) -> None:
        """Give the rows at distinct ``positions`` their new iterations and counts. O(m)."""
        if self._away is not None:
            old, before = self.old_iteration[positions], self.new_iteration[positions]
            tracked = old < len(self._per_iteration)
            leaving = tracked & (before == old) & (iterations != old)
            returning = tracked & (before != old) & (iterations == old)
            np.add.at(self._away, old[leaving], 1)
            np.add.at(self._away, old[returning], -1)
        self.new_iteration[positions] = iterations
        self.new_count[positions] = counts
        self._mark_moved(positions)

    def kept_at(self, k: int) -> int:
        """How many tuples first derived in iteration k before still are (the untouched
        ones and those settled at k again). O(moved) on the first call of a run (O(n)
        without the tuples per old iteration), then O(1)."""
        if self._away is None:
            if self._per_iteration is None:
                self._per_iteration = np.bincount(self.old_iteration[self.old_iteration < NEVER])
            self._away = np.zeros(len(self._per_iteration), dtype=np.int64)
            moved = self.moved()
            old, new = self.old_iteration[moved], self.new_iteration[moved]
            away = (old < NEVER) & (new != old)
            np.add.at(self._away, old[away], 1)
        if k >= len(self._per_iteration):
            return 0
        return int(self._per_iteration[k] - self._away[k])

    def drop_beyond(self, k: int) -> None:
        """The run ended at iteration k: tuples still where they were in a later iteration
        are not derived in this epoch. O(iterations) when there are none (the tuples per
        old iteration less those that moved), else O(n)."""
        self.kept_at(k)
        later = slice(k + 1, None)
        if self._per_iteration[later].sum() == self._away[later].sum():
            return
        beyond = np.flatnonzero((self.new_iteration == self.old_iteration)
                                & (self.old_iteration > k) & (self.old_iteration < NEVER))
        self.new_iteration[beyond] = NEVER
        self._mark_moved(beyond)

    def record_old_counts(self, positions: np.ndarray, counts: np.ndarray) -> None:
        """Record the previous epoch's proof counts of the rows at ``positions``, computed now
        (they were UNKNOWN). The committed state's numbers are copied on the first write, so
        they stay as they were: O(n) once per run."""
        if not self._old_owned:
            self._own_old_numbers()
        self.old_count[positions] = counts

    def _own_old_numbers(self) -> None:
        """Make the old numbers this run's own, writable. O(n)."""
        self._old = GrowingColumns([self.old_iteration, self.old_count], _room(len(self)))
        self._old_owned = True
        self.old_iteration, self.old_count = self._old.writable_columns()

    def append(self, rows: np.ndarray, iteration: int, count: np.ndarray) -> None:
        """Add distinct rows new to the universe, first derived in this epoch at
        ``iteration`` with proof counts ``count``. O(m) amortised (see the class doc; the
        table's first move in a run, when a fork appended to its buffer first, is O(n))."""
        start, m = len(self), rows.shape[1]
        positions = np.arange(start, start + m, dtype=np.int64)
        self.rows = self._positioned().append(np.concatenate([rows, positions[None, :]]))[:-1]
        if self._old is None:
            self._own_old_numbers()
        old = self._old.append(np.stack([np.full(m, NEVER), np.zeros(m, dtype=np.int64)]))
        self.old_iteration, self.old_count = (self._old.writable_columns() if self._old_owned
                                              else old)
        self._new.append(np.stack([np.full(m, iteration), count]))
        self.new_iteration, self.new_count = self._new.writable_columns()
        self._indexes.append(RowIndex(rows, positions))
        self._mark_moved(positions)
        self._relation = None

    def _positioned(self) -> GrowingColumns:
        if self._table is None:
            self._table = positioned(self.rows)
        return self._table

    def relation(self) -> Relation:
        """The rows with their positions as a last column: a view of the table (appends keep
        the old rows as a prefix in the same buffer, so an evaluator's index on it only
        grows, found to in O(1)). O(n) on the first call of a universe without its table."""
        if self._relation is None:
            self._relation = Relation(self._positioned().columns, unique=True)
        return self._relation

    def rows_at(self, positions: np.ndarray) -> Relation:
        """The rows at ``positions`` with their positions (a seed relation)."""
        return Relation(np.concatenate([self.rows[:, positions], positions[None, :]]),
                        unique=True)

    def state(self) -> RelationState:
        """This epoch's rows with their iterations and counts (removed rows as tombstones).
        O(n)."""
        return RelationState.of(self.rows, self.new_iteration, self.new_count,
                                None if self._unindexed else tuple(self._indexes),
                                self._table, self._new, self._new_per_iteration())

    def _new_per_iteration(self) -> np.ndarray | None:
        """The live tuples per new iteration, from the old ones and the moved positions
        (None when the old ones are not known). O(moved + iterations)."""
        if self._per_iteration is None:
            return None
        moved = self.moved()
        old, new = self.old_iteration[moved], self.new_iteration[moved]
        old, new = old[old < NEVER], new[new < NEVER]
        size = max(len(self._per_iteration), int(new.max()) + 1 if len(new) else 0)
        per = np.zeros(size, dtype=np.int64)
        per[:len(self._per_iteration)] = self._per_iteration
        per += np.bincount(new, minlength=size) - np.bincount(old, minlength=size)
        return per

    def changes(self) -> tuple[np.ndarray, np.ndarray]:
        """(added, removed) rows of this epoch against the previous one, in position order.
        O(moved log moved): a position whose iterations differ has moved."""
        moved = np.sort(self.moved())
        old, new = self.old_iteration[moved], self.new_iteration[moved]
        added = moved[(new < NEVER) & (old >= NEVER)]
        removed = moved[(old < NEVER) & (new >= NEVER)]
        return self.rows[:, added], self.rows[:, removed]
