"""Dynamic work sharing among the parallel tasks of one rule.

First-level rows: they are not cut into fixed slices, each task takes the next chunk of rows not
yet claimed from a cursor the tasks share (``tickets[CLAIM_NEXT]``, advanced by an atomic
fetch-add), whenever it has finished its last chunk. A row's derivations vary by orders of
magnitude (skewed degrees), so fixed slices leave one thread working alone at the end of each
rule; with small chunks, the threads finish within about one chunk's work of each other.

Items: one first-level row can hold most of a pass's work (Andersen points-to: a row of the
250-row ``store`` relation leading, a fifth of a rule's pass in one row), and no chunking of the
first level shares that out. So a task that runs out of first-level rows does not stop while
others work: it waits (``_join_or_wait``), and a task that sees it waiting offers the rest of its
current first-level row (``_offer_rest``): the second-level rows it has not reached yet. A probe
level yields its rows newest first (row numbers falling), so "not reached yet" is a range of row
numbers, ``[low, current)``, and the item is shared out like the first level, by claims of
``ITEM_CHUNKS``-th parts of it, each task re-opening the probe and skipping the rows outside its
claim (``_in_claim``). A task inside an item offers the rest of its claim in turn, so a heavy row
is cut again for as long as a thread waits. One item is shared at a time (``ITEM_LOCK``, held by
the task that offered it until no claim is left): its fields are read by the tasks that join it
between two reads of its cursor, which carries the item's id, so a task never mixes two items'.

A task's share of ``tickets[ACTIVE]`` (the tasks of the round still working: set by the caller)
is given back once per round (``_release``): when it waits, and when it returns; waiting tasks
stop when none is active, the pass then done or the round over (storage to grow).
"""

from __future__ import annotations

from numba import njit

from herbrand.evaluators.native.layout import (
    ACTIVE,
    CLAIM_CHUNK,
    CLAIM_END,
    CLAIM_NEXT,
    IDLE,
    ITEM_CHUNK,
    ITEM_CHUNKS,
    ITEM_CURSOR,
    ITEM_ID,
    ITEM_LOCK,
    ITEM_LOW,
    ITEM_ROW0,
    ITEM_SHIFT,
    S_CLAIM_HIGH,
    S_CLAIM_LOW,
    S_ITEM,
    S_ITEM_CHUNK,
    S_ITEM_LOW,
    S_OWNER,
    S_RELEASED,
)
from herbrand.evaluators.native.memory import _fetch_add, _load_atomic, _publish, _swap_if

_ROWS = (1 << ITEM_SHIFT) - 1


@njit(inline="always")
def _address(tickets, field):
    return tickets.ctypes.data + 8 * field


@njit(inline="always")
def _claim(tickets, cursor, stop):
    """Take the next ``tickets[CLAIM_CHUNK]`` rows of the shared range ``[tickets[CLAIM_NEXT],
    tickets[CLAIM_END])`` as the first level's ``cursor[0]``, ``stop[0]``: False when none are
    left. One atomic operation on a cache line of its own per chunk."""
    end = tickets[CLAIM_END]
    first = _fetch_add(_address(tickets, CLAIM_NEXT), tickets[CLAIM_CHUNK])
    if first >= end:
        return False
    cursor[0], stop[0] = first, min(first + tickets[CLAIM_CHUNK], end)
    return True


@njit(inline="always")
def _release(tickets, state):
    """Give this task's share of ``tickets[ACTIVE]`` back, once per round."""
    if state[S_RELEASED] == 0:
        state[S_RELEASED] = 1
        _fetch_add(_address(tickets, ACTIVE), -1)


@njit(inline="always")
def _claim_item(tickets, state):
    """Take the next rows of the task's item (``state[S_ITEM]``) as its claim
    (``state[S_CLAIM_LOW]``, ``state[S_CLAIM_HIGH]``): False when none are left. One
    compare-and-swap per claim (retried while other tasks claim at once)."""
    address = _address(tickets, ITEM_CURSOR)
    item, low = state[S_ITEM], state[S_ITEM_LOW]
    while True:
        word = _load_atomic(address)
        high = word & _ROWS
        if word >> ITEM_SHIFT != item or high <= low:
            return False
        rest = max(high - state[S_ITEM_CHUNK], low)
        if _swap_if(address, word, (item << ITEM_SHIFT) | rest):
            state[S_CLAIM_LOW], state[S_CLAIM_HIGH] = rest, high
            return True


