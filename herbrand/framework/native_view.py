"""``NativeView``: an index backing's storage as arrays a compiled kernel searches in place.

A backing tagged ``IndexTags(native=True)`` returns one from ``native_view()``; the native
executor copies the arrays' addresses into its kernels' tables and probes them inside the
fused loops (``herbrand.evaluators.native``), without copying what the backing holds.

Layout. A view of a backing of ``arity`` columns keyed on ``key`` stores each row as *fields*:
field f holds column ``order[f]``, and ``order`` starts with ``key`` (the key fields come
first). The rows are split into ``runs`` (disjoint; together the backing's rows); a probe of key
values walks every run:

- ``SORTED_RUN``: ``data`` is an (arity, >= rows) int64 array, field f in row f, whose first
  ``rows`` columns are strictly increasing as tuples: binary search on the first ``len(key)``
  fields gives the range of a key.
- ``PACKED_RUN``: ``data`` is a (1, rows) int64 array: each row one int64 whose bit fields are
  the fields, ``width`` bits each, field f at shift ``width * (arity - 1 - f)``, each stored as
  ``value + 2^(width - 1)`` (so it is non-negative), the whole word xor ``1 << 63`` (so signed
  int64 order is the tuples' order). Strictly increasing: binary search on the word between the
  key's fields with the other fields all 0 and all 1; key values outside
  [-2^(width - 1), 2^(width - 1)) match nothing. ``herbrand.indexes.runs`` writes these.
- ``HASH_RUN``: ``data`` as for a sorted run (in no order), a directory ``slots`` (int64,
  2^b >= 16 long, linear probing) of the distinct keys, and ``chains`` (int64, one per row):
  an empty slot is -1; a used one holds ``(h & 0xFFFFFFFF00000000) | row`` (``row`` < 2^32),
  the first row of its key, where ``h = key_hash(key values)`` and probing starts at slot
  ``h >> (64 - b)``; ``chains[row]`` is the next row of the same key (-1: the last).

Every array is int64 and each field's values are contiguous (``data.strides[1] == 8``);
``order`` and ``width`` are the same in every view of one backing.

Ownership and lifetime. The arrays belong to the backing; the view only refers to them. A view
is valid until the next write (``insert``, ``delete``) to its backing, which may free, move or
change them; a reader takes a new view after each write, and never writes through one.

``lookup`` is the reference reader (pure Python over the layout above, following the same
access paths a kernel takes: bisection, the hash directory and its chains); the conformance
check ``check_native_view_matches_join`` compares it with the backing's batch ``join``.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from herbrand.framework.errors import HerbrandError

SORTED_RUN, PACKED_RUN, HASH_RUN = 0, 1, 2
EMPTY = -1
# the key hash (a murmur-style finaliser per value): h = SEED; per value v:
# h = (h ^ v) * MIX; h ^= h >> SHIFT (all uint64, wrapping)
SEED = np.uint64(0x9E3779B97F4A7C15)
MIX = np.uint64(0xFF51AFD7ED558CCD)
SHIFT = np.uint64(33)
FINGERPRINT = np.uint64(0xFFFFFFFF00000000)
ROW = np.int64(0xFFFFFFFF)
_SIGN = 1 << 63
_WORD = (1 << 64) - 1


class NoNativeView(HerbrandError):
    """``native_view()`` of a backing not tagged ``IndexTags(native=True)``."""


def key_hash(values) -> int:
    """The hash of a key (a sequence of ints) as a Python int below 2^64. O(len(values))."""
    h = int(SEED)
    for value in values:
        h = ((h ^ (int(value) & _WORD)) * int(MIX)) & _WORD
        h ^= h >> int(SHIFT)
    return h


@dataclass(frozen=True)
class ViewRun:
    """One run of a view (see the module doc): its kind, ``data``, the rows in use, and for a
    hash run its directory ``slots`` and ``chains``."""

    kind: int
    data: np.ndarray
    rows: int
    slots: np.ndarray | None = None
    chains: np.ndarray | None = None


@dataclass(frozen=True)
class NativeView:
    """A backing's rows as runs of fields (see the module doc); valid until its next write."""

    arity: int
    key: tuple[int, ...]
    order: tuple[int, ...]  # field f holds column order[f]; starts with key
    width: int  # bits per field of packed runs (0: no run is packed)
    runs: tuple[ViewRun, ...]

    def field(self, run: ViewRun, f: int, row: int) -> int:
        """Field ``f`` of row ``row`` of ``run``. O(1)."""
        if run.kind != PACKED_RUN:
            return int(run.data[f, row])
        bits = (int(run.data[0, row]) & _WORD) ^ _SIGN
        field = (bits >> (self.width * (self.arity - 1 - f))) & ((1 << self.width) - 1)
        return field - (1 << (self.width - 1))

    def _fields(self, run: ViewRun, row: int, count: int) -> tuple[int, ...]:
        return tuple(self.field(run, f, row) for f in range(count))

    def _range(self, run: ViewRun, values: tuple[int, ...]) -> range:
        """The rows of a sorted or packed run whose key fields equal ``values``: bisection."""
        keys = _Keys(self, run, len(values))
        return range(bisect.bisect_left(keys, values), bisect.bisect_right(keys, values))

    def _chain(self, run: ViewRun, values: tuple[int, ...]) -> list[int]:
        """The rows of a hash run with key ``values``: its directory, then its chain."""
        h = key_hash(values)
        length = len(run.slots)
        s = h >> (64 - (length.bit_length() - 1))
        while (value := int(run.slots[s])) != EMPTY:
            row = value & int(ROW)
            if (value & _WORD) >> 32 == h >> 32 and self._fields(run, row, len(values)) == values:
                found = []
                while row != EMPTY:
                    found.append(row)
                    row = int(run.chains[row])
                return found
            s = (s + 1) % length
        return []

    def lookup(self, values) -> np.ndarray:
        """The stored rows whose key equals ``values`` (one per key column), as an (arity, k)
        batch in the backing's column order, read through the layout: O(runs log n + k)
        Python steps for sorted runs, expected O(1 + k) for hash runs."""
        values = tuple(int(v) for v in values)
        found = []
        for run in self.runs:
            rows = self._chain(run, values) if run.kind == HASH_RUN else self._range(run, values)
            found += [self._fields(run, row, self.arity) for row in rows]
        batch = np.array(found, dtype=np.int64).reshape(len(found), self.arity).T
        out = np.empty_like(batch)
        out[list(self.order)] = batch
        return out


class _Keys:
    """The first ``count`` fields of a sorted run's rows as a sequence, for ``bisect``."""

    def __init__(self, view: NativeView, run: ViewRun, count: int):
        self._view, self._run, self._count = view, run, count

    def __len__(self) -> int:
        return self._run.rows

    def __getitem__(self, row: int) -> tuple[int, ...]:
        return self._view._fields(self._run, row, self._count)
