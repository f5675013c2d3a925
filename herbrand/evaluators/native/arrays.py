"""``NativeArrays``: the arrays the native kernels read and write, and growing them.

The metadata (``rel_meta``, ``ix_meta``, ``ix_cols``; layout in ``layout``) holds the
addresses of arrays this class keeps alive: each relation's row buffer, each index's table,
a probe index's chains, per-key heads and runs. Growth is what a kernel asks for when it
returns ``layout.NEED_*``: a buffer doubles, a table doubles (at most half full), a probe
index's chained rows move into runs (``runs``), all amortised O(1) per row; on the parallel
backend the copies and rehashes are cut among threads (``Spread``). ``store.NativeStore``
builds on this: it names relations, creates indexes and runs the kernels.

A relation may count the derivations inserted into it (``count_derivations``; the kernels'
rule in ``tables._insert_pending``): its counts are one int64 per row of its buffer, grown
with it.

A ``row_limit`` bounds the rows the relations hold in all: a buffer then grows at most to the
limit's room left plus ``layout.PENDING_MAX`` (the head tuples a kernel may hold back), and a
growth once the relations hold more than the limit raises RowLimitError. Relations that end
within the limit never raise; one relation growing past it raises within ``PENDING_MAX``
rows of it (relations growing at once may each fill the room they were last given). Without
a limit growth is as above; with one, a growth costs O(relations) more.
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native import layout as L
from herbrand.evaluators.native.compiled import kernels
from herbrand.framework.errors import RowLimitError
from herbrand.framework.spread import Spread

NO_ROWS = np.empty(0, dtype=np.int64)
NO_ROWS32 = np.empty(0, dtype=np.int32)


def table_size(rows: int) -> int:
    """The slots of a hash table for ``rows`` keys: a power of two, at least twice as many."""
    return 1 << max(4, int(2 * rows).bit_length())


def empty_table(rows: int) -> np.ndarray:
    """An empty hash table for ``rows`` keys (``table_size`` slots of EMPTY)."""
    return np.full(table_size(rows), L.EMPTY, dtype=np.int64)


def copy_into(into: np.ndarray, source: np.ndarray) -> None:
    """``into[...] = source`` (a statement, for a lambda)."""
    into[...] = source


class NativeArrays:
    """The kernels' storage arrays and their metadata, grown on request (see the module
    doc). Not safe for concurrent use."""

    def __init__(self) -> None:
        self.kernels = kernels()
        self.row_limit: int | None = None
        """The rows the relations may hold in all (see the module doc); None: no limit."""
        self.rel_meta = np.zeros((16, L.REL_FIELDS), dtype=np.int64)
        self.ix_meta = np.zeros((16, L.IX_FIELDS), dtype=np.int64)
        self.ix_cols = np.zeros(64, dtype=np.int64)
        self.need = np.zeros(2, dtype=np.int64)
        # the arrays the metadata's addresses point into, kept alive here
        self._buffers: list[np.ndarray] = []
        self._tables: list[np.ndarray] = []
        self._chains: list[np.ndarray] = []
        self._keyed: list[tuple[np.ndarray, ...]] = []  # a probe index's heads and reps
        self._runs: list[tuple[np.ndarray, ...]] = []  # a probe index's starts, rows, values
        self._counts: dict[int, np.ndarray] = {}  # a counting relation's derivation counts

    def size(self, rel: int) -> int:
        """Rows in use in relation ``rel``."""
        return int(self.rel_meta[rel, L.R_SIZE])

    def rows_held(self) -> int:
        """Rows in use in all relations. O(relations)."""
        return int(self.rel_meta[:, L.R_SIZE].sum())

    def count_derivations(self, rel: int) -> None:
        """From now on, count the derivations inserted into ``rel`` (empty: its rows' counts
        start at 0) by one thread alone (``run``; the concurrent inserts of ``run_shared``'s
        tasks and the rows ``insert`` appends are not counted). O(capacity)."""
        self._set_counts(rel, np.zeros(int(self.rel_meta[rel, L.R_CAPACITY]), dtype=np.int64))

    def derivation_counts(self, rel: int) -> np.ndarray:
        """The derivation counts of ``rel``'s rows (a copy), and it counts no more. O(n)."""
        counts = self._counts.pop(rel)[:self.size(rel)].copy()
        self.rel_meta[rel, L.R_COUNTS] = 0
        return counts

    def _set_counts(self, rel: int, counts: np.ndarray) -> None:
        self._counts[rel] = counts
        self.rel_meta[rel, L.R_COUNTS] = counts.ctypes.data

    def arguments(self) -> tuple:
        """The storage arguments every kernel takes, in order."""
        return self.rel_meta, self.ix_meta, self.ix_cols


    def _room_for_row(self, rel: int, dedup: int) -> None:
        """Grow ``rel``'s buffer and its dedup table so that the head tuples a kernel holds
        (``layout.PENDING_MAX`` at most) fit. Amortised O(1)."""
        self._reserve(rel, dedup, L.PENDING_MAX)

    def _reserve(self, rel: int, dedup: int, rows: int, spread: Spread | None = None) -> None:
        """Grow ``rel``'s buffer (by doubling) and its dedup table (at most half full) so that
        ``rows`` more rows fit, the work cut among the threads of ``spread`` when given; under
        a ``row_limit``, only as many as its room left (``_room``). Amortised O(1) per row."""
        size = self.size(rel)
        capacity = len(self._buffers[rel])
        most = None  # the rows the buffer may hold under the row limit
        if size + rows > capacity and self.row_limit is not None:
            most = size + self._room()
            rows = min(rows, most - size)
        if size + rows > capacity:
            while size + rows > capacity:
                capacity = max(16, 2 * capacity)
            if most is not None:
                capacity = min(capacity, most)
            old = self._buffers[rel]
            grown = np.empty((capacity, old.shape[1]), dtype=np.int64)
            Spread.over(spread, size, lambda start, stop: copy_into(grown[start:stop],
                                                                     old[start:stop]))
            self._buffers[rel] = grown
            self._set_buffer(rel, grown)
            if rel in self._counts:
                counts = np.zeros(capacity, dtype=np.int64)
                counts[:size] = self._counts[rel][:size]
                self._set_counts(rel, counts)
        keys = int(self.ix_meta[dedup, L.IX_KEYS])
        if 2 * (keys + rows) > len(self._tables[dedup]):
            self._rehash(dedup, table_size(keys + rows), spread)

    def _room(self) -> int:
        """The rows more a buffer may take under ``row_limit`` (its room left, plus
        ``layout.PENDING_MAX``); RowLimitError when the relations hold more than the limit.
        O(relations)."""
        room = self.row_limit - self.rows_held()
        if room < 0:
            raise RowLimitError(f"the relations hold over {self.row_limit:,} rows")
        return room + L.PENDING_MAX

    def _compact(self, ix: int) -> None:
        """Move probe index ``ix``'s chained rows and runs into new runs (``runs.compact``).
        O(rows + keys)."""
        done, keys = int(self.ix_meta[ix, L.IX_DONE]), int(self.ix_meta[ix, L.IX_KEYS])
        starts = np.empty(keys + 1, dtype=np.int64)
        rows = np.empty(done, dtype=np.int32)
        values = np.empty(done * int(self.ix_meta[ix, L.IX_RUN_WIDTH]), dtype=np.int64)
        self.kernels.compact(*self.arguments(), ix, starts, rows, values)
        self._set_runs(ix, starts, rows, values, done)
        capacity = int(self.rel_meta[int(self.ix_meta[ix, L.IX_REL]), L.R_CAPACITY])
        self._set_chains(ix, np.empty(max(16, capacity - done), dtype=np.int32), done)

    def _rehash(self, ix: int, length: int, spread: Spread | None = None) -> None:
        """Move index ``ix``'s table to one of ``length`` slots (a larger power of two), on
        the threads of ``spread`` when given (``kernels.rehash_part``), a probe index's per-key
        arrays with it. O(length)."""
        old = self._tables[ix]
        if spread is None or length < Spread.MIN_LENGTH:
            slots = np.full(length, L.EMPTY, dtype=np.int64)
            self.kernels.rehash(old, slots)
        else:
            slots = np.empty(length, dtype=np.int64)
            spread.run(length, lambda start, stop: slots[start:stop].fill(L.EMPTY))
            spread.run(len(old), lambda start, stop: self.kernels.rehash_part(old, slots, start,
                                                                            stop))
        self._set_table(ix, slots)
        if self.ix_meta[ix, L.IX_UNIQUE] == 0:
            self._set_keyed(ix, int(self.ix_meta[ix, L.IX_KEYS]))

    def _set_buffer(self, rel: int, buffer: np.ndarray) -> None:
        self.rel_meta[rel, L.R_ADDRESS] = buffer.ctypes.data
        self.rel_meta[rel, L.R_CAPACITY] = len(buffer)

    def _set_table(self, ix: int, slots: np.ndarray) -> None:
        self._tables[ix] = slots
        self.ix_meta[ix, L.IX_SLOTS] = slots.ctypes.data
        self.ix_meta[ix, L.IX_MASK] = len(slots) - 1
        self.ix_meta[ix, L.IX_SHIFT] = 64 - (len(slots).bit_length() - 1)

    def _set_keyed(self, ix: int, keys: int) -> None:
        """Probe index ``ix``'s per-key arrays made as long as half its table, the first
        ``keys`` entries kept."""
        length = len(self._tables[ix]) // 2
        heads, reps = (np.full(length, L.EMPTY, dtype=np.int32) for _ in range(2))
        old_heads, old_reps = self._keyed[ix]
        heads[:keys], reps[:keys] = old_heads[:keys], old_reps[:keys]
        self._keyed[ix] = heads, reps
        self.ix_meta[ix, L.IX_HEADS] = heads.ctypes.data
        self.ix_meta[ix, L.IX_REPS] = reps.ctypes.data

    def _set_runs(self, ix: int, starts: np.ndarray, rows: np.ndarray, values: np.ndarray,
                  compacted: int) -> None:
        """Probe index ``ix``'s runs made ``starts``, ``rows`` and ``values``, holding its
        first ``compacted`` rows."""
        self._runs[ix] = starts, rows, values
        self.ix_meta[ix, L.IX_STARTS] = starts.ctypes.data
        self.ix_meta[ix, L.IX_RUN_ROWS] = rows.ctypes.data
        self.ix_meta[ix, L.IX_RUN_VALUES] = values.ctypes.data
        self.ix_meta[ix, L.IX_COMPACTED] = compacted
        self.ix_meta[ix, L.IX_COMPACTED_KEYS] = len(starts) - 1

    def _set_chains(self, ix: int, chains: np.ndarray, first: int) -> None:
        """Index ``ix``'s chains made ``chains``, holding rows ``first``, ... (the rows before
        are in runs): its address is where row 0's would be, so a kernel reads row r's at
        ``IX_NEXT + 4 r``."""
        self._chains[ix] = chains
        self.ix_meta[ix, L.IX_NEXT] = chains.ctypes.data - 4 * first
        self.ix_meta[ix, L.IX_NEXT_CAPACITY] = first + len(chains)
