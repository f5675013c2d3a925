"""Numba kernels over sorted int64 keys (packed rows, ``RowCodec``) for the count states of the
counting engines: searches of sorted needles and sums of weighted key runs, in one pass.

An update touches a few thousand to a few tens of thousands of an iteration's count entries.
Searching each of them from scratch (``np.searchsorted``) and inserting the new ones with
``np.insert`` (two masked copies) costs several passes over the entries; these kernels walk the
sorted inputs once.

- ``sorted_positions(haystack, needles)``: the left insertion position of each needle in the
  ascending haystack; for ascending needles by galloping from the previous answer,
  O(m log(n / m) + m): O(m log n) for a few needles and O(n + m) for many.
- ``found_in(haystack, needles)``: whether each ascending needle is in the haystack (same cost).
- ``merge_added(keys, counts, delta_keys, delta_counts)``: the sum of two weighted runs of
  strictly ascending keys, entries whose sum is 0 dropped. O(n + m), one output allocation;
  a small delta is searched by galloping and the keys between its positions block-copied. A
  dense merge holds both heads in registers, an exhausted run's as the largest int64 (a run
  holds that key last; it is summed after the loop), so a step tests only the end of the run
  it advances.
- ``union(a, b)``: the union of two strictly ascending key arrays. O(n + m).
- ``bag_sums(a, a_weight, b, b_weight)``: the sum of two ascending bags of keys, one weight
  per bag, as distinct keys and their weights. O(n + m), one pass.
- ``found_in`` / ``weights_at``: membership and counts of needles in a (weighted) key run;
  ``ascending_weights_at`` trusts the needles to ascend.
- ``segments_moved``: a block of sorted segments of columns (a relation stored iteration by
  iteration) without some columns and with others inserted, found and copied in one pass
  that reads the block in order.
- ``spliced(columns, left, joined, at, out)``: a block of columns without some and with others
  inserted at given places, written into a given block in one pass of block copies.

    >>> import numpy as np
    >>> sorted_positions(np.array([1, 3, 5, 7]), np.array([0, 3, 4, 9])).tolist()
    [0, 1, 2, 4]
    >>> keys, counts = merge_added(np.array([1, 3, 5]), np.array([2, 1, 4]),
    ...                            np.array([3, 4]), np.array([-1, 6]))
    >>> keys.tolist(), counts.tolist()
    ([1, 4, 5], [2, 6, 4])
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native.exported import exported, helper
from herbrand.indexes.kernels import gallop


@exported("i8[::1](i8[::1], i8[::1])")
def _sorted_positions(haystack, needles):
    out = np.empty(needles.shape[0], dtype=np.int64)
    lo = 0
    for j in range(needles.shape[0]):
        lo = gallop(haystack, lo, needles[j])
        out[j] = lo
    return out


# the count types of the weighted runs that ``weights_at`` reads (narrow ones in the counting
# engines' states: ``narrowest_count_type``)
COUNT_TYPES = ("i1", "i2", "i4", "i8")


def narrowest_count_type(counts: np.ndarray, types: tuple[str, ...] = COUNT_TYPES) -> np.dtype:
    """The narrowest of the signed integer ``types`` (ascending widths, the last one ``i8``)
    that holds every value of ``counts`` (the first for none). O(n), no temporary.

    >>> [narrowest_count_type(np.array(c)).name for c in ([0, 74], [-129, 5], [2**40])]
    ['int8', 'int16', 'int64']
    >>> narrowest_count_type(np.array([-129, 5]), ("i1", "i8")).name
    'int64'
    """
    if not len(counts):
        return np.dtype(types[0])
    low, high = int(counts.min()), int(counts.max())
    return next(np.dtype(t) for t in types
                if np.iinfo(t).min <= low and high <= np.iinfo(t).max)


@exported(*(f"i8[::1](i8[::1], {t}[::1], i8[::1])" for t in COUNT_TYPES))
def _weights_at(keys, counts, needles):
    m = needles.shape[0]
    out = np.empty(m, dtype=np.int64)
    n, lo = keys.shape[0], 0  # the keys before lo are below the needle, or equal to the last
    for j in range(m):
        x = needles[j]
        if lo < n and keys[lo] < x:  # gallop only past a key below the needle
            lo = gallop(keys, lo + 1, x)
        if lo < n and keys[lo] == x:  # found: the next needle starts past it
            out[j] = counts[lo]
            lo += 1
        elif lo > 0 and keys[lo - 1] == x:  # a repeated needle: the key just passed
            out[j] = counts[lo - 1]
        else:
            out[j] = 0
    return out


# an exhausted run's head in ``_merge_added``: above every key but the largest int64, which a
# run can hold last
_EXHAUSTED = np.iinfo(np.int64).max


@exported("UniTuple(i8[::1], 2)(i8[::1], i8[::1], i8[::1], i8[::1])")
def _merge_added(keys, counts, delta_keys, delta_counts):
    n, m = keys.shape[0], delta_keys.shape[0]
    out_keys = np.empty(n + m + 1, dtype=np.int64)
    out_counts = np.empty(n + m + 1, dtype=np.int64)
    i = j = k = 0
    x = keys[0] if n else _EXHAUSTED
    y = delta_keys[0] if m else _EXHAUSTED
    while True:
        if x < y:
            key, count = x, counts[i]
            i += 1
            x = keys[i] if i < n else _EXHAUSTED
        elif y < x:
            key, count = y, delta_counts[j]
            j += 1
            y = delta_keys[j] if j < m else _EXHAUSTED
        else:
            if x == _EXHAUSTED:
                break
            key, count = x, counts[i] + delta_counts[j]
            i += 1
            j += 1
            x = keys[i] if i < n else _EXHAUSTED
            y = delta_keys[j] if j < m else _EXHAUSTED
        if count != 0:
            out_keys[k] = key
            out_counts[k] = count
            k += 1
    # each run left holds one key, the largest int64
    count = (counts[i] if i < n else 0) + (delta_counts[j] if j < m else 0)
    out_keys[k] = _EXHAUSTED
    out_counts[k] = count
    k += count != 0
    return out_keys[:k].copy(), out_counts[:k].copy()


@exported("UniTuple(i8[::1], 2)(i8[::1], i8[::1], i8[::1], i8[::1], i8[::1])")
def _merge_sparse(keys, counts, delta_keys, delta_counts, at):
    """``_merge_added`` for a few delta keys whose insertion positions ``at`` are known: the
    stretches of ``keys`` between them are block copies."""
    n, m = keys.shape[0], delta_keys.shape[0]
    out_keys = np.empty(n + m, dtype=np.int64)
    out_counts = np.empty(n + m, dtype=np.int64)
    i = k = 0
    for j in range(m):
        stop = at[j]
        out_keys[k:k + stop - i] = keys[i:stop]
        out_counts[k:k + stop - i] = counts[i:stop]
        k += stop - i
        i = stop
        if i < n and keys[i] == delta_keys[j]:
            count = counts[i] + delta_counts[j]
            i += 1
        else:
            count = delta_counts[j]
        if count != 0:
            out_keys[k] = delta_keys[j]
            out_counts[k] = count
            k += 1
    out_keys[k:k + n - i] = keys[i:]
    out_counts[k:k + n - i] = counts[i:]
    k += n - i
    return out_keys[:k].copy(), out_counts[:k].copy()


@helper(inline="always")
def _bag_step(keys, sums, k, held, total, key, weight):
    """One key of ``_bag_sums``' merged sequence: while it equals the key ``held``, its weight
    is added to ``total``; else ``held`` and its ``total`` are written at ``k`` (kept, ``k``
    advanced, only when the total is not 0) and the key starts a total of its own. No branch
    on the data: a written entry that is not kept is overwritten by the next."""
    fresh = key != held
    keys[k] = held
    sums[k] = total
    k += fresh & (total != 0)
    total = weight if fresh else total + weight
    return k, total


@exported("UniTuple(i8[::1], 2)(i8[::1], i8, i8[::1], i8)")
def _bag_sums(a, a_weight, b, b_weight):
    """One merge pass of both bags, the keys of equal runs summed as they go by
    (``_bag_step``): selects rather than branches, as equal keys, and which bag holds the next
    one, are unpredictable (a branching merge took 4-6 ns a key, TC over graph10000)."""
    n, m = a.shape[0], b.shape[0]
    keys = np.empty(n + m + 1, dtype=np.int64)
    sums = np.empty(n + m + 1, dtype=np.int64)
    if n + m == 0:
        return keys[:0], sums[:0]
    held = a[0] if n else b[0]
    if m and b[0] < held:
        held = b[0]
    i = j = k = total = 0
    while i < n and j < m:
        x, y = a[i], b[j]
        first = x <= y
        i += first
        j += not first
        k, total = _bag_step(keys, sums, k, held, total, x if first else y,
                             a_weight if first else b_weight)
        held = x if first else y
    for rest in range(i, n):
        k, total = _bag_step(keys, sums, k, held, total, a[rest], a_weight)
        held = a[rest]
    for rest in range(j, m):
        k, total = _bag_step(keys, sums, k, held, total, b[rest], b_weight)
        held = b[rest]
    keys[k] = held
    sums[k] = total
    k += total != 0
    return keys[:k], sums[:k]


def bag_sums(a: np.ndarray, a_weight: int, b: np.ndarray, b_weight: int
             ) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct keys, ascending, their summed weights) of two bags of int64 keys, each
    ascending (repeats allowed) with one weight per bag, keys whose sum is 0 left out: one
    merge pass of both that sums equal keys as they go by, selecting rather than branching
    (an empty ``b`` for one bag; TC over graph10000, a 1% insert's 107,000 derivations:
    0.48 -> 0.26 ms). O(n + m), the results views of one allocation of n + m + 1 entries
    each."""
    return _bag_sums(np.ascontiguousarray(a, dtype=np.int64), a_weight,
                     np.ascontiguousarray(b, dtype=np.int64), b_weight)


