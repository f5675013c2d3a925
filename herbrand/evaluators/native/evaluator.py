"""``NativeEvaluator``: the translator's plans run by the fused native interpreter.

The second executor of the same plans (``relational`` is the first): every rule plan, and each
semi-naive delta variant, runs as nested loops in one numba kernel from the first atom to the
head, which is inserted straight into the head relation's dedup table (``kernels``). Rules the
interpreter does not run (aggregates, non-left-deep joins: ``encoding.lower_rule`` says None)
fall back, rule by rule, to the batch executor over the same relations, never with another
answer.

Two ways in:

- ``run_stratum`` (tagged ``runs_strata``): the semi-naive fixpoint hands a whole stratum over.
  Relations live in a ``NativeStore`` kept across the strata of one materialization (a
  relation another stratum produced is not copied again), grow in place (O(delta) per
  iteration) and iterate inside one kernel call, returning to Python only to report progress
  (about every 0.1 s), so an iteration costs about a microsecond of overhead.
- ``evaluate`` (the RuleEvaluator contract): one application of some rules to an instance, for
  the naive fixpoint, the incremental engines and the conformance checks: the instance is loaded
  into a fresh store and the head tuples go to relations of their own.

The ``index`` hyperparameter (a name of ``herbrand.framework.registry.INDEXES``) chooses what
joins probe:

- None (the default): the store's own hash indexes, one per (relation, key), each key's rows
  chained as they are appended and moved into runs (together, in sequence) as they double.
- a backing tagged ``IndexTags.native`` (``sorted_vector``, ``spine``, ``open_hash``): a join's
  probe of a whole relation reads a backing of that class inside the kernel, through its
  ``native_view()`` (``store``, ``views``); the backing is fed the relation's new rows between
  iterations (the kernel asks for them, so a recursive stratum returns to Python once per
  iteration). Probes of a delta, negations and the dedup tables stay on the store's hash
  indexes: a delta is a row range of its relation, which a backing does not keep apart.
- any other backing: the kernels cannot read it, so the evaluator is the batch executor
  ``RelationalEvaluator(index=index)``, every iteration run in bounded morsels of the delta
  (``evaluators.morsels``), so memory stays bounded whatever the index.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from herbrand.evaluators.fixpoint import (
    Threads,
    delta_positions,
    delta_variants,
    seminaive_stratum,
)
from herbrand.evaluators.native.encoding import NativeRule, Program, delta_relation, lower_rule
from herbrand.evaluators.native.store import NativeStore
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.analysis import Stratum
from herbrand.framework.contracts import EvaluatorTags, Progress, RuleEvaluator
from herbrand.framework.errors import ArityError, EvaluationError, RowLimitError
from herbrand.framework.registry import INDEXES
from herbrand.framework.spread import Spread
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Rule
from herbrand.translators.encode_symbols import encode_symbols
from herbrand.translators.join_ordering import order_joins
from herbrand.translators.pipeline import DEFAULT_PASSES, translate_rule

PROGRESS_SECONDS = 0.1  # a kernel call runs iterations for about this long between reports
MAX_BUDGET = 1 << 30  # iterations of one kernel call at most (the budget quadruples per call)
_OUTPUT_PREFIX = "@out:"
_NONE = np.zeros(0, dtype=np.int64)
# a delta variant's alternative plan: the body's own join order, the delta read where it stands
BODY_ORDER_PASSES = tuple(step for step in DEFAULT_PASSES if step is not order_joins)


class NativeEvaluator(RuleEvaluator):
    """Runs rule plans with the native interpreter (see the module doc); ``index``: None for
    its own hash indexes, or the name of the IndexBacking joins probe (a backing without
    ``IndexTags.native`` makes this the batch executor ``RelationalEvaluator(index=index)``);
    ``row_limit``: None, or the rows ``run_stratum`` may add to a stratum's relations: one that
    adds at most that many runs as without a limit; one that adds more is stopped, its
    buffers grown no further (``arrays``: within ``layout.PENDING_MAX`` rows of the limit,
    or of the limit per relation when several grow at once), with RowLimitError, and the
    kept store is dropped. Not with an index the kernels cannot read (the batch executor's
    iterations have no limit).

    Cost: per derivation, O(1) expected per atom, in native code (a view probe: O(log n) per
    sorted run, O(1) expected per hash run); per iteration of a recursive stratum, O(delta)
    plus about a microsecond (with a view index, plus the backing's inserts and a return to
    Python); per stratum, O(n) to hand its relations back as Relations. Memory: each relation's
    rows once, its dedup table (two slots per row), and one hash index (or backing) per
    (relation, key) that a rule probes (a row number and the other columns' values per row,
    and a link per row not yet in runs)."""

    tags = EvaluatorTags(negation=True, arithmetic=True, aggregates=True, uses_index=True,
                         runs_strata=True)
    # a rule run on threads starts one task per thread (tens of µs); measured when each rule
    # started 16 slices: Galen EL on 2 threads 2.70 s at 20,000 rows, 2.48 s at 2,000 (in
    # process, with reading the facts)
    parallel_min_rows = 2_000

    def __init__(self, index: str | None = None, row_limit: int | None = None) -> None:
        self.index = index
        self.row_limit = row_limit
        backing = INDEXES.get(index) if index is not None else None
        # the class whose views joins probe; with an index the kernels cannot read, every rule
        # runs on the batch executor
        self._view_class = backing if backing is not None and backing.tags.native else None
        self._batch_only = backing is not None and self._view_class is None
        self._fallback: RelationalEvaluator | None = None
        self._store: NativeStore | None = None
        self._symbols = None

    @property
    def batch(self) -> RelationalEvaluator:
        """The batch executor that runs the rules the interpreter does not (made when first
        needed), over ``index`` when one is given."""
        if self._fallback is None:
            self._fallback = (RelationalEvaluator() if self.index is None
                              else RelationalEvaluator(index=self.index))
        return self._fallback

    # -- one application (the RuleEvaluator contract) --------------------------------------------

    def evaluate(self, rules: Sequence[Rule], instance: Database) -> dict[str, Relation]:
        """Every row one application of ``rules`` derives from ``instance``, by head relation.
        Cost: O(size of the relations the rules read) to load them, then the derivations."""
        if self._batch_only:
            return self.batch.evaluate(rules, instance)
        store = NativeStore(self._view_class)
        outputs: dict[str, int] = {}
        for rule in rules:
            name = rule.head.relation
            if name not in outputs:
                outputs[name] = store.empty(_OUTPUT_PREFIX + name, rule.head.arity)

        def resolve(relation: str, arity: int) -> tuple[int, bool]:
            if relation not in store.ids:
                store.add(relation, _given(instance, relation, arity))
            return store.ids[relation], False

        sizes = instance.sizes()
        native = []
        for rule in rules:
            plan = encode_symbols(translate_rule(rule, sizes=sizes), instance.symbols)
            lowered = lower_rule(plan, resolve, store.probe)
            head = outputs[rule.head.relation]
            if lowered is None:
                batch = self.batch.derive([rule], instance).get(rule.head.relation)
                if batch is not None:
                    store.insert(head, batch)
            else:
                native.append((lowered, head, store.dedup[head]))
        if native:
            program = Program(native)
            no_range = np.zeros(store.count, dtype=np.int64)
            every = np.arange(len(native), dtype=np.int64)
            store.run(program, every, np.full(len(native), -1, dtype=np.int64), _NONE, no_range,
                      no_range, 0, 0)
        return {name: store.relation(rel) for name, rel in outputs.items()}

    def derive(self, rules: Sequence[Rule], instance: Database) -> dict[str, np.ndarray]:
        """``evaluate``'s rows as batches; the batch executor's own with an index the kernels
        cannot read."""
        if self._batch_only:
            return self.batch.derive(rules, instance)
        return super().derive(rules, instance)

    # -- a whole stratum -------------------------------------------------------------------------

    def run_stratum(self, stratum: Stratum, instance: Database, run) -> Database:
        """``instance`` with ``stratum``'s relations at their least fixpoint (semi-naive), the
        counters and progress of ``run`` (the fixpoint's ``_Run``) kept up to date. With an
        index the kernels cannot read: the batch executor's semi-naive iterations, through
        ``run``'s step (bounded morsels, or threads)."""
        if self._batch_only:
            return seminaive_stratum(stratum, instance, run)
        store = self._store_for(instance)
        rules = _StratumRules(self, store, stratum, instance)
        if self.row_limit is None:
            return self._run_stratum(stratum, instance, run, rules)
        store.row_limit = store.rows_held() + self.row_limit
        try:
            return self._run_stratum(stratum, instance, run, rules)
        except RowLimitError:
            self.clear()  # the store holds part of the stratum
            raise RowLimitError(f"stratum {stratum.index + 1} ({', '.join(stratum.relations)}) "
                                f"derives over {self.row_limit:,} rows (row_limit)") from None
        finally:
            store.row_limit = None

    def _run_stratum(self, stratum: Stratum, instance: Database, run,
                     rules: _StratumRules) -> Database:
        store = rules.store
        low = np.zeros(store.count, dtype=np.int64)
        high = np.zeros(store.count, dtype=np.int64)
        before = {rel: store.size(rel) for rel in rules.relations}
        threads = run.threads if run.threads is not None and run.threads.workers > 1 else None
        rules.apply(rules.base, low, high, threads)
        self._report(run, stratum, 1, sum(store.size(r) - before[r] for r in rules.relations))
        if stratum.recursive:
            for rel in rules.relations:
                low[rel], high[rel] = before[rel], store.size(rel)
            self._iterate(rules, low, high, run, stratum)
        for rel in rules.relations:
            store.drop_dedup(rel)  # the stratum is done: its relations will not grow again
        spread = Spread(threads.pool, threads.workers) if threads is not None else None
        grown = {name: store.relation(store.ids[name], spread) for name in stratum.relations}
        store.sources.update(grown)
        return instance.with_relations(grown)

    def _iterate(self, rules: _StratumRules, low: np.ndarray, high: np.ndarray, run,
                 stratum: Stratum) -> None:
        """Semi-naive iterations until no relation of the stratum grows: inside the kernel
        (about ``PROGRESS_SECONDS`` per call) when every variant is native, else one at a time
        with the fallback variants run by the batch executor."""
        relations = np.asarray(rules.relations, dtype=np.int64)
        threads = run.threads if run.threads is not None and run.threads.workers > 1 else None
        max_delta = threads.min_rows if threads is not None else np.iinfo(np.int64).max
        budget = 1
        while any(high[rel] > low[rel] for rel in rules.relations):
            start = time.perf_counter()
            iterations = 0
            if not rules.fallback_variants:
                iterations, added = rules.store.run(
                    rules.program, rules.variant_ids, rules.alternative_ids, relations, low, high,
                    budget, max_delta)
            if iterations == 0 and any(high[rel] > low[rel] for rel in rules.relations):
                # one iteration here: a large delta on threads, or fallback variants
                # (a delta this large: every rule's first level cut, whatever its own size,
                # since a small base relation may lead, each row with much work behind it)
                iterations, added = 1, rules.apply(rules.variants, low, high, threads,
                                                   split_from=2)
                for rel in rules.relations:
                    low[rel], high[rel] = high[rel], rules.store.size(rel)
            self._report(run, stratum, int(iterations), int(added))
            per_iteration = max(time.perf_counter() - start, 1e-9) / max(int(iterations), 1)
            budget = max(1, min(budget * 4, MAX_BUDGET, int(PROGRESS_SECONDS / per_iteration)))

    @staticmethod
    def _report(run, stratum: Stratum, iterations: int, added: int) -> None:
        run.iterations += iterations
        run.total += added
        if run.observer is not None:
            run.observer(Progress(stratum=stratum.index, strata=run.strata,
                                  iteration=run.iterations, delta=added, total=run.total))

    def _store_for(self, instance: Database) -> NativeStore:
        """The store of the materialization ``instance`` belongs to: kept when every relation
        it holds is still the Relation the instance has (a later stratum of the same run), else
        a new one (relations are loaded when a stratum first reads them)."""
        store = self._store
        if (store is None or instance.symbols is not self._symbols
                or any(instance.get(name) is not relation
                       for name, relation in store.sources.items())):
            store = self._store = NativeStore(self._view_class)
            self._symbols = instance.symbols
        return store

    def clear(self) -> None:
        """Drop the kept store and the batch executor's caches."""
        self._store = None
        self._symbols = None
        if self._fallback is not None:
            self._fallback.clear()


class _StratumRules:
    """A stratum's rules lowered for the native interpreter: the base rules (the first pass),
    the delta variants (the later iterations), and those of each that fall back to the batch
    executor."""

    def __init__(self, evaluator: NativeEvaluator, store: NativeStore, stratum: Stratum,
                 instance: Database):
        self.evaluator = evaluator
        self.store = store
        self.instance = instance
        self.relations = [self._load(name, instance) for name in stratum.relations]
        self._sizes = instance.sizes()
        self._native: list[tuple[NativeRule, int, int]] = []
        self.base = [self._add(rule, translate_rule(rule, sizes=self._sizes))
                     for rule in stratum.rules]
        self.variants: list[int | Rule] = []
        self.alternatives: dict[int, int] = {}
        recursive = set(stratum.relations) if stratum.recursive else set()
        for rule in stratum.rules:
            positions = delta_positions(rule, recursive)
            for position, variant in zip(positions, delta_variants(rule, recursive), strict=True):
                lowered = self._add(variant, translate_rule(variant, sizes=self._sizes))
                self.variants.append(lowered)
                if isinstance(lowered, int) and position > 0:
                    in_place = translate_rule(rule, BODY_ORDER_PASSES, delta={position})
                    alternative = self._add(variant, in_place)
                    if isinstance(alternative, int):
                        self.alternatives[lowered] = alternative
        self.fallback_variants = any(isinstance(v, Rule) for v in self.variants)
        self.program = Program(self._native)
        self.variant_ids = np.asarray([v for v in self.variants if isinstance(v, int)],
                                      dtype=np.int64)
        self.alternative_ids = self.alternatives_of(self.variant_ids)

    def _add(self, rule: Rule, plan) -> int | Rule:
        """Lower ``plan`` (of ``rule``) into the program: its id, or ``rule`` itself when it
        falls back to the batch executor."""
        lowered = lower_rule(encode_symbols(plan, self.instance.symbols), self._resolve,
                             self.store.probe)
        if lowered is None:
            return rule
        head = self.store.ids[rule.head.relation]
        self._native.append((lowered, head, self.store.dedup[head]))
        return len(self._native) - 1

    def alternatives_of(self, rules: np.ndarray) -> np.ndarray:
        """The alternative of each native rule id of ``rules`` (-1: none), for ``kernels.run``."""
        return np.asarray([self.alternatives.get(r, -1) for r in rules.tolist()],
                          dtype=np.int64)

    def _load(self, name: str, instance: Database) -> int:
        store = self.store
        if name not in store.ids or store.sources.get(name) is not instance.get(name):
            store.add(name, instance[name])
        return store.ids[name]

    def _resolve(self, name: str, arity: int) -> tuple[int, bool]:
        relation, delta = delta_relation(name)
        _given(self.instance, relation, arity)
        return self._load(relation, self.instance), delta

    def apply(self, rules: list, low: np.ndarray, high: np.ndarray,
              threads: Threads | None = None, split_from: int | None = None) -> int:
        """Apply ``rules`` (native rule ids and fallback Rules) once; the new tuples. With
        ``threads``, the first level of each native rule with at least ``split_from`` rows
        there (default ``threads.min_rows``) is shared out in chunks among one task per
        worker, the tasks running at once and inserting into the head relation together
        (``NativeStore.run_shared``); the other rules run first, in this thread."""
        store = self.store
        native = np.asarray([r for r in rules if isinstance(r, int)], dtype=np.int64)
        serial = native
        added = 0
        if threads is not None:
            store.catch_up_rules(self.program, native.tolist() + [
                a for a in self.alternatives_of(native).tolist() if a >= 0],
                Spread(threads.pool, threads.workers))
            native = np.asarray([store.choose(self.program, rule, alternative, low, high)
                                 for rule, alternative in zip(native.tolist(),
                                                              self.alternatives_of(native),
                                                              strict=True)],
                                dtype=np.int64)
            ranges = {}
            for rule in native.tolist():
                store.catch_up_rule(self.program, rule)
                ranges[rule] = store.first_level_range(self.program, rule, low, high)
            split_from = threads.min_rows if split_from is None else split_from
            large = {rule for rule, (start, end) in ranges.items() if end - start >= split_from}
            serial = np.asarray([r for r in native.tolist() if r not in large], dtype=np.int64)
        if len(serial):
            added += store.run(self.program, serial, self.alternatives_of(serial), _NONE, low,
                               high, 0, 0)[1]
        for rule in (native.tolist() if threads is not None else ()):
            if rule in large:
                added += store.run_shared(self.program, rule, low, high, ranges[rule],
                                          threads.pool, threads.workers)
        for rule in (r for r in rules if isinstance(r, Rule)):
            view = self._view(rule, low, high)
            batch = self.evaluator.batch.derive([rule], view).get(rule.head.relation)
            if batch is not None:
                added += store.insert(store.ids[rule.head.relation], batch)
        return added

    def _view(self, rule: Rule, low: np.ndarray, high: np.ndarray) -> Database:
        """The instance a fallback rule reads: the current relations, and for a delta atom the
        rows of the delta range."""
        store = self.store
        relations = {}
        for name in _body_relations(rule):
            relation, delta = delta_relation(name)
            rel = self._load(relation, self.instance)
            relations[name] = (Relation(store.rows_since(rel, int(low[rel]))[:, :int(
                high[rel] - low[rel])], unique=True) if delta else store.relation(rel))
        return self.instance.with_relations(relations)


def _given(instance: Database, name: str, arity: int) -> Relation:
    """``instance[name]``, read with ``arity``; the batch executor's errors otherwise."""
    relation = instance.get(name)
    if relation is None:
        raise EvaluationError(f"relation {name} is not in the instance")
    if relation.arity != arity:
        raise ArityError(f"{name} has arity {relation.arity}, used with arity {arity}")
    return relation


def _body_relations(rule: Rule) -> set[str]:
    from herbrand.framework.analysis import rule_literals

    return {literal.atom.relation for literal, _ in rule_literals(rule)}
