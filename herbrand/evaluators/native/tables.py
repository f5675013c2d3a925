"""Relations and hash indexes for the native kernels: hashing, probing, catching an index up,
appending rows one thread at a time or several at once.

Storage (``store.NativeStore`` owns the arrays; layout constants are ``layout``'s):

- relation ``r``: a (capacity, arity) int64 buffer, row-major (a dedup probe or a key
  comparison touches one cache line, where columns would touch one per column), described by
  ``rel_meta[r]`` = (address, capacity, rows in use, arity). It grows by doubling (amortised
  O(1) per row), so an iteration costs O(delta), never O(n).
- index ``i`` on one relation and a tuple of key columns: ``ix_meta[i]`` = (relation, offset of
  its key columns in ``ix_cols``, number of key columns, distinct keys, rows indexed so far,
  unique flag, table address, mask, chains address, chains length, shift, and a probe index's
  keys and runs); its table is an open-addressing array (linear probing, at most half full).
  A unique index (every column a key column) is a relation's dedup table: its slots hold row
  numbers, and it has no chains. A probe index's slots hold key ids: per key, the newest row
  not yet in a run heads a chain (int32 ``next[row]``: rows below 2^31) of the key's other such
  rows, and its rows moved into runs (``runs``) lie together, in row order.

Hashes are a murmur-style finaliser per value: a weak hash makes probe sequences cluster (3-20x
slower, measured). A slot also holds its key's fingerprint (the hash's top 32 bits, which are
also where probing starts), so probing reads a row only when fingerprints match and growing a
table reads no row at all: each row read is a cache miss, and chain TC (no duplicates) spent
most of its time in them.

On the parallel backend, threads insert into one head relation together (``concurrent``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from herbrand.evaluators.native.layout import (
    COMPACT_MIN_ROWS,
    DONE,
    EMPTY,
    FINGERPRINT,
    IX_COLS,
    IX_COMPACTED,
    IX_DONE,
    IX_HEADS,
    IX_KEYS,
    IX_MASK,
    IX_NEXT,
    IX_NEXT_CAPACITY,
    IX_REL,
    IX_REPS,
    IX_SHIFT,
    IX_SLOTS,
    IX_UNIQUE,
    IX_WIDTH,
    MIX,
    NEED_INDEX,
    PENDING_MAX,
    R_ADDRESS,
    R_ARITY,
    R_CAPACITY,
    R_COUNTS,
    R_SIZE,
    ROW,
    SEED,
    SHIFT,
    VIEW,
)
from herbrand.evaluators.native.memory import (
    _cell,
    _load,
    _load32,
    _load_atomic,
    _prefetch,
    _set_slot,
    _slot,
    _store,
    _store32,
    _swap_if,
)


@njit(inline="always")
def _mix(h, value):
    h ^= np.uint64(value)
    h *= MIX
    return h ^ (h >> SHIFT)

@njit(inline="always")
def _hash_key(key, width, at=0):
    """The hash of ``key[at:at + width]``."""
    h = SEED
    for j in range(width):
        h = _mix(h, key[at + j])
    return h

@njit(inline="always")
def _hash_row(ix_meta, ix, rel_meta, ix_cols, row):
    rel, first = ix_meta[ix, IX_REL], ix_meta[ix, IX_COLS]
    h = SEED
    for j in range(ix_meta[ix, IX_WIDTH]):
        h = _mix(h, _cell(rel_meta, rel, ix_cols[first + j], row))
    return h

@njit(inline="always")
def _packed(h, row):
    """A slot's value: the hash's top 32 bits (its fingerprint) above the row number."""
    return np.int64(h & FINGERPRINT) | row

@njit(inline="always")
def _start(ix_meta, ix, h):
    """The first slot to probe: the top bits of the hash (so that the fingerprint alone gives
    a key's slot in a table of any size up to 2^32)."""
    return np.int64(h >> np.uint64(ix_meta[ix, IX_SHIFT]))

@njit(inline="always")
def _slot_row(ix_meta, ix, value):
    """The row whose key a (non-empty) slot value stands for: its row in a unique index, the
    row holding its key id's key in a probe index."""
    if ix_meta[ix, IX_UNIQUE] == 1:
        return value & ROW
    return _load32(ix_meta[ix, IX_REPS] + 4 * (value & ROW))

@njit(inline="always")
def _row_has_key(rel_meta, rel, ix_cols, first, width, row, key, at):
    """Whether stored row ``row`` of relation ``rel`` holds ``key[at:at + width]`` in the
    columns ``ix_cols[first:first + width]``. O(width)."""
    for j in range(width):  # noqa: SIM110 (a loop numba compiles to an early exit)
        if _cell(rel_meta, rel, ix_cols[first + j], row) != key[at + j]:
            return False
    return True

@njit(inline="always")
def _find_key(ix_meta, ix, rel_meta, ix_cols, key, h, at=0):
    """The slot of ``key[at:]`` (hash ``h``) in index ``ix``, or the empty slot where it would
    go. Rows are read only when a slot's fingerprint matches."""
    rel, first, width = ix_meta[ix, IX_REL], ix_meta[ix, IX_COLS], ix_meta[ix, IX_WIDTH]
    fingerprint = h & FINGERPRINT
    mask = ix_meta[ix, IX_MASK]
    s = _start(ix_meta, ix, h)
    while True:
        value = _slot(ix_meta, ix, s)
        if value == EMPTY:
            return s
        if np.uint64(value) & FINGERPRINT == fingerprint and _row_has_key(
                rel_meta, rel, ix_cols, first, width, _slot_row(ix_meta, ix, value), key, at):
            return s
        s = (s + 1) & mask

@njit(inline="always")
def _find_row(ix_meta, ix, rel_meta, ix_cols, row, h):
    """The slot of stored row ``row``'s key (hash ``h``) in index ``ix``, or the empty slot
    for it."""
    rel, first, width = ix_meta[ix, IX_REL], ix_meta[ix, IX_COLS], ix_meta[ix, IX_WIDTH]
    fingerprint = h & FINGERPRINT
    mask = ix_meta[ix, IX_MASK]
    s = _start(ix_meta, ix, h)
    while True:
        value = _slot(ix_meta, ix, s)
        if value == EMPTY:
            return s
        if np.uint64(value) & FINGERPRINT == fingerprint:
            other = _slot_row(ix_meta, ix, value)
            same = True
            for j in range(width):
                c = ix_cols[first + j]
                if _cell(rel_meta, rel, c, other) != _cell(rel_meta, rel, c, row):
                    same = False
                    break
            if same:
                return s
        s = (s + 1) & mask


@njit(nogil=True, _nrt=False, inline="always")
def _position_shift(length):
    """The right shift that turns a fingerprint into a slot of a table of ``length`` slots
    (a power of two): 64 - log2(length)."""
    shift = np.uint64(64)
    while length > 1:
        length >>= 1
        shift -= np.uint64(1)
    return shift


@njit(nogil=True, _nrt=False)
def rehash(old, slots):
    """Move the entries of table ``old`` into the empty table ``slots`` (a power of two long,
    up to 2^32; the keys are distinct). The fingerprints give the new positions: no row is
    read. O(len(old) + len(slots))."""
    mask = slots.shape[0] - 1
    shift = _position_shift(slots.shape[0])
    for value in old:
        if value == EMPTY:
            continue
        s = np.int64((np.uint64(value) & FINGERPRINT) >> shift)
        while slots[s] != EMPTY:
            s = (s + 1) & mask
        slots[s] = value


@njit(nogil=True, _nrt=False)
def rehash_part(old, slots, start, stop):
    """``rehash`` of the entries ``old[start:stop]`` while other threads move other parts of
    ``old`` into ``slots`` (filled with EMPTY beforehand): an entry claims the first empty slot
    from its position by compare-and-swap, so together the parts make a valid table (linear
    probing's occupied slots do not depend on the order of insertion). O(stop - start)
    expected, one atomic operation per entry."""
    mask = slots.shape[0] - 1
    shift = _position_shift(slots.shape[0])
    base = slots.ctypes.data
    for i in range(start, stop):
        value = old[i]
        if value == EMPTY:
            continue
        s = np.int64((np.uint64(value) & FINGERPRINT) >> shift)
        while not (_load_atomic(base + 8 * s) == EMPTY and _swap_if(base + 8 * s, EMPTY, value)):
            s = (s + 1) & mask


@njit(nogil=True, _nrt=False)
def _index_rows(ix_meta, rel_meta, ix_cols, ix, size):
    """Index rows of index ``ix``'s relation from the first not yet indexed, until ``size`` or
    until the table needs to grow; the next row to index. A probe index's new key takes the
    next key id; its row heads the key's chain."""
    unique = ix_meta[ix, IX_UNIQUE] == 1
    heads, reps = ix_meta[ix, IX_HEADS], ix_meta[ix, IX_REPS]
    keys = ix_meta[ix, IX_KEYS]
    row = ix_meta[ix, IX_DONE]
    while row < size and 2 * (keys + 1) <= ix_meta[ix, IX_MASK] + 1:
        h = _hash_row(ix_meta, ix, rel_meta, ix_cols, row)
        s = _find_row(ix_meta, ix, rel_meta, ix_cols, row, h)
        value = _slot(ix_meta, ix, s)
        if unique:
            if value == EMPTY:
                _set_slot(ix_meta, ix, s, _packed(h, row))
                keys += 1
        elif value == EMPTY:
            _set_slot(ix_meta, ix, s, _packed(h, keys))
            _store32(reps + 4 * keys, row)
            _store32(heads + 4 * keys, row)
            _store32(ix_meta[ix, IX_NEXT] + 4 * row, EMPTY)
            keys += 1
        else:
            k = value & ROW
            _store32(ix_meta[ix, IX_NEXT] + 4 * row, _load32(heads + 4 * k))
            _store32(heads + 4 * k, row)
        row += 1
    ix_meta[ix, IX_KEYS] = keys
    ix_meta[ix, IX_DONE] = row
    return row


@njit(inline="always")
def _catch_up(rel_meta, ix_meta, ix_cols, ix, need):
    """Index the rows of index ``ix``'s relation appended since it was last caught up: DONE,
    or NEED_INDEX (``need[0] = ix``) when its chains or table must grow first (the rows indexed
    so far stay indexed), when its chained rows are due to move into runs
    (``COMPACT_MIN_ROWS``; every row indexed), or when it is a view index that is behind.
    O(new rows) expected."""
    size = rel_meta[ix_meta[ix, IX_REL], R_SIZE]
    if ix_meta[ix, IX_DONE] >= size:
        return DONE
    if ix_meta[ix, IX_UNIQUE] == VIEW:  # a backing's view: the store feeds it the new rows
        need[0] = ix
        return NEED_INDEX
    if ((ix_meta[ix, IX_UNIQUE] == 0 and ix_meta[ix, IX_NEXT_CAPACITY] < size)
            or _index_rows(ix_meta, rel_meta, ix_cols, ix, size) < size
            or ix_meta[ix, IX_UNIQUE] == 0 and _compaction_due(ix_meta, ix)):
        need[0] = ix
        return NEED_INDEX
    return DONE


@njit(inline="always")
def _compaction_due(ix_meta, ix):
    """Whether probe index ``ix``'s chained rows (every row indexed) are to move into runs."""
    chained = ix_meta[ix, IX_DONE] - ix_meta[ix, IX_COMPACTED]
    return chained >= max(ix_meta[ix, IX_COMPACTED], COMPACT_MIN_ROWS)


@njit(nogil=True, _nrt=False)
def catch_up(rel_meta, ix_meta, ix_cols, ix, need):
    """``_catch_up`` of index ``ix``, from Python."""
    return _catch_up(rel_meta, ix_meta, ix_cols, ix, need)


@njit(inline="always")
def _room(rel_meta, ix_meta, rel, dedup, rows):
    """Whether ``rows`` more rows fit in ``rel`` and its dedup table without growing them (the
    buffer has room, the table stays at most half full)."""
    return (rel_meta[rel, R_SIZE] + rows <= rel_meta[rel, R_CAPACITY]
            and 2 * (ix_meta[dedup, IX_KEYS] + rows) <= ix_meta[dedup, IX_MASK] + 1)

@njit(inline="always")
def _full(rel_meta, ix_meta, rel, dedup):
    """Whether inserting one more row into ``rel`` needs room first."""
    return not _room(rel_meta, ix_meta, rel, dedup, 1)

@njit(inline="always")
def _append(rel_meta, ix_meta, ix_cols, rel, dedup, values):
    """Insert the tuple ``values`` into relation ``rel`` unless its dedup index ``dedup``
    (caught up, with room: not ``_full``) holds it; True when it was new. O(1) expected."""
    return _append_hashed(rel_meta, ix_meta, ix_cols, rel, dedup, values, 0,
                          _hash_key(values, ix_meta[dedup, IX_WIDTH]))

@njit(inline="always")
def _prefetch_slot(ix_meta, dedup, h):
    """Start loading the slot where a key of hash ``h`` is first looked for in ``dedup``."""
    _prefetch(ix_meta[dedup, IX_SLOTS] + 8 * _start(ix_meta, dedup, h))

@njit(inline="always")
def _append_hashed(rel_meta, ix_meta, ix_cols, rel, dedup, values, at, h):
    """``_append`` of ``values[at:]``, its hash ``h`` known."""
    s = _find_key(ix_meta, dedup, rel_meta, ix_cols, values, h, at)
    if _slot(ix_meta, dedup, s) != EMPTY:
        return False
    _append_at(rel_meta, ix_meta, rel, dedup, values, at, h, s)
    return True

@njit(inline="always")
def _append_counted(rel_meta, ix_meta, ix_cols, rel, dedup, values, at, h, counts, start):
    """``_append_hashed``, counting derivations at ``counts`` (an address: one int64 per
    row): a new tuple has one, and a tuple found at a row from ``start`` on (appended by the
    pass or iteration under way) one more."""
    s = _find_key(ix_meta, dedup, rel_meta, ix_cols, values, h, at)
    value = _slot(ix_meta, dedup, s)
    if value != EMPTY:
        row = value & ROW
        if row >= start:
            _store(counts + 8 * row, _load(counts + 8 * row) + 1)
        return False
    _store(counts + 8 * rel_meta[rel, R_SIZE], np.int64(1))
    _append_at(rel_meta, ix_meta, rel, dedup, values, at, h, s)
    return True

@njit(inline="always")
def _append_at(rel_meta, ix_meta, rel, dedup, values, at, h, s):
    """Append ``values[at:]`` (hash ``h``) as a new row of ``rel``, its key in ``dedup``'s
    empty slot ``s``."""
    size = rel_meta[rel, R_SIZE]
    arity = rel_meta[rel, R_ARITY]
    address = rel_meta[rel, R_ADDRESS] + 8 * size * arity
    for c in range(arity):
        _store(address + 8 * c, values[at + c])
    _set_slot(ix_meta, dedup, s, _packed(h, size))
    rel_meta[rel, R_SIZE] = size + 1
    ix_meta[dedup, IX_KEYS] += 1
    ix_meta[dedup, IX_DONE] = size + 1

@njit(inline="always")
def _insert_pending(rel_meta, ix_meta, ix_cols, rel, dedup, values, pending, width, start):
    """Insert the ``pending`` head tuples held in ``values`` (each ``width`` values, their
    hashes after ``PENDING_MAX`` of them) into ``rel`` (with room for them); the number new.
    When ``rel`` counts derivations (``R_COUNTS``), each tuple is one more derivation of its
    row if that row is new since row ``start`` (``_append_counted``): with ``start`` the
    relation's size when the pass or semi-naive iteration began, a row's count is the number
    of derivations of the iteration that first derived it (the elastic engine's proof
    count, exact when no derivation is enumerated twice in one iteration)."""
    counts = rel_meta[rel, R_COUNTS]
    added = 0
    for i in range(pending):
        h = np.uint64(values[PENDING_MAX * width + i])
        if counts == 0:
            new = _append_hashed(rel_meta, ix_meta, ix_cols, rel, dedup, values, i * width, h)
        else:
            new = _append_counted(rel_meta, ix_meta, ix_cols, rel, dedup, values, i * width, h,
                                  counts, start)
        if new:
            added += 1
    return added

@njit(nogil=True, _nrt=False)
def append_rows(rel_meta, ix_meta, ix_cols, rel, dedup, block, start, values):
    """Insert rows ``start``, ... of ``block`` until it ends or ``rel`` needs room; (the next
    row, the number of new rows)."""
    added = 0
    i = start
    while i < block.shape[1] and not _full(rel_meta, ix_meta, rel, dedup):
        for c in range(block.shape[0]):
            values[c] = block[c, i]
        if _append(rel_meta, ix_meta, ix_cols, rel, dedup, values):
            added += 1
        i += 1
    return i, added
