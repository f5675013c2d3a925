"""OpenHashIndex: rows in one growable numpy block, two open-addressing tables, numba kernels.

The hash index a native kernel can probe in place (``IndexTags.native``): its storage is the
``HASH_RUN`` of ``herbrand.framework.native_view``, and ``native_view()`` hands it out without a
copy. Rows are stored as fields (key columns first) in an (arity, capacity) int64 block that
doubles when full; a directory of the distinct keys (linear probing, at most half full; a slot
holds the key hash's top 32 bits above the newest row of the key) and chains (``chains[row]``:
the next older row of the same key) find a key's rows; a second table over every field
deduplicates. Each slot's fingerprint spares reading rows whose hash differs, and growing a
table rehashes from the block. Every loop over rows is a numba kernel (``nogil``, cached): no
Python loop runs per row.

Costs, for n stored rows, a batch of m rows, m probe rows and k result pairs:

- ``insert``: O(m) expected, plus amortised O(1) per row for doubling (a table that grows is
  rebuilt from the block: O(n)).
- ``join``: O(m + k) expected (two passes over the chains: count, then fill).
- ``delete``: O(n + m): the rows are marked, the block compacted and the tables rebuilt.
- ``len``: O(1); ``rows``: O(n); ``native_view``: O(1).

Not ordered. Reads do not mutate, so concurrent joins are safe (``parallel_safe``).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from herbrand.evaluators.native.exported import exported, helper
from herbrand.framework.contracts import IndexBacking, IndexTags
from herbrand.framework.native_view import (
    EMPTY,
    FINGERPRINT,
    HASH_RUN,
    MIX,
    ROW,
    SEED,
    SHIFT,
    NativeView,
    ViewRun,
)
from herbrand.indexes.kernels import as_batch, probe_key_columns, validate_key


@helper(inline="always")
def _hash(block, i, width):
    """The key hash (``native_view.key_hash``) of the first ``width`` fields of column i."""
    h = SEED
    for f in range(width):
        h ^= np.uint64(block[f, i])
        h *= MIX
        h ^= h >> SHIFT
    return h


@helper(inline="always")
def _shift(table):
    """64 - log2(len(table)): a hash's top bits give its first slot."""
    shift, length = 64, table.shape[0]
    while length > 1:
        length >>= 1
        shift -= 1
    return np.uint64(shift)


@helper(inline="always")
def _find(table, shift, data, h, block, i, width):
    """The slot of table ``table`` (``_shift(table)``: ``shift``) holding the first ``width``
    fields of ``block``'s column i (hash ``h``), or the empty slot where they would go."""
    mask = table.shape[0] - 1
    s = np.int64(h >> shift)
    while True:
        value = table[s]
        if value == EMPTY:
            return s
        if np.uint64(value) & FINGERPRINT == h & FINGERPRINT:
            row = value & ROW
            same = True
            for f in range(width):
                if data[f, row] != block[f, i]:
                    same = False
                    break
            if same:
                return s
        s = (s + 1) & mask


@helper(inline="always")
def _index_row(data, row, keys, key_shift, chains, rows, row_shift, h, width):
    """Enter stored row ``row`` (its all-field hash ``h``) in the dedup table and its key's
    chain (the tables' ``_shift`` given); 1 when its key is new, else 0."""
    s = _find(rows, row_shift, data, h, data, row, data.shape[0])
    rows[s] = np.int64(h & FINGERPRINT) | row
    hk = _hash(data, row, width)
    s = _find(keys, key_shift, data, hk, data, row, width)
    new = keys[s] == EMPTY
    chains[row] = EMPTY if new else keys[s] & ROW
    keys[s] = np.int64(hk & FINGERPRINT) | row
    return 1 if new else 0


@exported("i8(i8[:, ::1], i8, i8[::1], i8[::1], i8[::1], i8)", writes=("keys", "chains", "rows"))
def _index(data, n, keys, chains, rows, width):
    """Index the (distinct) rows ``[0, n)`` of ``data`` into empty tables; the distinct keys."""
    distinct = 0
    key_shift, row_shift = _shift(keys), _shift(rows)
    for row in range(n):
        distinct += _index_row(data, row, keys, key_shift, chains, rows, row_shift,
                               _hash(data, row, data.shape[0]), width)
    return distinct


@exported("UniTuple(i8, 2)(i8[:, ::1], i8, i8[::1], i8[::1], i8[::1], i8[:, ::1], i8)",
          writes=("data", "keys", "chains", "rows"))
def _append(data, n, keys, chains, rows, block, width):
    """Append the columns of ``block`` (fields) that are not stored (the block and tables have
    room for all); (rows stored, keys added)."""
    added = 0
    key_shift, row_shift = _shift(keys), _shift(rows)
    for i in range(block.shape[1]):
        h = _hash(block, i, block.shape[0])
        if rows[_find(rows, row_shift, data, h, block, i, block.shape[0])] != EMPTY:
            continue
        data[:, n] = block[:, i]
        added += _index_row(data, n, keys, key_shift, chains, rows, row_shift, h, width)
        n += 1
    return n, added


@exported("i8[::1](i8[:, ::1], i8[::1], i8[:, ::1])")
def _stored(data, rows, block):
    """The stored row number of each column of ``block`` (fields), -1 where absent."""
    found = np.empty(block.shape[1], dtype=np.int64)
    shift = _shift(rows)
    for i in range(block.shape[1]):
        value = rows[_find(rows, shift, data, _hash(block, i, block.shape[0]), block, i,
                           block.shape[0])]
        found[i] = EMPTY if value == EMPTY else value & ROW
    return found


