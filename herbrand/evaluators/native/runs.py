"""A probe index's runs: its rows moved out of per-key chains into one array per index where
each key's rows lie together, so a probe reads them in sequence.

A chain walk is a dependent load per row (``next[row]``), then the row itself, both anywhere
in memory: a join whose inner level yields many rows per probe (Andersen points-to, transitive
closure) waited on those misses. Once a probe index's chained rows are at least as many as
those in its runs (``tables._compaction_due``), the store moves them all into new runs
(``compact``: a counting sort by key id, O(rows + keys)), doubling, so amortised O(1) per row.
Runs (``layout.IX_STARTS`` ..): per key id below ``IX_COMPACTED_KEYS``, its rows from
``starts[k]`` to ``starts[k + 1]``, in row order, each with its row number (int32: a ranged
probe reads only rows of the delta) and a copy of its columns that are not key columns (the
only ones a probe binds) in ``IX_RUN_WIDTH`` int64 values.

A probe (``_open_probe``, ``_probe_next``) yields the key's chained rows (all newer than any
in runs, newest first), then its run from the last row down: newest first throughout, so a
ranged probe stops at the first row below its delta.
"""

from __future__ import annotations

from numba import njit

from herbrand.evaluators.native.layout import (
    EMPTY,
    IX_COLS,
    IX_COMPACTED_KEYS,
    IX_DONE,
    IX_HEADS,
    IX_KEYS,
    IX_REL,
    IX_RUN_ROWS,
    IX_RUN_VALUES,
    IX_RUN_WIDTH,
    IX_STARTS,
    IX_WIDTH,
    PROBE_CHAIN,
    PROBE_RUN,
    R_ARITY,
    ROW,
)
from herbrand.evaluators.native.memory import (
    _cell,
    _load,
    _load32,
    _next,
    _slot,
    _store32,
)
from herbrand.evaluators.native.tables import _find_key, _hash_key


@njit(inline="always")
def _open_probe(ix_meta, ix, rel_meta, ix_cols, key, width):
    """(cursor, stop) of a probe of index ``ix`` with ``key`` (its chain's first row, its key
    id; EMPTY, EMPTY when no row has the key); the level's phase starts at ``PROBE_CHAIN``."""
    value = _slot(ix_meta, ix, _find_key(ix_meta, ix, rel_meta, ix_cols, key,
                                         _hash_key(key, width)))
    if value == EMPTY:
        return EMPTY, EMPTY
    k = value & ROW
    return _load32(ix_meta[ix, IX_HEADS] + 4 * k), k

@njit(inline="always")
def _probe_next(ix_meta, ix, depth, cursor, stop, part, ranged, low, high):
    """The next row of a probe level (and its position in the runs, -1 for a chained row), newest
    first: (-1, -1) when done. Ranged (a delta's probe), only rows in [low, high): the first row
    below ``low`` ends the probe."""
    while True:
        if part[depth] == PROBE_CHAIN:
            row = cursor[depth]
            if row == EMPTY:
                k = stop[depth]
                if k < 0 or k >= ix_meta[ix, IX_COMPACTED_KEYS]:
                    return -1, -1
                starts = ix_meta[ix, IX_STARTS]
                part[depth] = PROBE_RUN
                cursor[depth] = _load(starts + 8 * (k + 1)) - 1
                stop[depth] = _load(starts + 8 * k)
                continue
            cursor[depth] = _next(ix_meta, ix, row)
            position = -1
        else:
            position = cursor[depth]
            if position < stop[depth]:
                return -1, -1
            cursor[depth] = position - 1
            row = _load32(ix_meta[ix, IX_RUN_ROWS] + 4 * position)
        if ranged == 0:
            return row, position
        if row < low:  # older rows follow: the delta is passed
            part[depth] = PROBE_RUN
            cursor[depth], stop[depth] = -1, 0
            return -1, -1
        if row < high:
            return row, position

@njit(inline="always")
def _run_value(ix_meta, ix, ix_cols, column, position):
    """Column ``column`` (not a key column) of the row at ``position`` in index ``ix``'s runs."""
    field = ix_cols[ix_meta[ix, IX_COLS] + ix_meta[ix, IX_WIDTH] + column]
    return _load(ix_meta[ix, IX_RUN_VALUES] + 8 * (position * ix_meta[ix, IX_RUN_WIDTH] + field))


@njit(nogil=True, _nrt=False)
def compact(rel_meta, ix_meta, ix_cols, ix, starts, rows, values):
    """Move probe index ``ix``'s chained rows (every row indexed) and its runs into the new runs
    ``starts`` (a key id's first position; keys + 1 long), ``rows`` and ``values`` (every row
    indexed, ``IX_RUN_WIDTH`` values each), emptying its chains' heads; the store then points
    ``ix_meta`` at them. O(rows + keys)."""
    keys = ix_meta[ix, IX_KEYS]
    old_keys = ix_meta[ix, IX_COMPACTED_KEYS]
    old_starts, old_rows = ix_meta[ix, IX_STARTS], ix_meta[ix, IX_RUN_ROWS]
    old_values = ix_meta[ix, IX_RUN_VALUES]
    heads = ix_meta[ix, IX_HEADS]
    width = ix_meta[ix, IX_RUN_WIDTH]
    rel = ix_meta[ix, IX_REL]
    fields = ix_meta[ix, IX_COLS] + ix_meta[ix, IX_WIDTH]
    position = 0
    for k in range(keys):
        starts[k] = position
        if k < old_keys:
            position += _load(old_starts + 8 * (k + 1)) - _load(old_starts + 8 * k)
        row = _load32(heads + 4 * k)
        while row != EMPTY:
            position += 1
            row = _next(ix_meta, ix, row)
    starts[keys] = position
    for k in range(keys):
        at = starts[k]
        if k < old_keys:
            for old in range(_load(old_starts + 8 * k), _load(old_starts + 8 * (k + 1))):
                rows[at] = _load32(old_rows + 4 * old)
                for f in range(width):
                    values[at * width + f] = _load(old_values + 8 * (old * width + f))
                at += 1
        at = starts[k + 1]
        row = _load32(heads + 4 * k)
        while row != EMPTY:  # newest first: filled from the key's last position down
            at -= 1
            rows[at] = row
            for c in range(rel_meta[rel, R_ARITY]):
                f = ix_cols[fields + c]
                if f >= 0:
                    values[at * width + f] = _cell(rel_meta, rel, c, row)
            row = _next(ix_meta, ix, row)
        _store32(heads + 4 * k, EMPTY)
    return ix_meta[ix, IX_DONE]
