"""The relational rule evaluator: each rule's relational-algebra plan run over numpy batches.

Each rule is translated once (``translators.translate_rule``, with the instance's relation sizes
as the join-ordering hint) and its symbol constants encoded with the instance's SymbolTable; the
plan is then run bottom-up, every node producing an (arity, n) int64 batch, column i at
``batch[i]`` (the layout of ``Relation.columns``). No Python loop runs per row:

- Scan: the relation's columns; SelectByValue, SelectByColumns, Filter: boolean masks.
- Map: a computed column (``vector_arithmetic``: the arithmetic of the substitution evaluator,
  vectorised: 64-bit wrap, ``/`` truncating toward zero, ``%`` with the dividend's sign, a
  division by zero or a negative exponent drops the row).
- Product: ``np.repeat`` / ``np.tile``.
- Join: when the right child is a plain Scan, a probe of an IndexBacking (the ``index``
  hyperparameter, a name of ``herbrand.framework.registry.INDEXES``) built on that relation and
  keyed on the join's right keys. Indexes are kept across ``evaluate`` calls by (relation name,
  key); when the relation grew by a union (its old rows are a prefix of the new ones, as
  ``Relation.union`` guarantees) only the new rows are inserted, otherwise the index is rebuilt.
  Other joins are sort-based: the right keys are sorted and the left keys searched; so is
  a join into a relation the caller marks transient (read by one call) from a much smaller
  side, the other way round: the small side sorted, the relation's rows searching it.
- Antijoin: a probe of the right relation's kept index when its keys are all of its columns
  (at most one match per row), else ``row_keys`` + ``np.isin``.
- Aggregate: groups by ``np.unique`` and reductions by ``np.add.reduceat`` /
  ``np.minimum.reduceat`` / ``np.maximum.reduceat`` / counts, then a search of each child row's
  key among the groups. Union: concatenation. Project: columns and constants.

Intermediate batches may hold duplicate rows (a Project or a Union does not deduplicate); a set is
only needed below an Aggregate (its body is deduplicated) and for the result (a Relation).

Not safe for concurrent use of one instance (the index cache is shared state).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from herbrand.evaluators.batch_joins import (
    EMPTY_POSITIONS,
    TRANSIENT_RATIO,
    columns_at,
    dedup,
    empty_batch,
    key_block,
    sort_join,
)
from herbrand.evaluators.vector_arithmetic import vector_compare, vector_value
from herbrand.framework.contracts import EvaluatorTags, IndexBacking, RuleEvaluator
from herbrand.framework.errors import ArityError, EvaluationError
from herbrand.framework.growing import extends, prefix_view
from herbrand.framework.registry import INDEXES
from herbrand.framework.storage import Database, Relation, row_keys
from herbrand.framework.syntax import Const, Rule
from herbrand.translators import ir
from herbrand.translators.encode_symbols import encode_symbols
from herbrand.translators.pipeline import translate_rule

# ---------------------------------------------------------------------------------------------
# The evaluator
# ---------------------------------------------------------------------------------------------


class _IndexEntry:
    """An index of the rows ``columns``; ``extended``: None, or a block of more rows that
    starts with ``columns``' (told by ``relation_extended``: no comparison needed)."""

    __slots__ = ("columns", "extended", "index")

    def __init__(self, columns: np.ndarray, index: IndexBacking):
        self.columns = columns
        self.index = index
        self.extended: np.ndarray | None = None


