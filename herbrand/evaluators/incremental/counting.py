"""``counting``: derivation counts per fixpoint iteration, as differential dataflow keeps them.

Within a stratum, iteration k applies the rules to X_{k-1}, the stratum's relations after
iteration k - 1 (X_0 empty; base facts come from base rules, see ``programs``). Let C_k count,
for every tuple, its rule instances over X_{k-1} and the lower relations; X_k is the support of
C_k. The state keeps, per derived relation and iteration, D_k = C_k - C_{k-1} (never negative:
X grows with k), as a weighted batch, and the run of the tuples first derived in iteration k.
D_k is nonzero only for instances that use a tuple new in iteration k - 1, so the state is the
derivation counts of semi-naive evaluation, tagged with their iteration.

Bootstrap computes the D_k by semi-naive evaluation with exact differences
(``counting_rules.iteration_variants``). An update walks the iterations again and computes the
change of each D_k between the old and the new state directly, as differential dataflow does
over its two-dimensional (epoch, iteration) time: in iteration 1 from the instances that use a
changed fact (``counting_rules.epoch_variants``), in iteration k >= 2 from instances that join a
change between the states with a tuple first derived in iteration k - 1
(``counting_rules.twofold_variants``), so that work follows the change, not the relation. Then
D'_k = D_k + that change, and only the touched tuples can change the iteration in which they are
first derived. A tuple that loses every derivation at every iteration disappears, so deletions
inside recursion are exact (a cycle does not keep itself alive). A rule whose aggregate reads a
changed relation, or whose negated literal with a wildcard or an expression reads one, is
differenced whole in each iteration (evaluated over both states; its change of D_k is the
difference of two such changes of C_k): a documented fallback.

Cost per update: per iteration, only the variants whose first literal (a change) has rows run
(an iteration without one evaluates nothing, ``VariantGroup``), and only the relations they
read are built (the new state's prefixes only once a first iteration changed, ``Walk``); the
rule evaluator's work on the instances joining a change with the last iteration's new tuples
(those per-iteration relations reduced by the change first, ``counting_semijoins``, so that no
index of them is built again), galloping searches of the t touched tuples (among the
iteration's e count entries and Δ_k, and the old runs of iterations 1..k for the few whose
membership of X_{k-1} the rest does not tell: O(t log(e / t) + t) each) and, when D_k
changes, the changed counts written in place and the keys new to D_k kept pending (O(t)
plus the pending entries; O(e) when they outgrow their budget and merge: ``PackedCounts``),
all in one native pass when the keys pack (``counting_refresh``), never a sort of the whole
state. A relation none of whose tuples changes its first iteration is kept as it was (no
copy). The inputs' changes come from hash tables kept across updates (``RelationSets``),
O(m) expected.
State: the count entries (one per tuple and iteration in which it gains derivations, plus
the zeros not merged away yet), the per-iteration runs and the updated inputs' hash tables,
about the size of the materialization or a few times it. The new state is built beside the
old one (sharing what did not change) and committed at the end, where the counts changed in
place are written, so a failure leaves the engine as it was.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.fixpoint import delta_name
from herbrand.evaluators.incremental import weighted
from herbrand.evaluators.incremental.changes import apply_updates, as_batch_changes, visible
from herbrand.evaluators.incremental.counting_rules import (
    DROPPED,
    GAINED,
    MINUS,
    MINUS_PREV,
    NEW_DELTA,
    NEW_PREV,
    OLD,
    OLD_DELTA,
    OLD_PREV,
    PLUS,
    PLUS_PREV,
    PREV,
    SignedRule,
    epoch_variants,
    iteration_variants,
    twofold_variants,
)
from herbrand.evaluators.incremental.counting_runs import sorted_run, summed_run, without_runs
from herbrand.evaluators.incremental.counting_selections import GrowingSelections, held
from herbrand.evaluators.incremental.counting_semijoins import Semijoins
from herbrand.evaluators.incremental.counting_trace import (
    PackedCounts,
    Trace,
    column_bounds,
    trimmed,
)
from herbrand.evaluators.incremental.counting_walk import Walk
from herbrand.evaluators.incremental.engine_base import StoredEngine
from herbrand.evaluators.incremental.programs import IncrementalProgram
from herbrand.evaluators.incremental.relation_sets import RelationSets
from herbrand.evaluators.incremental.row_index import identity_codec
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.analysis import Stratum, rule_literals
from herbrand.framework.contracts import Batch, BatchChanges
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Program

# the prefixes of the changes between the states: small, checked for a rule's constants
_CHANGES = frozenset({PLUS, MINUS, PLUS_PREV, MINUS_PREV, GAINED, DROPPED})


@dataclass(frozen=True)
class VariantGroup:
    """The signed variants whose first literal reads ``delta`` (they derive nothing while it
    is empty), every relation they read, the changes between the states among those
    (``changes``) and the (change, integer constants) of their literals over one
    (``constants``): what ``CountingEngine._signed`` checks, found once."""

    delta: str
    variants: tuple[SignedRule, ...]
    reads: frozenset[str]
    changes: frozenset[str]
    constants: frozenset[tuple[str, tuple[tuple[int, int], ...]]]

    @classmethod
    def grouped(cls, variants: list[SignedRule]) -> tuple[VariantGroup, ...]:
        """``variants`` in groups by their first literal's relation, in order of first
        occurrence. O(variants · body)."""
        groups: dict[str, list[SignedRule]] = {}
        for signed in variants:
            groups.setdefault(signed.delta, []).append(signed)
        return tuple(cls.of(delta, tuple(group)) for delta, group in groups.items())

    @classmethod
    def of(cls, delta: str, variants: tuple[SignedRule, ...]) -> VariantGroup:
        """The group of ``variants``, which all read ``delta`` first. O(variants · body)."""
        reads = frozenset(lit.atom.relation for signed in variants
                          for lit, _ in rule_literals(signed.rule))
        changes = frozenset(name for name in reads if name[:name.find(":") + 1] in _CHANGES)
        return cls(delta, variants, reads, changes, frozenset(
            literal for signed in variants for literal in signed.reads.literals
            if literal[1] and literal[0] in changes))


class CountingEngine(StoredEngine):
    """Per-iteration derivation counts. ``index``: the relational evaluator's index backing."""

    def __init__(self, index: str = "sorted_vector"):
        self.index = index
        self._evaluator = RelationalEvaluator(index=index)
        self._program: IncrementalProgram | None = None
        self._state: Database | None = None
        super().__init__()
        self._traces: dict[str, Trace] = {}
        self._sets = RelationSets()  # hash tables of the updated inputs, kept across updates
        self._selections = GrowingSelections(())
        # the reducible relations (deltas) have no kept selections: constants reduced too;
        # they are runs' rows or slices of a relation stored run by run: in order
        self._semijoins = Semijoins(constants=True, ordered=True)
        # per stratum of the bootstrapped program (by index) and set of changed lower
        # relations: the update's variants (``_plan``); per stratum, the relations it reads
        self._plans: dict[tuple[int, frozenset[str]], tuple] = {}
        self._reads_of: dict[int, frozenset[str]] = {}

    # -- contract --------------------------------------------------------------------------------

    def bootstrap(self, program: Program, database: Database) -> None:
        """Semi-naive evaluation keeping each iteration's derivation counts."""
        prepared, instance = IncrementalProgram.prepare(program, database)
        traces: dict[str, Trace] = {}
        for stratum in prepared.strata:
            instance = self._bootstrap_stratum(stratum, instance, traces)
        self._commit(prepared, instance, traces, "bootstrap")
        self._sets = RelationSets.of({name: instance[name] for name in prepared.inputs})
        self._plans, self._reads_of = {}, {}
        # the relations that grow along an update's iterations, or stay fixed during it
        self._selections = GrowingSelections(
            {prefix + name for name in instance for prefix in ("", OLD, NEW_PREV, OLD_PREV)})
        self._plan_first_updates(prepared, instance)

    def update(self, insert: Mapping[str, Batch], delete: Mapping[str, Batch]) -> BatchChanges:
        """Deletes then inserts on the inputs (through their kept hash tables: O(m) expected
        for m given rows), then each stratum's iterations in order."""
        old = self._state
        new, added, removed = apply_updates(old, insert, delete, self._sets)
        traces = dict(self._traces)
        patches: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        try:
            for stratum in self._program.strata:
                new = self._update_stratum(stratum, old, new, added, removed, traces, patches)
        finally:
            self._selections.release(rewrites=False)
        changes = as_batch_changes(added, removed)
        self._commit(self._program, new, traces, "counting", patches)
        return changes

    def state_size(self) -> tuple[int, int]:
        """The count entries; the bytes of them, of the per-iteration runs of every derived
        relation and of the updated inputs' hash tables."""
        sizes = [trace.size() for trace in self._traces.values()]
        return sum(s[0] for s in sizes), sum(s[1] for s in sizes) + self._sets.nbytes

    def counts(self, relation: str) -> dict[tuple[int, ...], dict[int, int]]:
        """The derivation counts of a derived relation: encoded row -> {iteration: count},
        for inspection and tests. O(entries) Python objects."""
        table: dict[tuple[int, ...], dict[int, int]] = {}
        codec = identity_codec(self._state[relation].arity)
        for iteration, packed in enumerate(self._traces[relation].counts, start=1):
            rows, weights = packed.unpacked(codec)
            for row, count in zip(map(tuple, rows.T.tolist()), weights.tolist(), strict=True):
                table.setdefault(row, {})[iteration] = count
        return table

    def _commit(self, program: IncrementalProgram, state: Database, traces: dict[str, Trace],
                strategy: str, patches: Collection[tuple[np.ndarray, np.ndarray, np.ndarray]] = ()
                ) -> None:
        """Make ``state`` and ``traces`` the engine's, writing the ``patches`` of the count
        arrays the new traces share with the old (``PackedCounts.patched``)."""
        database = visible(state)  # the last call that can fail; then plain assignments
        for counts, positions, values in patches:
            counts[positions] = values
        self._program, self._state, self._database, self._traces, self._strategy = (
            program, state, database, traces, strategy)

    # -- bootstrap -------------------------------------------------------------------------------

    def _bootstrap_stratum(self, stratum: Stratum, instance: Database,
                           traces: dict[str, Trace]) -> Database:
        relations = stratum.relations
        codecs = {name: identity_codec(instance[name].arity) for name in relations}
        variants = tuple(v for rule in stratum.rules
                         for v in iteration_variants(rule, relations))
        counts = {name: [] for name in relations}
        firsts = {name: [] for name in relations}
        bounds = {name: [] for name in relations}
        derived = self._evaluator.derive(stratum.rules, instance)
        while True:
            new_rows = {}
            for name in relations:
                rows = derived.get(name, np.zeros((instance[name].arity, 0), dtype=np.int64))
                consolidated = weighted.consolidate(*weighted.bag(rows))
                counts[name].append(PackedCounts.of(codecs[name], consolidated))
                run = without_runs(sorted_run(codecs[name], consolidated[0]), firsts[name])
                firsts[name].append(run)
                new_rows[name] = Relation(run.rows(), unique=True)
                bounds[name].append(column_bounds(new_rows[name].columns))
            reads = {}
            for name, rows in new_rows.items():
                reads[PREV + name] = instance[name]
                reads[delta_name(name)] = rows
            instance = instance.with_relations(
                {name: instance[name].extend(rows) for name, rows in new_rows.items()})
            if not variants or not any(map(len, new_rows.values())):
                break
            derived = self._evaluator.derive(variants, instance.with_relations(reads))
        for name in relations:
            traces[name] = trimmed(counts[name], firsts[name], bounds[name])
        return instance

    # -- update ----------------------------------------------------------------------------------

    def _update_stratum(self, stratum: Stratum, old: Database, new: Database,
                        added: dict[str, Relation], removed: dict[str, Relation],
                        traces: dict[str, Trace], patches: list) -> Database:
        """``new`` with the stratum's relations updated; records their changes in ``added`` /
        ``removed``, their new traces in ``traces`` and the writes into the old counts
        those need in ``patches`` (done at the commit)."""
        lower = frozenset(name for name in self._reads(stratum) & (added.keys() | removed.keys())
                          if len(added[name]) or len(removed[name]))
        if not lower:
            return new
        relations = stratum.relations
        first, twofold, whole, whole_reads = self._plan(stratum, lower)
        fixed = {}
        for name in lower:
            fixed.update({OLD + name: old[name], PLUS + name: added[name],
                          MINUS + name: removed[name]})
        walk = Walk(stratum, old, traces)
        # the relations replaced in each iteration (an index of them is built again in each)
        reducible = frozenset(prefix + name for name in relations
                              for prefix in (NEW_DELTA, OLD_DELTA))
        previous_whole: dict[str, weighted.Weighted] = {}
        while walk.more():
            # the variants whose first literal (a change) has rows; the others derive nothing
            active = [group for group in (first if walk.k == 1 else twofold)
                      if self._rows(group.delta, fixed, walk, new)]
            if not active and not whole and not previous_whole:
                walk.step({})
                continue
            needed = set(whole_reads).union(*(group.reads for group in active))
            instance = new.with_relations({**fixed, **walk.reads(needed)})
            parts = self._signed(active, instance, reducible, walk.bounds_of)
            whole_change = self._whole(whole, instance, old, relations)
            deltas = {}
            for name in relations:
                changes = list(parts.get(name, []))
                if name in whole_change:
                    changes.append(whole_change[name])
                if name in previous_whole:
                    changes.append(weighted.negated(previous_whole[name]))
                deltas[name] = summed_run(walk.codecs[name], *changes)
            previous_whole = whole_change
            walk.step(deltas)
        for name in relations:
            added[name], removed[name] = walk.net_changes(name)
            traces[name] = walk.trace(name)
        patches.extend(walk.patches)
        return new.with_relations({name: walk.relation(name) for name in relations})

    @staticmethod
    def _rows(name: str, fixed: Mapping[str, Relation], walk: Walk, new: Database) -> int:
        """The size of the relation ``name`` an iteration's variant reads (a change of a
        lower relation, a relation of the walk, or a lower relation), without building a
        delta of the walk."""
        if name in fixed:
            return len(fixed[name])
        if name.rpartition(":")[2] in walk.old:
            return walk.size(name)
        return len(new[name])

    def _reads(self, stratum: Stratum) -> frozenset[str]:
        """The relations the stratum's rules read, computed once per stratum of the
        bootstrapped program."""
        if stratum.index not in self._reads_of:
            self._reads_of[stratum.index] = frozenset(
                lit.atom.relation for rule in stratum.rules for lit, _ in rule_literals(rule))
        return self._reads_of[stratum.index]

    def _plan(self, stratum: Stratum, lower: frozenset[str]
              ) -> tuple[tuple[VariantGroup, ...], tuple[VariantGroup, ...], list,
                         frozenset[str]]:
        """``(first, twofold, whole, whole_reads)`` for an update of ``stratum`` whose changed
        lower relations are ``lower``: the signed variants of iteration 1 and of the later
        iterations in groups by their first literal's relation, the rules differenced whole,
        and the relations those read in both states. Built once per stratum and set of
        changed relations (O(rules · variants)), then reused, so an update does not translate
        its variants again (and the evaluator's and the selections' caches keyed by those
        rules keep hitting)."""
        key = (stratum.index, lower)
        if key not in self._plans:
            relations = stratum.relations
            first, twofold, whole = [], [], []
            for rule in stratum.rules:
                variants, is_whole = epoch_variants(rule, lower | set(relations))
                first.extend(variants)
                if is_whole:
                    whole.append(rule)
                else:
                    twofold.extend(twofold_variants(rule, lower, relations))
            whole_reads = frozenset(
                {lit.atom.relation for rule in whole for lit, _ in rule_literals(rule)}
                | ({OLD + name for name in relations} if whole else set()))
            self._plans[key] = (VariantGroup.grouped(first), VariantGroup.grouped(twofold),
                                whole, whole_reads)
        return self._plans[key]

    def _plan_first_updates(self, program: IncrementalProgram, state: Database) -> None:
        """Build the variants of each stratum for an update that changes every lower relation
        it reads (``_plan``), and have the evaluator plan them by one application over
        ``state`` with empty changes (the variants start from a change, so it derives
        nothing), so that the first update neither rewrites nor translates its rules (on RDFS
        LUBM(1), about half of a first 1% update), and analyse them for the semi-joins
        (``Semijoins.analyse``). O(variants) translations, plus a scan per constant selection
        of the state."""
        lower_relations = set(program.inputs)
        try:
            for stratum in program.strata:
                lower = frozenset(name for name in self._reads(stratum) & lower_relations
                                  if not name.startswith("@"))
                lower_relations.update(stratum.relations)
                if not lower:
                    continue
                first, twofold, _, _ = self._plan(stratum, lower)
                rules = [signed.rule for group in (*first, *twofold)
                         for signed in group.variants]
                self._semijoins.analyse(rules)
                needed = set().union(*(group.reads for group in (*first, *twofold)))
                arities = {lit.atom.relation: lit.atom.arity for rule in rules
                           for lit, _ in rule_literals(rule)}
                reads = {}  # the states as they are (the plans see their sizes), no changes
                for name in needed - state.keys():
                    prefix, _, base = name.partition(":")
                    reads[name] = (state[base] if prefix + ":" in (OLD, NEW_PREV, OLD_PREV)
                                   else Relation.empty(arities[name]))
                rules, selected = self._selections.applied(rules, state.with_relations(reads))
                self._evaluator.derive(rules, selected)
        finally:
            self._selections.release(rewrites=False)

    def _signed(self, groups: list[VariantGroup], instance: Database, reducible: frozenset[str],
                bounds: Callable[[str], np.ndarray | None]) -> dict[str, list[weighted.Weighted]]:
        """The derivations of the groups' signed rules, weighted, one evaluator call per sign.
        A rule with a literal over a change (``@plus:``, ``@gained:``, ...) whose integer
        constants no row of it holds derives nothing and is left out (``RuleReads.may_derive``:
        on RDFS, most rules read one predicate; each constant is looked up once per call,
        ``held``, only the changes the groups read are looked at: ``VariantGroup``); the
        others' atoms over the ``reducible`` relations (those replaced in each iteration) read
        semi-join reductions by the change (``counting_semijoins``; a reduction by values
        outside the ``bounds`` of a run's columns is empty without a scan), their constant
        atoms over the large relations kept selections (``counting_selections``)."""
        names = frozenset().union(*(group.changes for group in groups))
        changes = {name: instance[name].columns for name in names if name in instance}
        seen = held(changes, [key for key in frozenset().union(*(g.constants for g in groups))
                              if key[0] in changes])
        signed = [s for group in groups for s in group.variants
                  if s.reads.may_derive(changes, {}, seen)]
        parts: dict[str, list[weighted.Weighted]] = {}
        for sign in (1, -1):
            rules = [s.rule for s in signed if s.sign == sign]
            if rules:
                rules, reduced = self._semijoins.reduced(rules, instance, reducible, bounds)
                rules, selected = self._selections.applied(rules, reduced)
                for name, rows in self._evaluator.derive(rules, selected).items():
                    parts.setdefault(name, []).append(weighted.bag(rows, sign))
        return parts

    def _whole(self, rules: list, new: Database, old: Database,
               relations: Collection[str]) -> dict[str, weighted.Weighted]:
        """ΔC_k of the rules differenced whole: derivations over the new state (``new``)
        minus those over the old state (``old`` with the stratum's ``relations`` as ``new``
        holds their ``OLD`` versions), consolidated."""
        if not rules:
            return {}
        old = old.with_relations({name: new[OLD + name] for name in relations})
        parts: dict[str, list[weighted.Weighted]] = {}
        for state, sign in ((new, 1), (old, -1)):
            for name, rows in self._evaluator.derive(rules, state).items():
                parts.setdefault(name, []).append(weighted.bag(rows, sign))
        return {name: weighted.combine(new[name].arity, *p) for name, p in parts.items()}
