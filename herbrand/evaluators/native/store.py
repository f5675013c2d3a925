"""``NativeStore``: the relations and indexes the native kernels read, and growing them.

Relations are (capacity, arity) int64 buffers (row-major) that grow by doubling, each with a
dedup table (a unique hash index on every column) that head tuples are inserted through; probe
indexes are hash indexes on chosen key columns, caught up with the rows appended since they
were last used, whose rows move from chains into runs as they double (``runs``). The kernels
read and write them through the addresses in ``rel_meta`` and ``ix_meta`` (layout in
``kernels``); ``arrays.NativeArrays``, which this class extends, owns the arrays and grows
them. This class names relations, creates indexes once per (relation, key), answers a kernel's
request for room (``layout.NEED_*``), runs the kernels until they are done, and turns buffers
back into Relations.

Given an IndexBacking class tagged ``native`` (``view_index``), a join's probe of a whole
relation reads a *view index* instead: a backing of that class on (relation, key), fed the
relation's rows, whose ``native_view()`` arrays the kernels probe in place (``views``) through
a run table this class fills. A kernel that finds a view behind its relation asks for it
(``NEED_INDEX``); the store inserts the rows appended since into the backing, takes a new view
and calls again, so views change only between a kernel's iterations. Deltas, negations and the
dedup tables stay on the hash indexes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from herbrand.evaluators.native import layout as L
from herbrand.evaluators.native.arrays import (
    NO_ROWS,
    NO_ROWS32,
    NativeArrays,
    copy_into,
    empty_table,
)
from herbrand.framework.contracts import IndexBacking
from herbrand.framework.errors import EvaluationError
from herbrand.framework.native_view import HASH_RUN, NativeView
from herbrand.framework.spread import Spread
from herbrand.framework.storage import Relation, row_keys

# chunks of a rule's first-level rows per thread (``NativeStore.run_shared``): enough that the
# threads finish within a small share of the work of each other, and no chunk so large that
# waiting for it counts. A first level of few rows is claimed row by row: a small base relation
# leading (Andersen's load and store, 250 rows) can hold most of a pass's work in one row, and
# one atomic per row is nothing beside it
CHUNKS_PER_WORKER = 64
MIN_CHUNK, MAX_CHUNK = 1, 1024
_NO_SIZES = np.zeros((0, 0), dtype=np.int64)  # ``run`` records no iteration's sizes


def claim_chunk(rows: int, workers: int) -> int:
    """The rows each claim of ``run_shared``'s tasks takes from a first level of ``rows``."""
    return max(MIN_CHUNK, min(MAX_CHUNK, rows // (CHUNKS_PER_WORKER * workers)))


@dataclass
class _View:
    """A view index's backing, its last view and run table (kept alive: the kernels read
    their addresses), and the relation size its distinct keys were last counted at."""

    backing: IndexBacking
    view: NativeView | None = None
    table: np.ndarray | None = None
    counted: int = -1


class NativeStore(NativeArrays):
    """Named relations and their indexes; with ``view_index`` (an IndexBacking class tagged
    ``native``), joins of whole relations probe backings of that class in place. Not safe for
    concurrent use: only the tasks of ``run_shared`` run at once, and they grow nothing."""

    def __init__(self, view_index: type[IndexBacking] | None = None) -> None:
        super().__init__()
        self.view_index = view_index
        self._views: dict[int, _View] = {}  # view index id -> its backing and view
        self.ids: dict[str, int] = {}
        self.dedup: list[int] = []
        self._indexes: dict[tuple[int, tuple[int, ...]], int] = {}
        self._columns = 0
        self.sources: dict[str, Relation] = {}  # the Relation each named relation was loaded from

    @property
    def count(self) -> int:
        """The number of relations."""
        return len(self.dedup)

    # -- relations -------------------------------------------------------------------------------

    def add(self, name: str, relation: Relation) -> int:
        """Load ``relation`` as the relation ``name`` (a new id); its dedup table is built.
        O(n) expected."""
        rel = self.count
        n, arity = len(relation), relation.arity
        buffer = np.empty((max(16, n), arity), dtype=np.int64)
        buffer[:n] = relation.columns.T
        if rel >= len(self.rel_meta):
            self.rel_meta = np.concatenate([self.rel_meta, np.zeros_like(self.rel_meta)])
        self._buffers.append(buffer)
        self._set_buffer(rel, buffer)
        self.rel_meta[rel, L.R_SIZE] = n
        self.rel_meta[rel, L.R_ARITY] = arity
        dedup = self._new_index(rel, tuple(range(arity)), unique=True, rows=n)
        self.ids[name] = rel
        self.sources[name] = relation
        self.dedup.append(dedup)
        self.catch_up(dedup)
        return rel

    def empty(self, name: str, arity: int) -> int:
        """A new empty relation ``name`` of ``arity``."""
        return self.add(name, Relation.empty(arity))

    def relation(self, rel: int, spread: Spread | None = None) -> Relation:
        """Relation ``rel``'s rows as a Relation (a copy, in insertion order), copied in parts
        on the threads of ``spread`` when given. O(n)."""
        return Relation(self.rows_since(rel, 0, spread), unique=True)

    def rows_since(self, rel: int, start: int, spread: Spread | None = None) -> np.ndarray:
        """The (arity, m) columns of the rows of ``rel`` appended at or after row ``start`` (a
        copy, in parts on the threads of ``spread`` when given). O(m)."""
        rows = self._buffers[rel][start:self.size(rel)]
        columns = np.empty((rows.shape[1], rows.shape[0]), dtype=np.int64)
        Spread.over(spread, len(rows), lambda first, stop: copy_into(columns[:, first:stop],
                                                                 rows[first:stop].T))
        return columns

    def insert(self, rel: int, block: np.ndarray) -> int:
        """Insert an (arity, m) block into ``rel`` (deduplicated); the number of new rows.
        O(m) expected."""
        block = np.ascontiguousarray(block, dtype=np.int64)
        dedup = self.dedup[rel]
        self.catch_up(dedup)
        values = np.empty(max(1, block.shape[0]), dtype=np.int64)
        added = i = 0
        while True:
            i, new = self.kernels.append_rows(*self.arguments(), rel, dedup, block, i, values)
            added += new
            if i == block.shape[1]:
                return added
            self._room_for_row(rel, dedup)

    # -- indexes ---------------------------------------------------------------------------------

    def probe(self, rel: int, key: tuple[int, ...], whole: bool) -> tuple[int, int]:
        """(level kind, index id) for a probe of ``rel`` keyed on ``key`` (``encoding.IndexOf``):
        a view index when ``whole``, the store has a ``view_index`` class and no column is a
        key twice (a backing's key is distinct columns); else a unique hash index when the key
        is every column once (a membership test: no chains, per-key arrays or runs, which for
        a relation of a million pairs cost about 30 MB more); else a hash index."""
        if whole and self.view_index is not None and len(set(key)) == len(key):
            found = self._indexes.get((rel, key, L.VIEW))
            if found is None:
                found = self._indexes[(rel, key, L.VIEW)] = self._new_view(rel, key)
            return L.VIEW_PROBE, found
        if len(set(key)) == len(key) == int(self.rel_meta[rel, L.R_ARITY]):
            found = self._indexes.get((rel, key))
            if found is None:
                found = self._indexes[(rel, key)] = self._new_index(rel, key, unique=True,
                                                                     rows=self.size(rel))
            return L.UNIQUE_PROBE, found
        return L.PROBE, self.index(rel, key)

    def index(self, rel: int, key: tuple[int, ...]) -> int:
        """The id of the probe index of ``rel`` keyed on ``key`` (created empty when new; the
        kernels catch it up before each use)."""
        found = self._indexes.get((rel, key))
        if found is None:
            found = self._indexes[(rel, key)] = self._new_index(rel, key, unique=False,
                                                                 rows=self.size(rel))
        return found

    def catch_up(self, ix: int, spread: Spread | None = None) -> None:
        """Index the rows of index ``ix``'s relation appended since it was last caught up, a
        growing table rehashed on the threads of ``spread`` when given (never from a task of
        its pool: the task would wait for tasks queued behind it). Threads may catch up
        different indexes at once: each touches only its own index's metadata and arrays (and
        reads the relation)."""
        need = np.zeros(2, dtype=np.int64)  # not self.need: another thread may use it
        while self.kernels.catch_up(*self.arguments(), ix, need) != L.DONE:
            self._room_for_index(ix, spread)

    def catch_up_rules(self, program, rules: list[int], spread: Spread) -> None:
        """Catch up every index the rules ``rules`` of ``program`` probe, and their heads'
        dedup tables, the indexes dealt among the threads of ``spread`` (largest backlog
        first) when they are behind by ``Spread.MIN_LENGTH`` rows or more in all: a pass's
        indexes are independent, and indexing the delta into each is O(delta) serial work
        otherwise."""
        arrays = program.arrays
        starts, listed = arrays[L.P_RULE_INDEXES], arrays[L.P_RULE_INDEX_LIST]
        indexes = {int(arrays[L.P_RULE_DEDUP][rule]) for rule in rules}
        for rule in rules:
            indexes.update(listed[starts[rule]:starts[rule + 1]].tolist())
        behind = {ix: self.size(int(self.ix_meta[ix, L.IX_REL])) - int(self.ix_meta[ix, L.IX_DONE])
                  for ix in indexes}
        backlog = sorted((ix for ix, rows in behind.items() if rows > 0), key=behind.get,
                         reverse=True)
        if len(backlog) < 2 or sum(behind.values()) < Spread.MIN_LENGTH:
            for ix in backlog:  # here, each table that grows rehashed on the threads
                self.catch_up(ix, spread)
            return
        for task in [spread.pool.submit(self.catch_up, ix) for ix in backlog]:
            task.result()

    def _allocate(self, rel: int, columns: tuple[int, ...], width: int, unique: int) -> int:
        """A new index id on ``rel``: ``columns`` (its ``width`` key columns first) in
        ``ix_cols``, its metadata up to the table."""
        ix = len(self._tables)
        if ix >= len(self.ix_meta):
            self.ix_meta = np.concatenate([self.ix_meta, np.zeros_like(self.ix_meta)])
        while self._columns + len(columns) > len(self.ix_cols):
            self.ix_cols = np.concatenate([self.ix_cols, np.zeros_like(self.ix_cols)])
        self.ix_cols[self._columns:self._columns + len(columns)] = columns
        self.ix_meta[ix, :L.IX_SLOTS] = (rel, self._columns, width, 0, 0, unique)
        self._columns += len(columns)
        self._tables.append(NO_ROWS)
        self._chains.append(NO_ROWS32)
        self._keyed.append((NO_ROWS32, NO_ROWS32))
        self._runs.append((NO_ROWS, NO_ROWS32, NO_ROWS))
        return ix

    def _new_index(self, rel: int, key: tuple[int, ...], unique: bool, rows: int) -> int:
        """A new empty index on ``rel`` keyed on ``key``, its table sized for ``rows``; a probe
        index's ``ix_cols`` hold, after its key, each column's field in its runs' values."""
        columns = key
        if not unique:
            others = [c for c in range(int(self.rel_meta[rel, L.R_ARITY])) if c not in key]
            columns = key + tuple(others.index(c) if c in others else -1
                                  for c in range(int(self.rel_meta[rel, L.R_ARITY])))
        ix = self._allocate(rel, columns, len(key), int(unique))
        if not unique:
            self.ix_meta[ix, L.IX_RUN_WIDTH] = len(others)
        self._reset(ix, rows)
        return ix

    def _new_view(self, rel: int, key: tuple[int, ...]) -> int:
        """A new view index on ``rel`` keyed on ``key``: an empty ``view_index`` backing (the
        kernels ask for its rows before they probe it); after its key columns, ``ix_cols``
        holds the field of each column of the relation (a backing's field order is fixed)."""
        backing = self.view_index(arity=int(self.rel_meta[rel, L.R_ARITY]), key=key)
        fields = tuple(np.argsort(np.asarray(backing.native_view().order, dtype=np.int64)))
        ix = self._allocate(rel, key + fields, len(key), L.VIEW)
        self._views[ix] = _View(backing)
        self._refresh(ix)
        return ix

    def _catch_up_view(self, ix: int) -> None:
        """Insert the rows of view index ``ix``'s relation appended since it was last caught
        up into its backing, and take a new view. The backing's insert cost, plus O(runs)."""
        rel = int(self.ix_meta[ix, L.IX_REL])
        self._views[ix].backing.insert(self.rows_since(rel, int(self.ix_meta[ix, L.IX_DONE])))
        self.ix_meta[ix, L.IX_DONE] = self.size(rel)
        self._refresh(ix)

    def _refresh(self, ix: int) -> None:
        """Take view index ``ix``'s view and fill its run table (``layout.V_*``); count its
        distinct keys (``IX_KEYS``, for ``choice._choose``) again once its relation doubled
        since they were last counted: O(runs), amortised O(log n) per row."""
        state = self._views[ix]
        view = state.backing.native_view()
        table = np.zeros((max(1, len(view.runs)), L.VIEW_FIELDS), dtype=np.int64)
        for row, run in zip(table, view.runs, strict=False):
            data = run.data
            if data.dtype != np.int64 or (data.shape[1] > 1 and data.strides[1] != 8):
                raise EvaluationError(f"{state.backing!r}.native_view(): a run's data is not "
                                      "int64 with each field's values contiguous")
            row[:L.V_SLOTS] = (run.kind, data.ctypes.data, data.strides[0] // 8, run.rows,
                               view.arity, view.width)
            if run.kind == HASH_RUN:
                length = len(run.slots)
                row[L.V_SLOTS:] = (run.slots.ctypes.data, length - 1, 65 - length.bit_length(),
                                   run.chains.ctypes.data)
        state.view, state.table = view, table
        self.ix_meta[ix, L.IX_SLOTS] = table.ctypes.data
        self.ix_meta[ix, L.IX_MASK] = len(view.runs)
        rel, size = int(self.ix_meta[ix, L.IX_REL]), int(self.ix_meta[ix, L.IX_DONE])
        if size >= 2 * state.counted:
            first, width = int(self.ix_meta[ix, L.IX_COLS]), int(self.ix_meta[ix, L.IX_WIDTH])
            key = self._buffers[rel][:size, self.ix_cols[first:first + width]].T
            self.ix_meta[ix, L.IX_KEYS] = len(np.unique(row_keys(key)[0]))
            state.counted = size

    def _reset(self, ix: int, rows: int) -> None:
        """Index ``ix`` emptied, its table sized for ``rows``."""
        self._set_table(ix, empty_table(rows))
        self._set_chains(ix, NO_ROWS32, 0)
        self.ix_meta[ix, L.IX_KEYS] = 0
        self.ix_meta[ix, L.IX_DONE] = 0
        if self.ix_meta[ix, L.IX_UNIQUE] == 0:
            self._set_keyed(ix, 0)
            self._set_runs(ix, np.zeros(1, dtype=np.int64), NO_ROWS32, NO_ROWS, 0)

    def drop_dedup(self, rel: int) -> None:
        """Free ``rel``'s dedup table (its rows will not change any more); the next insert
        into ``rel`` rebuilds it (the kernels catch a dedup table up before inserting)."""
        self._reset(self.dedup[rel], 0)

    # -- running kernels -------------------------------------------------------------------------

    def run(self, program, rules: np.ndarray, alternatives: np.ndarray, relations: np.ndarray,
            low: np.ndarray, high: np.ndarray, budget: int, max_delta: int,
            sizes: np.ndarray = _NO_SIZES) -> tuple[int, int]:
        """``kernels.run`` of ``program`` (an ``encoding.Program``) until done, growing storage
        when it asks; (iterations run, tuples added). ``sizes``: an (iterations, len(relations))
        array the first iterations record the sizes of ``relations`` at their end in."""
        progress = np.zeros(L.RUN_FIELDS, dtype=np.int64)
        state = np.zeros(L.STATE_FIELDS, dtype=np.int64)
        scratch = program.scratch()
        while (code := self.kernels.run(program.arrays, rules, alternatives, relations,
                                        *self.arguments(), low, high, budget, max_delta,
                                        *scratch, progress, state, self.need, sizes)) != L.DONE:
            self._make_room(code)
        return int(progress[L.RUN_ITERATIONS]), int(progress[L.RUN_ADDED])

    def catch_up_rule(self, program, rule: int) -> None:
        """Catch up the indexes rule ``rule`` of ``program`` probes and its head's dedup."""
        while (code := self.kernels.catch_up_rule(program.arrays, rule, *self.arguments(),
                                                  self.need)) != L.DONE:
            self._make_room(code)

    def choose(self, program, rule: int, alternative: int, low: np.ndarray,
               high: np.ndarray) -> int:
        """Of rule ``rule`` and its ``alternative`` (-1: none), the one expected to do less
        work now (``choice._choose``), with the indexes both read caught up."""
        if alternative < 0:
            return rule
        self.catch_up_rule(program, rule)
        self.catch_up_rule(program, alternative)
        return int(self.kernels.choose(program.arrays, rule, alternative, self.rel_meta,
                                       self.ix_meta, low, high))

    def run_shared(self, program, rule: int, low: np.ndarray, high: np.ndarray,
                   first_level: tuple[int, int], pool, workers: int) -> int:
        """Rule ``rule`` of ``program`` once, as ``workers`` tasks at once (one in the calling
        thread, the others on ``pool``: ``Spread.together``) that share out the rows
        ``first_level`` of its first level (a scan) in chunks (``claims._claim``: each task
        takes the next chunk when done with its last) and insert into the head relation
        together (``kernels.run_task``); the tuples added. Tasks run
        in rounds: a round ends when every task is done or has spent the rows the storage has
        room for, which then grows (doubling; the copy, the new table's first touch and the
        rehash cut among ``workers`` threads of ``pool``) before the tasks go on. The caller
        catches the rule's indexes up (``catch_up_rule``) before any rule of the pass runs, as
        ``kernels.run`` does: caught up here, after other rules of the pass appended rows, its
        probes would join those rows now and again as the next delta (Andersen points-to: 14%
        more CPU time than one thread). O(derivations / threads) per thread, the threads
        finishing within about a chunk's work of each other; O(threads) serial per round,
        O(log n) rounds."""
        arrays = program.arrays
        head, dedup = int(arrays[L.P_RULE_HEAD][rule]), int(arrays[L.P_RULE_DEDUP][rule])
        tickets = np.zeros(L.TICKET_FIELDS, dtype=np.int64)
        start, end = first_level
        tickets[L.CLAIM_NEXT], tickets[L.CLAIM_END] = start, end
        tickets[L.CLAIM_CHUNK] = claim_chunk(end - start, workers)
        # each task's first level starts empty (cursor = stop = 0): its first step claims
        tasks = [(program.scratch(), np.zeros(L.STATE_FIELDS, dtype=np.int64))
                 for _ in range(workers)]
        visible = np.ascontiguousarray(self.rel_meta[:, L.R_SIZE])
        before = self.size(head)
        rows = max(4096, int(high[head] - low[head]))  # room first: about one delta
        spread = Spread(pool, workers)
        while tasks:
            self._reserve(head, dedup, rows, spread)
            size = self.size(head)
            tickets[L.TICKETS_LEFT] = min(
                len(self._buffers[head]) - size,
                len(self._tables[dedup]) // 2 - int(self.ix_meta[dedup, L.IX_KEYS]))
            tickets[L.NEXT_ROW] = size
            tickets[L.ACTIVE] = len(tasks)  # each task gives its share back once (``claims``)
            for _, state in tasks:
                state[L.S_RELEASED] = 0
            run = partial(self.kernels.run_task, arrays, rule, *self.arguments(), low, high,
                          visible)
            first, *others = [partial(run, *scratch, state, tickets) for scratch, state in tasks]
            outcomes = Spread.together(pool, others, first)
            grown = self._close_holes(head, dedup, int(tickets[L.NEXT_ROW]),
                                      [state for _, state in tasks])
            self.rel_meta[head, L.R_SIZE] = grown
            self.ix_meta[dedup, L.IX_KEYS] += grown - size
            self.ix_meta[dedup, L.IX_DONE] = grown
            tasks = [task for task, outcome in zip(tasks, outcomes, strict=True)
                     if outcome == L.NEED_ROW]
            rows = max(rows, grown)
        return self.size(head) - before

    def _close_holes(self, head: int, dedup: int, taken: int, states: list) -> int:
        """The size of ``head`` once the row numbers below ``taken`` that tasks took and left
        unused (each task's ``S_TICKETS`` rows from its ``S_ROW``) are closed up
        (``concurrent.fill_holes``); each task's tickets emptied (they are not the next
        round's room). O(threads * TICKET_BATCH)."""
        holes = [np.arange(state[L.S_ROW], state[L.S_ROW] + state[L.S_TICKETS])
                 for state in states if state[L.S_TICKETS] > 0]
        for state in states:
            state[L.S_TICKETS] = 0
        if not holes:
            return taken
        return int(self.kernels.fill_holes(*self.arguments(), head, dedup, taken,
                                           np.sort(np.concatenate(holes))))

    def first_level_range(self, program, rule: int, low: np.ndarray,
                          high: np.ndarray) -> tuple[int, int]:
        """The rows rule ``rule``'s first level reads (a unit: (0, 1))."""
        arrays = program.arrays
        level = int(arrays[L.P_RULE_LEVELS][rule])
        rel = int(arrays[L.P_LEVEL_REL][level])
        if arrays[L.P_LEVEL_KIND][level] == L.UNIT:
            return 0, 1
        if arrays[L.P_LEVEL_RANGE][level] == 1:
            return int(low[rel]), int(high[rel])
        return 0, self.size(rel)

    # -- growth ----------------------------------------------------------------------------------

    def _make_room(self, code: int) -> None:
        if code == L.NEED_ROW:
            self._room_for_row(int(self.need[0]), int(self.need[1]))
        else:
            self._room_for_index(int(self.need[0]))

    def _room_for_index(self, ix: int, spread: Spread | None = None) -> None:
        """Grow index ``ix``'s chains to its relation's capacity, or move its chained rows into
        runs when due, or else double its table (on the threads of ``spread`` when given); a
        view index: catch it up."""
        rel = int(self.ix_meta[ix, L.IX_REL])
        if self.ix_meta[ix, L.IX_UNIQUE] == L.VIEW:
            self._catch_up_view(ix)
        elif (self.ix_meta[ix, L.IX_UNIQUE] == 0
                and self.ix_meta[ix, L.IX_NEXT_CAPACITY] < self.size(rel)):
            first, done = int(self.ix_meta[ix, L.IX_COMPACTED]), int(self.ix_meta[ix, L.IX_DONE])
            chains = np.empty(max(16, int(self.rel_meta[rel, L.R_CAPACITY]) - first),
                              dtype=np.int32)
            chains[:done - first] = self._chains[ix][:done - first]
            self._set_chains(ix, chains, first)
        elif (self.ix_meta[ix, L.IX_UNIQUE] == 0
                and self.ix_meta[ix, L.IX_DONE] == self.size(rel)):  # every row indexed
            self._compact(ix)
        else:
            self._rehash(ix, 2 * len(self._tables[ix]), spread)
