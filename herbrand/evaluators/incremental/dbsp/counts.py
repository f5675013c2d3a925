"""One relation's derivation counts along fixpoint iterations, integrated per row.

The circuit reads X_i, the count of a row at iteration i (the integral of the differentiated
stream dX up to i), for every row of each iteration's change. Summing dX[0..i] per lookup
costs i searches in iteration i of an update, quadratic in the depth. ``Counts`` keeps the
same entries as the non-zero dX, one per (row, iteration j) with dX[j](row) != 0, sorted by
row and then iteration, but each holds the running sum X_j(row): X_i(row) is the entry of
the row's run with the last iteration <= i: the sorted rows of a change find their runs by
one galloping pass, then scan them (``counts_kernels``). Bytes per entry: the encoded row (8
when packed), the count in the narrowest of ``COUNT_TYPES`` that holds the counts (1 under 128:
TC over graph10000's are at most 74; else 8) and the iteration in the smallest unsigned type
that holds the depth (1 for fewer than 256 iterations): 10 where the dX Z-sets took 16. A read
scans fewer bytes too: on TC over graph10000, a 1% update's reads find 60k rows among 676k
entries, about every 11th, so they stream most of the entries' memory.

Adding an update's changes to the entries copies every entry once (O(N), block copies
between the changed rows), which on a shallow stratum with a tiny change, or on TC over
graph10000 (89k changed entries of 676k per 1% update), was a large part of an update. So the
entries are levels, as in a log-structured merge: changes under 1/``PENDING_SHARE`` of the
entries go to a smaller ``Counts`` of pending changes (itself levelled; X is linear in dX, so
a lookup sums the levels), merged into the entries only once it holds more than
1/``PENDING_SHARE`` of their number. An update copies the small levels it lands in, and the
larger merges are amortised over the updates that filled them.

Above the levels, the most recent changes wait as they come, the dX stream itself (one Z-set
per iteration, ``recent``): an update adds its changes to them iteration by iteration (O(r +
c), no sort), so that changes that cancel (an insert and its delete) vanish there, and an
update that reads no counts before the next one (the last stratum's changes, a stratum that
an update does not reach) never sorts them. An update's reads look them up in their running
sums (``recent_sum``: when they are one update's changes, the running sums that update
computed anyway, ΔX_i, given to ``plus``; else summed once, on the first read); a lookup here
(``at``) sorts them into a level when first made (kept with these counts). They go down into
the levels when a change at least ``PENDING_SHARE`` times smaller comes (which so never copies
more than that multiple of itself), and with the levels into the entries when they pass
1/``PENDING_SHARE`` of them.

Rows are held in ``identity_codec``'s encoding, whose packed order is the rows'
lexicographic order (so packed and unpacked runs sort alike).

    >>> import numpy as np
    >>> from herbrand.evaluators.incremental.dbsp.zset import ZSet
    >>> counts = Counts.of(1, [ZSet.of(np.array([[1, 2]]), np.array([1, 2])),
    ...                        ZSet.of(np.array([[1]]), np.array([3]))])
    >>> probe = ZSet.of_set(np.array([[1, 2, 3]]))
    >>> counts.at(probe, 0).tolist(), counts.at(probe, 1).tolist()
    ([1, 2, 0], [4, 2, 0])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from herbrand.evaluators.incremental.counting_merge import sorted_positions
from herbrand.evaluators.incremental.dbsp.counts_kernels import NEVER, counts_at, counts_plus
from herbrand.evaluators.incremental.dbsp.zset import ZSet, sorted_order
from herbrand.evaluators.incremental.row_index import identity_codec


class Counts:
    """An immutable map (row, iteration) -> X_iteration(row), stored where dX is non-zero
    (in the entries, plus in the pending Counts of earlier changes and the recent dX stream).
    ``depth``: the iterations after which dX is zero (an upper bound while pending or recent
    changes cancel entries)."""

    __slots__ = ("arity", "depth", "_data", "_packed", "_iterations", "_counts", "_pending",
                 "_recent", "_recent_sums", "_recent_level", "_entries_depth")

    # a level of pending changes is merged into the entries above it once it holds more than
    # 1/PENDING_SHARE of their number; the recent changes go down into the levels when a
    # change PENDING_SHARE times smaller comes
    PENDING_SHARE = 4

    def __init__(self, arity: int, data: np.ndarray, iterations: np.ndarray,
                 counts: np.ndarray, packed: bool):
        """Wrap entries sorted by (encoded row, iteration) with their running counts (use
        ``of`` or ``plus``)."""
        self.arity = arity
        self._data = data
        self._packed = packed
        self._iterations = iterations
        self._counts = counts
        self._pending: Counts | None = None
        self._recent: tuple[ZSet, ...] = ()
        self._recent_sums: list[ZSet] = []  # Σ recent[j] for j <= k, for k in a prefix
        self._recent_level: Counts | None = None
        self._entries_depth = int(iterations.max()) + 1 if len(iterations) else 0
        self.depth = self._entries_depth

    def _with(self, pending: Counts | None, recent: Sequence[ZSet] = (),
              sums: Sequence[ZSet] = ()) -> Counts:
        """These entries with ``pending`` as the pending levels (none when it is None or
        empty) and ``recent`` as the recent stream (its trailing empty Z-sets dropped), with
        ``sums`` a prefix of its running sums (``recent_sum``). O(iterations)."""
        recent = list(recent)
        while recent and not len(recent[-1]):
            recent.pop()
        out = object.__new__(Counts)
        out.arity, out._data, out._packed = self.arity, self._data, self._packed
        out._iterations, out._counts = self._iterations, self._counts
        out._pending = pending if pending is not None and len(pending) else None
        out._recent, out._recent_level = tuple(recent), None
        out._recent_sums = list(sums[:len(recent)])
        out._entries_depth = self._entries_depth
        out.depth = max(self._entries_depth, out._pending.depth if out._pending else 0,
                        len(out._recent))
        return out

    @classmethod
    def of(cls, arity: int, stream: Sequence[ZSet]) -> Counts:
        """From the differentiated stream dX (one Z-set per iteration). O(N log N)."""
        data, packed = _keys(ZSet.empty(arity))
        empty = cls(arity, data, np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64),
                    packed)
        return empty._merged(stream)

    def __len__(self) -> int:
        """The entries stored (a (row, iteration) may have one in each of the entries, the
        pending levels and the recent stream)."""
        return (len(self._counts) + (len(self._pending) if self._pending is not None else 0)
                + sum(len(z) for z in self._recent))

    @property
    def nbytes(self) -> int:
        """Bytes of the entries, the pending levels, the recent changes and their level once
        read."""
        own = self._data.nbytes + self._iterations.nbytes + self._counts.nbytes
        return (own + sum(level.nbytes for level in (self._pending, self._recent_level)
                          if level is not None)
                + sum(z.nbytes for z in (*self._recent, *self._recent_sums)))

    @property
    def recent(self) -> tuple[ZSet, ...]:
        """The recent changes: dX not in the levels yet, one Z-set per iteration."""
        return self._recent

    def recent_sum(self, i: int) -> ZSet:
        """Σ ``recent[j]`` for j <= ``i``: the recent changes' share of X_i. The running sums
        are kept as given to ``plus``, or summed on first request (one merge per iteration,
        once per these counts)."""
        sums, last = self._recent_sums, min(i, len(self._recent) - 1)
        while len(sums) <= last:
            sums.append(sums[-1] + self._recent[len(sums)] if sums else self._recent[0])
        return sums[last] if last >= 0 else ZSet.empty(self.arity)

    def _recent_counts(self) -> Counts | None:
        """The recent changes as a level (sorted on the first read of these counts, then
        kept), or None without them. O(r log r) once."""
        if self._recent and self._recent_level is None:
            self._recent_level = Counts.of(self.arity, self._recent)
        return self._recent_level

    def at(self, rows: ZSet, i: int) -> np.ndarray:
        """X_i of each row of ``rows``, in its order (0 for a row never counted): the rows'
        runs found by galloping, then scanned (``counts_at``), plus their recent dX up to i.
        O(m log(N / m) + m + the probed rows' runs) per level on packed rows; unpacked ones
        are ranked first (O(N log N))."""
        return self.reading(rows, i)[0]

    def reading(self, rows: ZSet, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``at(rows, i)``, and per row the first iteration after i at which its count changes
        (``NEVER`` when none: X_j of the row is the same for i <= j < that iteration)."""
        found, nexts = (np.zeros(len(rows), dtype=np.int64),
                        np.full(len(rows), NEVER, dtype=np.int64))
        if len(rows) and len(self._counts):
            keys, probe, _ = _flat(*self._aligned(*_keys(rows)))
            found, nexts = counts_at(keys, self._iterations, self._counts, probe,
                                     sorted_positions(keys, probe), i)
        for level in (self._pending, self._recent_counts()):
            if level is not None:
                more, later = level.reading(rows, i)
                found, nexts = found + more, np.minimum(nexts, later)
        return found, nexts

    def levels(self, packed: bool) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None:
        """The non-empty levels' entries as (keys, iterations, running counts), the entries
        first, then each pending level (X_i of a row is the sum of its counts in them and in
        the recent stream, ``recent``), when every row is one key in the encoding ``packed``
        (``ZSet.encoded``); else None. O(1) per level."""
        own = []
        if len(self._counts):
            if not self.arity or self._data.shape[0] != 1 or self._packed != packed:
                return None
            own.append((self._data[0], self._iterations, self._counts))
        if self._pending is not None:
            more = self._pending.levels(packed)
            if more is None:
                return None
            own += more
        return own

    def plus(self, changes: Sequence[ZSet], sums: Sequence[ZSet] = ()) -> Counts:
        """The counts after dX[j] += ``changes[j]`` for every j: added to the recent stream
        (O(r + c) for r recent and c changed entries, no sort), once it has gone down into the
        levels if it is over ``PENDING_SHARE`` times the changes (``_pushed``); and the whole
        merged into the entries once it and the levels pass 1/``PENDING_SHARE`` of them.
        Amortised as the levels: O(c log c + c log(N / c)) per update on packed rows, where
        merging every update into the entries cost O(N). ``sums``: the running sums of
        ``changes`` (Σ changes[j] for j <= k, per k) when the caller has them, kept as the
        recent stream's when it was empty, so that the next update's reads do not sum them
        again."""
        size = sum(len(z) for z in changes)
        if not size:
            return self
        recent = sum(len(z) for z in self._recent)
        if recent > self.PENDING_SHARE * size:
            return self._pushed().plus(changes, sums)
        stream = _summed(self.arity, self._recent, changes) if recent else list(changes)
        pending = len(self._pending) if self._pending is not None else 0
        if (sum(len(z) for z in stream) + pending) * self.PENDING_SHARE > len(self._counts):
            return self._merged(stream if self._pending is None
                                else _summed(self.arity, self._pending._stream(), stream))
        return self._with(self._pending, stream, () if recent else sums)

    def _pushed(self) -> Counts:
        """These counts with the recent changes in the levels (sorted once)."""
        return self._with(self._pending)._levelled(self._recent)

    def _levelled(self, changes: Sequence[ZSet]) -> Counts:
        """The counts (without recent changes) after dX[j] += ``changes[j]`` for every j,
        through the levels: changes of more than 1/``PENDING_SHARE`` of the entries are
        merged into them with the pending levels; others are added to the pending levels
        (recursively: each level is a ``Counts``), and a level that grows past
        1/``PENDING_SHARE`` of the entries above it is merged into them. Each entry is so
        copied O(log_PENDING_SHARE(N / c)) times before it reaches the entries."""
        size = sum(len(z) for z in changes)
        if not size:
            return self
        if size * self.PENDING_SHARE > len(self._counts):
            return self._merged(changes if self._pending is None
                                else _summed(self.arity, self._pending._stream(), changes))
        pending = (Counts.of(self.arity, changes) if self._pending is None
                   else self._pending._levelled(changes))
        if len(pending) * self.PENDING_SHARE > len(self._counts):
            return self._merged(pending._stream())
        return self._with(pending)

    def _stream(self) -> list[ZSet]:
        """The dX stream (one Z-set per iteration), the pending and recent changes included."""
        dx = self._differences()
        data = self._data if self.arity else self._data[:0]
        own = [ZSet(self.arity, data[:, self._iterations == j], self._packed,
                    dx[self._iterations == j]) for j in range(self._entries_depth)]
        if self._pending is not None:
            own = _summed(self.arity, own, self._pending._stream())
        return _summed(self.arity, own, self._recent) if self._recent else own

    def _differences(self) -> np.ndarray:
        """dX of each entry: its running count less the one before it in its row's run."""
        first = np.r_[True, np.any(self._data[:, 1:] != self._data[:, :-1], axis=0)]
        counts = self._counts.astype(np.int64)
        return counts - np.where(first, 0, np.r_[0, counts[:-1]])

    def _merged(self, changes: Sequence[ZSet]) -> Counts:
        """The entries (not the pending or recent changes) after dX[j] += ``changes[j]`` for
        every j: the changes, sorted by row and then iteration (a stable sort of the
        iterations' rows in iteration order, ``sorted_order``), merged into the entries in one
        pass (``counts_plus``). O(N) block copies + O(c log c) for c changed entries on packed
        rows."""
        parts = [(_keys(z), j, z.weights) for j, z in enumerate(changes) if len(z)]
        if not parts:
            return self._with(None)
        packed = self._packed and all(p for (_, p), _, _ in parts)
        data = self._data if packed == self._packed else _unpacked(self._data, self.arity)
        keys, change, rows = _flat(data, np.concatenate(
            [d if p == packed else _unpacked(d, self.arity) for (d, p), _, _ in parts], axis=1))
        change_at = np.repeat([j for _, j, _ in parts], [len(w) for _, _, w in parts])
        weights = np.concatenate([w for _, _, w in parts])
        change, order = sorted_order(change)
        depth = max(self.depth, int(change_at[-1]) + 1)
        keys, iterations, counts = counts_plus(
            keys, self._iterations, self._counts, change, change_at[order], weights[order],
            sorted_positions(keys, change), np.min_scalar_type(depth - 1))
        return Counts(self.arity, keys[None, :] if rows is None else rows[:, keys],
                      iterations, counts, packed)

    def differences(self) -> dict[tuple[tuple[int, ...], int], int]:
        """{(row, iteration): dX[iteration](row)} for every non-zero entry (for tests)."""
        rows = _unpacked(self._data, self.arity) if self._packed else self._data[:self.arity]
        out = {(tuple(row), int(j)): int(w) for row, j, w in
               zip(rows.T.tolist(), self._iterations.tolist(), self._differences().tolist(),
                   strict=True)}
        added = [] if self._pending is None else list(self._pending.differences().items())
        added += [((tuple(row), j), w) for j, z in enumerate(self._recent)
                  for row, w in zip(z.rows.T.tolist(), z.weights.tolist(), strict=True)]
        for entry, w in added:
            out[entry] = out.get(entry, 0) + w
            if not out[entry]:
                del out[entry]
        return out

    def _aligned(self, probe: np.ndarray, packed: bool) -> tuple[np.ndarray, np.ndarray]:
        if packed == self._packed:
            return self._data, probe
        return (_unpacked(self._data, self.arity) if self._packed else self._data,
                _unpacked(probe, self.arity) if packed else probe)


def _keys(z: ZSet) -> tuple[np.ndarray, bool]:
    """``z``'s sorted encoded rows (one constant row per entry when the arity is 0, so that
    every row has a key) and whether they are packed."""
    data, packed = z.encoded()
    if not z.arity:
        return np.zeros((1, len(z)), dtype=np.int64), False
    return data, packed


def _summed(arity: int, a: Sequence[ZSet], b: Sequence[ZSet]) -> list[ZSet]:
    """Two streams of Z-sets of ``arity`` added iteration by iteration (the shorter padded
    with empty Z-sets)."""
    width = max(len(a), len(b))
    empty = [ZSet.empty(arity)] * width
    return [x + y for x, y in zip([*a, *empty][:width], [*b, *empty][:width], strict=True)]


def _unpacked(data: np.ndarray, arity: int) -> np.ndarray:
    return identity_codec(arity).unpack(data)


def _flat(data: np.ndarray, probe: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One int64 key per stored row and per probe row, ordered as the rows are: the rows
    themselves when they have one column, else their ranks among both (O((N + m) log)),
    with the rows of the ranks (None for the former)."""
    if data.shape[0] == 1:
        return data[0], probe[0], None
    rows, ranks = np.unique(np.concatenate([data, probe], axis=1), axis=1, return_inverse=True)
    ranks = ranks.reshape(-1)
    return ranks[:data.shape[1]], ranks[data.shape[1]:], rows
