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
power of two), each one int64 holding a row's tag in its high bits and its position in the low
ones (as many as the table's positions need: 18 for 262,144 rows), so that a slot takes 8 bytes
and a probe reads one word.

A row's tag is the row itself packed (``_Layout``) when R's arity is at most 3 and its columns'
ranges fit the bits the positions leave: each column's offset from the least value, in as many
bits as the range needs plus one when that fits too (room for later rows: the range doubled, a
quarter of it below the least value; TC's pairs over n nodes: two columns of about
log2(n) + 1 bits); the range of all the columns' values when that fits, else the column's
own. Else the tag is the high 32 bits of the row's 64-bit hash. With packed tags
a lookup compares tags only and reads no row back from R's columns (a cache miss per column).
With hashed tags a probe reads the rows of equal tags only, and deletion reads no row. An
insert of a row outside the ranges lays the table out again for the old and new rows (O(n),
rare thanks to the room), as does a doubling whose one more position bit no longer leaves the
packed tags room; a layout that does not fit is hashed.

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
from typing import NamedTuple

import numpy as np

from herbrand.evaluators.native.exported import exported, helper
from herbrand.evaluators.row_sets import _hashes
from herbrand.framework.errors import EvaluationError
from herbrand.framework.storage import Relation

_EMPTY = -1  # a position no row has, and the value of an empty slot (no slot's is negative)
_MISFIT = -1  # the tag of a row outside an exact layout's ranges (no slot's tag: found nowhere)
_FMIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX_2 = np.uint64(0xC4CEB9FE1A85EC53)
_MAX_POSITIONS = 2**31 - 1  # a table's positions fit 31 bits
_MAX_EXACT_ARITY = 3  # wider rows are hashed (``_row_tags``)
_SLOT_BITS = 63  # a slot's tag and position, so that no slot is negative
_HASH_TAG_SHIFT = 32  # a hashed tag is a hash's high 32 bits: 31 position bits at most


@helper(inline="always")
def _home(tag, mask):
    """The slot a tag hashes to (murmur3's 64-bit finaliser: an exact tag's low bits alone
    are its last column's)."""
    h = np.uint64(tag)
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


@exported("void(i8[::1], i8, i8[::1], i8)", writes=("slots",))
def _add_positions(slots, shift, added, start):
    """Put the rows of tags ``added`` (distinct rows, none in the table) into the table of
    ``shift`` position bits, at positions ``start``, ``start + 1``, ..."""
    mask = np.uint64(len(slots) - 1)
    for j in range(len(added)):
        s = _home(added[j], mask)
        while slots[s] != _EMPTY:
            s = (s + np.uint64(1)) & mask
        slots[s] = (added[j] << shift) | (start + j)


@exported("i8[::1](i8[::1], i8, i8[:, :], i8[:, ::1], i8[::1], b1)")
def _positions(slots, shift, columns, block, wanted, exact):
    """The position of each row of ``block`` (whose tags are ``wanted``) in ``columns``, -1
    where absent (reads only). With exact tags the tags alone decide: no row is read."""
    mask = np.uint64(len(slots) - 1)
    low = (1 << shift) - 1
    out = np.full(block.shape[1], _EMPTY, dtype=np.int64)
    for i in range(block.shape[1]):
        tag = wanted[i]
        s = _home(tag, mask)
        while slots[s] != _EMPTY:
            if slots[s] >> shift == tag and (exact or _same_row(
                    slots[s] & low, columns, columns.shape[1], columns, block, i)):
                out[i] = slots[s] & low
                break
            s = (s + np.uint64(1)) & mask
    return out


@helper(inline="always")
def _slot_of(slots, shift, tag, p, mask):
    """The slot holding position ``p`` (in the table, its row's tag ``tag``)."""
    s = _home(tag, mask)
    while slots[s] != (tag << shift) | p:  # p is reached before any empty slot
        s = (s + np.uint64(1)) & mask
    return s


@exported("void(i8[::1], i8, i8[::1], i8[::1])", writes=("slots",))
def _delete_positions(slots, shift, removed, removed_tags):
    """Take positions ``removed`` (present in the table; their rows' tags ``removed_tags``)
    out of it by backward-shift deletion: each entry after a freed slot in its probe run
    moves back unless its home lies between the freed slot and it, so lookups never meet a
    hole (homes read off the tags: no row read). Positions keep their numbers."""
    mask = np.uint64(len(slots) - 1)
    for r in range(len(removed)):
        i = _slot_of(slots, shift, removed_tags[r], removed[r], mask)
        j = i
        while True:
            j = (j + np.uint64(1)) & mask
            if slots[j] == _EMPTY:
                break
            k = _home(slots[j] >> shift, mask)
            if (i <= j and i < k <= j) or (i > j and (i < k or k <= j)):
                continue  # its home is after the hole: it stays reachable
            slots[i] = slots[j]
            i = j
        slots[i] = _EMPTY


@exported("void(i8[::1], i8, i8[::1], i8[::1], i8[::1])", writes=("slots",))
def _relink(slots, shift, sources, source_tags, targets):
    """Renumber positions ``sources`` (present in the table; their rows' tags
    ``source_tags``) as ``targets``: the rows moved to other positions of a relation with the
    same rows. O(len(sources)) expected."""
    mask = np.uint64(len(slots) - 1)
    for j in range(len(sources)):
        s = _slot_of(slots, shift, source_tags[j], sources[j], mask)
        slots[s] = (source_tags[j] << shift) | targets[j]


@exported("UniTuple(i8, 2)(i8[::1], i8, i8[:, :], i8, i8[:, ::1], i8[::1], i8, "
          "i8[:, ::1], i8, b1)", writes=("slots", "out"))
def _insert_new(slots, shift, columns, n, block, wanted, start, out, k, exact):
    """Append the rows ``start``, ... of ``block`` (whose tags are ``wanted``) that neither
    the first ``n`` rows of ``columns`` nor ``out[:, :k]`` hold to ``out``, putting their
    positions (``n + k``, ...) in the table, until the block ends or a new row finds the
    table half full; returns (the next row, k)."""
    mask = np.uint64(len(slots) - 1)
    low = (1 << shift) - 1
    limit = len(slots) // 2
    i = start
    while i < block.shape[1]:
        tag = wanted[i]
        s = _home(tag, mask)
        while True:
            if slots[s] == _EMPTY:
                if n + k >= limit:
                    return i, k  # a new row, and the table is half full: grow first
                slots[s] = (tag << shift) | (n + k)
                for c in range(block.shape[0]):
                    out[c, k] = block[c, i]
                k += 1
                break
            if slots[s] >> shift == tag and (exact or _same_row(slots[s] & low, columns, n,
                                                                 out, block, i)):
                break
            s = (s + np.uint64(1)) & mask
        i += 1
    return i, k


@exported("Tuple((i8[::1], i8))(i8[:, :], i8[::1], i8[::1], i8[::1], b1)")
def _row_tags(block, lows, highs, offsets, exact):
    """(the tag of each row of an (arity >= 1, m) block, how many rows do not fit). With
    ``exact`` (arity at most 3), the row's values packed into one int64: column c's offset
    from ``lows[c]`` at bit ``offsets[c]``, so that equal tags are equal rows; a row with a
    value outside ``lows[c] .. highs[c]`` gets ``_MISFIT`` (which no slot holds: it is found
    nowhere). Else the row's 64-bit hash's high 32 bits (``row_sets._hashes``). One loop per
    arity: a loop over the columns inside the lookup kernels made a lookup of TC's pairs 2.2x
    slower."""
    arity, m = block.shape
    tags = np.empty(m, dtype=np.int64)
    misfits = 0
    if exact and arity == 1:
        for i in range(m):
            a = block[0, i]
            if lows[0] <= a <= highs[0]:
                tags[i] = a - lows[0]
            else:
                tags[i] = _MISFIT
                misfits += 1
    elif exact and arity == 2:
        for i in range(m):
            a, b = block[0, i], block[1, i]
            if lows[0] <= a <= highs[0] and lows[1] <= b <= highs[1]:
                tags[i] = ((a - lows[0]) << offsets[0]) | (b - lows[1])
            else:
                tags[i] = _MISFIT
                misfits += 1
    elif exact:
        for i in range(m):
            a, b, c = block[0, i], block[1, i], block[2, i]
            if (lows[0] <= a <= highs[0] and lows[1] <= b <= highs[1]
                    and lows[2] <= c <= highs[2]):
                tags[i] = (((a - lows[0]) << offsets[0]) | ((b - lows[1]) << offsets[1])
                           | (c - lows[2]))
            else:
                tags[i] = _MISFIT
                misfits += 1
    else:
        hashes = _hashes(block)
        for i in range(m):
            tags[i] = np.int64(hashes[i] >> np.uint64(_HASH_TAG_SHIFT))
    return tags, misfits


_INT64 = np.iinfo(np.int64)
_NONE = np.zeros(0, dtype=np.int64)


class _Layout(NamedTuple):
    """How a table tags rows: exact (each column's values ``lows[c] .. highs[c]`` packed at
    bit ``offsets[c]``, in ``bits`` bits) or hashed (empty arrays, 32 bits)."""

    exact: bool
    bits: int
    lows: np.ndarray = _NONE
    highs: np.ndarray = _NONE
    offsets: np.ndarray = _NONE

    @staticmethod
    def of(rows: list[np.ndarray], shift: int) -> _Layout:
        """The layout of the rows of the (arity, n) arrays ``rows`` beside ``shift`` position
        bits: exact when the arity is at most 3 and the columns' ranges fit the bits left,
        with one more bit a column when that fits too (headroom: the range doubled, a quarter
        of it below the least value, so that most later rows fit with no re-layout); else
        hashed. Every column takes the range of all the columns' values when that fits, else
        its own: values are ids of one space, so a fresh id in a column of few (a predicate,
        a class: on RDFS over LUBM(1), each 1% insert re-laid out four tables of 18k-125k
        rows by their own ranges) most often lies in another column's. O(n)."""
        arity = rows[0].shape[0]
        if arity <= _MAX_EXACT_ARITY:
            held = [part for part in rows if part.shape[1]] or [np.zeros((arity, 1), np.int64)]
            least = [min(int(part[c].min()) for part in held) for c in range(arity)]
            most = [max(int(part[c].max()) for part in held) for c in range(arity)]
            shared = ([min(least)] * arity, [max(most) - min(least)] * arity)
            own = (least, [high - low for low, high in zip(least, most, strict=True)])
            for (lowest, spans), room in ((shared, 1), (shared, 0), (own, 1), (own, 0)):
                widths = [(2 * span + 1 if room else span).bit_length() for span in spans]
                if sum(widths) + shift <= _SLOT_BITS:
                    lows = [max(int(_INT64.min), low - ((1 << w) - 1 - span) // 4 * room)
                            for low, span, w in zip(lowest, spans, widths, strict=True)]
                    highs = [min(int(_INT64.max), low + (1 << w) - 1)
                             for low, w in zip(lows, widths, strict=True)]
                    offsets = [sum(widths[c + 1:]) for c in range(arity)]
                    return _Layout(True, sum(widths), *(np.array(v, dtype=np.int64)
                                                        for v in (lows, highs, offsets)))
        return _Layout(False, 64 - _HASH_TAG_SHIFT)

    def tags(self, block: np.ndarray) -> tuple[np.ndarray, int]:
        """``_row_tags`` of an (arity >= 1, m) block: (tags, how many rows misfit)."""
        return _row_tags(block, self.lows, self.highs, self.offsets, self.exact)


def _shift(size: int) -> int:
    """The position bits of a table of ``size`` slots (at most half full: positions below
    ``size / 2``)."""
    return size.bit_length() - 2


def _table(rows: int) -> np.ndarray:
    """An empty table for ``rows`` rows: as many slots as the least power of two at least
    twice as many (at least 16)."""
    if rows > _MAX_POSITIONS:
        raise EvaluationError(f"a relation of {rows} rows is past a row set's "
                              f"{_MAX_POSITIONS} positions")
    return np.full(1 << max(4, int(2 * rows - 1).bit_length()), _EMPTY, dtype=np.int64)


def _filled(slots: np.ndarray, layout: _Layout, *parts: np.ndarray) -> np.ndarray:
    """``slots`` (empty) holding the rows of ``parts`` (distinct (arity, n_i) arrays) at
    positions 0, 1, ... in order. O(rows) expected."""
    start = 0
    for part in parts:
        _add_positions(slots, _shift(len(slots)), layout.tags(part)[0], start)
        start += part.shape[1]
    return slots


class RelationSet:
    """A Relation and the hash table of its row positions (see the module doc)."""

    __slots__ = ("relation", "_layout", "_slots")

    def __init__(self, relation: Relation, slots: np.ndarray | None = None,
                 layout: _Layout | None = None):
        """Index ``relation`` (O(n) expected), or wrap it with ``slots`` already indexing it
        in ``layout``."""
        self.relation = relation
        if slots is None:
            slots = _table(len(relation))
            layout = _Layout.of([self._columns()], _shift(len(slots)))
            _filled(slots, layout, self._columns())
        self._slots, self._layout = slots, layout

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
        return self._slots.nbytes

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """The position of each row of an (arity, m) batch in the relation, -1 where absent.
        O(m) expected."""
        if not rows.shape[1] or not len(self.relation):
            return np.full(rows.shape[1], _EMPTY, dtype=np.int64)
        block = self._block(rows)
        wanted, _ = self._layout.tags(block)  # a row outside an exact layout: _MISFIT
        return _positions(self._slots, _shift(len(self._slots)), self._columns(), block, wanted,
                          self._layout.exact)

    def contains(self, rows: np.ndarray) -> np.ndarray:
        """Whether the relation holds each row of an (arity, m) batch. O(m) expected."""
        return self.positions(rows) != _EMPTY

    def insert(self, rows: np.ndarray) -> tuple[RelationSet, np.ndarray]:
        """``(grown, new)``: the RelationSet of the relation followed by the rows of the
        (arity, m) batch it does not hold (each once, in the batch's order), and those rows.
        Takes this set's table over (this RelationSet must not be used afterwards). One hash
        probe per row (a kernel that dedups and indexes at once): O(m) expected, plus the O(n)
        copy of the appended Relation (and an O(n) rebuild when the table doubles, or when a
        row falls outside an exact layout's ranges: a new layout of the old and new rows)."""
        block = self._block(rows)
        n, m = len(self.relation), block.shape[1]
        columns, slots, layout = self._columns(), self._slots, self._layout
        wanted, misfits = layout.tags(block)
        if misfits:
            layout = _Layout.of([columns, block], _shift(len(slots)))
            slots = _filled(np.full_like(slots, _EMPTY), layout, columns)
            wanted, _ = layout.tags(block)
        out = np.empty((block.shape[0], m), dtype=np.int64)
        i = k = 0
        while True:
            i, k = _insert_new(slots, _shift(len(slots)), columns, n, block, wanted, i, out, k,
                               layout.exact)
            if i == m:
                break
            slots = _table(len(slots))  # half full: double (one bit more of positions)
            if layout.bits + _shift(len(slots)) > _SLOT_BITS:
                layout = _Layout.of([columns, block], _shift(len(slots)))
                wanted, _ = layout.tags(block)
            _filled(slots, layout, columns[:, :n], out[:, :k])
        fresh = out[:, :k] if rows.shape[0] else out[:0, :k]
        if not k:
            self._slots, self._layout = slots, layout
            return self, fresh
        grown = RelationSet(self.relation.extend(Relation(fresh, unique=True)), slots, layout)
        self._slots = None  # handed over
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
            self._slots = None  # handed over (dropped)
            return (RelationSet(Relation(np.compress(keep, columns, axis=1), unique=True)),
                    np.compress(~keep, columns, axis=1))
        at = np.sort(at)
        at = at[np.concatenate(([True], at[1:] != at[:-1]))]  # distinct: O(m log m)
        size = n - len(at)
        tail_kept = np.ones(len(at), dtype=bool)  # positions size, ..., n - 1
        tail_kept[at[at >= size] - size] = False
        sources = size + np.flatnonzero(tail_kept)
        targets = at[:len(sources)]  # the freed positions below size, in order
        slots, layout, shift = self._slots, self._layout, _shift(len(self._slots))
        rows_of = self._columns()
        _delete_positions(slots, shift, at, layout.tags(rows_of[:, at])[0])
        if len(sources):
            _relink(slots, shift, sources, layout.tags(rows_of[:, sources])[0], targets)
            kept = np.empty((columns.shape[0], size), dtype=np.int64)
            kept[:] = columns[:, :size]
            kept[:, targets] = columns[:, sources]
        else:  # the last rows left (the last ones inserted, say): the others are a prefix
            kept = columns[:, :size]
        shrunk = RelationSet(Relation(kept, unique=True), slots, layout)
        self._slots = None  # handed over
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