@exported("i8[::1](i8[::1], i8[::1])")
def _union(a, b):
    n, m = a.shape[0], b.shape[0]
    out = np.empty(n + m, dtype=np.int64)
    i = j = k = 0
    while i < n or j < m:
        if j == m or (i < n and a[i] < b[j]):
            out[k] = a[i]
            i += 1
        elif i == n or b[j] < a[i]:
            out[k] = b[j]
            j += 1
        else:
            out[k] = a[i]
            i += 1
            j += 1
        k += 1
    return out[:k].copy()


@helper
def _column_below(columns, at, needles, j):
    """Whether column ``at`` of ``columns`` is lexicographically below column ``j`` of
    ``needles``."""
    for c in range(columns.shape[0]):
        if columns[c, at] != needles[c, j]:
            return columns[c, at] < needles[c, j]
    return False


@helper
def _column_gallop(columns, lo, hi, needles, j):
    """The left insertion position of column ``j`` of ``needles`` among the lexicographically
    sorted columns ``lo:hi`` of ``columns``: galloping from ``lo``, then a binary search.
    O(c log d) for the distance d from ``lo``."""
    probe, step = lo, 1
    while probe < hi and _column_below(columns, probe, needles, j):
        lo = probe + 1
        probe += step
        step *= 2
    hi = min(probe, hi)
    while lo < hi:
        mid = (lo + hi) >> 1
        if _column_below(columns, mid, needles, j):
            lo = mid + 1
        else:
            hi = mid
    return lo


