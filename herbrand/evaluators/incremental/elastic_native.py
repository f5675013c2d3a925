"""Bootstrap's first iterations from the native executor: a semi-naive run numbered by its runs.

The native executor (``herbrand.evaluators.native``) appends each iteration's new tuples to the
end of their relation, so a stratum run one iteration per kernel call leaves its relations in
iteration order, and the first iteration of every tuple (Algorithm 2's I_k) is read off the run
boundaries: no per-tuple work beyond the materialization itself. ``NativeNumbering`` keeps one
store across the strata of a Bootstrap (a relation a lower stratum produced is not loaded again).

The numbering is exact only when no rule of an iteration reads the tuples that another rule
appended in the same iteration. The kernels catch every index up before an iteration starts,
so probes read the relations as the iteration began; a full scan of one of the stratum's own
relations, or a rule the batch executor runs, would read the appended rows. So iteration 1
applies only the rules that read none of the stratum's relations (the others derive nothing
from them empty), a delta variant's body-order alternative that scans one of them is not
used, and ``number`` returns None for a stratum where a delta variant scans one or falls back
to the batch executor (the caller runs Algorithm 2 itself), and for a stratum with an
aggregate, which the elastic engine maintains by bootstrapping it again.

The lowering of a stratum (base rules, delta variants, alternatives) is the native
evaluator's own ``_StratumRules``, a private class: this module relies on its relations
growing by appending and on the kernels catching indexes up when an iteration starts.

Proof counts are not computed here: the caller records them as unknown (``elastic_state``)
and the Update computes the few it needs by provenance queries.

Cost: the native semi-naive materialization of the stratum plus one return to Python per
iteration and O(n) to hand the relations and their iteration arrays back.
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native import layout as L
from herbrand.evaluators.native.evaluator import NativeEvaluator, _StratumRules
from herbrand.evaluators.native.store import NativeStore
from herbrand.framework.analysis import Stratum, rule_literals
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Rule

_UNBOUNDED = np.iinfo(np.int64).max


class NativeNumbering:
    """Runs strata natively and numbers their tuples by first iteration (see the module doc).
    One instance per Bootstrap: its store holds the relations of the strata run so far."""

    def __init__(self) -> None:
        self._evaluator = NativeEvaluator()
        self._store = NativeStore()

    def number(self, stratum: Stratum, instance: Database,
               aggregated: bool) -> tuple[Database, dict[str, np.ndarray]] | None:
        """``instance`` with ``stratum``'s relations at their least fixpoint, and for each of
        them the first iteration (>= 1) of every row, aligned with its rows; None when the
        numbering would not be exact (see the module doc)."""
        if aggregated:
            return None
        store = self._store
        rules = _StratumRules(self._evaluator, store, stratum, instance)
        # iteration 1 applies the rules to empty own relations: those reading them derive nothing
        first = [lowered for lowered, rule in zip(rules.base, stratum.rules, strict=True)
                 if not _body_relations(rule) & set(stratum.relations)]
        arrays = rules.program.arrays
        if (rules.fallback_variants or any(not isinstance(r, int) for r in first)
                or _scans_own(arrays, rules.variant_ids, rules.relations)):
            return None
        # a variant's alternative plan (its body order) that scans an own relation is not used
        alternatives = np.asarray(
            [-1 if a >= 0 and _scans_own(arrays, np.asarray([a]), rules.relations) else a
             for a in rules.alternative_ids.tolist()], dtype=np.int64)
        low = np.zeros(store.count, dtype=np.int64)
        high = np.zeros(store.count, dtype=np.int64)
        relations = np.asarray(rules.relations, dtype=np.int64)
        bounds = [[store.size(rel)] for rel in rules.relations]
        if any(bound[0] for bound in bounds):
            return None  # the stratum's relations are not empty: not the start of a Bootstrap
        rules.apply(first, low, high)
        for rel, bound in zip(rules.relations, bounds, strict=True):
            low[rel], high[rel] = bound[0], store.size(rel)
            bound.append(high[rel])
        while stratum.recursive and (high[relations] > low[relations]).any():
            store.run(rules.program, rules.variant_ids, alternatives, relations, low, high, 1,
                      _UNBOUNDED)
            for rel, bound in zip(rules.relations, bounds, strict=True):
                bound.append(high[rel])
        grown, iterations = {}, {}
        for name, rel, bound in zip(stratum.relations, rules.relations, bounds, strict=True):
            store.drop_dedup(rel)
            grown[name] = store.relation(rel)
            runs = np.diff(np.asarray(bound, dtype=np.int64))
            iterations[name] = np.repeat(np.arange(1, len(runs) + 1, dtype=np.int64), runs)
        store.sources.update(grown)
        return instance.with_relations(grown), iterations


def _scans_own(program: tuple[np.ndarray, ...], rules: np.ndarray, relations: list[int]) -> bool:
    """Whether one of ``rules`` (ids in ``program``) scans a whole relation of ``relations``
    (not a delta range): such a scan reads rows appended earlier in the same iteration."""
    bounds = program[L.P_RULE_LEVELS]
    levels = np.concatenate([np.arange(bounds[r], bounds[r + 1]) for r in rules.tolist()]
                            + [np.zeros(0, dtype=np.int64)])
    scans = levels[(program[L.P_LEVEL_KIND][levels] == L.SCAN)
                   & (program[L.P_LEVEL_RANGE][levels] == 0)]
    return bool(np.isin(program[L.P_LEVEL_REL][scans], relations).any())


def _body_relations(rule: Rule) -> set[str]:
    return {literal.atom.relation for literal, _ in rule_literals(rule)}

