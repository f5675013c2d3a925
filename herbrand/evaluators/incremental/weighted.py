"""Weighted batches: rows with int64 multiplicities (Z-sets), the bags counting engines keep.

A weighted batch is a pair ``(rows, weights)``: an (arity, n) int64 batch and an (n,) int64 array
of weights, positive or negative. ``consolidate`` sums the weights of equal rows, drops the
rows whose weights cancel and sorts the rows lexicographically; ``add_sorted`` and
``weights_of`` search such a batch instead of sorting it again. Every operation is vectorised.

    >>> import numpy as np
    >>> rows = np.array([[1, 2, 1, 3]])
    >>> merged, weights = consolidate(rows, np.array([1, 1, 2, -1]))
    >>> merged.tolist(), weights.tolist()
    ([[1, 2, 3]], [3, 1, -1])
    >>> added = add_sorted((merged, weights), (np.array([[2, 4]]), np.array([-1, 5])))
    >>> added[0].tolist(), added[1].tolist()
    ([[1, 3, 4]], [3, -1, 5])
    >>> consolidate(rows, np.array([1, 1, -1, 0]))[0].tolist()
    [[2]]
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.counting_merge import bag_sums, merge_added
from herbrand.evaluators.incremental.row_index import identity_codec
from herbrand.indexes.kernels import searchsorted

Weighted = tuple[np.ndarray, np.ndarray]


def empty(arity: int) -> Weighted:
    return np.zeros((arity, 0), dtype=np.int64), np.zeros(0, dtype=np.int64)


def _packed_keys(rows: np.ndarray) -> np.ndarray | None:
    """One int64 key per row whose order is the rows' lexicographic order: the column itself
    for one column, the ``RowCodec`` packing (``identity_codec``) when the rows fit its bit
    fields, else None."""
    if rows.shape[0] == 1:
        return rows[0]
    data, packed = identity_codec(rows.shape[0]).encode(rows)
    return data[0] if packed else None


def _unpacked(keys: np.ndarray, arity: int) -> np.ndarray:
    """The rows of ``_packed_keys``' keys."""
    return keys[None, :] if arity == 1 else identity_codec(arity).decode(keys[None, :], True)


def _bag_weight(weights: np.ndarray) -> int:
    """The one nonzero weight of a bag (every row weighted alike), else 0. O(n)."""
    return int(weights[0]) if weights[0] and weights[0] == weights.min() == weights.max() else 0


def _summed_keys(keys: np.ndarray, weights: np.ndarray) -> Weighted:
    """The distinct keys, ascending, with their summed weights, zero sums dropped: for a bag,
    a sort of the keys and their run lengths (one native pass, ``counting_merge.bag_sums``);
    else an argsort.
    O(n log n)."""
    weight = _bag_weight(weights)
    if weight:
        return bag_sums(np.sort(keys), weight, keys[:0], 0)
    order = np.argsort(keys)
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    sums = np.add.reduceat(weights[order], starts)
    keep = sums != 0
    return ordered[starts[keep]], sums[keep]


def _summed_pair(first: Weighted, second: Weighted) -> Weighted:
    """``_summed_keys`` of two keyed parts together: for two bags (an update's derivations of
    each sign), a sort of each and one native pass of their run lengths and merge
    (``counting_merge.bag_sums``); else each summed, then merged. O(n log n)."""
    first_weight, second_weight = _bag_weight(first[1]), _bag_weight(second[1])
    if first_weight and second_weight:
        return bag_sums(np.sort(first[0]), first_weight, np.sort(second[0]), second_weight)
    return merge_added(*_summed_keys(*first), *_summed_keys(*second))


def consolidate(rows: np.ndarray, weights: np.ndarray) -> Weighted:
    """The distinct rows with their summed weights, zero sums dropped, rows in lexicographic
    order (what ``add_sorted`` and ``weights_of`` search). O(n log n): a sort of packed keys
    (an argsort when the weights differ) when the values fit, a lexsort of the columns
    otherwise."""
    return combine(rows.shape[0], (rows, weights))