class RelationalEvaluator(RuleEvaluator):
    """Runs each rule's relational-algebra plan over numpy column batches, joining through
    IndexBackings of the class registered as ``index``.

    Cost per rule: the plan's operators, each vectorised: selections and maps O(n); a product
    O(n·m); an index join O(index insert of new rows + probe); a sort-based join, antijoin or
    aggregate O((n + m) log(n + m) + output). Plans are translated once per rule (and per
    SymbolTable).
    """

    tags = EvaluatorTags(negation=True, arithmetic=True, aggregates=True, uses_index=True)

    def __init__(self, index: str = "sorted_vector"):
        self.index = index
        self._index_class = INDEXES.get(index)
        self._plans: dict[Rule, ir.Plan] = {}
        # the plans of the rule objects seen last, by identity: hashing a rule walks its
        # terms, on every application (bounded: engines make fresh equal rules per update)
        self._by_identity: dict[int, tuple[Rule, ir.Plan]] = {}
        self._symbols = None
        self._indexes: dict[tuple[str, tuple[int, ...]], _IndexEntry] = {}

    # -- public ----------------------------------------------------------------------------------

    def evaluate(self, rules: Sequence[Rule], instance: Database) -> dict[str, Relation]:
        """Every head row derivable by one application of ``rules`` to ``instance``, by head
        relation (a relation with no derivation maps to an empty Relation).

        Raises the translator's errors for a rule that cannot be lowered (unsafe), EvaluationError
        naming the rule for a relation missing from the instance, ArityError for an atom whose
        arity differs from its relation's.
        """
        return {name: Relation(batch) for name, batch in self.derivations(rules, instance).items()}

    def derive(self, rules: Sequence[Rule], instance: Database) -> dict[str, np.ndarray]:
        """The bag of ``derivations``: one row per derivation, no deduplication."""
        return self.derivations(rules, instance)

    def derivations(self, rules: Sequence[Rule], instance: Database,
                    transient: Collection[str] = frozenset()) -> dict[str, np.ndarray]:
        """The bag of head rows of one application of ``rules`` to ``instance``, by head
        relation: an (arity, n) batch with one row per derivation (per rule and per assignment
        of its body variables), so a row derived k ways occurs k times. Incremental engines
        that count derivations read this; ``evaluate`` is its set. Raises as ``evaluate``.

        ``transient``: relations this call reads once (the caller replaces them at the
        next): an index join into one of them whose other side is at least
        ``TRANSIENT_RATIO`` times smaller builds no index of it; the small side is sorted
        and the relation's rows search it in their order (``sort_join``: O(m log m +
        n log m) for n rows and m of the other side, where an index costs a sort of n), so
        the derivations of that join come in the relation's order.
        """
        self._use_symbols(instance)
        derived: dict[str, list[np.ndarray]] = {}
        arities: dict[str, int] = {}
        for rule in rules:
            name = rule.head.relation
            if arities.setdefault(name, rule.head.arity) != rule.head.arity:
                raise ArityError(f"rule {rule}: head arity differs from another rule's for {name}")
            plan = self._plan(rule, instance)
            derived.setdefault(name, []).append(_Run(self, instance, rule, transient).rows(plan))
        return {name: np.concatenate(batches, axis=1) if len(batches) > 1 else batches[0]
                for name, batches in derived.items()}

    def prepare(self, rules: Sequence[Rule], instance: Database) -> None:
        """Translate ``rules`` and build every index their plans probe over ``instance`` (the
        relations it holds, non-empty): what the first ``derive`` of them over it would build
        before its first probe, done ahead (an incremental engine's Bootstrap, so that its
        first update pays only its probes). Derives nothing. Cost: the translations, plus
        O(n log n) per index not kept yet."""
        self._use_symbols(instance)
        for rule in rules:
            for node, _ in ir.walk(self._plan(rule, instance)):
                if not (isinstance(node, ir.Join) and _Run._probes_index(node)
                        or isinstance(node, ir.Antijoin) and _Run._probes_whole_rows(node)):
                    continue
                relation = instance.get(node.right.relation)
                if relation is not None and len(relation):
                    self.relation_index(node.right.relation, relation, tuple(node.right_keys))

    def _use_symbols(self, instance: Database) -> None:
        """Drop the plans made for another SymbolTable than ``instance``'s."""
        if instance.symbols is not self._symbols:
            self._plans.clear()
            self._by_identity.clear()
            self._symbols = instance.symbols

    def _plan(self, rule: Rule, instance: Database) -> ir.Plan:
        """The rule's plan: kept by identity, else by equality, else translated (with the
        instance's relation sizes as the join-ordering hint) and kept."""
        kept = self._by_identity.get(id(rule))
        if kept is not None and kept[0] is rule:
            return kept[1]
        plan = self._plans.get(rule)
        if plan is None:
            plan = self._plans[rule] = self._translated(rule, instance)
        if len(self._by_identity) > 4 * len(self._plans) + 64:
            self._by_identity.clear()
        self._by_identity[id(rule)] = (rule, plan)
        return plan

    def _translated(self, rule: Rule, instance: Database) -> ir.Plan:
        """The rule translated now, the instance's relation sizes as the join-ordering hint."""
        return encode_symbols(translate_rule(rule, sizes=instance.sizes()), instance.symbols)

    def clear(self) -> None:
        """Drop the cached plans and indexes."""
        self._plans.clear()
        self._by_identity.clear()
        self._indexes.clear()
        self._symbols = None

    # -- indexes ---------------------------------------------------------------------------------

    def relation_changed(self, name: str, before: Relation, after: Relation,
                         removed: np.ndarray, added: np.ndarray) -> None:
        """Tell the kept indexes of ``before`` (named ``name``) that ``after`` holds its rows
        without ``removed`` and with ``added`` (both (arity, m) batches of rows it did not /
        did hold; the order of rows may differ): each such index that supports deletes
        takes the change and is kept for ``after``, so its next use costs the index's delete
        and insert of m rows instead of a rebuild (O(n log n) for sorted_vector); the others
        are dropped. Indexes of other relations are left alone. O(indexes kept) plus those
        index operations."""
        for slot, entry in list(self._indexes.items()):
            if slot[0] != name:
                continue
            if (entry.extended is before.columns and not added.shape[1]
                    and after.columns.shape[1] == entry.columns.shape[1]
                    and prefix_view(before.columns, after.columns)):
                # the rows ``before`` gained since the index was made left again (``after``
                # is the first rows of ``before``'s memory): the index holds ``after``'s rows
                entry.columns, entry.extended = after.columns, None
                continue
            if entry.columns is not before.columns:
                continue
            if not entry.index.tags.supports_delete:
                del self._indexes[slot]
                continue
            if removed.shape[1]:
                entry.index.delete(removed)
            if added.shape[1]:
                entry.index.insert_new(added)  # rows ``before`` did not hold
            # ``after`` is no prefix of an extension of ``before``: forget what was told
            entry.columns, entry.extended = after.columns, None

    def relation_extended(self, name: str, before: Relation, after: Relation) -> None:
        """Tell the kept indexes of ``before`` (named ``name``; or of rows ``before`` extends,
        as told here) that ``after``'s rows are ``before``'s followed by others (a fixpoint
        appending what it derived): an index of ``before`` then takes ``after``'s other rows
        when first used on it, without comparing the rows they share (O(n) each otherwise),
        and a delete of those rows again (``relation_changed``: ``after`` a prefix of the
        same memory, as ``RelationSet.remove`` leaves) costs the index nothing. On RDFS over
        LUBM(1), a 1% delete after a 1% insert compared the rows of two indexes of ``m``:
        0.9 ms. Nothing is inserted now. O(indexes kept)."""
        for slot, entry in self._indexes.items():
            if slot[0] == name and (entry.columns is before.columns
                                    or entry.extended is before.columns):
                entry.extended = after.columns

    def relation_index(self, name: str, relation: Relation, key: tuple[int, ...]) -> IndexBacking:
        """An index of ``relation`` (named ``name``) keyed on ``key``, kept up to date across
        calls: O(1) for the same relation, O(new rows) after a union, O(n) otherwise."""
        columns = relation.columns
        entry = self._indexes.get((name, key))
        if entry is not None and entry.columns is columns:
            return entry.index
        if entry is not None and (entry.extended is columns or extends(columns, entry.columns)):
            start, index = entry.columns.shape[1], entry.index
        else:
            start, index = 0, self._index_class(relation.arity, key)
        if columns.shape[1] > start:
            # a Relation's rows are distinct: those after the indexed prefix are not stored
            index.insert_new(columns[:, start:])
        self._indexes[(name, key)] = _IndexEntry(columns, index)
        return index


