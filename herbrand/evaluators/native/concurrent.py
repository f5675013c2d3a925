"""Threads inserting into one relation at once: the parallel tasks of a rule (``kernels
.run_task``) add its head tuples to the head relation and its dedup table together.

A new tuple claims an empty dedup slot with a compare-and-swap (reserved), takes a row number,
writes its row and publishes the slot: no tuple is added twice, and a slot is read as a row
only once that row is written. Row numbers come in blocks: a thread takes ``TICKET_BATCH``
tickets (room for that many rows) and as many consecutive row numbers at once, so the counters
the threads share are touched once per block, not once per row (a counter written by both
cores at every insertion moves its cache line between them each time). A block not used up
when the tasks stop leaves holes among the rows, which ``fill_holes`` closes once they are all
stopped, so rows stay dense.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from herbrand.evaluators.native.layout import (
    ADDED,
    EMPTY,
    FINGERPRINT,
    IX_COLS,
    IX_MASK,
    IX_SLOTS,
    IX_WIDTH,
    NEXT_ROW,
    NO_ROOM,
    PENDING_MAX,
    PRESENT,
    R_ADDRESS,
    R_ARITY,
    RESERVED,
    ROW,
    S_ROW,
    S_TICKETS,
    TICKET_BATCH,
    TICKETS_LEFT,
)
from herbrand.evaluators.native.memory import (
    _fetch_add,
    _load,
    _load_atomic,
    _publish,
    _set_slot,
    _slot,
    _store,
    _swap_if,
)
from herbrand.evaluators.native.tables import _hash_row, _packed, _row_has_key, _start


@njit(inline="always")
def _add_concurrently(rel_meta, ix_meta, ix_cols, rel, dedup, values, at, h, tickets, state):
    """Insert the tuple ``values[at:]`` (hash ``h``) into relation ``rel`` unless its dedup index
    ``dedup`` holds it, while other threads insert into it too: ADDED, PRESENT, or NO_ROOM
    when ``tickets[TICKETS_LEFT]`` (rows that may still be added before the storage grows) is
    spent. A thread takes ``TICKET_BATCH`` tickets at a time into ``state[S_TICKETS]``, with
    as many row numbers from ``tickets[NEXT_ROW]``, the next of them ``state[S_ROW]`` (the
    relation's size is set after the threads are done: written here, it would share a cache
    line with the addresses every thread reads). A ticket and its row are spent only by a tuple
    added. O(1) expected."""
    fingerprint = h & FINGERPRINT
    mask = ix_meta[dedup, IX_MASK]
    table = ix_meta[dedup, IX_SLOTS]
    width = ix_meta[dedup, IX_WIDTH]
    first = ix_meta[dedup, IX_COLS]
    s = _start(ix_meta, dedup, h)
    while True:
        value = _load_atomic(table + 8 * s)
        if value == EMPTY:
            if state[S_TICKETS] == 0:
                left = _fetch_add(tickets.ctypes.data + 8 * TICKETS_LEFT, -TICKET_BATCH)
                if left <= 0:
                    return NO_ROOM
                state[S_TICKETS] = min(left, TICKET_BATCH)
                state[S_ROW] = _fetch_add(tickets.ctypes.data + 8 * NEXT_ROW, state[S_TICKETS])
            if not _swap_if(table + 8 * s, EMPTY, np.int64(fingerprint) | RESERVED):
                continue  # another thread took the slot: read it again
            row = state[S_ROW]
            state[S_ROW] += 1
            state[S_TICKETS] -= 1
            address = rel_meta[rel, R_ADDRESS] + 8 * row * rel_meta[rel, R_ARITY]
            for c in range(rel_meta[rel, R_ARITY]):
                _store(address + 8 * c, values[at + c])
            _publish(table + 8 * s, _packed(h, row))
            return ADDED
        if np.uint64(value) & FINGERPRINT == fingerprint:
            while value & ROW == RESERVED:
                value = _load_atomic(table + 8 * s)
            if _row_has_key(rel_meta, rel, ix_cols, first, width, value & ROW, values, at):
                return PRESENT
        s = (s + 1) & mask


@njit(inline="always")
def _add_pending_concurrently(rel_meta, ix_meta, ix_cols, rel, dedup, values, pending, width,
                              tickets, state):
    """``_add_concurrently`` of the ``pending`` head tuples held in ``values`` as
    ``tables._insert_pending`` holds them (their dedup slots prefetched when they were derived,
    so their cache misses overlap); (the number new, the number left). When the tickets are
    spent the tuples not yet in move to the front of ``values`` (with their hashes) and are left
    for the next round. O(pending) expected."""
    added = 0
    hashes = PENDING_MAX * width
    for i in range(pending):
        outcome = _add_concurrently(rel_meta, ix_meta, ix_cols, rel, dedup, values, i * width,
                                    np.uint64(values[hashes + i]), tickets, state)
        if outcome == NO_ROOM:
            left = pending - i
            for j in range(left):
                for c in range(width):
                    values[j * width + c] = values[(i + j) * width + c]
                values[hashes + j] = values[hashes + i + j]
            return added, left
        added += outcome
    return added, 0


@njit(nogil=True, _nrt=False)
def fill_holes(rel_meta, ix_meta, ix_cols, rel, dedup, size, holes):
    """Close the ``holes`` (row numbers below ``size`` that no tuple took, ascending) among the
    ``size`` rows of relation ``rel``: each hole below the new size takes the last row that is
    not a hole, and that row's slot in the dedup index ``dedup`` is repointed. The new size.
    No thread may insert meanwhile. O(holes) expected."""
    arity = rel_meta[rel, R_ARITY]
    base = rel_meta[rel, R_ADDRESS]
    mask = ix_meta[dedup, IX_MASK]
    end = size - len(holes)
    last = size - 1  # the next row to move, scanning down
    top = len(holes) - 1  # the highest hole not yet passed by ``last``
    for hole in holes:
        if hole >= end:
            break
        while top >= 0 and holes[top] == last:
            last -= 1
            top -= 1
        h = _hash_row(ix_meta, dedup, rel_meta, ix_cols, last)
        s = _start(ix_meta, dedup, h)
        while _slot(ix_meta, dedup, s) & ROW != last:
            s = (s + 1) & mask
        for c in range(arity):
            _store(base + 8 * (hole * arity + c), _load(base + 8 * (last * arity + c)))
        _set_slot(ix_meta, dedup, s, _packed(h, hole))
        last -= 1
    return end
