"""Operations on (arity, n) int64 batches that the batch executor (``relational``) runs between
plan nodes: an empty batch, duplicate rows dropped, a batch's key columns, some of its columns
(``columns_at``), and the sort-based join (``sort_join``: one side's keys sorted, the other's
searched; a table over the keys' range when it is narrow).

Cost: ``dedup`` O(n log n); ``sort_join`` as its docstring says; the rest O(1) or a copy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from herbrand.framework.storage import row_keys

EMPTY_POSITIONS = np.zeros(0, dtype=np.int64)
# ``columns_at`` gathers a batch that is not C-contiguous a row at a time from this many columns
ROWWISE_COLUMNS = 64
DENSE_MASK = 64  # a mask leaving out at most 1/64 of the columns is read as a boolean index


def empty_batch(arity: int) -> np.ndarray:
    return np.zeros((arity, 0), dtype=np.int64)


def columns_at(batch: np.ndarray, at: np.ndarray) -> np.ndarray:
    """``batch[:, at]`` (``at``: column indexes, or a mask over the columns) as a new
    C-contiguous batch. numpy's ``batch[:, at]`` copies a strided column per index (45,000
    columns of three rows: 0.3 ms against 0.05 ms for ``np.take``), and ``np.take`` or
    ``np.compress`` along axis 1 first copy a batch that is not C-contiguous whole (a view of
    a growing buffer's rows): such a batch is gathered a row at a time from
    ``ROWWISE_COLUMNS`` chosen columns (below that, numpy's index costs less than a call per
    row), by ``np.take`` of a mask's positions (a row's boolean index takes a branch per
    column: 42,000 of 127,000 random columns of three rows in 1.3 ms against 0.1), or by
    that boolean index when the mask leaves out at most 1 / ``DENSE_MASK`` of the columns
    (its branches predicted: a state's live rows among few tombstones, 262,144 columns of
    three rows in 0.45 ms against 0.7). A mask of another length than the batch's raises
    IndexError, as ``batch[:, at]`` does (``np.compress`` would cut the batch to it).
    O(arity len(at)), plus O(n) for a mask."""
    mask = at.dtype == np.bool_
    if mask and len(at) != batch.shape[1]:
        raise IndexError(f"a mask of {len(at)} columns for a batch of {batch.shape[1]}")
    if batch.flags.c_contiguous:
        return batch.compress(at, axis=1) if mask else batch.take(at, axis=1)
    chosen, dense = len(at), False
    if mask:
        chosen = np.count_nonzero(at)
        dense = chosen >= len(at) - len(at) // DENSE_MASK
        if not dense:
            at = np.flatnonzero(at)
    if chosen < ROWWISE_COLUMNS:
        return np.ascontiguousarray(batch[:, at])
    out = np.empty((batch.shape[0], chosen), dtype=batch.dtype)
    for row, values in zip(out, batch, strict=True):
        if dense:
            row[:] = values[at]
        else:
            np.take(values, at, out=row)
    return out


def dedup(batch: np.ndarray) -> np.ndarray:
    if batch.shape[1] <= 1:
        return batch
    if batch.shape[0] == 0:
        return batch[:, :1]
    (keys,) = row_keys(batch)
    _, first = np.unique(keys, return_index=True)
    return batch if len(first) == batch.shape[1] else batch[:, np.sort(first)]


def key_block(batch: np.ndarray, columns: Sequence[int]) -> np.ndarray:
    return batch[list(columns)] if columns else np.zeros((0, batch.shape[1]), dtype=np.int64)


def expand_ranges(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges [starts[i], starts[i] + counts[i]): (i per element, element positions)."""
    total = int(counts.sum())
    owners = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return owners, np.repeat(starts, counts) + offsets


def equal_ranges(ordered: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, length) of each key's range of equal values in the sorted ``ordered``: a
    table over their value range when it spans at most ``TABLE_SPAN`` times more values
    than there are keys (O(n + m + range)), else two binary searches each (O(n log m))."""
    if not len(ordered):
        return np.zeros(len(keys), dtype=np.int64), np.zeros(len(keys), dtype=np.int64)
    low, high = int(ordered[0]), int(ordered[-1])
    span = high - low + 1
    if span > TABLE_SPAN * (len(keys) + len(ordered)):
        lo = np.searchsorted(ordered, keys, side="left")
        return lo, np.searchsorted(ordered, keys, side="right") - lo
    # slot 0 takes the keys outside the range: no rows
    lengths = np.zeros(span + 1, dtype=np.int64)
    lengths[1:] = np.bincount(ordered - low, minlength=span)
    starts = np.cumsum(lengths) - lengths
    with np.errstate(over="ignore"):  # a key far outside the range is not read
        slots = np.where((keys >= low) & (keys <= high), keys - ordered[0] + 1, 0)
    return starts[slots], lengths[slots]


# a join into a transient relation this many times larger than its other side sorts that side
# instead of indexing the relation (``RelationalEvaluator.derivations``)
TRANSIENT_RATIO = 8
# a sorted join side is searched through a table of its keys' range when the range spans at
# most this many times more values than the two sides have rows
TABLE_SPAN = 4


def sort_join(left: np.ndarray, right: np.ndarray, left_keys: Sequence[int],
              right_keys: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """(left positions, right positions) of every pair equal on the keys, in the left's
    order: the right keys sorted, the left ones searched (``equal_ranges``).
    O(m log m + n log m + output) for n left rows and m right ones, O(m log m + n + output)
    over a narrow range of keys."""
    lk, rk = row_keys(key_block(left, left_keys), key_block(right, right_keys))
    order = np.argsort(rk, kind="stable")
    owners, positions = expand_ranges(*equal_ranges(rk[order], lk))
    return owners, order[positions]
