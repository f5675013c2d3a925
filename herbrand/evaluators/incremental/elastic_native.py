"""Bootstrap's first iterations from the native executor: a semi-naive run numbered by its runs.

The native executor (``herbrand.evaluators.native``) appends each iteration's new tuples to the
end of their relation, so a stratum's semi-naive run leaves its relations in iteration order,
and the first iteration of every tuple (Algorithm 2's I_k) is read off the iterations' ends: no
per-tuple work beyond the materialization itself. ``NativeNumbering`` keeps one store across
the strata of a Bootstrap (a relation a lower stratum produced is not loaded again).

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

Proof counts come from the same run when every rule of the stratum is linear (at most one
positive atom over the stratum's relations): the head relations count the derivations
inserted into them (``NativeArrays.count_derivations``), a derivation adding one to its row
when that row is new in the pass or iteration under way (``tables._insert_pending``). A
linear rule's only delta variant enumerates each derivation whose latest body element is in
the last iteration's delta once, in the iteration after it, so a row's count is the number of
derivations of the iteration that first derived it: Algorithm 2's proof count. A rule with two
atoms over the stratum's relations has a variant per atom, each reading the others whole, so
a derivation with both in the delta would count twice: there the counts are not kept (None),
the caller records them as unknown (``elastic_state``) and an Update computes the few it needs
by provenance queries. Counting costs a compare per duplicate derivation and an increment per
one of the same iteration (on TC over graph10000 the provenance queries of the first 1%
delete after a Bootstrap took 58 of its 95 ms).

The kernel records where each iteration's rows end (``kernels.run``'s ``sizes``), so the
iterations run in one kernel call (per ``ITERATIONS_PER_CALL``), as a plain materialization's
do: Andersen points-to over 1,000 variables, 65 iterations, made 110 kernel calls when each
iteration was one call (with the calls to grow the storage), against a materialization's 48.

Cost: the native semi-naive materialization of the stratum plus O(iterations x relations)
and O(n) to hand the relations, their iteration arrays and counts back.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from herbrand.evaluators.native import layout as L
from herbrand.evaluators.native.evaluator import NativeEvaluator, _StratumRules
from herbrand.evaluators.native.store import NativeStore
from herbrand.framework.analysis import Stratum, rule_literals
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Rule

_UNBOUNDED = np.iinfo(np.int64).max
ITERATIONS_PER_CALL = 1024  # semi-naive iterations of one kernel call, each recording its end


class NativeNumbering:
    """Runs strata natively and numbers their tuples by first iteration (see the module doc).
    One instance per Bootstrap: its store holds the relations of the strata run so far."""

    def __init__(self) -> None:
        self._evaluator = NativeEvaluator()
        self._store = NativeStore()

    def number(self, stratum: Stratum, instance: Database, aggregated: bool
               ) -> tuple[Database, dict[str, np.ndarray], dict[str, np.ndarray] | None] | None:
        """``instance`` with ``stratum``'s relations at their least fixpoint, and for each of
        them the first iteration (>= 1) and the proof count of every row, aligned with its
        rows (the counts None when they would not be exact); None when the numbering would
        not be exact (see the module doc)."""
        if aggregated:
            return None
        store = self._store
        rules = _StratumRules(self._evaluator, store, stratum, instance)
        # iteration 1 applies the rules to empty own relations: those reading them derive nothing
        first = [lowered for lowered, rule in zip(rules.base, stratum.rules, strict=True)
                 if not _body_relations(rule) & set(stratum.relations)]
        scanning = _scanning_rules(rules.program.arrays, rules.relations)
        if (rules.fallback_variants or any(not isinstance(r, int) for r in first)
                or scanning[rules.variant_ids].any()):
            return None
        # a variant's alternative plan (its body order) that scans an own relation is not used
        alternatives = rules.alternative_ids
        alternatives = np.where((alternatives >= 0) & scanning[np.maximum(alternatives, 0)],
                                -1, alternatives)
        low = np.zeros(store.count, dtype=np.int64)
        high = np.zeros(store.count, dtype=np.int64)
        relations = np.asarray(rules.relations, dtype=np.int64)
        if any(store.size(rel) for rel in rules.relations):
            return None  # the stratum's relations are not empty: not the start of a Bootstrap
        counted = all(_linear(rule, stratum.relations) for rule in stratum.rules)
        if counted:
            for rel in rules.relations:
                store.count_derivations(rel)
        rules.apply(first, low, high)
        # ends[i, j]: the size of relation j at the end of iteration i + 1
        ends = [np.asarray([[store.size(rel) for rel in rules.relations]], dtype=np.int64)]
        high[relations] = ends[0][0]
        while stratum.recursive and (high[relations] > low[relations]).any():
            sizes = np.zeros((ITERATIONS_PER_CALL, len(relations)), dtype=np.int64)
            done, _ = store.run(rules.program, rules.variant_ids, alternatives, relations, low,
                                high, ITERATIONS_PER_CALL, _UNBOUNDED, sizes)
            ends.append(sizes[:done])
        runs = np.diff(np.concatenate(ends), axis=0, prepend=0)
        numbers = np.arange(1, len(runs) + 1, dtype=np.int64)
        grown, iterations, counts = {}, {}, {}
        for j, (name, rel) in enumerate(zip(stratum.relations, rules.relations, strict=True)):
            store.drop_dedup(rel)
            grown[name] = store.relation(rel)
            iterations[name] = np.repeat(numbers, runs[:, j])
            if counted:
                counts[name] = store.derivation_counts(rel)
        store.sources.update(grown)
        return instance.with_relations(grown), iterations, counts if counted else None


def _scanning_rules(program: tuple[np.ndarray, ...], relations: list[int]) -> np.ndarray:
    """Whether each rule of ``program`` scans a whole relation of ``relations`` (not a delta
    range): such a scan reads rows appended earlier in the same iteration. O(levels)."""
    bounds = program[L.P_RULE_LEVELS]  # rule r's levels are bounds[r] .. bounds[r + 1] - 1
    levels = int(bounds[-1])
    scans = ((program[L.P_LEVEL_KIND][:levels] == L.SCAN)
             & (program[L.P_LEVEL_RANGE][:levels] == 0)
             & np.isin(program[L.P_LEVEL_REL][:levels], relations))
    rule_of_level = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    scanning = np.zeros(len(bounds) - 1, dtype=bool)
    scanning[rule_of_level[scans]] = True
    return scanning


def _linear(rule: Rule, relations: Collection[str]) -> bool:
    """Whether ``rule`` has at most one positive atom over ``relations``. O(body)."""
    return sum(not literal.negated and literal.atom.relation in relations
               for literal, _ in rule_literals(rule)) <= 1


def _body_relations(rule: Rule) -> set[str]:
    return {literal.atom.relation for literal, _ in rule_literals(rule)}