# ``_segments_moved`` walks a segment in blocks of this many rows, copying each block once
# its last row is compared, for at most this many blocks without a leaving or joining row
# before it gallops
WALK_BLOCK = 64
WALK_BLOCKS = 8


@helper
def _position_in_block(columns, p, limit, end, needles, j):
    """The left insertion position of column ``j`` of ``needles`` among the sorted columns
    ``p:end`` of ``columns`` when it is at most ``limit`` (galloping within ``p:limit``), or
    -1 when the column ``limit - 1`` is below it (only for ``limit < end``)."""
    if limit < end and _column_below(columns, limit - 1, needles, j):
        return -1
    return _column_gallop(columns, p, limit, needles, j)


@exported("i8(i8[:, ::1], i8[::1], i8[:, ::1], i8[::1], i8[:, ::1], i8[::1], i8[:, ::1], "
          "i8[::1], i8[::1])", writes=("out", "left_positions", "at"))
def _segments_moved(columns, bounds, left, left_at, joined, joined_at, out, left_positions,
                    at):
    arity = columns.shape[0]
    gone, m = left.shape[1], joined.shape[1]
    dst = kept = li = ji = 0
    for segment in range(bounds.shape[0] - 1):
        p, end = bounds[segment], bounds[segment + 1]
        leave = join = -1  # the positions of the next leaving and joining rows, once found
        walked = 0  # the blocks walked since the last leaving or joining row
        while True:
            limit = min(end, p + WALK_BLOCK) if walked < WALK_BLOCKS else end
            if leave < 0 and li < gone and left_at[li] == segment:
                leave = _position_in_block(columns, p, limit, end, left, li)
            if join < 0 and ji < m and joined_at[ji] == segment:
                join = _position_in_block(columns, p, limit, end, joined, ji)
            stop = limit
            if leave >= 0:
                stop = min(stop, leave)
            if join >= 0:
                stop = min(stop, join)
            for c in range(arity):
                out[c, dst:dst + stop - p] = columns[c, p:stop]
            dst, kept, p = dst + stop - p, kept + stop - p, stop
            if join >= 0 and join == p and (leave < 0 or join <= leave):
                for c in range(arity):
                    out[c, dst] = joined[c, ji]
                at[ji] = kept
                dst, ji, join, walked = dst + 1, ji + 1, -1, 0
            elif leave >= 0 and leave == p:
                left_positions[li] = p
                p, li, leave, walked = p + 1, li + 1, -1, 0
            elif p == end:
                break
            else:
                walked += 1
    return dst


