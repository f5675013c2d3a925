"""The counting engine's state: per derived relation, the derivation counts of each iteration
(D_k, ``PackedCounts``: rows packed into one int64 each where they fit, counts as narrow
integers, in lexicographic order) and the run of the tuples first derived in each iteration
(Δ_k), in a ``Trace``; the relation itself is stored in iteration order, so X_k is a prefix of
it. See ``counting`` for the method and ``counting_walk`` for an update's pass over a trace.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.incremental import weighted
from herbrand.evaluators.incremental.counting_merge import merge_added, weights_at
from herbrand.indexes.runs import RowCodec, SortedRun

_COUNT_TYPES = tuple((t, int(np.iinfo(t).min), int(np.iinfo(t).max))
                     for t in (np.int8, np.int16, np.int32, np.int64))


def _narrowest(counts: np.ndarray) -> type:
    """The narrowest signed integer type holding every count. O(n), no temporary."""
    if not len(counts):
        return np.int8
    low, high = int(counts.min()), int(counts.max())
    return next(t for t, least, most in _COUNT_TYPES if least <= low and high <= most)


@dataclass(frozen=True)
class PackedCounts:
    """D_k of one iteration, packed: its rows encoded by the relation's RowCodec (one int64 per
    row when the values fit its bit fields, whose order is the rows' lexicographic order) and
    their counts in a narrow signed integer type that holds them (the narrowest when built by
    ``of``; an update keeps the type, or widens it when a count needs it:
    ``counting_refresh``). About 9-12 bytes per entry of a binary relation instead of 24.
    ``of`` / ``unpacked`` convert in O(arity n)."""

    data: np.ndarray
    packed: bool
    counts: np.ndarray

    @classmethod
    def of(cls, codec: RowCodec, counts: weighted.Weighted) -> PackedCounts:
        rows, weights = counts
        data, packed = codec.encode(rows)
        if packed:
            return cls.of_keyed((data, weights))
        return cls(np.ascontiguousarray(data), False, weights.astype(_narrowest(weights)))

    def unpacked(self, codec: RowCodec) -> weighted.Weighted:
        """The weighted batch (rows in lexicographic order, int64 counts)."""
        return codec.decode(self.data, self.packed), self.counts.astype(np.int64)

    def _keyed(self, codec: RowCodec, rows: np.ndarray) -> tuple[weighted.Weighted, np.ndarray]:
        """(these counts, ``rows``) in one encoding: packed keys when both pack (a search
        is then one int64 searchsorted), plain rows otherwise."""
        data, packed = codec.encode(rows)
        if self.packed and packed:
            return (self.data, self.counts.astype(np.int64)), data
        return self.unpacked(codec), codec.decode(data, packed)

    def plus(self, run: SortedRun, weights: np.ndarray) -> PackedCounts:
        """These counts plus a consolidated change: its rows as a ``run`` (of these counts'
        codec), their weights in the run's order. One merge of the sorted keys when both
        pack (``counting_merge``, O(n + m)), else a search and one copy (O(m log n + n))."""
        if self.packed and run.packed:
            merged, counts = merge_added(self.data[0], self.counts, run.data[0], weights)
            return PackedCounts.of_keyed((merged[None, :], counts))
        rows = run.rows()
        counts, rows = self._keyed(run.codec, rows)
        summed = weighted.add_sorted(counts, (rows, weights))
        if rows.shape[0] == 1 and self.packed:
            return PackedCounts.of_keyed(summed)
        return PackedCounts.of(run.codec, summed)

    def weights_of(self, codec: RowCodec, rows: np.ndarray) -> np.ndarray:
        """The count of each row of ``rows`` here, 0 when absent. O(m log(n / m) + m) by
        galloping when both pack and the rows are in lexicographic order, O(m log n)
        otherwise."""
        keys, packed = codec.encode(rows)
        if self.packed and packed:
            return weights_at(self.data[0], self.counts, keys[0])
        counts, keys = self._keyed(codec, rows)
        return weighted.weights_of(counts, keys)

    @classmethod
    def of_keyed(cls, counts: weighted.Weighted) -> PackedCounts:
        """Counts whose rows are already packed keys."""
        keys, weights = counts
        return cls(np.ascontiguousarray(keys), True, weights.astype(_narrowest(weights)))

    def __len__(self) -> int:
        return len(self.counts)

    @property
    def nbytes(self) -> int:
        return self.data.nbytes + self.counts.nbytes


@dataclass(frozen=True)
class Trace:
    """One derived relation's state: ``counts[k - 1]`` is D_k, packed, and ``firsts[k - 1]``
    the run of the tuples first derived in iteration k."""

    counts: tuple[PackedCounts, ...]
    firsts: tuple[SortedRun, ...]

    def size(self) -> tuple[int, int]:
        tuples = sum(map(len, self.counts))
        nbytes = sum(counts.nbytes for counts in self.counts)
        return tuples, nbytes + sum(run.data.nbytes for run in self.firsts)


def codec_of(arity: int) -> RowCodec:
    return RowCodec(arity, tuple(range(arity)))


def trimmed(counts: list[PackedCounts], firsts: list) -> Trace:
    """A Trace without trailing iterations that hold no counts."""
    length = len(counts)
    while length and not len(counts[length - 1]):
        length -= 1
    return Trace(tuple(counts[:length]), tuple(firsts[:length]))
