"""The counting engine's state: per derived relation, the derivation counts of each iteration
(D_k, ``PackedCounts``: rows packed into one int64 each where they fit, counts as narrow
integers, in lexicographic order) and the run of the tuples first derived in each iteration
(Δ_k) with a range of each of its columns (so that a semi-join reduction of Δ_k by values
outside it is known to be empty without a scan: ``counting_semijoins``), in a ``Trace``; the
relation itself is stored in iteration order, so X_k is a prefix of it. See ``counting`` for
the method and ``counting_walk`` for an update's pass over a trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from herbrand.evaluators.incremental import weighted
from herbrand.evaluators.incremental.counting_merge import (
    merge_added,
    narrowest_count_type,
    weights_at,
)
from herbrand.indexes.kernels import row_bounds
from herbrand.indexes.runs import RowCodec, SortedRun

_WIDER = {np.int8: np.int16, np.int16: np.int32, np.int32: np.int64}
_NO_KEYS = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class PackedCounts:
    """D_k of one iteration, packed: its rows encoded by the relation's RowCodec (one int64 per
    row when the values fit its bit fields, whose order is the rows' lexicographic order) and
    their counts in a narrow signed integer type that holds them (the narrowest when built by
    ``of``; an update keeps the type, or widens it when a count needs it:
    ``counting_refresh``). About 9-12 bytes per entry of a binary relation instead of 24.
    ``of`` / ``unpacked`` convert in O(arity n).

    An update does not copy a large D_k to change a few of its counts (packed keys only,
    ``counting_refresh``): D'_k shares D_k's base arrays, whose changed counts are written in
    place once the update commits (``patched``: the old state stays as it was until then), an
    entry whose count drops to 0 stays in the base as a zero (``zeros`` of them), and the
    keys new to it are ``pending``: (ascending keys, counts), outside the base, rebuilt by
    each update that changes them. Once zeros and pending entries would exceed ``budget``
    (a ``PENDING_SHARE``-th of the base, plus ``PENDING_LEAST``), the update merges them into
    a new base instead; ``consolidated`` does the same on demand."""

    data: np.ndarray
    packed: bool
    counts: np.ndarray
    pending: tuple[np.ndarray, np.ndarray] | None = None
    zeros: int = 0

    PENDING_SHARE: ClassVar[int] = 16
    PENDING_LEAST: ClassVar[int] = 64

    @classmethod
    def of(cls, codec: RowCodec, counts: weighted.Weighted) -> PackedCounts:
        rows, weights = counts
        data, packed = codec.encode(rows)
        if packed:
            return cls.of_keyed((data, weights))
        return cls(np.ascontiguousarray(data), False, weights.astype(narrowest_count_type(weights)))

    def unpacked(self, codec: RowCodec) -> weighted.Weighted:
        """The weighted batch (rows in lexicographic order, int64 counts)."""
        whole = self.consolidated()
        return codec.decode(whole.data, whole.packed), whole.counts.astype(np.int64)

    def budget(self) -> int:
        """How many zeros and pending entries D_k may carry."""
        return len(self.counts) // self.PENDING_SHARE + self.PENDING_LEAST

    def pending_entries(self) -> tuple[np.ndarray, np.ndarray]:
        """The pending keys and their counts (of the base's type; empty when none)."""
        return self.pending if self.pending is not None else (_NO_KEYS, self.counts[:0])

    def patched(self, keys: np.ndarray, counts: np.ndarray, zeros: int) -> PackedCounts:
        """These counts' base, shared, with other pending entries (``keys``, ``counts``) and
        ``zeros``: the caller writes the base's changed counts once nothing reads the old
        ones. O(1)."""
        return PackedCounts(self.data, True, self.counts, (keys, counts) if len(keys) else None,
                            zeros)

    def widened(self) -> PackedCounts:
        """These counts in the next wider integer type (a copy). O(n)."""
        wider = _WIDER[self.counts.dtype.type]
        pending = (None if self.pending is None
                   else (self.pending[0], self.pending[1].astype(wider)))
        return PackedCounts(self.data, self.packed, self.counts.astype(wider), pending,
                            self.zeros)

    def consolidated(self) -> PackedCounts:
        """These counts as one base without zeros or pending entries (themselves when they
        have none). O(n)."""
        if self.pending is None and not self.zeros:
            return self
        keys, counts = self.pending_entries()
        merged, summed = merge_added(self.data[0], self.counts, keys, counts)
        if self.zeros:  # a sparse merge copies the base's zeros that no pending key meets
            kept = summed != 0
            merged, summed = merged[kept], summed[kept]
        return PackedCounts(merged[None, :], True, summed.astype(self.counts.dtype))

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
        whole = self.consolidated()
        if whole.packed and run.packed:
            merged, counts = merge_added(whole.data[0], whole.counts, run.data[0], weights)
            return PackedCounts.of_keyed((merged[None, :], counts))
        rows = run.rows()
        counts, rows = whole._keyed(run.codec, rows)
        summed = weighted.add_sorted(counts, (rows, weights))
        if rows.shape[0] == 1 and whole.packed:
            return PackedCounts.of_keyed(summed)
        return PackedCounts.of(run.codec, summed)

    def weights_of(self, codec: RowCodec, rows: np.ndarray) -> np.ndarray:
        """The count of each row of ``rows`` here, 0 when absent. O(m log(n / m) + m) by
        galloping when both pack and the rows are in lexicographic order, O(m log n)
        otherwise."""
        whole = self.consolidated()
        keys, packed = codec.encode(rows)
        if whole.packed and packed:
            return weights_at(whole.data[0], whole.counts, keys[0])
        counts, keys = whole._keyed(codec, rows)
        return weighted.weights_of(counts, keys)

    @classmethod
    def of_keyed(cls, counts: weighted.Weighted) -> PackedCounts:
        """Counts whose rows are already packed keys."""
        keys, weights = counts
        return cls(np.ascontiguousarray(keys), True, weights.astype(narrowest_count_type(weights)))

    def __len__(self) -> int:
        """The entries of nonzero count."""
        pending = 0 if self.pending is None else len(self.pending[0])
        return len(self.counts) - self.zeros + pending

    @property
    def nbytes(self) -> int:
        pending = 0 if self.pending is None else sum(a.nbytes for a in self.pending)
        return self.data.nbytes + self.counts.nbytes + pending


@dataclass(frozen=True)
class Trace:
    """One derived relation's state: ``counts[k - 1]`` is D_k, packed, ``firsts[k - 1]``
    the run of the tuples first derived in iteration k, and ``bounds[k - 1]`` a range of each
    column of that run's rows (``column_bounds``; a run past the end of ``bounds`` has none
    known)."""

    counts: tuple[PackedCounts, ...]
    firsts: tuple[SortedRun, ...]
    bounds: tuple[np.ndarray, ...] = ()

    def size(self) -> tuple[int, int]:
        tuples = sum(map(len, self.counts))
        nbytes = sum(counts.nbytes for counts in self.counts)
        return tuples, (nbytes + sum(run.data.nbytes for run in self.firsts)
                        + sum(bounds.nbytes for bounds in self.bounds))


def column_bounds(rows: np.ndarray, within: np.ndarray | None = None) -> np.ndarray:
    """The (2, arity) least and greatest values of each column of the (arity, n) ``rows``
    and, when given, of the (2, arity) ``within`` (a range they widen): a range that holds
    every value of the rows in its column. Of no rows and no range: lows above highs (no
    value is in it). O(arity n): ``indexes.kernels.row_bounds``."""
    if within is None:
        within = np.array([[np.iinfo(np.int64).max], [np.iinfo(np.int64).min]],
                          dtype=np.int64).repeat(rows.shape[0], axis=1)
    if not rows.shape[1]:
        return within
    lows, highs = row_bounds(rows)
    return np.stack([np.minimum(lows, within[0]), np.maximum(highs, within[1])])


def trimmed(counts: list[PackedCounts], firsts: list, bounds: list = ()) -> Trace:
    """A Trace without trailing iterations that hold no counts."""
    length = len(counts)
    while length and not len(counts[length - 1]):
        length -= 1
    return Trace(tuple(counts[:length]), tuple(firsts[:length]), tuple(bounds[:length]))
