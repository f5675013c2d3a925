"""``RelationSet``: a Relation with a hash index of its rows, kept across updates
(``RelationSets``).

An engine that keeps its materialization as immutable Relations still asks, on every update,
"which of these rows does relation R hold?" (the rows an update inserts or deletes, the rows an
insertion step derives). Building a hash set of R for that costs O(|R|) each time: a fixed cost
of every update however small. A RelationSet is R plus an open-addressing table of R's row
positions (linear probing, at most half full) read by numba kernels; it answers ``contains`` /
``positions`` for m rows in O(m) expected and grows by appending (``insert``): the new Relation
is R's rows followed by the new ones, so every old position stays valid and only the new
positions are added to the table (O(m) expected, plus the O(|R|) copy that appending to an
immutable Relation costs anyway). It shrinks (``remove``) by unlinking the removed positions
(backward-shift deletion, no tombstones) and moving the last rows into the freed positions
(renumbering only those in the table), never rehashing, so a removal costs O(m) expected plus
the copy of the kept rows. The table is the only memory beyond R: two to four slots per row (a
power of two), each an int64 key and an int32 position, in two arrays.

A row's key is the row itself packed into one int64 when every row of R is narrow enough
(one column; two of 31 bits; three of 21: ``_row_keys``), else the row's 64-bit hash. With
packed keys a lookup compares keys only and reads no row back from R's columns (a cache miss
per column): 77,000 probes of 262,144 pairs took 1.0-1.2 ms against 2.0-2.7 ms with hashes
and the rows read back, and the table's build 2.0-2.1 ms against 1.7-2.1. With hashed keys a
probe reads the rows of equal keys only, and deletion reads no row. A set whose keys are
packed switches to hashes (O(n), once) when a wider row is inserted.

``RelationSets`` keeps one RelationSet per relation name between updates. Contract (what keeps
it safe without undo logs):

- an entry is matched by the identity of its Relation, so an entry whose Relation is not the
  engine's current one is simply never used;
- ``take`` removes the entry it returns: the caller owns it and may grow it (``insert`` shares
  and extends the table). If the caller's update fails, the entry is gone and the next update
  rebuilds it (O(|R|)), so a failed update never leaves a table that disagrees with its
  Relation;
- ``put`` records a RelationSet (whose table matches its Relation by construction).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from herbrand.evaluators.native.exported import exported, helper
from herbrand.evaluators.row_sets import _hashes
from herbrand.framework.errors import EvaluationError
from herbrand.framework.storage import Relation

_EMPTY = -1  # a position no row has
_NO_KEY = np.iinfo(np.int64).min  # the key of an empty slot (no exact key is, see ``_keys``)
_FMIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX_2 = np.uint64(0xC4CEB9FE1A85EC53)
_MAX_POSITIONS = 2**31 - 1  # a table's positions are int32
_MAX_EXACT_ARITY = 3  # wider rows are hashed (``_row_keys``)


@helper(inline="always")
def _home(key, mask):
    """The slot a key hashes to (murmur3's 64-bit finaliser: an exact key's low bits alone
    are its last column's)."""
    h = np.uint64(key)
    h ^= h >> np.uint64(33)
    h *= _FMIX_1
    h ^= h >> np.uint64(33)
    h *= _FMIX_2
    h ^= h >> np.uint64(33)
    return h & mask


@helper(inline="always")
def _same_row(at, columns, n, out, block, i):
    """Whether row i of ``block`` is the row at position ``at`` of ``columns[:, :n]``
    followed by ``out``."""
    for c in range(block.shape[0]):
        held = columns[c, at] if at < n else out[c, at - n]
        if held != block[c, i]:
            return False
    return True


@exported("void(i8[::1], i4[::1], i8[::1], i8)", writes=("keys", "positions"))
def _add_positions(keys, positions, added, start):
    """Put the rows of keys ``added`` (distinct rows, none in the table) into the table, at
    positions ``start``, ``start + 1``, ..."""
    mask = np.uint64(len(keys) - 1)
    for j in range(len(added)):
        s = _home(added[j], mask)
        while keys[s] != _NO_KEY:
            s = (s + np.uint64(1)) & mask
        keys[s] = added[j]
        positions[s] = start + j


@exported("i8[::1](i8[::1], i4[::1], i8[:, :], i8[:, ::1], i8[::1], b1)")
def _positions(keys, positions, columns, block, wanted, exact):
    """The position of each row of ``block`` (whose keys are ``wanted``) in ``columns``, -1
    where absent (reads only). With exact keys the keys alone decide: no row is read."""
    mask = np.uint64(len(keys) - 1)
    out = np.full(block.shape[1], _EMPTY, dtype=np.int64)
    for i in range(block.shape[1]):
        key = wanted[i]
        s = _home(key, mask)
        while keys[s] != _NO_KEY:
            if keys[s] == key and (exact or _same_row(positions[s], columns, columns.shape[1],
                                                      columns, block, i)):
                out[i] = positions[s]
                break
            s = (s + np.uint64(1)) & mask
    return out


@helper(inline="always")
def _slot_of(keys, positions, key, p, mask):
    """The slot holding position ``p`` (in the table, its row's key ``key``)."""
    s = _home(key, mask)
    while positions[s] != p:  # p is reached before any empty slot
        s = (s + np.uint64(1)) & mask
    return s


@exported("void(i8[::1], i4[::1], i8[::1], i8[::1])", writes=("keys", "positions"))
def _delete_positions(keys, positions, removed, removed_keys):
    """Take positions ``removed`` (present in the table; their rows' keys ``removed_keys``)
    out of it by backward-shift deletion: each entry after a freed slot in its probe run
    moves back unless its home lies between the freed slot and it, so lookups never meet a
    hole (homes read off the keys: no row read). Positions keep their numbers."""
    mask = np.uint64(len(keys) - 1)
    for r in range(len(removed)):
        i = _slot_of(keys, positions, removed_keys[r], removed[r], mask)
        j = i
        while True:
            j = (j + np.uint64(1)) & mask
            if keys[j] == _NO_KEY:
                break
            k = _home(keys[j], mask)
            if (i <= j and i < k <= j) or (i > j and (i < k or k <= j)):
                continue  # its home is after the hole: it stays reachable
            keys[i] = keys[j]
            positions[i] = positions[j]
            i = j
        keys[i] = _NO_KEY


@exported("void(i8[::1], i4[::1], i8[::1], i8[::1], i8[::1])", writes=("positions",))
def _relink(keys, positions, sources, source_keys, targets):
    """Renumber positions ``sources`` (present in the table; their rows' keys
    ``source_keys``) as ``targets``: the rows moved to other positions of a relation with the
    same rows. O(len(sources)) expected."""
    mask = np.uint64(len(keys) - 1)
    for j in range(len(sources)):
        positions[_slot_of(keys, positions, source_keys[j], sources[j], mask)] = targets[j]


@exported("UniTuple(i8, 2)(i8[::1], i4[::1], i8[:, :], i8, i8[:, ::1], i8[::1], i8, "
          "i8[:, ::1], i8, b1)", writes=("keys", "positions", "out"))
def _insert_new(keys, positions, columns, n, block, wanted, start, out, k, exact):
    """Append the rows ``start``, ... of ``block`` (whose keys are ``wanted``) that neither
    the first ``n`` rows of ``columns`` nor ``out[:, :k]`` hold to ``out``, putting their
    positions (``n + k``, ...) in the table, until the block ends or a new row finds the
    table half full; returns (the next row, k)."""
    mask = np.uint64(len(keys) - 1)
    limit = len(keys) // 2
    i = start
    while i < block.shape[1]:
        key = wanted[i]
        s = _home(key, mask)
        while True:
            if keys[s] == _NO_KEY:
                if n + k >= limit:
                    return i, k  # a new row, and the table is half full: grow first
                keys[s] = key
                positions[s] = n + k
                for c in range(block.shape[0]):
                    out[c, k] = block[c, i]
                k += 1
                break
            if keys[s] == key and (exact or _same_row(positions[s], columns, n, out, block, i)):
                break
            s = (s + np.uint64(1)) & mask
        i += 1
    return i, k


@exported("Tuple((i8[::1], i8))(i8[:, :], b1)")
def _row_keys(block, exact):
    """(the key of each row of an (arity >= 1, m) block, how many rows do not fit an exact
    key). With ``exact`` (arity at most 3), a row's values packed into one int64: one column
    of any value but ``_NO_KEY``, or two of 31 bits, or three of 21 (signed), so that equal
    keys are equal rows and no key is ``_NO_KEY``; a row that does not fit gets ``_NO_KEY``
    (which no slot holds: it is found nowhere). Else the row's 64-bit hash
    (``row_sets._hashes``), ``_NO_KEY`` taken as its successor. One loop per arity: a loop
    over the columns inside the lookup kernels made a lookup of TC's pairs 2.2x slower."""
    arity, m = block.shape
    keys = np.empty(m, dtype=np.int64)
    misfits = 0
    if exact and arity == 1:
        for i in range(m):
            keys[i] = block[0, i]
            if keys[i] == _NO_KEY:
                misfits += 1
    elif exact and arity == 2:
        for i in range(m):
            a, b = block[0, i], block[1, i]
            if -2**30 <= a < 2**30 and -2**30 <= b < 2**30:
                keys[i] = ((a & (2**31 - 1)) << 31) | (b & (2**31 - 1))
            else:
                keys[i] = _NO_KEY
                misfits += 1
    elif exact:
        for i in range(m):
            a, b, c = block[0, i], block[1, i], block[2, i]
            if -2**20 <= a < 2**20 and -2**20 <= b < 2**20 and -2**20 <= c < 2**20:
                keys[i] = ((a & (2**21 - 1)) << 42) | ((b & (2**21 - 1)) << 21) | (c & (2**21 - 1))
            else:
                keys[i] = _NO_KEY
                misfits += 1
    else:
        hashes = _hashes(block)
        for i in range(m):
            key = np.int64(hashes[i])
            keys[i] = key + 1 if key == _NO_KEY else key
    return keys, misfits


def _keys(columns: np.ndarray) -> tuple[np.ndarray, bool]:
    """(the key of each row of an (arity >= 1, n) array, whether they are exact): exact when
    the arity is at most 3 and every row fits (``_row_keys``), else hashed. O(n)."""
    if columns.shape[0] <= _MAX_EXACT_ARITY:
        keys, misfits = _row_keys(columns, True)
        if not misfits:
            return keys, True
    return _row_keys(columns, False)[0], False


def _table(rows: int) -> tuple[np.ndarray, np.ndarray]:
    """An empty table for ``rows`` rows: (keys, positions), as many slots as the least power
    of two at least twice as many (at least 16)."""
    if rows > _MAX_POSITIONS:
        raise EvaluationError(f"a relation of {rows} rows is past a row set's "
                              f"{_MAX_POSITIONS} positions")
    size = 1 << max(4, int(2 * rows - 1).bit_length())
    return np.full(size, _NO_KEY, dtype=np.int64), np.empty(size, dtype=np.int32)


class RelationSet:
    """A Relation and the hash table of its row positions (see the module doc)."""

    __slots__ = ("relation", "_exact", "_table")

    def __init__(self, relation: Relation, table: tuple[np.ndarray, np.ndarray] | None = None,
                 exact: bool = False):
        """Index ``relation`` (O(n) expected), or wrap it with ``table`` (keys, positions)
        already indexing it, whose keys are ``exact`` or not."""
        self.relation = relation
        if table is None:
            keys, exact = _keys(self._columns())
            table = _table(len(relation))
            _add_positions(*table, keys, 0)
        self._table, self._exact = table, exact

    def _columns(self) -> np.ndarray:
        columns = self.relation.columns
        return columns if columns.shape[0] else np.zeros((1, columns.shape[1]), dtype=np.int64)

    @staticmethod
    def _block(rows: np.ndarray) -> np.ndarray:
        block = np.ascontiguousarray(rows, dtype=np.int64)
        return block if block.shape[0] else np.zeros((1, block.shape[1]), dtype=np.int64)

    @property
    def nbytes(self) -> int:
        """Bytes of the table (the Relation's own rows not counted)."""
        return sum(part.nbytes for part in self._table)

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """The position of each row of an (arity, m) batch in the relation, -1 where absent.
        O(m) expected."""
        if not rows.shape[1] or not len(self.relation):
            return np.full(rows.shape[1], _EMPTY, dtype=np.int64)
        block = self._block(rows)
        wanted, _ = _row_keys(block, self._exact)  # a row too wide for exact keys: _NO_KEY
        return _positions(*self._table, self._columns(), block, wanted, self._exact)

    def contains(self, rows: np.ndarray) -> np.ndarray:
        """Whether the relation holds each row of an (arity, m) batch. O(m) expected."""
        return self.positions(rows) != _EMPTY

    def insert(self, rows: np.ndarray) -> tuple[RelationSet, np.ndarray]:
        """``(grown, new)``: the RelationSet of the relation followed by the rows of the
        (arity, m) batch it does not hold (each once, in the batch's order), and those rows.
        Takes this set's table over (this RelationSet must not be used afterwards). One hash
        probe per row (a kernel that dedups and indexes at once): O(m) expected, plus the O(n)
        copy of the appended Relation (and an O(n) rehash when the table doubles)."""
        block = self._block(rows)
        n, m = len(self.relation), block.shape[1]
        columns, table, exact = self._columns(), self._table, self._exact
        wanted, misfits = _row_keys(block, exact)
        if misfits:  # a row too wide for exact keys: the rows' hashes instead
            exact = False
            table = _table(n)
            _add_positions(*table, _row_keys(columns, exact)[0], 0)
            wanted, _ = _row_keys(block, exact)
        out = np.empty((block.shape[0], m), dtype=np.int64)
        i = k = 0
        while True:
            i, k = _insert_new(*table, columns, n, block, wanted, i, out, k, exact)
            if i == m:
                break
            table = _table(len(table[0]))  # half full: double
            _add_positions(*table, _row_keys(columns[:, :n], exact)[0], 0)
            _add_positions(*table, _row_keys(out[:, :k], exact)[0], n)
        fresh = out[:, :k] if rows.shape[0] else out[:0, :k]
        if not k:
            self._table, self._exact = table, exact
            return self, fresh
        grown = RelationSet(self.relation.extend(Relation(fresh, unique=True)), table, exact)
        self._table = None  # handed over
        return grown, fresh

    def remove(self, rows: np.ndarray) -> tuple[RelationSet, np.ndarray]:
        """``(shrunk, removed)``: the RelationSet of the relation without the rows of the
        (arity, m) batch, and those of them it held. Rows before the first removed one keep
        their positions; the last rows move into the freed positions below the new size.
        Takes this set's table over, as ``insert``. O(m log m) to sort the removed positions,
        O(m) expected to unlink them and relink the moved rows, plus the O(n) copy of the kept
        rows (a contiguous slice and the moved rows: no mask over the relation, nothing
        rehashed), or none when the rows that leave are the last ones: the kept rows are
        then a prefix of the same memory (a view; an update that deletes the facts the one
        before inserted, on RDFS LUBM(1): 1,009 of t's 100,838 rows in 0.16 ms instead of 1.2,
        the copy reading a cold relation). When at least half the rows leave, the kept ones
        get a new table instead (O(n) expected), in their order."""
        at = self.positions(rows)
        at = at[at != _EMPTY]
        if not len(at):
            return self, rows[:, :0]
        columns = self.relation.columns
        n = columns.shape[1]
        if 2 * len(at) >= n:  # most rows leave: a new table of the few kept is cheaper
            keep = np.ones(n, dtype=bool)
            keep[at] = False
            self._table = None  # handed over (dropped)
            return (RelationSet(Relation(np.compress(keep, columns, axis=1), unique=True)),
                    np.compress(~keep, columns, axis=1))
        at = np.sort(at)
        at = at[np.concatenate(([True], at[1:] != at[:-1]))]  # distinct: O(m log m)
        size = n - len(at)
        tail_kept = np.ones(len(at), dtype=bool)  # positions size, ..., n - 1
        tail_kept[at[at >= size] - size] = False
        sources = size + np.flatnonzero(tail_kept)
        targets = at[:len(sources)]  # the freed positions below size, in order
        table = self._table
        rows_of = self._columns()
        _delete_positions(*table, at, _row_keys(rows_of[:, at], self._exact)[0])
        if len(sources):
            _relink(*table, sources, _row_keys(rows_of[:, sources], self._exact)[0], targets)
            kept = np.empty((columns.shape[0], size), dtype=np.int64)
            kept[:] = columns[:, :size]
            kept[:, targets] = columns[:, sources]
        else:  # the last rows left (the last ones inserted, say): the others are a prefix
            kept = columns[:, :size]
        shrunk = RelationSet(Relation(kept, unique=True), table, self._exact)
        self._table = None  # handed over
        return shrunk, columns[:, at]


def hashed_changes(old: Relation, new: Relation) -> tuple[Relation, Relation]:
    """``(added, removed)``: the rows of ``new`` not in ``old`` and of ``old`` not in ``new``
    (both distinct), in order: one hash table of ``old``'s rows, probed once per row of ``new``
    (the rows of ``old`` no probe hits are the removed ones). O(n + m) expected;
    ``Relation.difference`` sorts both (on RDFS LUBM(1), 140 of a recompute's 213 ms)."""
    if old is new:
        return Relation.empty(old.arity), Relation.empty(old.arity)
    if not len(old) or not len(new):
        return new, old
    positions = RelationSet(old).positions(new.columns)
    hit = np.zeros(len(old), dtype=bool)
    hit[positions[positions != _EMPTY]] = True
    return (Relation(new.columns[:, positions == _EMPTY], unique=True),
            Relation(old.columns[:, ~hit], unique=True))


class RelationSets:
    """Per relation name, the RelationSet of one Relation (see the module doc)."""

    __slots__ = ("_sets",)

    def __init__(self) -> None:
        self._sets: dict[str, RelationSet] = {}

    @classmethod
    def of(cls, relations: Mapping[str, Relation]) -> RelationSets:
        """The sets of ``relations`` (name -> Relation), built now, so that an engine's first
        update finds them (a bootstrap builds its inputs' sets, which the first update would
        otherwise build on a miss). O(n) expected per relation."""
        sets = cls()
        for name, relation in relations.items():
            sets.put(name, RelationSet(relation))
        return sets

    def take(self, name: str, relation: Relation) -> RelationSet:
        """A RelationSet of ``relation`` that the caller now owns (and may grow): the kept one
        when it was recorded for this very Relation object, else a new one. The entry for
        ``name`` is dropped either way. O(1) on a hit, O(|relation|) expected on a miss."""
        kept = self._sets.pop(name, None)
        if kept is not None and kept.relation is relation:
            return kept
        return RelationSet(relation)

    def put(self, name: str, kept: RelationSet) -> None:
        """Keep ``kept`` for ``name`` (replacing any other). O(1)."""
        self._sets[name] = kept

    @property
    def nbytes(self) -> int:
        """Bytes of the kept tables. O(relations)."""
        return sum(kept.nbytes for kept in self._sets.values())
