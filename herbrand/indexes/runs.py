"""Sorted runs: immutable, duplicate-free blocks of rows sorted on (key columns, other columns).

The building block of ``SortedVectorIndex`` (one run and an unsorted tail) and ``SpineIndex``
(a list of runs). A ``RowCodec`` fixes, for one index, the column order (key columns first) and
the packing; each run then stores its rows in one of two encodings:

- packed, when arity >= 2 and every value fits in ``64 // arity`` bits (two 32-bit columns, three
  21-bit columns, ...): each row is one int64 whose bit fields are the columns in (key, rest)
  order, offset so that int64 order is the lexicographic row order. ``data`` is (1, n): sorting,
  merging and searching work on plain int64 values, with ``np.searchsorted``.
- columns, otherwise: the columns permuted to (key, rest) order, ``data`` is (arity, n), and the
  lexicographic numba kernels of ``kernels`` sort, merge and search it.

Runs of different encodings combine by unpacking the packed one (O(n)).
"""

from __future__ import annotations

import bisect

import numpy as np

from herbrand.framework.native_view import PACKED_RUN, SORTED_RUN, NativeView, ViewRun
from herbrand.indexes.kernels import (
    SIGN_KEY,
    field_keys,
    fitting_keys,
    is_strictly_sorted,
    key_fields,
    merge_unique,
    row_bounds,
    run_join,
    searchsorted,
    sort_unique,
)

_SIGN = np.uint64(1 << 63)


class RowCodec:
    """Column order and bit packing of the rows of one index (arity, key).

    ``packed`` and ``unpack`` take one native pass per column (``kernels.field_keys``,
    ``key_fields``: about 3 us for a few rows, where numpy's passes cost about 10 us
    whatever the size); ``packed`` of ``SMALL_BATCH`` rows or more takes numpy's vectorised
    passes (``pack``), faster on large batches (0.16 against 0.2 ms for 100,000 triples)."""

    SMALL_BATCH = 4096

    def __init__(self, arity: int, key: tuple[int, ...]):
        self.arity = arity
        self.key = key
        self.order = key + tuple(c for c in range(arity) if c not in key)
        self.permutes = self.order != tuple(range(arity))
        self.inverse = np.argsort(np.array(self.order, dtype=np.int64))
        self.width = 64 // arity if arity >= 2 else 0  # bits per packed field; 0: never pack
        self.offset = 1 << (self.width - 1) if self.width else 0
        self.shifts = [self.width * (arity - 1 - i) for i in range(arity)]
        # the same as arrays, for the kernels
        self.shift_array = np.array(self.shifts, dtype=np.int64)
        self.order_array = np.array(self.order, dtype=np.int64)
        self._lowest = np.full(arity, -self.offset, dtype=np.int64)
        self._widths = np.full(arity, self.width, dtype=np.int64)

    def fits(self, block: np.ndarray) -> np.ndarray:
        """Per column of a block: whether every value fits a packed field."""
        return np.all((block >= -self.offset) & (block < self.offset), axis=0)

    def pack(self, block: np.ndarray, order: tuple[int, ...] | None = None) -> np.ndarray:
        """Bit fields of the leading rows of a (k <= arity, n) block, as uint64; with
        ``order``, of its rows in that order (no permuted copy of the block). O(k n), one
        temporary row."""
        rows = [block[c] for c in order] if order is not None else list(block)
        packed = np.zeros(block.shape[1], dtype=np.uint64)
        field = np.empty(block.shape[1], dtype=np.uint64)
        for values, shift in zip(rows, self.shifts, strict=False):
            np.add(values.view(np.uint64), np.uint64(self.offset), out=field)
            field <<= np.uint64(shift)
            packed |= field
        return packed

    def packs(self, batch: np.ndarray,
              bounds: tuple[np.ndarray, np.ndarray] | None = None) -> bool:
        """Whether an (arity, n) batch's rows are encoded packed: whether every value fits a
        field (its least and greatest values decide; ``bounds``: its ``row_bounds``, if the
        caller has them). O(arity n), O(arity) with ``bounds``."""
        if not self.width or not batch.size:
            return bool(self.width)
        lowest, highest = (batch.min(), batch.max()) if bounds is None else (bounds[0].min(),
                                                                             bounds[1].max())
        return bool(lowest >= -self.offset and highest < self.offset)

    def packed(self, batch: np.ndarray) -> np.ndarray:
        """The packed (1, n) run data of a batch that ``packs``, in the batch's row order,
        reading its rows in place. O(arity n)."""
        if batch.shape[1] < self.SMALL_BATCH:
            keys = field_keys(batch, self.order_array, self._lowest, self._widths)
            keys ^= SIGN_KEY
            return keys[None, :]
        packed = self.pack(batch, self.order if self.permutes else None)
        packed ^= _SIGN
        return packed.view(np.int64)[None, :]

    def encode(self, batch: np.ndarray) -> tuple[np.ndarray, bool]:
        """An (arity, n) batch as run data (a new array, in the batch's row order) and whether
        it is packed. O(arity n): packed in one native pass per row that checks as it packs
        (``kernels.fitting_keys``)."""
        if self.width:
            keys = fitting_keys(batch, self.order_array, self.offset, self.width)
            if keys is not None:
                return keys[None, :], True
        return batch[list(self.order)], False

    def unpack(self, data: np.ndarray) -> np.ndarray:
        """Packed (1, n) data as (arity, n) columns in (key, rest) order. O(arity n)."""
        return key_fields(data[0] ^ SIGN_KEY, self._lowest, self._widths)

    def decode(self, data: np.ndarray, packed: bool) -> np.ndarray:
        """Run data (or a selection of its columns) as an (arity, n) batch. O(arity n)."""
        return (self.unpack(data) if packed else data)[self.inverse]

    def view(self, runs: list[SortedRun]) -> NativeView:
        """``runs`` (of this codec) as a NativeView: their arrays, not copied. O(runs)."""
        return NativeView(self.arity, self.key, self.order, self.width,
                          tuple(run.view_run() for run in runs))

    def key_of(self, column: np.ndarray, packed: bool) -> tuple[int, ...]:
        """The key of one stored row (a column of run data) as Python ints. O(arity)."""
        if not packed:
            return tuple(column[: len(self.key)].tolist())
        bits = int(column[0]) + (1 << 63)
        field = (1 << self.width) - 1
        return tuple(((bits >> s) & field) - self.offset for s in self.shifts[: len(self.key)])


