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
  a small delta is searched by galloping and the keys between its positions block-copied.
- ``union(a, b)``: the union of two strictly ascending key arrays. O(n + m).
- ``run_lengths(ordered)``: the distinct values of an ascending array and their counts.
- ``found_in`` / ``weights_at``: membership and counts of needles in a (weighted) key run.
- ``segment_positions``: lexicographic insertion positions of rows, each within its own sorted
  segment of one block of columns.
- ``spliced(columns, left, joined, at)``: a block of columns without some and with others
  inserted, in one pass of block copies (or into a given block).

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


@helper
def gallop_within(haystack, lo, hi, x):
    """The left insertion position of ``x`` in the ascending ``haystack[:hi]``, everything
    before ``lo`` being below it: galloping from ``lo``, then a binary search. O(log d) for
    the distance d from ``lo``."""
    top, step = lo, 1
    while top < hi and haystack[top] < x:
        lo = top + 1
        top += step
        step *= 2
    top = min(top, hi)
    while lo < top:
        mid = (lo + top) >> 1
        if haystack[mid] < x:
            lo = mid + 1
        else:
            top = mid
    return lo


@helper
def gallop(haystack, lo, x):
    """``gallop_within`` the whole ``haystack``."""
    return gallop_within(haystack, lo, haystack.shape[0], x)


@exported("i8[::1](i8[::1], i8[::1])")
def _sorted_positions(haystack, needles):
    out = np.empty(needles.shape[0], dtype=np.int64)
    lo = 0
    for j in range(needles.shape[0]):
        lo = gallop(haystack, lo, needles[j])
        out[j] = lo
    return out


@exported("UniTuple(i8[::1], 2)(i8[::1], i8[::1], i8[::1], i8[::1])")
def _merge_added(keys, counts, delta_keys, delta_counts):
    n, m = keys.shape[0], delta_keys.shape[0]
    out_keys = np.empty(n + m, dtype=np.int64)
    out_counts = np.empty(n + m, dtype=np.int64)
    i = j = k = 0
    while i < n or j < m:
        if j == m or (i < n and keys[i] < delta_keys[j]):
            key, count = keys[i], counts[i]
            i += 1
        elif i == n or delta_keys[j] < keys[i]:
            key, count = delta_keys[j], delta_counts[j]
            j += 1
        else:
            key, count = keys[i], counts[i] + delta_counts[j]
            i += 1
            j += 1
        if count != 0:
            out_keys[k] = key
            out_counts[k] = count
            k += 1
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


@exported("UniTuple(i8[::1], 2)(i8[::1])")
def _run_lengths(ordered):
    n = ordered.shape[0]
    distinct = np.empty(n, dtype=np.int64)
    lengths = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        if k and distinct[k - 1] == ordered[i]:
            lengths[k - 1] += 1
        else:
            distinct[k] = ordered[i]
            lengths[k] = 1
            k += 1
    return distinct[:k], lengths[:k]


def run_lengths(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct values, how often each occurs) of an ascending int64 array, in one
    pass. O(n)."""
    return _run_lengths(np.ascontiguousarray(ordered, dtype=np.int64))


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


@exported("i8[::1](i8[:, ::1], i8[::1], i8[::1], i8[:, ::1])")
def _segment_positions(columns, starts, stops, needles):
    arity = columns.shape[0]
    out = np.empty(needles.shape[1], dtype=np.int64)
    for j in range(needles.shape[1]):
        lo, hi = starts[j], stops[j]
        while lo < hi:
            mid = (lo + hi) >> 1
            below = False
            for c in range(arity):
                if columns[c, mid] != needles[c, j]:
                    below = columns[c, mid] < needles[c, j]
                    break
            if below:
                lo = mid + 1
            else:
                hi = mid
        out[j] = lo
    return out


def segment_positions(columns: np.ndarray, starts: np.ndarray, stops: np.ndarray,
                      needles: np.ndarray) -> np.ndarray:
    """The left insertion position of each column of the (c, m) ``needles`` in the
    lexicographically sorted segment ``starts[j]:stops[j]`` of the (c, n) ``columns`` (one
    block holding sorted segments, such as a relation stored iteration by iteration), as a
    position in ``columns``. O(m c log n), nothing copied."""
    return _segment_positions(np.ascontiguousarray(columns, dtype=np.int64),
                              np.ascontiguousarray(starts, dtype=np.int64),
                              np.ascontiguousarray(stops, dtype=np.int64),
                              np.ascontiguousarray(needles, dtype=np.int64))


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


@exported("i8[:, ::1](i8[:, ::1], i8[::1], i8[:, ::1], i8[::1])")
def _spliced(columns, left, joined, at):
    out = np.empty((columns.shape[0], columns.shape[1] - left.shape[0] + joined.shape[1]),
                   dtype=np.int64)
    _splice(columns, left, joined, at, out)
    return out


@exported("void(i8[:, :], i8[::1], i8[:, ::1], i8[::1], i8[:, :])", writes=("out",))
def _spliced_into(columns, left, joined, at, out):
    _splice(columns, left, joined, at, out)


def spliced(columns: np.ndarray, left: np.ndarray, joined: np.ndarray,
            at: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The (c, n) ``columns`` without those at the ascending, distinct positions ``left``
    and with the (c, m) ``joined`` inserted, ``joined[:, j]`` before the kept column of
    index ``at[j]`` (ascending; the kept count to put it last), as one new C-contiguous
    block: ``np.insert(np.delete(columns, left, axis=1), at, joined, axis=1)`` in one pass
    of block copies; or written into ``out`` (a (c, n - len(left) + m) block, such as a
    ``GrowingColumns.reserve``d one; then ``columns`` may be a strided view too). O(n c +
    m c)."""
    left = np.ascontiguousarray(left, dtype=np.int64)
    joined = np.ascontiguousarray(joined, dtype=np.int64)
    at = np.ascontiguousarray(at, dtype=np.int64)
    if out is not None:
        _spliced_into(columns, left, joined, at, out)
        return out
    return _spliced(np.ascontiguousarray(columns, dtype=np.int64), left, joined, at)


def sorted_positions(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Left insertion positions of int64 ``needles`` in the ascending ``haystack``
    (``np.searchsorted(haystack, needles)``): O(m log(n / m) + m) by galloping when the
    needles ascend (checked, O(m)), O(m log n) otherwise."""
    needles = np.ascontiguousarray(needles, dtype=np.int64)
    if len(needles) > 1 and (needles[1:] < needles[:-1]).any():
        return np.searchsorted(haystack, needles).astype(np.int64)
    return _sorted_positions(np.ascontiguousarray(haystack, dtype=np.int64), needles)


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
    ``keys`` (0 when absent), ``sorted_positions``' cost."""
    if not len(keys):
        return np.zeros(len(needles), dtype=np.int64)
    at = np.minimum(sorted_positions(keys, needles), len(keys) - 1)
    return np.where(keys[at] == needles, counts[at], 0).astype(np.int64)
