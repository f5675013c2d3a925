"""Dynamic work sharing among the parallel tasks of one rule: the rows of the rule's first
level are not cut into fixed slices, each task takes the next chunk of rows not yet claimed
from a cursor the tasks share (``tickets[CLAIM_NEXT]``, advanced by an atomic fetch-add),
whenever it has finished its last chunk. A row's derivations vary by orders of magnitude
(skewed degrees), so fixed slices leave one thread working alone at the end of each rule; with
small chunks, the threads finish within about one chunk's work of each other, whatever the
skew, and one task per thread suffices."""

from __future__ import annotations

from numba import njit

from herbrand.evaluators.native.layout import CLAIM_CHUNK, CLAIM_END, CLAIM_NEXT
from herbrand.evaluators.native.memory import _fetch_add


@njit(inline="always")
def _claim(tickets, cursor, stop):
    """Take the next ``tickets[CLAIM_CHUNK]`` rows of the shared range ``[tickets[CLAIM_NEXT],
    tickets[CLAIM_END])`` as the first level's ``cursor[0]``, ``stop[0]``: False when none are
    left. One atomic operation on a cache line of its own per chunk."""
    end = tickets[CLAIM_END]
    first = _fetch_add(tickets.ctypes.data + 8 * CLAIM_NEXT, tickets[CLAIM_CHUNK])
    if first >= end:
        return False
    cursor[0], stop[0] = first, min(first + tickets[CLAIM_CHUNK], end)
    return True