class _Keys:
    """The key tuples of a run as a read-only sequence, for ``bisect``."""

    def __init__(self, run: SortedRun):
        self._run = run

    def __len__(self) -> int:
        return len(self._run)

    def __getitem__(self, i: int) -> tuple[int, ...]:
        return self._run.codec.key_of(self._run.data[:, i], self._run.packed)


class SortedRun:
    """An immutable, duplicate-free block of rows sorted on (key, rest). ``len`` is O(1).

    ``data`` is kept C-contiguous (copied once if it is not: numpy's fancy indexing may hand
    back another layout), as the numba kernels and a NativeView's readers need it."""

    __slots__ = ("codec", "data", "packed")

    def __init__(self, codec: RowCodec, data: np.ndarray, packed: bool):
        self.codec = codec
        self.data = np.ascontiguousarray(data)
        self.packed = packed

    @classmethod
    def from_batch(cls, codec: RowCodec, batch: np.ndarray) -> SortedRun:
        """Sort and deduplicate an (arity, n) batch into a run of new arrays (the run keeps
        no view of the batch): O(n log n), or O(n) when its rows come strictly increasing in
        the codec's order already (checked first: O(1) for most other batches, which break
        the order early). Unpacked rows are read in the codec's order in place: the sort
        writes the run's one new block, with no permuted copy of the batch before it."""
        bounds = row_bounds(batch) if codec.width and batch.size else None
        if codec.packs(batch, bounds):
            data = codec.packed(batch)
            return cls(codec, data if is_strictly_sorted(data) else sort_unique(data), True)
        if is_strictly_sorted(batch, codec.order_array):
            return cls(codec, batch[list(codec.order)], False)
        return cls(codec, sort_unique(batch, codec.order_array, bounds), False)

    def __len__(self) -> int:
        return self.data.shape[1]

    def columns(self) -> np.ndarray:
        """The rows as (arity, n) columns in (key, rest) order (O(n) to unpack if packed)."""
        return self.codec.unpack(self.data) if self.packed else self.data

    def view_run(self) -> ViewRun:
        """The run as a run of a NativeView (its data, not copied). O(1)."""
        return ViewRun(PACKED_RUN if self.packed else SORTED_RUN, self.data, len(self))

    def rows(self) -> np.ndarray:
        """The rows as an (arity, n) batch in the original column order, sorted. O(arity n)."""
        return self.codec.decode(self.data, self.packed)

    def _aligned(self, other: SortedRun) -> tuple[np.ndarray, np.ndarray, bool]:
        if self.packed == other.packed:
            return self.data, other.data, self.packed
        return self.columns(), other.columns(), False

    def merge(self, other: SortedRun) -> SortedRun:
        """The union of two runs (rows in both are kept once). O(n + m), numba."""
        if not len(other):
            return self
        if not len(self):
            return other
        mine, theirs, packed = self._aligned(other)
        return SortedRun(self.codec, merge_unique(mine, theirs), packed)

    def difference(self, other: SortedRun) -> SortedRun:
        """The rows of self not in other. O(min(n log m, m log n)) searches (the smaller run's
        rows are searched in the larger) plus an O(n) copy if any go."""
        if not len(self) or not len(other):
            return self
        mine, theirs, packed = self._aligned(other)
        if len(other) < len(self):
            at = np.minimum(searchsorted(mine, theirs, "left"), len(self) - 1)
            found = at[np.all(mine[:, at] == theirs, axis=0)]
            if not len(found):
                return self
            keep = np.ones(len(self), dtype=bool)
            keep[found] = False
            return SortedRun(self.codec, mine[:, keep], packed)
        at = np.minimum(searchsorted(theirs, mine, "left"), len(other) - 1)
        keep = np.any(theirs[:, at] != mine, axis=0)
        if keep.all():
            return self
        return SortedRun(self.codec, mine[:, keep], packed)

    def join(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probe positions, matching rows) for a (len(key), m) block of probe keys; probe
        keys that cannot be packed match nothing on packed data.

        O(m log n + k) for k pairs, in one kernel call (``kernels.run_join``)."""
        codec = self.codec
        return run_join(self.data, self.packed, keys, codec.width, codec.shift_array,
                        codec.order_array)

    def key_slice(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> SortedRun:
        """The run of rows whose key lies in [lo, hi]: O(log n) Python steps and an O(k) copy."""
        keys = _Keys(self)
        start, stop = bisect.bisect_left(keys, lo), bisect.bisect_right(keys, hi)
        return SortedRun(self.codec, self.data[:, start:max(start, stop)].copy(), self.packed)

    def check_invariants(self) -> None:
        """Assert the encoding's shape and that rows increase strictly."""
        assert self.data.dtype == np.int64, self.data.dtype
        assert self.data.shape[0] == (1 if self.packed else self.codec.arity), self.data.shape
        assert not self.packed or self.codec.width, "packed data for an arity that cannot pack"
        assert is_strictly_sorted(self.data), "run rows are not strictly increasing"
