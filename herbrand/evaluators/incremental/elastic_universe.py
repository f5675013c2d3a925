"""The working sets one stratum's run of the elastic engine reads and grows (``Universe``).

``Universe``: during one Bootstrap or Update of a stratum, the rows of one relation of either
epoch (a derived relation's: previous epoch's rows first, rows new in this epoch appended; an
input's: see ``elastic._input_universe``) with their first iteration in the previous epoch
(``old_iteration``; NEVER when absent) and in this epoch (``new_iteration``: the old one until
the run decides otherwise; NEVER when absent). It is the working copy of one run: it is
created per run, from a committed ``elastic_state.RelationState`` or an input, and never shared
with a committed state (``state`` makes the next one).
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.batch_joins import columns_at
from herbrand.evaluators.incremental.elastic_kernels import undecided_sums
from herbrand.evaluators.incremental.elastic_state import (
    NEVER,
    RelationState,
    positioned,
    room,
)
from herbrand.evaluators.incremental.row_index import ABSENT, RowIndex
from herbrand.framework.growing import GrowingColumns
from herbrand.framework.storage import Relation


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
        at = index.find(columns_at(rows, missing))
        found[missing] = at
        missing = missing[at == ABSENT]
    return found


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
                 per_iteration: np.ndarray | None = None, new_count: np.ndarray | None = None):
        """``index``: finds the rows (None: built on the first ``find``); ``table``: the
        rows with their positions (``positioned``; None: made when first needed), appended
        to by this run; ``moved``: the distinct positions whose new iteration may differ
        from the old one (default none); ``numbers``: the old iterations and counts, growable
        (a fork of the committed state's, never written but past its rows; None: made on
        the first append); ``per_iteration``: the old tuples per iteration (None: counted
        on the first ``kept_at``); ``new_count``: given (with ``new_iteration``) when both are
        the run's own, written in place (an input's: no copy of them is made unless the run
        appends or commits a state), else None: the new numbers start as a growable copy of
        the old ones."""
        self.rows = rows
        self.old_iteration = old_iteration
        self.old_count = old_count
        self._old = numbers
        self._old_owned = False  # whether ``_old`` is this run's own (else read-only)
        self._new: GrowingColumns | None = None  # the new numbers, growable (``_growable``)
        if new_count is None:
            self._new = GrowingColumns([new_iteration, old_count], room(len(new_iteration)))
            new_iteration, new_count = self._new.writable_columns()
        self.new_iteration, self.new_count = new_iteration, new_count
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
        self._sum_slots: np.ndarray | None = None  # ``undecided_sums``'s scratch, zeros
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

    def holds(self, relation: Relation) -> bool:
        """Whether ``relation`` is ``relation()`` as it is now (so ``find`` gives its rows'
        positions in it). O(1)."""
        return relation is self._relation

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
            grown = np.zeros(room(len(self)), dtype=bool)
            if self._moved_mask is not None:
                grown[:len(self._moved_mask)] = self._moved_mask
            self._moved_mask = grown
        fresh = positions[~self._moved_mask[positions]]
        self._moved_mask[fresh] = True
        self._moved.append(fresh)
        self._moved_positions = None

    def undecided_sums(self, positions: np.ndarray, weights: np.ndarray, k: int
                       ) -> tuple[np.ndarray, np.ndarray]:
        """The distinct ``positions`` (ABSENT ones skipped) whose new iteration is at least
        k, with the sum of their ``weights`` each (``elastic_kernels.undecided_sums``). O(m),
        plus a scratch of 4 bytes per row, allocated on the first call of a run and when the
        universe outgrows it (zeros: pages touched as used)."""
        if self._sum_slots is None or len(self._sum_slots) < len(self):
            self._sum_slots = np.zeros(room(len(self)), dtype=np.int32)
        return undecided_sums(positions, weights, self.new_iteration, k, self._sum_slots)

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
        self._old = GrowingColumns([self.old_iteration, self.old_count], room(len(self)))
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
        self._growable().append(np.stack([np.full(m, iteration), count]))
        self.new_iteration, self.new_count = self._new.writable_columns()
        self._indexes.append(RowIndex(rows, positions))
        self._mark_moved(positions)
        self._relation = None

    def _growable(self) -> GrowingColumns:
        """The new numbers, growable: made from the run's own arrays when they were given
        (O(n), once). O(1) otherwise."""
        if self._new is None:
            self._new = GrowingColumns([self.new_iteration, self.new_count], room(len(self)))
            self.new_iteration, self.new_count = self._new.writable_columns()
        return self._new

    def _positioned(self) -> GrowingColumns:
        if self._table is None:
            self._table = positioned(self.rows)
        return self._table

    def relation(self) -> Relation:
        """The rows with their positions as a last column: a view of the table (appends keep
        the old rows as a prefix in the same buffer, so an evaluator's index on it only
        grows, found to in O(1)). O(1); a universe without its table (an input's) makes it
        when the relation's rows are first read (``_PositionedRows``), O(n)."""
        if self._relation is None:
            self._relation = (_PositionedRows(self) if self._table is None
                              else Relation(self._table.columns, unique=True))
        return self._relation

    def rows_at(self, positions: np.ndarray) -> Relation:
        """The rows at ``positions`` with their positions (a seed relation)."""
        return Relation(np.concatenate([columns_at(self.rows, positions), positions[None, :]]),
                        unique=True)

    def state(self) -> RelationState:
        """This epoch's rows with their iterations and counts (removed rows as tombstones).
        O(n)."""
        return RelationState.of(self.rows, self.new_iteration, self.new_count,
                                None if self._unindexed else tuple(self._indexes),
                                self._table, self._growable(), self._new_per_iteration())

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
        return columns_at(self.rows, added), columns_at(self.rows, removed)


class InputNumbers:
    """Read-only runs of zeros followed by NEVERs, views of one buffer kept across runs: the
    iterations and counts of an input's universe (``elastic._input_universe``), which are 0
    but for its changed rows, and which no run writes. Four fresh arrays of them per update
    cost RDFS LUBM(1)'s one-fact update about 0.2 ms (zeroing 3 MB). The buffer holds as
    many zeros and NEVERs as the largest request so far, with an eighth more room: 8 bytes
    per row of the largest input (``nbytes``)."""

    __slots__ = ("_buffer", "_zeros")

    def __init__(self) -> None:
        self._buffer = np.zeros(0, dtype=np.int64)
        self._zeros = 0  # the buffer is this many zeros, then NEVERs

    @property
    def nbytes(self) -> int:
        return self._buffer.nbytes

    def runs(self, zeros: int, nevers: int = 0) -> np.ndarray:
        """A read-only int64 array of ``zeros`` zeros, then ``nevers`` NEVERs. O(1), or
        O(zeros + nevers) when the buffer grows."""
        if zeros > self._zeros or nevers > len(self._buffer) - self._zeros:
            more_zeros = max(zeros, self._zeros)
            more_zeros += more_zeros // 8
            more_nevers = max(nevers, len(self._buffer) - self._zeros)
            more_nevers += more_nevers // 8 + 64
            self._buffer = np.concatenate([np.zeros(more_zeros, dtype=np.int64),
                                           np.full(more_nevers, NEVER)])
            self._buffer.setflags(write=False)
            self._zeros = more_zeros
        return self._buffer[self._zeros - zeros:self._zeros + nevers]


class _PositionedRows(Relation):
    """A universe's ``relation()`` before its table is made: its rows with their positions,
    made when first read (``Universe._positioned``). An input's universe is read by its
    whole-row joins only, which find rows by its row index (``elastic_setup``): the copy of
    every row with its position (RDFS LUBM(1): 0.1 ms of a one-fact update's 1.2) is paid
    only when a join reads the rows. O(1); ``len`` and ``arity`` O(1); the first other read
    O(n)."""

    __slots__ = ("_arity", "_count", "_universe")

    def __init__(self, universe: Universe):
        self._universe, self._count, self._arity = universe, len(universe), len(universe.rows) + 1
        self._set = None

    def __len__(self) -> int:
        return self._count

    @property
    def arity(self) -> int:
        return self._arity

    def __getattr__(self, name: str) -> np.ndarray:
        """``_columns``, the table's, made on the first read (an unset slot's read lands
        here)."""
        if name != "_columns":
            raise AttributeError(name)
        columns = self._universe._positioned().columns
        self._columns, self._universe = columns, None
        return columns