class _Run:
    """One plan's evaluation over one instance."""

    def __init__(self, evaluator: RelationalEvaluator, instance: Database, rule: Rule,
                 transient: Collection[str] = frozenset()):
        self.evaluator = evaluator
        self.instance = instance
        self.rule = rule
        self.transient = transient

    def error(self, message: str) -> EvaluationError:
        where = f" at {self.rule.location}" if self.rule.location else ""
        return EvaluationError(f"rule {self.rule}{where}: {message}")

    def rows(self, node: ir.Plan) -> np.ndarray:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"cannot run plan node {node.label()}")
        return method(node)

    def relation(self, node: ir.Scan) -> Relation:
        relation = self.instance.get(node.relation)
        if relation is None:
            raise self.error(f"relation {node.relation} is not in the instance")
        if relation.arity != node.arity:
            raise ArityError(f"rule {self.rule}: {node.relation} has arity {relation.arity}, "
                             f"used with arity {node.arity}")
        return relation

    def _Unit(self, node: ir.Unit) -> np.ndarray:
        return np.zeros((0, 1), dtype=np.int64)

    def _Scan(self, node: ir.Scan) -> np.ndarray:
        return self.relation(node).columns

    def _SelectByValue(self, node: ir.SelectByValue) -> np.ndarray:
        batch = self.rows(node.child)
        return columns_at(batch, batch[node.column] == node.value)

    def _SelectByColumns(self, node: ir.SelectByColumns) -> np.ndarray:
        batch = self.rows(node.child)
        return columns_at(batch, batch[node.left] == batch[node.right])

    def _Filter(self, node: ir.Filter) -> np.ndarray:
        batch = self.rows(node.child)
        if not batch.shape[1]:
            return batch
        return columns_at(batch, vector_compare(node.op, node.left, node.right, batch))

    def _Map(self, node: ir.Map) -> np.ndarray:
        batch = self.rows(node.child)
        if not batch.shape[1]:
            return empty_batch(node.arity)
        values, valid = vector_value(node.expression, batch)
        out = np.vstack([batch, values[None, :]])
        return out if valid is None else out[:, valid]

    def _Project(self, node: ir.Project) -> np.ndarray:
        child = node.child
        if isinstance(child, ir.Join) and self._probes_index(child):
            # fused: gather only the projected columns of the join's pairs
            left, positions, matched = self._index_join(child)
            width = left.shape[0]
            out = np.empty((len(node.outputs), len(positions)), dtype=np.int64)
            for i, output in enumerate(node.outputs):
                if isinstance(output, Const):
                    out[i] = output.value
                elif output < width:
                    np.take(left[output], positions, out=out[i])
                else:
                    out[i] = matched[output - width]
            return out
        batch = self.rows(child)
        n = batch.shape[1]
        out = np.empty((len(node.outputs), n), dtype=np.int64)
        for i, output in enumerate(node.outputs):
            out[i] = output.value if isinstance(output, Const) else batch[output]
        return out

    def _Product(self, node: ir.Product) -> np.ndarray:
        left, right = self.rows(node.left), self.rows(node.right)
        n, m = left.shape[1], right.shape[1]
        return np.vstack([np.repeat(left, m, axis=1), np.tile(right, (1, n))])

    @staticmethod
    def _probes_index(node: ir.Join) -> bool:
        """Whether a join runs as a probe of an index on its right relation."""
        return bool(node.right_keys) and isinstance(node.right, ir.Scan)

    @staticmethod
    def _probes_whole_rows(node: ir.Antijoin) -> bool:
        """Whether an antijoin's keys are every column of a stored right relation (a probe
        of its index then matches at most one row per left row)."""
        return (isinstance(node.right, ir.Scan)
                and sorted(node.right_keys) == list(range(node.right.arity)))

    def _index_join(self, node: ir.Join) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(left batch, its positions, matched right rows) of a join that ``_probes_index``."""
        left = self.rows(node.left)
        relation = self.relation(node.right)
        if not left.shape[1] or not len(relation):
            return left, EMPTY_POSITIONS, empty_batch(relation.arity)
        if (node.right.relation in self.transient
                and left.shape[1] * TRANSIENT_RATIO <= len(relation)):
            owners, positions = sort_join(relation.columns, left, node.right_keys,
                                          node.left_keys)
            return left, positions, columns_at(relation.columns, owners)
        index = self.evaluator.relation_index(node.right.relation, relation,
                                              tuple(node.right_keys))
        positions, matched = index.join(left, tuple(node.left_keys))
        return left, positions, matched

    def _Join(self, node: ir.Join) -> np.ndarray:
        if self._probes_index(node):
            left, positions, matched = self._index_join(node)
            return np.vstack([columns_at(left, positions), matched])
        left = self.rows(node.left)
        if not node.right_keys:
            right = self.rows(node.right)
            n, m = left.shape[1], right.shape[1]
            return np.vstack([np.repeat(left, m, axis=1), np.tile(right, (1, n))])
        right = self.rows(node.right)
        if not left.shape[1] or not right.shape[1]:
            return empty_batch(node.arity)
        lpos, rpos = sort_join(left, right, node.left_keys, node.right_keys)
        return np.vstack([columns_at(left, lpos), columns_at(right, rpos)])

    def _Antijoin(self, node: ir.Antijoin) -> np.ndarray:
        left = self.rows(node.left)
        if not left.shape[1]:
            return left
        if self._probes_whole_rows(node):
            # each left row matches at most one stored row: probe the relation's kept index,
            # O(left · log right), instead of hashing all of the right's keys per call
            relation = self.relation(node.right)
            if not len(relation):
                return left
            index = self.evaluator.relation_index(node.right.relation, relation,
                                                  tuple(node.right_keys))
            positions, _ = index.join(left, tuple(node.left_keys))
            keep = np.ones(left.shape[1], dtype=bool)
            keep[positions] = False
            return columns_at(left, keep)
        right = self.rows(node.right)
        if not right.shape[1]:
            return left
        if not node.left_keys:
            return empty_batch(node.arity)
        lk, rk = row_keys(key_block(left, node.left_keys), key_block(right, node.right_keys))
        return columns_at(left, ~np.isin(lk, rk))

    def _Aggregate(self, node: ir.Aggregate) -> np.ndarray:
        child = self.rows(node.child)
        if not child.shape[1]:
            return empty_batch(node.arity)
        body = dedup(self.rows(node.body))
        function = node.function
        if function not in ir.AGGREGATE_FUNCTIONS:
            raise self.error(f"aggregate {function} is not supported")
        if function != "count" and body.shape[1]:
            targets, valid = vector_value(node.target, body)
            if valid is not None:
                body, targets = body[:, valid], targets[valid]
        else:
            targets = np.zeros(body.shape[1], dtype=np.int64)
        child_keys, body_keys = row_keys(key_block(child, node.child_keys),
                                         key_block(body, node.body_keys))
        order = np.argsort(body_keys, kind="stable")
        ordered_keys, ordered_targets = body_keys[order], targets[order]
        if len(ordered_keys):
            starts = np.flatnonzero(np.r_[True, ordered_keys[1:] != ordered_keys[:-1]])
            groups = ordered_keys[starts]
            if function == "count":
                values = np.diff(np.r_[starts, len(ordered_keys)]).astype(np.int64)
            elif function == "sum":
                with np.errstate(all="ignore"):
                    values = np.add.reduceat(ordered_targets, starts)
            elif function == "min":
                values = np.minimum.reduceat(ordered_targets, starts)
            else:
                values = np.maximum.reduceat(ordered_targets, starts)
        else:
            groups = values = np.zeros(0, dtype=np.int64)
        slot = np.searchsorted(groups, child_keys)
        found = slot < len(groups)
        found[found] = groups[slot[found]] == child_keys[found]
        result = np.zeros(child.shape[1], dtype=np.int64)
        result[found] = values[slot[found]]
        out = np.vstack([child, result[None, :]])
        return out if function in ("count", "sum") else out[:, found]

    def _Union(self, node: ir.Union) -> np.ndarray:
        return np.concatenate([self.rows(i) for i in node.inputs], axis=1)
