"""Set changes of relations, shared by the incremental engines.

An update is a pair of batches per input relation (deletes, then inserts); what an engine
returns is, per changed relation, the rows of new minus old and of old minus new. These helpers
compute both with the vectorised set algebra of ``Relation`` (O((n + m) log(n + m)) each) and
never loop over rows in Python.

    >>> import numpy as np
    >>> old = Relation.from_rows([(1,), (2,)])
    >>> new, added, removed = apply_update(old, np.array([[2, 3]]), np.array([[3, 4]]))
    >>> sorted(new.to_rows()), added.to_rows(), removed.to_rows()
    ([(1,), (3,), (4,)], [(3,), (4,)], [(2,)])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from herbrand.evaluators.incremental.relation_sets import RelationSets, hashed_changes
from herbrand.framework.contracts import Batch, BatchChanges
from herbrand.framework.errors import EvaluationError
from herbrand.framework.storage import Database, Relation, row_keys
from herbrand.indexes.runs import RowCodec

RESERVED_PREFIX = "@"  # relation names engines use internally; never a user relation


def _keys(big: np.ndarray, small: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal int64 keys exactly for equal rows: the rows packed into one int64 when their
    values fit (``RowCodec``), else joint dense ranks. O(n) packed, O(n log n) otherwise."""
    codec = RowCodec(big.shape[0], tuple(range(big.shape[0])))
    if big.shape[0] == 1:
        return big[0], small[0]
    if codec.width and codec.fits(big).all() and codec.fits(small).all():
        return codec.pack(big).view(np.int64), codec.pack(small).view(np.int64)
    mine, theirs = row_keys(big, small)
    return mine, theirs


def membership(big: Relation, small: Relation) -> tuple[np.ndarray, np.ndarray]:
    """``(rows of big in small, rows of small in big)`` as boolean masks, for a small
    ``small``: O(n log m) searches of big's keys among small's sorted keys (plus O(n) to pack
    big's rows), not a sort of big."""
    if not len(big) or not len(small):
        return np.zeros(len(big), dtype=bool), np.zeros(len(small), dtype=bool)
    big_keys, small_keys = _keys(big.columns, small.columns)
    order = np.argsort(small_keys, kind="stable")
    ordered = small_keys[order]
    slots = np.minimum(np.searchsorted(ordered, big_keys), len(ordered) - 1)
    in_small = ordered[slots] == big_keys
    in_big = np.zeros(len(small), dtype=bool)
    in_big[order[slots[in_small]]] = True
    return in_small, in_big


def without(relation: Relation, rows: Relation) -> Relation:
    """The rows of ``relation`` not in ``rows`` (a small set), in order. O(n log m)."""
    if not len(rows) or not len(relation):
        return relation
    in_rows, _ = membership(relation, rows)
    if not in_rows.any():
        return relation
    return Relation(relation.columns[:, ~in_rows], unique=True)


def apply_update(
    old: Relation, delete: Batch | None, insert: Batch | None
) -> tuple[Relation, Relation, Relation]:
    """``(new, added, removed)`` for one relation: ``new = (old - delete) | insert`` (deletes
    first), ``added = new - old`` and ``removed = old - new``. Absent deletes and present
    inserts are no-ops. O(n log m) for n old rows and m given rows (``membership``)."""
    arity = old.arity
    deleted = Relation(delete) if delete is not None else Relation.empty(arity)
    inserted = Relation(insert) if insert is not None else Relation.empty(arity)
    removed = Relation(deleted.columns[:, membership(old, deleted)[1]], unique=True)
    removed = without(removed, inserted)
    added = Relation(inserted.columns[:, ~membership(old, inserted)[1]], unique=True)
    if not len(added) and not len(removed):
        return old, added, removed
    return without(old, removed).extend(added), added, removed


def require_inputs(names: Iterable[str], inputs: Iterable[str]) -> None:
    """Raise EvaluationError naming the first of ``names`` that is not an input relation."""
    allowed = set(inputs)
    for name in sorted(set(names) - allowed):
        raise EvaluationError(f"relation {name} is not an input relation of the program; "
                              "only input relations may be updated")


def apply_kept_update(
    sets: RelationSets, name: str, old: Relation, delete: Batch | None, insert: Batch | None
) -> tuple[Relation, Relation, Relation]:
    """``apply_update`` through the RelationSet of ``old`` kept in ``sets`` under ``name``
    (built on a miss), the set of the new relation put back: membership is a hash probe per
    given row. O(m) expected for m given rows, plus the O(n) copy of the new relation when it
    changed."""
    kept = sets.take(name, old)
    deleted = Relation(delete) if delete is not None else Relation.empty(old.arity)
    inserted = Relation(insert) if insert is not None else Relation.empty(old.arity)
    held = kept.contains(deleted.columns)
    candidates = Relation(deleted.columns[:, held], unique=True)
    gone = ~membership(candidates, inserted)[0]
    removed = Relation(candidates.columns[:, gone], unique=True)
    added = Relation(inserted.columns[:, ~kept.contains(inserted.columns)], unique=True)
    kept, _ = kept.remove(removed.columns)
    kept, _ = kept.insert(added.columns)
    sets.put(name, kept)
    return kept.relation, added, removed


def apply_updates(
    database: Database, insert: Mapping[str, Batch], delete: Mapping[str, Batch],
    sets: RelationSets | None = None,
) -> tuple[Database, dict[str, Relation], dict[str, Relation]]:
    """``apply_update`` on every relation named by ``insert`` or ``delete``: the new database
    and, for each relation whose rows changed, its added and removed rows. With ``sets``, each
    updated relation's RelationSet is taken from it (built on a miss) and the grown one put
    back, so an update costs O(m) expected plus the copy of what changed, not O(n log n)."""
    added: dict[str, Relation] = {}
    removed: dict[str, Relation] = {}
    changed = {}
    for name in insert.keys() | delete.keys():
        if sets is None:
            relation, plus, minus = apply_update(database[name], delete.get(name),
                                                 insert.get(name))
        else:
            relation, plus, minus = apply_kept_update(sets, name, database[name],
                                                      delete.get(name), insert.get(name))
        if len(plus) or len(minus):
            changed[name], added[name], removed[name] = relation, plus, minus
    return (database.with_relations(changed) if changed else database), added, removed


def database_changes(old: Database, new: Database, names: Iterable[str]) -> BatchChanges:
    """``relation -> (added, removed)`` batches for each of ``names`` whose rows differ between
    the two databases. O(total size) expected for the relations compared."""
    changes: BatchChanges = {}
    for name in names:
        added, removed = hashed_changes(old[name], new[name])
        if len(added) or len(removed):
            changes[name] = (added.columns, removed.columns)
    return changes


def as_batch_changes(added: Mapping[str, Relation], removed: Mapping[str, Relation]) -> BatchChanges:
    """The engine contract's result from per-relation added and removed Relations (relations
    whose both sides are empty are left out). O(relations)."""
    changes: BatchChanges = {}
    for name in added.keys() | removed.keys():
        plus, minus = added.get(name), removed.get(name)
        arity = (plus if plus is not None else minus).arity
        plus = plus if plus is not None else Relation.empty(arity)
        minus = minus if minus is not None else Relation.empty(arity)
        if len(plus) or len(minus):
            changes[name] = (plus.columns, minus.columns)
    return changes


def visible(database: Database) -> Database:
    """``database`` without the engine-internal relations (names starting with '@')."""
    return Database({name: relation for name, relation in database.items()
                     if not name.startswith(RESERVED_PREFIX)}, database.symbols, database.types,
                    database.attributes)