def _consolidated_rows(rows: np.ndarray, weights: np.ndarray) -> Weighted:
    """``consolidate`` by a lexsort of the columns (rows too wide to pack). O(n log n)."""
    order = np.lexsort(rows[::-1])
    ordered = rows[:, order]
    starts = np.flatnonzero(np.r_[True, np.any(ordered[:, 1:] != ordered[:, :-1], axis=0)])
    sums = np.add.reduceat(weights[order], starts)
    keep = sums != 0
    return ordered[:, starts[keep]], sums[keep]


def find(base_rows: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``rows``: its insertion position in the sorted ``base_rows`` and whether
    it is there. O(m log n), numba."""
    positions = searchsorted(base_rows, rows, "left")
    found = positions < base_rows.shape[1]
    found[found] = np.all(base_rows[:, positions[found]] == rows[:, found], axis=0)
    return positions, found


def weights_of(base: Weighted, rows: np.ndarray) -> np.ndarray:
    """The weights of ``rows`` in a consolidated batch (0 for absent rows). O(m log n)."""
    positions, found = find(base[0], rows)
    weights = np.zeros(rows.shape[1], dtype=np.int64)
    weights[found] = base[1][positions[found]]
    return weights


def add_sorted(base: Weighted, delta: Weighted) -> Weighted:
    """The consolidated sum of two consolidated batches, in O(m log n + n) for a small
    ``delta`` of m rows: a search and one copy, no sort of ``base``."""
    if not delta[0].shape[1]:
        return base
    positions, found = find(base[0], delta[0])
    weights = base[1].copy()
    weights[positions[found]] += delta[1][found]
    missing = ~found
    rows = np.insert(base[0], positions[missing], delta[0][:, missing], axis=1)
    weights = np.insert(weights, positions[missing], delta[1][missing])
    keep = weights != 0
    return (rows, weights) if keep.all() else (rows[:, keep], weights[keep])


def combine(arity: int, *parts: Weighted) -> Weighted:
    """The consolidated sum of weighted batches of ``arity``. When every part packs into
    one key per row (``_packed_keys``), each part is summed by a sort of its keys
    (``_summed_keys``) and the sums merged (``counting_merge.merge_added``, O(n + m));
    else one lexsort of them all. O(n log n) in their total size."""
    parts = [p for p in parts if p[0].shape[1]]
    if not parts:
        return empty(arity)
    if not arity:
        total = sum(int(p[1].sum()) for p in parts)
        return (np.zeros((0, 1), dtype=np.int64), np.array([total])) if total else empty(0)
    keyed = combine_keyed(arity, *parts)
    if keyed is None:
        return _consolidated_rows(np.concatenate([p[0] for p in parts], axis=1),
                                  np.concatenate([p[1] for p in parts]))
    return _unpacked(keyed[0], arity), keyed[1]


def combine_keyed(arity: int, *parts: Weighted) -> Weighted | None:
    """``combine`` as (ascending keys, sums), one int64 key per row (``_packed_keys``: the
    ``RowCodec`` packing of every column, the column itself for one), for a caller that
    keeps keys (no unpacking); None when the arity is 0 or a part does not pack. The first
    two parts are summed together (``_summed_pair``), each later one merged in."""
    parts = [p for p in parts if p[0].shape[1]]
    if not arity:
        return None
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keyed = [(_packed_keys(rows), weights) for rows, weights in parts]
    if any(keys is None for keys, _ in keyed):
        return None
    keys, sums = _summed_keys(*keyed[0]) if len(keyed) == 1 else _summed_pair(*keyed[:2])
    for more in keyed[2:]:
        keys, sums = merge_added(keys, sums, *_summed_keys(*more))
    return keys, sums


def negated(part: Weighted) -> Weighted:
    return part[0], -part[1]


def bag(rows: np.ndarray, sign: int = 1) -> Weighted:
    """A batch of rows, each with weight ``sign`` (unconsolidated)."""
    return rows, np.full(rows.shape[1], sign, dtype=np.int64)
