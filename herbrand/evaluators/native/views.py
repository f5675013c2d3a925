"""Probing an IndexBacking's native view inside the interpreter (a ``VIEW_PROBE`` level).

A view index (``ix_meta[ix, IX_UNIQUE] == VIEW``) points at a run table the store fills from
the backing's ``NativeView`` (``layout.V_*`` columns, one row per run; the layout of each run
is ``herbrand.framework.native_view``'s). A probe walks every run in turn: a sorted run by
binary search (lower and upper bound of the key fields), a packed run by binary search on the
packed word, a hash run through its key directory and chain. The level's state between rows
is ``part[depth]`` (the run), ``cursor[depth]`` and ``stop[depth]`` (the row range of a sorted
run, which the interpreter steps through as a scan's; for a hash run the next row of its
chain, and -1), so the interpreter stays resumable; the key is
filled again from the registers when the next run opens (a probe's key sources are bound
before its level). Views are read only: threads probe them at once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from herbrand.evaluators.native.layout import (
    EMPTY,
    FINGERPRINT,
    HASH_RUN,
    IX_MASK,
    IX_SLOTS,
    PACKED_RUN,
    ROW,
    SIGN,
    V_CHAINS,
    V_DATA,
    V_FIELDS,
    V_KIND,
    V_MASK,
    V_ROWS,
    V_SHIFT,
    V_SLOTS,
    V_STRIDE,
    V_WIDTH,
    VIEW_FIELDS,
)
from herbrand.evaluators.native.memory import _load
from herbrand.evaluators.native.operators import _fill_key
from herbrand.evaluators.native.tables import _hash_key


@njit(inline="always")
def _run_field(runs, r, field):
    """Column ``field`` of run ``r`` of the run table at address ``runs``."""
    return _load(runs + 8 * (r * VIEW_FIELDS + field))

@njit(inline="always")
def _view_cell(ix_meta, ix, r, field, row):
    """Field ``field`` of row ``row`` of run ``r`` of view index ``ix`` (decoded when packed)."""
    runs = ix_meta[ix, IX_SLOTS]
    data = _run_field(runs, r, V_DATA)
    if _run_field(runs, r, V_KIND) == PACKED_RUN:
        width = _run_field(runs, r, V_WIDTH)
        shift = np.uint64(width * (_run_field(runs, r, V_FIELDS) - 1 - field))
        bits = (np.uint64(_load(data + 8 * row)) ^ SIGN) >> shift
        return np.int64(bits & np.uint64((1 << width) - 1)) - (1 << (width - 1))
    return _load(data + 8 * (field * _run_field(runs, r, V_STRIDE) + row))

@njit(inline="always")
def _compare_key(data, stride, row, key, width):
    """-1, 0 or 1 as the first ``width`` fields of ``row`` are below, equal to or above
    ``key``."""
    for f in range(width):
        value = _load(data + 8 * (f * stride + row))
        if value < key[f]:
            return -1
        if value > key[f]:
            return 1
    return 0

@njit(inline="always")
def _bound(data, stride, rows, key, width, word, upper):
    """The first row of a sorted run whose key fields are above (``upper``) or at least
    ``key``; of a packed run (``width`` 0), whose word is above or at least ``word``.
    O(width log rows)."""
    lo, hi = 0, rows
    while lo < hi:
        mid = (lo + hi) >> 1
        if width == 0:
            value = _load(data + 8 * mid)
            c = -1 if value < word else (1 if value > word else 0)
        else:
            c = _compare_key(data, stride, mid, key, width)
        if c < 0 or (upper and c == 0):
            lo = mid + 1
        else:
            hi = mid
    return lo

@njit(inline="always")
def _packed_range(runs, r, key, width):
    """The rows of packed run ``r`` whose key fields equal ``key`` (empty when a value does
    not fit a field)."""
    bits = _run_field(runs, r, V_WIDTH)
    fields = _run_field(runs, r, V_FIELDS)
    data, rows = _run_field(runs, r, V_DATA), _run_field(runs, r, V_ROWS)
    if width == 0:
        return 0, rows
    offset = 1 << (bits - 1)
    low = np.uint64(0)
    for f in range(width):
        if key[f] < -offset or key[f] >= offset:
            return 0, 0
        low |= np.uint64(key[f] + offset) << np.uint64(bits * (fields - 1 - f))
    high = low | np.uint64((1 << (bits * (fields - width))) - 1)
    return (_bound(data, 0, rows, key, 0, np.int64(low ^ SIGN), False),
            _bound(data, 0, rows, key, 0, np.int64(high ^ SIGN), True))

@njit(inline="always")
def _chain_head(runs, r, key, width):
    """The first row of hash run ``r`` with key ``key`` (its directory), or EMPTY."""
    h = _hash_key(key, width)
    slots, mask = _run_field(runs, r, V_SLOTS), _run_field(runs, r, V_MASK)
    data, stride = _run_field(runs, r, V_DATA), _run_field(runs, r, V_STRIDE)
    s = np.int64(h >> np.uint64(_run_field(runs, r, V_SHIFT)))
    while True:
        value = _load(slots + 8 * s)
        if value == EMPTY:
            return EMPTY
        if (np.uint64(value) & FINGERPRINT == h & FINGERPRINT
                and _compare_key(data, stride, value & ROW, key, width) == 0):
            return value & ROW
        s = (s + 1) & mask

@njit(inline="always")
def _open_run(runs, r, key, width):
    """(cursor, stop) of run ``r`` for ``key``: a row range, or a chain's first row and -1
    (so that the interpreter never steps it as a range)."""
    kind = _run_field(runs, r, V_KIND)
    if kind == HASH_RUN:
        return _chain_head(runs, r, key, width), -1
    if kind == PACKED_RUN:
        return _packed_range(runs, r, key, width)
    data, stride = _run_field(runs, r, V_DATA), _run_field(runs, r, V_STRIDE)
    rows = _run_field(runs, r, V_ROWS)
    if width == 0:
        return 0, rows
    return (_bound(data, stride, rows, key, width, 0, False),
            _bound(data, stride, rows, key, width, 0, True))

@njit(_nrt=False)
def _view_next(ix_meta, ix, depth, cursor, stop, part, sources, constants, registers, key,
               key_first, key_width):
    """The next row matching the level's key in view index ``ix`` (its run in
    ``part[depth]``), or -1 when every run is done; a new level starts with ``part[depth]``
    -1. O(1) per row, O(log n) or O(1) expected per run opened. Not inlined: in the
    interpreter's loop its code made the default path's chained-hash probes and scans about
    20% slower (Andersen 5,000), so the views pay a call per row instead."""
    runs = ix_meta[ix, IX_SLOTS]
    while True:
        r = part[depth]
        if r >= 0:
            if _run_field(runs, r, V_KIND) == HASH_RUN:
                row = cursor[depth]
                if row != EMPTY:
                    cursor[depth] = _load(_run_field(runs, r, V_CHAINS) + 8 * row)
                    return row
            elif cursor[depth] < stop[depth]:
                cursor[depth] += 1
                return cursor[depth] - 1
        r += 1
        if r >= ix_meta[ix, IX_MASK]:
            return -1
        part[depth] = r
        _fill_key(sources, constants, key_first, key_width, registers, key)
        cursor[depth], stop[depth] = _open_run(runs, r, key, key_width)