@exported("UniTuple(i8[::1], 2)(i8[:, ::1], i8[::1], i8[::1], i8[:, ::1])")
def _probe(data, keys, chains, probe):
    """(probe positions, stored rows) of every match of the (width, m) key block ``probe``."""
    m, width = probe.shape[1], probe.shape[0]
    heads = np.empty(m, dtype=np.int64)
    total = 0
    shift = _shift(keys)
    for j in range(m):
        value = keys[_find(keys, shift, data, _hash(probe, j, width), probe, j, width)]
        heads[j] = EMPTY if value == EMPTY else value & ROW
        row = heads[j]
        while row != EMPTY:
            total += 1
            row = chains[row]
    positions = np.empty(total, dtype=np.int64)
    found = np.empty(total, dtype=np.int64)
    k = 0
    for j in range(m):
        row = heads[j]
        while row != EMPTY:
            positions[k], found[k] = j, row
            k += 1
            row = chains[row]
    return positions, found


def _table(entries: int) -> np.ndarray:
    """An empty table for ``entries`` entries: a power of two >= 16, at least twice as long."""
    return np.full(1 << max(4, int(2 * entries).bit_length()), EMPTY, dtype=np.int64)


class OpenHashIndex(IndexBacking):
    """Rows in a doubling block, found through open-addressing tables of keys and of rows."""

    tags: ClassVar[IndexTags] = IndexTags(supports_delete=True, parallel_safe=True, native=True)

    def __init__(self, arity: int, key: tuple[int, ...]):
        super().__init__(arity, key)
        validate_key(arity, self.key)
        self._order = self.key + tuple(c for c in range(arity) if c not in self.key)
        self._inverse = np.argsort(np.array(self._order, dtype=np.int64))
        self._rebuild(np.zeros((arity, 16), dtype=np.int64), 0)

    def _rebuild(self, data: np.ndarray, n: int) -> None:
        """Take ``data`` (fields; its first ``n`` rows distinct) and index it anew, the tables
        sized for as many rows as ``data`` has room for. O(capacity)."""
        self._data, self._n = data, n
        self._chains = np.empty(data.shape[1], dtype=np.int64)
        self._keys, self._rows = _table(data.shape[1]), _table(data.shape[1])
        self._distinct = _index(data, n, self._keys, self._chains, self._rows, len(self.key))

    def insert(self, rows: np.ndarray) -> None:
        """Append the new rows, growing the block and tables first. See the module doc."""
        block = np.ascontiguousarray(as_batch(rows, self.arity)[list(self._order)])
        m, n = block.shape[1], self._n
        if not m:
            return
        if n + m > self._data.shape[1]:
            capacity = max(self._data.shape[1], 16)
            while capacity < n + m:
                capacity *= 2
            data = np.empty((self.arity, capacity), dtype=np.int64)
            data[:, :n] = self._data[:, :n]
            self._rebuild(data, n)
        self._n, added = _append(self._data, n, self._keys, self._chains, self._rows, block,
                                 len(self.key))
        self._distinct += added

    def delete(self, rows: np.ndarray) -> None:
        """Drop the stored rows of the batch: the block compacted, the tables rebuilt. O(n + m)."""
        block = np.ascontiguousarray(as_batch(rows, self.arity)[list(self._order)])
        found = _stored(self._data, self._rows, block)
        if (found >= 0).any():
            keep = np.ones(self._n, dtype=bool)
            keep[found[found >= 0]] = False
            kept = self._data[:, : self._n][:, keep]
            data = np.empty((self.arity, max(16, self._data.shape[1])), dtype=np.int64)
            data[:, : kept.shape[1]] = kept
            self._rebuild(data, kept.shape[1])

    def join(self, probe: np.ndarray, probe_key: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Each probe key looked up in the key directory, its chain walked. O(m + k) expected."""
        keys = probe_key_columns(probe, probe_key, self.key)
        positions, found = _probe(self._data, self._keys, self._chains, keys)
        return positions, self._data[:, found][self._inverse]

    def native_view(self) -> NativeView:
        """The block and its key directory as a one-run NativeView (``HASH_RUN``). O(1)."""
        run = ViewRun(HASH_RUN, self._data, self._n, self._keys, self._chains)
        return NativeView(self.arity, self.key, self._order, 0, (run,))

    def __len__(self) -> int:
        """O(1)."""
        return self._n

    @property
    def keys(self) -> int:
        """The number of distinct keys stored. O(1)."""
        return self._distinct

    def rows(self) -> np.ndarray:
        """All rows, in insertion order (since the last delete). O(n)."""
        return self._data[:, : self._n][self._inverse]

    def _check_invariants(self) -> None:
        """Every row is in the dedup table once and on its key's chain; tables at most half
        full; the distinct keys counted."""
        n, width = self._n, len(self.key)
        assert 2 * n <= len(self._rows) and 2 * self._distinct <= len(self._keys), "too full"
        rows = self._data[:, :n]
        assert (_stored(self._data, self._rows, rows) == np.arange(n)).all(), "dedup table"
        positions, found = _probe(self._data, self._keys, self._chains,
                                  np.ascontiguousarray(rows[:width]))
        assert len(found) == len(set(zip(positions.tolist(), found.tolist(), strict=True)))
        assert set(found.tolist()) == set(range(n)), "a row is not on its key's chain"
        assert (rows[:width, found] == rows[:width, positions]).all(), "a chain mixes keys"
        assert int((self._keys != EMPTY).sum()) == self._distinct, "distinct keys miscounted"
