"""The native kernels of the backward/forward step: a saturation rule of two body atoms run
to its own fixpoint in one call (``pair_saturation``), and the facts with a proof of two
lower facts (``two_step_proofs``).

``saturate_pair`` runs a rule ``H :- @delta:R(..), L(..)`` (R of the stratum, L a lower
relation) over the proved facts of R from a cursor on (P's rows in proving order, so a fact
is read once per rule and step), each joined with the rows of L that can derive a checked
head, sorted on the join key (a binary search per fact, or its starts: below), and probes
each head in C's hash table in place (the hashing of ``row_sets``): a checked head not
proved yet is marked proved and appended to P's rows. When H's relation is R, the rows it
appends are read in the same call, so the call ends at the fixpoint: no Python round, no
batch of derivations, no mask per iteration. Cost: per proved fact, O(log n) to find its L
rows (O(1) through starts), then per L row one head hash and probe (O(1) expected); no
allocation but a row of scratch.
``saturate_pair_on_grid`` finds the heads through a grid instead of hashing them, and where a
key has more lower rows than a row of the grid has 64-bit words, a word of heads at a time: the
bits of the key's heads less those proved or not checked, so a head proved already is never
read (on TC over graph10000, 81% of a 1% delete's 269k heads; its grid calls 3.1 -> 2.0 ms).

A sorted lane of small non-negative values (as a dense numbering of constants gives) is read
through its *starts* (``lane_starts``: where each value's run begins), two reads per value
instead of a binary search: on TC over graph10000, a 1% delete's saturation and two-step
calls take 2.3 ms instead of 3.4 (the same calls replayed, CPU, min of 15).
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native.exported import exported, helper
from herbrand.evaluators.row_sets import _EMPTY, _find, row_hash
from herbrand.indexes.kernels import _lex_bound, _lex_end

NO_STARTS = np.zeros(0, dtype=np.int64)
DENSE = 4  # a lane has starts while its largest value is below DENSE x its length + 1024


def lane_starts(lane: np.ndarray) -> np.ndarray:
    """Where each value's run begins in the ascending ``lane`` (the positions holding v are
    ``starts[v]`` to ``starts[v + 1]``), when its values are non-negative and its largest is
    below ``DENSE`` x its length + 1024; else none (empty: the kernels search the lane).
    O(n + largest value x log n)."""
    if not len(lane) or lane[0] < 0 or lane[-1] >= DENSE * len(lane) + 1024:
        return NO_STARTS
    return np.searchsorted(lane, np.arange(lane[-1] + 2, dtype=np.int64)).astype(np.int64)


@helper(inline="always")
def _lane_range(lane, starts, value):
    """The positions of the ascending ``lane`` holding ``value``: two reads of its
    ``starts`` (``lane_starts``) if it has them, else a binary search, then a scan of the
    matches (inlined: through a call, the first saturation of a 1% delete of TC over
    graph10000 took 3.0 ms instead of 2.2)."""
    if starts.shape[0]:
        if 0 <= value < starts.shape[0] - 1:
            return starts[value], starts[value + 1]
        return starts[0], starts[0]
    lo = np.searchsorted(lane, value)
    hi = lo
    while hi < lane.shape[0] and lane[hi] == value:
        hi += 1
    return lo, hi


@helper
def _lex_range(keys, source, source_key, i):
    """The columns of the sorted block ``keys`` equal to source column i's key columns
    (``source_key``), lexicographically."""
    needle = np.empty((keys.shape[0], 1), dtype=np.int64)
    for c in range(source_key.shape[0]):
        needle[c, 0] = source[source_key[c], i]
    lo = _lex_bound(keys, needle, 0, False)
    return lo, _lex_end(keys, needle, 0, lo)


@helper
def _head_value(source, i, lower, j, at):
    """A head column's value (``head_of``'s code ``at``) of source row i joined with lower
    row j."""
    return source[at, i] if at >= 0 else lower[-at - 1, j]


@exported("UniTuple(i8, 2)(i8[:, ::1], i8, i8, i8[:, ::1], i8[:, ::1], i8[::1], i8[::1], "
          "i8[::1], i8[::1], i8[:, ::1], b1[::1], i8[:, ::1], i8, b1)",
          writes=("proved", "proved_rows"))
def saturate_pair(source, start, stop, lower, keys, starts, source_key, head_of,
                  slots, stored, proved, proved_rows, count, same):
    """Chain the rule forwards from the proved facts ``source[:, start:stop]``: ``lower``
    holds the lower rows to join, sorted on their join columns (``keys``, as many rows as
    ``source_key``, the source columns they equal; ``starts``: the first's, if one, and it
    has them); ``head_of`` gives each head column's
    value: source column c for c >= 0, lower column -c - 1 otherwise. A head in C (``slots``
    over ``stored``, as ``row_sets``) whose ``proved`` flag is clear gets it and is appended
    at ``proved_rows[:, count]`` (room for every checked row). ``same``: the source is that
    P (``source`` is ``proved_rows``), read up to its growing count. Returns (where the
    source was read up to, the new count)."""
    head = np.empty((head_of.shape[0], 1), dtype=np.int64)
    single, lane = keys.shape[0] == 1, keys[0]
    i = start
    while i < (count if same else stop):
        if single:
            lo, hi = _lane_range(lane, starts, source[source_key[0], i])
        else:
            lo, hi = _lex_range(keys, source, source_key, i)
        for j in range(lo, hi):
            for c in range(head_of.shape[0]):
                head[c, 0] = _head_value(source, i, lower, j, head_of[c])
            p = slots[_find(slots, stored, head, 0, row_hash(head, 0))]
            if p != _EMPTY and not proved[p]:
                proved[p] = True
                proved_rows[:, count] = head[:, 0]
                count += 1
        i += 1
    return i, count


# the lowest set bit's index through a de Bruijn sequence: BIT_INDEX[(bit x DE_BRUIJN) >> 58]
DE_BRUIJN = 0x03F79D71B4CB0A89
BIT_INDEX = tuple(sorted(range(64), key=lambda i: ((1 << i) * DE_BRUIJN % (1 << 64)) >> 58))


@helper
def _unsettle(settled, cells_x, cells_z, start):
    """Clear the bits of C's facts from position ``start`` on in ``settled`` (all set first
    when ``start`` is 0): fact q is bit ``cells_z[q]`` of row ``cells_x[q]``. O(facts), plus
    O(rows x words) from 0."""
    if start == 0:
        settled[:] = -1
    for q in range(start, cells_x.shape[0]):
        z = cells_z[q]
        settled[cells_x[q], z >> 6] &= ~(1 << (z & 63))


@helper
def _fill_successors(successors, lane, lower_part):
    """Per value v of the lane (row v of ``successors``), the bits of the head numbers
    (``lower_part``) of its lower rows. O(values x words + rows)."""
    successors[:] = 0
    for j in range(lane.shape[0]):
        z = lower_part[j]
        successors[lane[j], z >> 6] |= 1 << (z & 63)


@exported("UniTuple(i8, 2)(i8[:, ::1], i8, i8, i8[:, ::1], i8[:, ::1], i8[::1], i8[::1], "
          "i8[::1], i8[::1], i8[::1], i8[::1], i8[:, ::1], i8[::1], i8[::1], i8, i8[::1], "
          "i8[::1], i8[:, ::1], b1, i8[:, ::1], i8, i8[:, ::1], b1[::1], i8[:, ::1], i8, b1)",
          writes=("successors", "settled", "proved", "proved_rows"))
def saturate_pair_on_grid(source, start, stop, lower, keys, starts, lower_part, source_key,
                          head_of, source_part, slots, stored, x_of, grid, width, cells_x,
                          cells_z, successors, fill, settled, settled_from, checked, proved,
                          proved_rows, count, same):
    """``saturate_pair`` with C's heads as a grid (``pair_saturation.HeadGrid``): a head's
    position in C is ``grid[x * width + z]``, x the position of its values from the source
    row (its ``source_part`` columns) in the set ``slots`` over ``stored`` (one probe per
    source row: one without is skipped; ``x_of``, if not empty, holds it by value for one
    column, -1 where none: a read instead of the probe) and z that of its values from the
    lower row (``lower_part``, one per lower row; every lower row has one). Per lower row joined, a
    read of the grid, where ``saturate_pair`` hashes and probes the head: on TC over
    graph10000 the first saturation of a 1% delete, 188k heads, in 2.2 ms instead of 6.

    With bit rows (``settled`` has words: one key column with ``starts``; C's fact q in grid
    cell (``cells_x[q]``, ``cells_z[q]``); ``checked``: C's rows), the heads a source row
    can still prove are found a word at a time where its key has more lower rows than
    ``settled`` has words: the bits of its key's heads (``successors``, made here when
    ``fill``) less those of row x of ``settled`` (kept across calls: set for a cell not in
    C, cleared here for C's facts from ``settled_from`` on, set again once its fact is found
    proved), so a head proved already costs at most one read (on TC over graph10000, 81% of a
    1% delete's 269k heads). O(new C facts) more per call, O(keys x words) to fill."""
    part = np.empty((source_part.shape[0], 1), dtype=np.int64)
    single, lane = keys.shape[0] == 1, keys[0]
    words = settled.shape[1]
    if words:
        _unsettle(settled, cells_x, cells_z, settled_from)
        if fill:
            _fill_successors(successors, lane, lower_part)
    i = start
    while i < (count if same else stop):
        if x_of.shape[0]:
            v = source[source_part[0], i]
            x = x_of[v] if 0 <= v < x_of.shape[0] else _EMPTY
        else:
            for c in range(source_part.shape[0]):
                part[c, 0] = source[source_part[c], i]
            x = slots[_find(slots, stored, part, 0, row_hash(part, 0))]
        if x != _EMPTY:
            if single:
                lo, hi = _lane_range(lane, starts, source[source_key[0], i])
            else:
                lo, hi = _lex_range(keys, source, source_key, i)
            base = x * width
            if hi - lo > words > 0:  # lo < hi: the key is one of the lane's values
                key = lane[lo]
                for w in range(words):
                    fresh = successors[key, w] & ~settled[x, w]
                    while fresh != 0:
                        bit = fresh & -fresh
                        fresh ^= bit
                        settled[x, w] |= bit
                        p = grid[base + (w << 6) + BIT_INDEX[((bit * DE_BRUIJN) >> 58) & 63]]
                        if proved[p]:  # by another rule or pass since it was checked
                            continue
                        proved[p] = True
                        for c in range(checked.shape[0]):
                            proved_rows[c, count] = checked[c, p]
                        count += 1
                i += 1
                continue
            for j in range(lo, hi):
                z = lower_part[j]
                p = grid[base + z]
                if p != _EMPTY and not proved[p]:
                    proved[p] = True
                    if words:
                        settled[x, z >> 6] |= 1 << (z & 63)
                    for c in range(head_of.shape[0]):
                        proved_rows[c, count] = _head_value(source, i, lower, j, head_of[c])
                    count += 1
        i += 1
    return i, count


@exported("b1[::1](i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1])")
def two_step_proved(first_heads, second_heads, first_lane, first_starts, first_shared,
                    second_lane, second_starts, second_shared):
    """Whether each head i has a proof of two lower rows (``two_step_proofs``): a first row
    whose head column holds ``first_heads[i]`` and a second whose head column holds
    ``second_heads[i]`` with the same shared value. Each relation's rows sorted by head
    column (``*_lane``, with its ``lane_starts``), then shared column (``*_shared``): two
    range lookups and a merge of the two ranges' shared values per head, O(log n + matches),
    O(1 + matches) with starts."""
    out = np.zeros(first_heads.shape[0], dtype=np.bool_)
    for i in range(first_heads.shape[0]):
        a, a_end = _lane_range(first_lane, first_starts, first_heads[i])
        b, b_end = _lane_range(second_lane, second_starts, second_heads[i])
        while a < a_end and b < b_end:
            if first_shared[a] < second_shared[b]:
                a += 1
            elif first_shared[a] > second_shared[b]:
                b += 1
            else:
                out[i] = True
                break
    return out


@exported("b1(i8[:, :], i8[::1], b1[::1], i8[::1], i8[::1], i8[:, :], i8[::1], i8[::1], "
          "i8[::1], i8[::1])")
def unproved_head_held(checked, positions, proved, head_at, head_value, delta, delta_at,
                       delta_value, head_bound, delta_bound):
    """Whether a fact of C (``checked``, by column) at one of ``positions`` and not ``proved``
    holds a rule's head constants (``head_value`` at columns ``head_at``) and, at its columns
    ``head_bound``, the values that one row of ``delta`` holding the delta literal's
    constants (``delta_value`` at ``delta_at``) has at its columns ``delta_bound``
    (``head_reach``). O(delta rows + positions x delta rows kept), ending at the first."""
    kept = np.empty(delta.shape[1], dtype=np.int64)
    count = 0
    for j in range(delta.shape[1]):
        k = 0
        while k < delta_at.shape[0] and delta[delta_at[k], j] == delta_value[k]:
            k += 1
        if k == delta_at.shape[0]:
            kept[count] = j
            count += 1
    if count == 0:
        return False
    for p in positions:
        if proved[p]:
            continue
        k = 0
        while k < head_at.shape[0] and checked[head_at[k], p] == head_value[k]:
            k += 1
        if k < head_at.shape[0]:
            continue
        for t in range(count):
            k = 0
            while (k < head_bound.shape[0]
                   and checked[head_bound[k], p] == delta[delta_bound[k], kept[t]]):
                k += 1
            if k == head_bound.shape[0]:
                return True
    return False
