"""Which values of a column occur in a small set, in one native pass (``matching``).

A semi-join reduction keeps the rows of a large relation whose value in a shared column
occurs in the seed's column (``counting_semijoins``). With numpy that is a range mask, a
masked table lookup and a compress: several passes and temporaries over the n values for a
seed of a few rows. ``matching`` reads the values once: a lookup in a table of the seed's
value range when it spans at most 4n values (O(n + range), without a branch on each
value), else a binary search of each
value among the seed's distinct values (O(n log m)); it returns the positions found.
``matching_rows`` does so for the rows of a block over several shared columns.

    >>> import numpy as np
    >>> matching(np.array([5, 1, 9, 5, 3]), np.array([5, 3, 3])).tolist()
    [0, 3, 4]
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native.exported import exported
from herbrand.indexes.kernels import gallop_within


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
