"""Which values of a column occur in a small set, in one native pass (``matching``).

A semi-join reduction keeps the rows of a large relation whose value in a shared column
occurs in the seed's column (``counting_semijoins``). With numpy that is a range mask, a
masked table lookup and a compress: several passes and temporaries over the n values for a
seed of a few rows. ``matching`` reads the values once: a lookup in a table of the seed's
value range when it spans at most 4n values (O(n + range), without a branch on each
value), else a binary search of each
value among the seed's distinct values (O(n log m)); it returns the positions found.
``matching_rows`` does so for the rows of a block over several shared columns.
``sorted_matching`` finds them in an ascending column without reading it whole: a search for
each of the few values, then a walk of its run of equal values.

    >>> import numpy as np
    >>> matching(np.array([5, 1, 9, 5, 3]), np.array([5, 3, 3])).tolist()
    [0, 3, 4]
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native.exported import exported
from herbrand.indexes.kernels import gallop, gallop_within


@exported("i8[::1](i8[::1], i8[::1], b1)")
def _matching(values, distinct, narrow):
    n, m = values.shape[0], distinct.shape[0]
    out = np.empty(n, dtype=np.int64)
    found = 0
    if m == 0:
        return out[:0]
    low, high = distinct[0], distinct[m - 1]
    if narrow:
        table = np.zeros(high - low + 1, dtype=np.bool_)
        for j in range(m):
            table[distinct[j] - low] = True
        # each position written, counted when its value is in the table: a branch on it,
        # taken at random, made the pass four times slower when a sixth of the values match
        # (162 -> 42 us for 108,000 values). As unsigned, value - low is at most the span
        # only for values in [low, high] (high - 2^64 is below every int64)
        span = np.uint64(high - low)
        for i in range(n):
            at = np.uint64(values[i]) - np.uint64(low)
            out[found] = i
            found += at <= span and table[min(at, span)]
        return out[:found]
    for i in range(n):
        value = values[i]
        lo = gallop_within(distinct, 0, m, value)
        if lo < m and distinct[lo] == value:
            out[found] = i
            found += 1
    return out[:found]


@exported("i8[::1](i8[::1], i8[::1])")
def _sorted_matching(ascending, distinct):
    n, m = ascending.shape[0], distinct.shape[0]
    starts = np.empty(m, dtype=np.int64)
    stops = np.empty(m, dtype=np.int64)
    lo = total = 0
    for j in range(m):
        lo = gallop(ascending, lo, distinct[j])
        starts[j] = lo
        while lo < n and ascending[lo] == distinct[j]:
            lo += 1
        stops[j] = lo
        total += lo - starts[j]
    out = np.empty(total, dtype=np.int64)
    k = 0
    for j in range(m):
        for at in range(starts[j], stops[j]):
            out[k] = at
            k += 1
    return out


def sorted_matching(ascending: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """The positions of the values of the ascending int64 ``ascending`` that are among the
    ascending, distinct ``distinct``, ascending: for each of those a galloping search from
    the last one's run (``kernels.gallop``), then a walk of its run of equal values. O(m
    log(n / m) + m + output), reading only near the runs (two binary searches each and numpy's
    arange and repeat took 123-187 against 51-90 us out of cache, 33 against 13 us in it, for
    612 values and 2,182 positions among 100,838: RDFS LUBM(1), 1% insert).

    >>> sorted_matching(np.array([1, 3, 3, 5, 8]), np.array([3, 4, 8])).tolist()
    [1, 2, 4]
    """
    return _sorted_matching(np.ascontiguousarray(ascending, dtype=np.int64),
                            np.ascontiguousarray(distinct, dtype=np.int64))


def matching(values: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """The ascending positions of the int64 ``values`` that occur in ``seed`` (see the
    module doc for the cost). ``values`` is never sorted nor copied when contiguous."""
    distinct = np.unique(seed)
    narrow = bool(len(distinct)) and int(distinct[-1]) - int(distinct[0]) <= 4 * len(values)
    return _matching(np.ascontiguousarray(values, dtype=np.int64), distinct, narrow)


def matching_rows(columns: np.ndarray, seed: np.ndarray,
                  pairs: tuple[tuple[int, int], ...],
                  positions: np.ndarray | None = None) -> np.ndarray | None:
    """The ascending positions of the rows of the (arity, n) ``columns`` (among the ascending
    ``positions`` when given) whose value in each (column, seed column) pair of ``pairs``
    occurs in that column of the (arity', m) ``seed``; ``positions`` itself (None: every row)
    when ``pairs`` is empty. One ``matching`` pass per pair, over the rows kept so far.

    >>> matching_rows(np.array([[1, 2, 3], [7, 8, 9]]), np.array([[2, 3], [9, 9]]),
    ...               ((0, 0), (1, 1))).tolist()
    [2]
    """
    for column, seed_column in pairs:
        values = columns[column] if positions is None else columns[column, positions]
        found = matching(values, seed[seed_column])
        positions = found if positions is None else positions[found]
    return positions
