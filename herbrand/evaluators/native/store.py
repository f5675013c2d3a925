"""``NativeStore``: the relations and indexes the native kernels read and grow.

Relations are (capacity, arity) int64 buffers (row-major) that grow in place by doubling, each with a dedup
table (a unique hash index on every column) that head tuples are inserted through; probe
indexes are hash indexes on chosen key columns, caught up with the rows appended since they
were last used. Everything lives in the arrays and typed lists of ``kernels`` (their layout is
documented there); this class names relations, creates indexes once per (relation, key), and
turns buffers back into Relations.
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native import kernels as k
from herbrand.framework.storage import Relation


def _table_size(rows: int) -> int:
    """The slots of a hash table for ``rows`` keys: a power of two, at least twice as many."""
    return 1 << max(4, int(2 * rows).bit_length())


class NativeStore:
    """Named relations and their indexes. Not safe for concurrent use (kernels grow it)."""

    def __init__(self) -> None:
        self.rows, self.ix_slots, self.ix_next = k.new_store()
        self.rel_meta = np.zeros((16, k.REL_FIELDS), dtype=np.int64)
        self.ix_meta = np.zeros((16, k.IX_FIELDS), dtype=np.int64)
        self.ix_cols = np.zeros(64, dtype=np.int64)
        self.ids: dict[str, int] = {}
        self.dedup: list[int] = []
        self._indexes: dict[tuple[int, tuple[int, ...]], int] = {}
        self._columns = 0
        self._index_count = 0
        self.sources: dict[str, Relation] = {}  # the Relation each named relation was loaded from

    @property
    def count(self) -> int:
        """The number of relations."""
        return len(self.dedup)

    # -- relations -------------------------------------------------------------------------------

    def add(self, name: str, relation: Relation) -> int:
        """Load ``relation`` as the relation ``name`` (a new id); its dedup table is built.
        O(n) expected."""
        rel = self.count
        n, arity = len(relation), relation.arity
        buffer = np.empty((max(16, n), arity), dtype=np.int64)
        buffer[:n] = relation.columns.T
        if rel >= len(self.rel_meta):
            self.rel_meta = np.concatenate([self.rel_meta, np.zeros_like(self.rel_meta)])
        dedup = self._describe_index(rel, tuple(range(arity)), unique=True)
        k.add_relation(*self.arguments(), rel, buffer, n, dedup, _empty_table(n))
        self.ids[name] = rel
        self.sources[name] = relation
        self.dedup.append(dedup)
        return rel

    def empty(self, name: str, arity: int) -> int:
        """A new empty relation ``name`` of ``arity``."""
        return self.add(name, Relation.empty(arity))

    def size(self, rel: int) -> int:
        return int(self.rel_meta[rel, k.R_SIZE])

    def relation(self, rel: int) -> Relation:
        """Relation ``rel``'s rows as a Relation (a copy, in insertion order). O(n)."""
        return Relation(self.rows_since(rel, 0), unique=True)

    def rows_since(self, rel: int, start: int) -> np.ndarray:
        """The (arity, m) columns of the rows of ``rel`` appended at or after row ``start`` (a
        copy). O(m)."""
        buffer = k.relation_rows(self.rows, rel)
        return np.ascontiguousarray(buffer[start:self.size(rel)].T)

    def insert(self, rel: int, block: np.ndarray) -> int:
        """Insert an (arity, m) block into ``rel`` (deduplicated); the number of new rows."""
        block = np.ascontiguousarray(block, dtype=np.int64)
        return int(k.insert_block(*self.arguments(), rel, self.dedup[rel], block))

    # -- indexes ---------------------------------------------------------------------------------

    def index(self, rel: int, key: tuple[int, ...]) -> int:
        """The id of the probe index of ``rel`` keyed on ``key`` (created empty when new; the
        kernels catch it up before each use)."""
        found = self._indexes.get((rel, key))
        if found is None:
            found = self._describe_index(rel, key, unique=False)
            k.add_index(self.ix_slots, self.ix_next, self.ix_meta, found,
                        _empty_table(self.size(rel)))
            self._indexes[(rel, key)] = found
        return found

    def _describe_index(self, rel: int, key: tuple[int, ...], unique: bool) -> int:
        """A new index id, its relation, key columns and kind in ``ix_meta`` (the kernels make
        its table)."""
        ix = self._index_count
        self._index_count += 1
        if ix >= len(self.ix_meta):
            self.ix_meta = np.concatenate([self.ix_meta, np.zeros_like(self.ix_meta)])
        while self._columns + len(key) > len(self.ix_cols):
            self.ix_cols = np.concatenate([self.ix_cols, np.zeros_like(self.ix_cols)])
        self.ix_cols[self._columns:self._columns + len(key)] = key
        self.ix_meta[ix, :k.IX_SLOTS] = (rel, self._columns, len(key), 0, 0, int(unique))
        self._columns += len(key)
        return ix

    def drop_dedup(self, rel: int) -> None:
        """Free ``rel``'s dedup table (its rows will not change any more); the next insert
        into ``rel`` rebuilds it (the kernels catch a dedup table up before inserting)."""
        k.add_index(self.ix_slots, self.ix_next, self.ix_meta, self.dedup[rel], _empty_table(0))

    # -- kernels' arguments ----------------------------------------------------------------------

    def arguments(self) -> tuple:
        """The storage arguments every kernel takes, in order."""
        return (self.rows, self.ix_slots, self.ix_next, self.rel_meta, self.ix_meta,
                self.ix_cols)


def _empty_table(rows: int) -> np.ndarray:
    return np.full(_table_size(rows), k.EMPTY, dtype=np.int64)
