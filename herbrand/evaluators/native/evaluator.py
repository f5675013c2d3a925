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
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from herbrand.evaluators.fixpoint import delta_variants
from herbrand.evaluators.native import kernels as k
from herbrand.evaluators.native.encoding import NativeRule, Program, delta_relation, lower_rule
from herbrand.evaluators.native.store import NativeStore
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.analysis import Stratum
from herbrand.framework.contracts import EvaluatorTags, Progress, RuleEvaluator
from herbrand.framework.errors import ArityError, EvaluationError
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Rule
from herbrand.translators.encode_symbols import encode_symbols
from herbrand.translators.join_ordering import DELTA_PREFIX
from herbrand.translators.pipeline import translate_rule

PROGRESS_SECONDS = 0.1  # a kernel call runs iterations for about this long between reports
_OUTPUT_PREFIX = "@out:"
_NONE = np.zeros(0, dtype=np.int64)


class NativeEvaluator(RuleEvaluator):
    """Runs rule plans with the native interpreter (see the module doc); no hyperparameters.

    Cost: per derivation, O(1) expected per atom, in native code; per iteration of a recursive
    stratum, O(delta) plus about a microsecond; per stratum, O(n) to hand its relations back as
    Relations. Memory: each relation's rows once, its dedup table (two slots per row), and one
    chained hash index per (relation, key) that a rule probes."""

    tags = EvaluatorTags(negation=True, arithmetic=True, aggregates=True, uses_index=False,
                         runs_strata=True)

    def __init__(self) -> None:
        self._batch = RelationalEvaluator()
        self._store: NativeStore | None = None
        self._symbols = None

    # -- one application (the RuleEvaluator contract) --------------------------------------------

    def evaluate(self, rules: Sequence[Rule], instance: Database) -> dict[str, Relation]:
        """Every row one application of ``rules`` derives from ``instance``, by head relation.
        Cost: O(size of the relations the rules read) to load them, then the derivations."""
        store = NativeStore()
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
            lowered = lower_rule(plan, resolve, store.index)
            head = outputs[rule.head.relation]
            if lowered is None:
                batch = self._batch.derive([rule], instance).get(rule.head.relation)
                if batch is not None:
                    store.insert(head, batch)
            else:
                native.append((lowered, head, store.dedup[head]))
        if native:
            program = Program(native)
            no_range = np.zeros(store.count, dtype=np.int64)
            k.run(program.arrays, np.arange(len(native), dtype=np.int64), _NONE,
                  *store.arguments(), no_range, no_range, 0)
        return {name: store.relation(rel) for name, rel in outputs.items()}

    # -- a whole stratum -------------------------------------------------------------------------

    def run_stratum(self, stratum: Stratum, instance: Database, run) -> Database:
        """``instance`` with ``stratum``'s relations at their least fixpoint (semi-naive), the
        counters and progress of ``run`` (the fixpoint's ``_Run``) kept up to date."""
        store = self._store_for(instance)
        rules = _StratumRules(self, store, stratum, instance)
        low = np.zeros(store.count, dtype=np.int64)
        high = np.zeros(store.count, dtype=np.int64)
        before = {rel: store.size(rel) for rel in rules.relations}
        rules.apply(rules.base, low, high)
        self._report(run, stratum, 1, sum(store.size(r) - before[r] for r in rules.relations))
        if stratum.recursive:
            for rel in rules.relations:
                low[rel], high[rel] = before[rel], store.size(rel)
            self._iterate(rules, low, high, run, stratum)
        for rel in rules.relations:
            store.drop_dedup(rel)  # the stratum is done: its relations will not grow again
        grown = {name: store.relation(store.ids[name]) for name in stratum.relations}
        store.sources.update(grown)
        return instance.with_relations(grown)

    def _iterate(self, rules: _StratumRules, low: np.ndarray, high: np.ndarray, run,
                 stratum: Stratum) -> None:
        """Semi-naive iterations until no relation of the stratum grows: inside the kernel
        (about ``PROGRESS_SECONDS`` per call) when every variant is native, else one at a time
        with the fallback variants run by the batch executor."""
        relations = np.asarray(rules.relations, dtype=np.int64)
        budget = 1
        while any(high[rel] > low[rel] for rel in rules.relations):
            start = time.perf_counter()
            if rules.fallback_variants:
                iterations, added = 1, rules.apply(rules.variants, low, high)
                for rel in rules.relations:
                    low[rel], high[rel] = high[rel], rules.store.size(rel)
            else:
                iterations, added = k.run(
                    rules.program.arrays, rules.variant_ids, relations, *rules.store.arguments(),
                    low, high, budget)
            self._report(run, stratum, int(iterations), int(added))
            elapsed = time.perf_counter() - start
            budget = max(1, min(budget * 4, int(budget * PROGRESS_SECONDS / max(elapsed, 1e-6))))

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
            store = self._store = NativeStore()
            self._symbols = instance.symbols
        return store

    def clear(self) -> None:
        """Drop the kept store and the batch executor's caches."""
        self._store = None
        self._symbols = None
        self._batch.clear()


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
        sizes = instance.sizes()
        variants = (tuple(v for rule in stratum.rules
                          for v in delta_variants(rule, set(stratum.relations)))
                    if stratum.recursive else ())
        native: list[tuple[NativeRule, int, int]] = []
        self.base, self.variants = [], []
        self.fallback_variants = False
        for rule in (*stratum.rules, *variants):
            plan = encode_symbols(translate_rule(rule, sizes=sizes), instance.symbols)
            lowered = lower_rule(plan, self._resolve, store.index)
            head = store.ids[rule.head.relation]
            target = self.variants if rule.body and _reads_delta(rule) else self.base
            if lowered is None:
                target.append(rule)
                self.fallback_variants |= target is self.variants
            else:
                target.append(len(native))
                native.append((lowered, head, store.dedup[head]))
        self.program = Program(native)
        self.variant_ids = np.asarray([v for v in self.variants if isinstance(v, int)],
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

    def apply(self, rules: list, low: np.ndarray, high: np.ndarray) -> int:
        """Apply ``rules`` (native rule ids and fallback Rules) once; the new tuples."""
        store = self.store
        native = np.asarray([r for r in rules if isinstance(r, int)], dtype=np.int64)
        added = 0
        if len(native):
            added += int(k.run(self.program.arrays, native, _NONE, *store.arguments(), low, high,
                               0)[1])
        for rule in (r for r in rules if isinstance(r, Rule)):
            view = self._view(rule, low, high)
            batch = self.evaluator._batch.derive([rule], view).get(rule.head.relation)
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


def _reads_delta(rule: Rule) -> bool:
    return any(name.startswith(DELTA_PREFIX) for name in _body_relations(rule))


def _body_relations(rule: Rule) -> set[str]:
    from herbrand.framework.analysis import rule_literals

    return {literal.atom.relation for literal, _ in rule_literals(rule)}