@njit(inline="always")
def _leave_item(tickets, state):
    """The task's item has no claim left: the task leaves it (the lock freed if it offered
    it)."""
    if state[S_OWNER] == 1:
        state[S_OWNER] = 0
        _publish(_address(tickets, ITEM_LOCK), 0)
    state[S_ITEM] = 0


@njit(inline="always")
def _in_claim(state, row):
    """Where ``row`` (a second-level row of an item) stands against the task's claim: 1 inside,
    0 above it (skip it), -1 below it (the claim is done: rows only fall)."""
    if row >= state[S_CLAIM_HIGH]:
        return 0
    return 1 if row >= state[S_CLAIM_LOW] else -1


@njit(inline="always")
def _offer_rest(tickets, state, row0, low, row):
    """When a task waits and no item is shared: offer the second-level rows ``[low, row)`` of
    first-level row ``row0`` (the task is at ``row``; within an item, ``low`` is its claim's) as
    the item, this task its owner, its own claim now ``row`` alone."""
    if (row - low < 2 or _load_atomic(_address(tickets, IDLE)) == 0
            or _load_atomic(_address(tickets, ITEM_LOCK)) != 0):
        return
    if not _swap_if(_address(tickets, ITEM_LOCK), 0, 1):
        return
    item = tickets[ITEM_ID] + 1
    chunk = max(1, (row - low) // ITEM_CHUNKS)
    tickets[ITEM_ID], tickets[ITEM_ROW0] = item, row0
    tickets[ITEM_LOW], tickets[ITEM_CHUNK] = low, chunk
    _publish(_address(tickets, ITEM_CURSOR), (item << ITEM_SHIFT) | row)
    state[S_ITEM], state[S_OWNER], state[S_ITEM_LOW], state[S_ITEM_CHUNK] = item, 1, low, chunk
    state[S_CLAIM_LOW], state[S_CLAIM_HIGH] = row, row + 1


@njit(inline="always")
def _join_item(tickets, state, cursor, stop):
    """Join the shared item if it has rows left: its first-level row as the task's first level
    (``cursor[0]``, ``stop[0]``) and a first claim taken; whether it did."""
    address = _address(tickets, ITEM_CURSOR)
    item = _load_atomic(address) >> ITEM_SHIFT
    if item == 0:
        return False
    row0 = _load_atomic(_address(tickets, ITEM_ROW0))
    low = _load_atomic(_address(tickets, ITEM_LOW))
    chunk = _load_atomic(_address(tickets, ITEM_CHUNK))
    word = _load_atomic(address)  # the same item still, with rows left: the fields were its own
    if word >> ITEM_SHIFT != item or word & _ROWS <= low:
        return False
    state[S_ITEM], state[S_OWNER], state[S_ITEM_LOW], state[S_ITEM_CHUNK] = item, 0, low, chunk
    if not _claim_item(tickets, state):
        state[S_ITEM] = 0
        return False
    cursor[0], stop[0] = row0, row0 + 1
    return True


@njit(inline="always")
def _join_or_wait(tickets, state, cursor, stop):
    """The task's first-level rows are all claimed: join the shared item, else wait (counted in
    ``tickets[IDLE]``, spinning) until one is offered or no task is active; whether it joined
    one. A joining task is active again."""
    if _join_item(tickets, state, cursor, stop):
        return True
    _release(tickets, state)
    _fetch_add(_address(tickets, IDLE), 1)
    while True:
        if _join_item(tickets, state, cursor, stop):
            _fetch_add(_address(tickets, IDLE), -1)
            state[S_RELEASED] = 0
            _fetch_add(_address(tickets, ACTIVE), 1)
            return True
        if _load_atomic(_address(tickets, ACTIVE)) <= 0:
            _fetch_add(_address(tickets, IDLE), -1)
            return False
