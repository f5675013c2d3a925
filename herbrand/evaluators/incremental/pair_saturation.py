"""The saturation rules of the backward/forward step that join a stratum atom with one lower
atom (``PairRule``), run natively to their fixpoint (``PairSaturation``).

A delta variant such as ``tc(x, z) :- @delta:tc(x, y), e(y, z)`` (the saturation of the
paper's forward closure of P inside C: ``backward_forward``) is, on a dense closure, most of a
delete's work: on TC over graph10000, a 1% delete derives 269k heads to prove 46k facts, 81%
of them proved already. Run by the rule evaluator, each derive round is a Python round with
a join, a C probe of the bag and a mask. A ``PairRule`` (``instance_rules``) is the rule's
shape as data (which columns join, where each head column comes from), and
``bf_kernels.saturate_pair`` runs it from a cursor into P's rows to the fixpoint in one call,
probing C in place. Every other saturation rule runs through the evaluator as before
(``backward_forward``), and the two take turns until neither proves a fact.

The lower relation is sorted on its join columns once per step (O(n log n), when the first
saturation needs it), and joined only through the rows that can derive a checked head. A head
is found in C through a grid (``HeadGrid``: its values from the source row by its values from
the lower row, each numbered once) while the grid holds at most ``HeadGrid.LIMIT`` cells;
then a lower row joins only when its values occur among C's heads, a source row only when its
values do, and a head costs one read of the grid, or, for a key of more lower rows than a
grid row has 64-bit words (its rows read through ``starts``), a word of the key's heads at a
time less those settled (proved or not checked: bits the kernel keeps, O(new C rows) per
call, and O(keys x words) when the rows joined change). Else through C's hash table, the
lower rows cut as ``near_heads`` cuts them once it pays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from herbrand.evaluators.incremental.bf_kernels import (
    NO_STARTS,
    lane_starts,
    saturate_pair,
    saturate_pair_on_grid,
)
from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.instance_rules import PairRule
from herbrand.evaluators.incremental.near_heads import CutRows
from herbrand.evaluators.row_sets import RowSet
from herbrand.framework.storage import Database, Relation

NO_BITS = np.zeros((0, 0), dtype=np.int64)  # no bit rows: the grid kernel reads every head
NO_MAP = np.zeros(0, dtype=np.int64)  # no map by value: the grid kernel probes xs' table


def _int64(values: Sequence[int]) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


class HeadGrid:
    """The checked facts of a PairRule's head relation as a grid: the values of a head's
    columns from the source row (``source_part``) and from the lower row (``lower_part``),
    each numbered by a set of the distinct ones (``xs``, ``zs``; ``x_of``: xs' numbers by
    value, -1 for none, kept by ``x_map`` for a source part of one column), and per (x, z)
    cell the fact's position in C, -1 where none (``cells``, rows of ``width``), with a bit
    per cell (``settled``: rows of ``words``, kept by the grid kernel, which has cleared the
    bits of C's first ``settled_to`` facts). Grown as C grows (``sync``); O(new C rows) expected,
    O(cells + C) when it doubles."""

    LIMIT = 1 << 21  # cells (8 bytes each): a larger grid is not made, C's hash table serves
    MAP_SLACK = 1 << 12  # values of ``x_of`` beyond the cells' count (8 bytes each)
    MAP_ROWS = 1 << 10  # source rows a grid kernel call reads at least to use ``x_of``

    def __init__(self, pair: PairRule):
        self.source_part = [h for h, c in enumerate(pair.head_of) if c >= 0]
        self.lower_part = [h for h, c in enumerate(pair.head_of) if c < 0]
        self.xs = RowSet(np.zeros((len(self.source_part), 0), dtype=np.int64))
        self.x_of = NO_MAP
        self._mapped = len(self.source_part) == 1  # whether ``x_of`` is kept
        self._x_mapped = 0  # the xs in ``x_of``
        self.zs = RowSet(np.zeros((len(self.lower_part), 0), dtype=np.int64))
        self.cells = np.zeros(0, dtype=np.int64)
        self.width = 0
        # 64-bit words of a row of ``settled``, one bit per cell of a row (none before cells)
        self.words = 0
        self.settled = NO_BITS
        self.settled_to = 0
        self._synced = 0  # C's rows in the grid
        # the grid row and column of each of those facts (its numbers in xs and zs)
        self.cells_x = self.cells_z = np.zeros(0, dtype=np.int64)

    @classmethod
    def of(cls, pair: PairRule) -> HeadGrid | None:
        """The grid of ``pair``, or None when all its head columns come from one atom."""
        return cls(pair) if 0 < sum(c >= 0 for c in pair.head_of) < len(pair.head_of) else None

    def sync(self, head: CheckedFacts) -> bool:
        """Add C's rows checked since the last call; False when the grid would pass
        ``LIMIT`` cells (it is then not to be used again: C only grows)."""
        checked = head.checked_rows()
        new = checked[:, self._synced:]
        self.cells_x = np.concatenate([self.cells_x, self.xs.intern(new[self.source_part])])
        self.cells_z = np.concatenate([self.cells_z, self.zs.intern(new[self.lower_part])])
        start, width = self._synced, self.width
        if len(self.zs) > width or len(self.xs) * width > len(self.cells):
            width = max(16, 2 * len(self.zs)) if len(self.zs) > width else width
            size = max(16, 2 * len(self.xs)) * width
            if size > self.LIMIT:
                return False
            self.cells, self.width, start = np.full(size, -1, dtype=np.int64), width, 0
            self.words = width // 64 + 1
            self.settled = np.empty((size // width, self.words), dtype=np.int64)
            self.settled_to = 0
        self.cells[self.cells_x[start:] * width + self.cells_z[start:]] = np.arange(
            start, checked.shape[1], dtype=np.int64)
        self._synced = checked.shape[1]
        return True

    def x_map(self, rows: int) -> np.ndarray:
        """``x_of`` with every x numbered so far, for a grid kernel call that reads ``rows``
        source rows, at least ``MAP_ROWS``; else ``NO_MAP`` (the kernel probes xs' table:
        for a few rows, cheaper than the map's upkeep; Andersen over 1,000 variables makes
        212 grid calls per 1% delete, most of a few rows). Gives the map up for good at a
        value negative or not below the cells plus ``MAP_SLACK``. O(xs numbered since the
        last map), O(largest value) when it grows."""
        if not self._mapped or rows < self.MAP_ROWS:
            return NO_MAP
        if len(self.xs) > self._x_mapped:
            values = self.xs.rows()[0, self._x_mapped:]
            largest = int(values.max())
            if values.min() < 0 or largest >= len(self.cells) + self.MAP_SLACK:
                self._mapped, self.x_of = False, NO_MAP
                return NO_MAP
            if largest >= len(self.x_of):
                grown = np.full(max(2 * len(self.x_of), largest + 1), -1, dtype=np.int64)
                grown[:len(self.x_of)] = self.x_of
                self.x_of = grown
            self.x_of[values] = np.arange(self._x_mapped, len(self.xs), dtype=np.int64)
            self._x_mapped = len(self.xs)
        return self.x_of


class SortedLower:
    """A PairRule's lower relation sorted on its join columns, and the rows of it that are
    joined (``rows``, ``keys``, ``starts``: the keys' ``lane_starts`` if one; ``lower_part``:
    their numbers in a grid's ``zs``): all, or those that can derive a checked head, in the
    same order."""

    # words of the successors' bits at most (1 MB; filled when the rows joined change)
    SUCCESSORS = 1 << 17

    def __init__(self, pair: PairRule, relation: Relation):
        columns = relation.columns
        # the order among rows of one key does not matter: one key column takes numpy's
        # unstable sort (9,206 edges of graph10000: 0.07 ms, 0.35 as lexsort's stable one)
        order = (np.argsort(columns[pair.lower_key[0]]) if len(pair.lower_key) == 1
                 else np.lexsort(columns[list(pair.lower_key)][::-1]))
        self._sorted = np.ascontiguousarray(columns[:, order])
        self._key = list(pair.lower_key)
        self._part = [-c - 1 for c in pair.head_of if c < 0]  # lower columns in the head
        self._cut_columns = tuple((-c - 1, h) for h, c in enumerate(pair.head_of) if c < 0)
        self._cut: CutRows | None = None
        self._taken: tuple | None = None  # what the rows were taken by
        self.lower_part = np.zeros(0, dtype=np.int64)
        self._successors = NO_BITS
        self._decided: tuple | None = None  # the rows taken and words of ``_successors``
        self._take(("all",), None)

    def _take(self, by: tuple, mask: np.ndarray | None) -> None:
        """Join the rows of ``mask`` (None: all), unless taken ``by`` the same already."""
        if by != self._taken:
            self._taken = by
            self.rows = (self._sorted if mask is None
                         else np.ascontiguousarray(self._sorted[:, mask]))
            self.keys = np.ascontiguousarray(self.rows[self._key])
            self.starts = lane_starts(self.keys[0]) if len(self._key) == 1 else NO_STARTS

    def number(self, grid: HeadGrid) -> None:
        """Join the rows whose values in the head occur among C's (``grid``), numbered by
        its ``zs``. O(n) expected when those grew, else O(1)."""
        if self._taken != ("grid", len(grid.zs)):
            numbers = grid.zs.positions(self._sorted[self._part])
            kept = numbers >= 0
            self._take(("grid", len(grid.zs)), kept)
            self.lower_part = np.ascontiguousarray(numbers[kept])

    def successors(self, words: int) -> tuple[np.ndarray, bool]:
        """``(bits, fill)``: room for the bits of the heads of each key value's rows (rows of
        ``words``, one per value up to the largest), and whether the grid kernel is to fill
        them (the rows taken or the words changed since), when the rows are read through
        ``starts``, a key has more rows than ``words`` on average (else a key's rows are
        read one by one anyway: Andersen over 1,000 variables, about 1 row per key for 10
        words, 200 calls per 1% delete) and that is at most ``SUCCESSORS`` words; else
        ``NO_BITS``. O(1), or O(keys) when the rows were taken."""
        if self._decided is not None and self._decided[0] is self._taken \
                and self._decided[1] == words:
            return self._successors, False
        self._decided = (self._taken, words)
        rows = len(self.starts) - 1
        keys = np.count_nonzero(np.diff(self.starts)) if rows > 0 else 0
        if (rows <= 0 or not words or rows * words > self.SUCCESSORS
                or self.rows.shape[1] <= words * keys):
            self._successors = NO_BITS
        elif self._successors.shape != (rows, words):
            self._successors = np.empty((rows, words), dtype=np.int64)
        return self._successors, bool(self._successors.shape[1])

    def admit(self, head: CheckedFacts) -> None:
        """Join the rows that can derive a head in C (the cut of ``near_heads``) once there
        are no more of them than checked heads (C only grows, so the cut then stays), else
        all. O(new C rows + rows admitted), O(n) when the cut grows, O(n log n) once."""
        if self._cut is None:
            if not self._cut_columns or self._sorted.shape[1] > head.checked_count:
                self._take(("all",), None)
                return
            self._cut = CutRows(Relation(self._sorted, unique=True), self._cut_columns)
        self._cut.admit(head.checked_rows())
        self._take(("cut", int(np.count_nonzero(self._cut.taken))), self._cut.taken)


class PairSaturation:
    """The PairRules of one step over the lower relations of ``lower``, each with its cursor
    into P's rows of its source (the proved facts it has read)."""

    def __init__(self, pairs: Sequence[PairRule], lower: Database):
        self._pairs = tuple(pairs)
        self._lower = lower
        self._sorted: list[SortedLower | None] = [None] * len(self._pairs)
        self._grids = [HeadGrid.of(pair) for pair in self._pairs]
        # per pair, the kernels' (source_key, head_of, the head_of of its grid's source part),
        # made once (Andersen over 1,000 variables: 212 grid calls per 1% delete)
        self._columns = [(_int64(pair.source_key), _int64(pair.head_of),
                          _int64([pair.head_of[h] for h in grid.source_part] if grid else ()))
                         for pair, grid in zip(self._pairs, self._grids, strict=True)]
        self._read = [0] * len(self._pairs)

    def __bool__(self) -> bool:
        return bool(self._pairs)

    def saturate(self, facts: Mapping[str, CheckedFacts]) -> None:
        """Run every PairRule from its cursor to the end of its source's P, again while one
        proves a fact: the fixpoint of the PairRules over ``facts`` (C and P by relation).
        O(per proved fact and rule, log n plus one probe per lower row joined)."""
        while True:
            proved = False
            for number, pair in enumerate(self._pairs):
                source = facts[pair.source]
                if self._read[number] == source.proved_count:
                    continue
                head = facts[pair.head]
                before = head.proved_count
                self._read[number] = self._run(number, pair, source, head)
                proved |= head.proved_count > before
            if not proved:
                return

    def _run(self, number: int, pair: PairRule, source: CheckedFacts,
             head: CheckedFacts) -> int:
        """Run ``pair`` from its cursor (``bf_kernels``); where it read ``source``'s P to."""
        lower = self._sorted[number]
        if lower is None:
            lower = self._sorted[number] = SortedLower(pair, self._lower[pair.lower])
        grid = self._grids[number]
        source_key, head_of, source_part = self._columns[number]
        if grid is not None and not grid.sync(head):
            grid = self._grids[number] = None
        if grid is None:
            lower.admit(head)
            return head.prove_forwards(source, self._read[number], saturate_pair, (
                lower.rows, lower.keys, lower.starts, source_key, head_of, *head.table()))
        lower.number(grid)
        successors, fill = lower.successors(grid.words)
        settled, settled_from = grid.settled if successors.shape[1] else NO_BITS, grid.settled_to
        if successors.shape[1]:
            grid.settled_to = len(grid.cells_x)
        return head.prove_forwards(source, self._read[number], saturate_pair_on_grid, (
            lower.rows, lower.keys, lower.starts, lower.lower_part, source_key, head_of,
            source_part, *grid.xs.table(),
            grid.x_map(source.proved_count - self._read[number]), grid.cells, grid.width,
            grid.cells_x, grid.cells_z, successors, fill, settled, settled_from, head.table()[1]))