def segments_moved(columns: np.ndarray, bounds: np.ndarray, left: np.ndarray,
                   left_at: np.ndarray, joined: np.ndarray, joined_at: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (c, n) ``columns``, a block of lexicographically sorted segments
    ``bounds[s]:bounds[s + 1]`` (such as a relation stored iteration by iteration), without
    the columns ``left`` of segments ``left_at`` (each there) and with the columns ``joined``
    inserted in order into segments ``joined_at``; both sorted by segment, then row. Returns
    the new C-contiguous block, the positions of the leaving columns in ``columns``
    (ascending), and for each joined column the number of kept columns before it (ascending).
    One pass over the segments, in blocks of ``WALK_BLOCK`` columns: a block whose last
    column is below the next leaving and joining columns (lexicographic comparisons) is
    copied whole; the one holding such a column is galloped within and copied up to it. So
    the columns are read in order, as the hardware prefetches them: galloping across a
    block out of cache took a dependent miss per probe (TC over graph10000, 1% update:
    3.5k moves in a 262k x 2 trace, 1.5 -> 0.5 ms out of cache, 0.36 -> 0.40 ms in it).
    After ``WALK_BLOCKS`` blocks without such a column the rest of the segment is galloped,
    so a sparse move stays a search and one block copy. O(n c + (a + m) c log(n / (a +
    m)))."""
    columns = np.ascontiguousarray(columns, dtype=np.int64)
    left, joined = (np.ascontiguousarray(left, dtype=np.int64),
                    np.ascontiguousarray(joined, dtype=np.int64))
    out = np.empty((columns.shape[0], columns.shape[1] - left.shape[1] + joined.shape[1]),
                   dtype=np.int64)
    left_positions = np.empty(left.shape[1], dtype=np.int64)
    at = np.empty(joined.shape[1], dtype=np.int64)
    _segments_moved(columns, np.ascontiguousarray(bounds, dtype=np.int64), left,
                    np.ascontiguousarray(left_at, dtype=np.int64), joined,
                    np.ascontiguousarray(joined_at, dtype=np.int64), out, left_positions, at)
    return out, left_positions, at


@helper
def _splice(columns, left, joined, at, out):
    """``spliced`` into ``out``."""
    n, m, gone = columns.shape[1], joined.shape[1], left.shape[0]
    arity = columns.shape[0]
    src = dst = kept = next_left = 0
    for j in range(m + 1):
        target = at[j] if j < m else n - gone  # kept columns to copy before joined[:, j]
        while kept < target:
            stop = left[next_left] if next_left < gone else n
            count = min(stop - src, target - kept)
            for c in range(arity):
                out[c, dst:dst + count] = columns[c, src:src + count]
            src, dst, kept = src + count, dst + count, kept + count
            if src == stop and next_left < gone:  # skip a column that leaves
                src, next_left = src + 1, next_left + 1
        if j < m:
            for c in range(arity):
                out[c, dst] = joined[c, j]
            dst += 1


@exported("void(i8[:, :], i8[::1], i8[:, ::1], i8[::1], i8[:, :])", writes=("out",))
def _spliced_into(columns, left, joined, at, out):
    _splice(columns, left, joined, at, out)


def spliced(columns: np.ndarray, left: np.ndarray, joined: np.ndarray, at: np.ndarray,
            out: np.ndarray) -> np.ndarray:
    """Write into ``out`` (a (c, n - len(left) + m) block, such as a ``GrowingColumns.reserve``d
    one) the (c, n) ``columns`` (a strided view too) without those at the ascending, distinct
    positions ``left`` and with the (c, m) ``joined`` inserted, ``joined[:, j]`` before the
    kept column of index ``at[j]`` (ascending; the kept count to put it last):
    ``np.insert(np.delete(columns, left, axis=1), at, joined, axis=1)`` in one pass of block
    copies. Returns ``out``. O(n c + m c)."""
    _spliced_into(columns, np.ascontiguousarray(left, dtype=np.int64),
                  np.ascontiguousarray(joined, dtype=np.int64),
                  np.ascontiguousarray(at, dtype=np.int64), out)
    return out


def sorted_positions(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Left insertion positions of int64 ``needles`` in the ascending ``haystack``
    (``np.searchsorted(haystack, needles)``): O(m log(n / m) + m) by galloping when the
    needles ascend (checked, O(m)), O(m log n) otherwise."""
    needles = np.ascontiguousarray(needles, dtype=np.int64)
    if not _ascending(needles):
        return np.searchsorted(haystack, needles).astype(np.int64)
    return _sorted_positions(np.ascontiguousarray(haystack, dtype=np.int64), needles)


def _ascending(values: np.ndarray) -> bool:
    """Whether ``values`` never descend. O(m)."""
    return len(values) < 2 or not (values[1:] < values[:-1]).any()


def found_in(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Whether each of the int64 ``needles`` is in the ascending ``haystack``, as a boolean
    mask (``sorted_positions``' cost)."""
    if not len(haystack):
        return np.zeros(len(needles), dtype=bool)
    at = np.minimum(sorted_positions(haystack, needles), len(haystack) - 1)
    return haystack[at] == needles


def merge_added(keys: np.ndarray, counts: np.ndarray, delta_keys: np.ndarray,
                delta_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(keys, int64 counts) of the sum of two weighted runs of strictly ascending int64 keys,
    entries summing to 0 dropped. O(n + m): a merge step per entry, or, for a delta under a
    sixteenth of the keys, a galloping search of its keys and block copies in between."""
    if 16 * len(delta_keys) < len(keys):
        delta_keys = np.ascontiguousarray(delta_keys, dtype=np.int64)
        keys = np.ascontiguousarray(keys, dtype=np.int64)
        return _merge_sparse(keys, np.ascontiguousarray(counts, dtype=np.int64), delta_keys,
                             np.ascontiguousarray(delta_counts, dtype=np.int64),
                             _sorted_positions(keys, delta_keys))
    return _merge_added(np.ascontiguousarray(keys, dtype=np.int64),
                        np.ascontiguousarray(counts, dtype=np.int64),
                        np.ascontiguousarray(delta_keys, dtype=np.int64),
                        np.ascontiguousarray(delta_counts, dtype=np.int64))


def union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The ascending union of two strictly ascending int64 arrays. O(n + m)."""
    return _union(np.ascontiguousarray(a, dtype=np.int64), np.ascontiguousarray(b, dtype=np.int64))


def weights_at(keys: np.ndarray, counts: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """The int64 count of each of ``needles`` in a weighted run of strictly ascending
    ``keys`` (0 when absent), ``sorted_positions``' cost: ``ascending_weights_at`` when the
    needles ascend (checked, O(m)), else a binary search of each, O(m log n)."""
    needles = np.ascontiguousarray(needles, dtype=np.int64)
    if _ascending(needles):
        return ascending_weights_at(keys, counts, needles)
    if not len(keys):
        return np.zeros(len(needles), dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, needles), len(keys) - 1)
    return np.where(keys[at] == needles, counts[at], 0).astype(np.int64)


def ascending_weights_at(keys: np.ndarray, counts: np.ndarray,
                         needles: np.ndarray) -> np.ndarray:
    """``weights_at`` of ascending int64 ``needles``, trusted (not checked: a Z-set's keys,
    whose check would cost a pass over them, 8 us in 44k): one galloping pass that reads
    the counts as it finds them (``_weights_at``), stepping past each key it finds and
    galloping only from a key below the next needle, so that needles which are most of the
    keys cost a compare or two each (dbsp's count reads of a delete's ΔX_i in the insert's,
    TC over graph10000: 44k in 44k keys, 99-103 -> 61-63 us). O(m log(n / m) + m)."""
    needles = np.ascontiguousarray(needles, dtype=np.int64)
    if not len(keys):
        return np.zeros(len(needles), dtype=np.int64)
    if counts.dtype.str[1:] not in COUNT_TYPES:
        counts = counts.astype(np.int64)
    return _weights_at(np.ascontiguousarray(keys, dtype=np.int64),
                       np.ascontiguousarray(counts), needles)
