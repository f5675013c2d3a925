"""Rows as packed int64 keys: distinct rows (``distinct_rows``, for the facts readers), rows
sorted in blocks (``sorted_blocks``, for the writers) and distinct rows sorted
(``sorted_distinct``, for the runs of the indexes).

The values of consecutive columns pack into one non-negative int64 in mixed radix over each
column's value range (``(lowest, span)``, ``value_range``), so that one numpy sort of one key
per row orders or deduplicates rows column by column; columns whose spans multiply past 2**63
take several keys (``key_groups``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from herbrand.framework.parallel_sort import sorted_on
from herbrand.framework.spread import Spread
from herbrand.framework.storage import Relation

KEY_LIMIT = 2**63 - 1  # the largest packed key (``packed_key``)

_BLOCK_ROWS = 1 << 20  # rows per block of in-place work: no temporary array of n


def distinct_rows(columns: np.ndarray) -> Relation:
    """``Relation(columns)`` (the distinct rows of an (arity, n) C-contiguous int64 array, first
    occurrences kept in their order), which may overwrite ``columns``: the caller gives it up.

    When the columns' value ranges times n fit in 63 bits: one numpy sort of one packed
    (row, position) key per row, then the first occurrences compacted in place, block by block.
    O(n log n) with a small constant; extra memory one int64 and one bool per row (and a copy
    of the result when more than half the rows are duplicates). Otherwise, when each column's
    range fits: a stable sort of a few packed keys per row (``_distinct_by_groups``; a third
    column of 50,000 values made Relation's own dedup, a lexsort of every column, 5x slower).
    Else Relation's own dedup.
    """
    arity, count = columns.shape
    if arity == 0 or count < 2:
        return Relation(columns)
    ranges = [value_range(column) for column in columns]
    if math.prod(span for _, span in ranges) * count > KEY_LIMIT:
        if max(span for _, span in ranges) > KEY_LIMIT:
            return Relation(columns)
        return _distinct_by_groups(columns, ranges)
    key = packed_key(list(columns), ranges, list(range(arity)))
    key *= count
    step = _BLOCK_ROWS
    for start in range(0, count, step):
        key[start:start + step] += np.arange(start, min(start + step, count), dtype=np.int64)
    key.sort()
    first = np.empty(count, dtype=bool)
    first[0] = True
    for start in range(1, count, step):
        stop = min(start + step, count)
        np.not_equal(key[start:stop] // count, key[start - 1:stop - 1] // count,
                     out=first[start:stop])
    if first.all():
        return Relation(columns, unique=True)
    kept = _compact(key, first)  # the keys of first occurrences, a prefix of key
    del first
    positions = key[:kept]
    positions %= count
    positions.sort()
    for row in columns:  # row[i] = row[positions[i]], positions[i] >= i: forward is safe
        for start in range(0, kept, step):
            stop = min(start + step, kept)
            row[start:stop] = row[positions[start:stop]]
    del key, positions
    flat = columns.reshape(-1)
    for index in range(1, arity):  # each row's prefix moves down to index * kept
        for start in range(0, kept, step):
            stop = min(start + step, kept)
            flat[index * kept + start:index * kept + stop] = \
                flat[index * count + start:index * count + stop]
    distinct = flat[:arity * kept].reshape(arity, kept)
    if 2 * kept < count:  # do not keep twice the result alive
        distinct = distinct.copy()
    return Relation(distinct, unique=True)


def _distinct_by_groups(columns: np.ndarray, ranges: list[tuple[int, int]]) -> Relation:
    """``Relation(columns)`` by a stable sort of one packed key per group of ``key_groups``
    (one argsort, or a lexsort over the groups), first occurrences kept in order. O(n log n);
    extra memory one int64 per row and group, and the order."""
    values = list(columns)
    keys = [packed_key(values, ranges, group) for group in key_groups(ranges)]
    order = (np.argsort(keys[0], kind="stable") if len(keys) == 1
             else np.lexsort(keys[::-1]))
    first = np.empty(len(order), dtype=bool)
    first[0] = True
    first[1:] = False
    for key in keys:
        ordered = key[order]
        first[1:] |= ordered[1:] != ordered[:-1]
    if first.all():
        return Relation(columns, unique=True)
    positions = np.sort(order[first])
    return Relation(np.take(columns, positions, axis=1), unique=True)


def sorted_distinct(columns: np.ndarray) -> np.ndarray:
    """The distinct rows of an (arity >= 1, n >= 1) int64 array in lexicographic order (column
    by column), as a new (arity, k) C-contiguous array.

    The keys of ``sorted_blocks`` (one packed key per row when the columns' value ranges
    multiply to at most 2**63, else a few: ``key_groups``) sorted with one numpy sort, or a
    lexsort over the few; duplicates dropped on the sorted keys, which are unpacked once.
    O(n log n); extra memory one int64 per row and key group (and the order with several).
    A lexsort of four columns of 150,000 rows took 55 ms, one packed sort 7 ms."""
    ranges = [value_range(column) for column in columns]
    groups = key_groups(ranges)
    keys = _group_keys(list(columns), ranges, groups)
    if len(keys) == 1:
        keys = [np.sort(keys[0])]
    else:
        order = np.lexsort(keys[::-1])
        keys = [key[order] for key in keys]
    first = np.ones(columns.shape[1], dtype=bool)
    first[1:] = False
    for key in keys:
        first[1:] |= key[1:] != key[:-1]
    out = np.empty((columns.shape[0], int(first.sum())), dtype=np.int64)
    for key, group in zip(keys, groups, strict=True):
        if len(group) == 1:
            np.compress(first, key, out=out[group[0]])
        else:
            _unpack(key[first], group, ranges, [out[column] for column in group])
    return out


def _group_keys(values: list[np.ndarray], ranges: list[tuple[int, int]],
                groups: list[list[int]], spread: Spread | None = None) -> list[np.ndarray]:
    """One key per row for each of ``groups`` (``key_groups``): a column alone is its own key
    (the column itself, not copied), several are packed (``packed_key``)."""
    return [values[group[0]] if len(group) == 1 else packed_key(values, ranges, group, spread)
            for group in groups]


def _unpack(part: np.ndarray, group: list[int], ranges: list[tuple[int, int]],
            out: list[np.ndarray]) -> None:
    """Write the columns of ``group`` whose keys (``_group_keys``, several columns packed)
    are ``part`` into ``out``, one int64 array of ``len(part)`` per column of the group, in
    order; ``part`` is consumed (overwritten). O(len(part) x columns)."""
    for column, values in zip(reversed(group[1:]), reversed(out[1:]), strict=True):
        lowest, span = ranges[column]
        np.remainder(part, span, out=values)
        values += lowest
        part //= span
    np.add(part, ranges[group[0]][0], out=out[0])


def _compact(values: np.ndarray, keep: np.ndarray) -> int:
    """Move ``values[keep]`` to the front of ``values`` in place (block by block) and return how
    many there are."""
    kept = 0
    for start in range(0, len(values), _BLOCK_ROWS):
        block = values[start:start + _BLOCK_ROWS][keep[start:start + _BLOCK_ROWS]]
        values[kept:kept + len(block)] = block
        kept += len(block)
    return kept


def value_range(column: np.ndarray) -> tuple[int, int]:
    """(lowest value, number of values from lowest to highest) of a non-empty int64 column."""
    lowest = int(column.min())
    return lowest, int(column.max()) - lowest + 1


def key_groups(ranges: list[tuple[int, int]]) -> list[list[int]]:
    """Consecutive columns grouped so that each group's values pack into one non-negative
    int64 (``(lowest, span)`` per column; the product of a group's spans at most 2**63 - 1)."""
    groups: list[list[int]] = []
    product = KEY_LIMIT + 1
    for index, (_, span) in enumerate(ranges):
        if product * span <= KEY_LIMIT:
            groups[-1].append(index)
            product *= span
        else:
            groups.append([index])
            product = span
    return groups


def packed_key(values: list[np.ndarray], ranges: list[tuple[int, int]],
               group: list[int], spread: Spread | None = None) -> np.ndarray:
    """A new int64 array: per row, the values of the columns ``group`` packed in mixed radix,
    ``sum((v - lowest) * weight)`` (the product of their spans at most 2**63 - 1), so that keys
    compare as the rows do column by column. Horner's rule in place, wrapping modulo 2**64:
    ``sum(v * weight) - sum(lowest * weight)`` wraps back to the key, which is below 2**63.
    O(n) vectorised, in parts on the threads of ``spread`` when given."""
    offset = ranges[group[0]][0]
    for index in group[1:]:
        lowest, span = ranges[index]
        offset = offset * span + lowest
    wrapped = np.int64((offset + 2**63) % 2**64 - 2**63)  # the offset as a wrapped int64
    key = np.empty(len(values[group[0]]), dtype=np.int64)

    def pack(start: int, stop: int) -> None:
        part = key[start:stop]
        part[...] = values[group[0]][start:stop]
        for index in group[1:]:
            part *= ranges[index][1]
            part += values[index][start:stop]
        part -= wrapped

    Spread.over(spread, len(key), pack)
    return key


def sorted_blocks(values: list[np.ndarray], ranges: list[tuple[int, int]],
                  rows_per_block: int, spread: Spread | None = None) -> SortedBlocks:
    """The columns ``values`` (distinct rows, compared column by column as int64) sorted, in
    blocks of ``rows_per_block`` rows (``SortedBlocks``). The sort is done before this returns
    (one sort of one packed key per row, or a lexsort over a few; the keys packed and one key
    sorted on the threads of ``spread`` when given: ``parallel_sort``); a block is unpacked
    only when it is asked for."""
    groups = key_groups(ranges)
    keys = _group_keys(values, ranges, groups, spread)
    if len(keys) == 1:
        # a column of the relation is copied; a packed key is sorted in place
        keys[0] = sorted_on(keys[0], spread, overwrite=len(groups[0]) > 1)
        order = None
    else:
        order = np.lexsort(keys[::-1])
    return SortedBlocks(keys, order, groups, ranges, rows_per_block)


class SortedBlocks(Sequence):
    """Sorted rows in blocks: ``blocks[i]`` is block i, a list of int64 arrays (one per column)
    of at most ``rows_per_block`` rows, unpacked from the sorted keys when asked for: O(rows of
    the block) vectorised, in numpy calls that release the GIL, so blocks can be unpacked on
    several threads at once. Read-only."""

    def __init__(self, keys: list[np.ndarray], order: np.ndarray | None,
                 groups: list[list[int]], ranges: list[tuple[int, int]], rows_per_block: int):
        self._keys, self._order, self._groups, self._ranges = keys, order, groups, ranges
        self._rows = rows_per_block
        self._count = -(-len(keys[0]) // rows_per_block)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> list[np.ndarray]:
        if not 0 <= index < self._count:
            raise IndexError(index)
        start = index * self._rows
        stop = min(start + self._rows, len(self._keys[0]))
        block: list[np.ndarray] = []
        for key, group in zip(self._keys, self._groups, strict=True):
            part = key[start:stop] if self._order is None else key[self._order[start:stop]]
            if len(group) == 1:
                block.append(part)
                continue
            columns = [np.empty(len(part), dtype=np.int64) for _ in group]
            _unpack(part.copy(), group, self._ranges, columns)
            block.extend(columns)
        return block
