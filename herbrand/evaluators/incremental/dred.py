"""``dred``: delete-rederive, with semi-naive insertion.

Per stratum, in evaluation order, given the changes (added and removed rows) of the relations
below it:

1. Overdelete, over the old state: every head of a rule instance that uses a removed fact of a
   positive literal, an added fact of a negated literal, or a changed aggregate, then (in a
   recursive stratum) semi-naively every head of an instance using an overdeleted fact.
2. Rederive: the overdeleted facts that one rule application still derives from the remaining
   state (the new lower relations and the stratum's old facts minus the overdeleted ones).
3. Insert, over the new state: the rederived facts and every head of a rule instance using an
   added fact of a positive literal, a removed fact of a negated literal, or a changed
   aggregate; then semi-naive iteration to the fixpoint.

The stratum's changes are then ``inserted - overdeleted`` and ``overdeleted - inserted``, which
feed the strata above as their lower changes. A rule whose aggregate reads a changed relation is
evaluated whole in steps 1 and 3 (all its old heads overdeleted, all its new heads inserted): the
aggregate is recomputed, not maintained.

Cost per update: the rule evaluator's work on instances touching the changes (and on the
overdeleted facts, which may exceed the net change: the known weakness of DRed). The set
operations go through hash tables of the current relations kept from one update to the next
(``relation_sets.RelationSets``): which rows an update or a step adds or removes is O(1)
expected per row, plus the O(n) copy of each changed relation, never a sort of a whole
relation. Every change of a relation is also told to the evaluator's indexes
(``relation_changed``, which take it instead of a rebuild) and to the constant selections kept
across updates (``selections.KeptSelections``, which every step's constant atoms read), so a
small update scans no whole relation. State beyond the materialization: the base facts of
derived relations (``@base:`` relations), usually none, those tables (two int64 slots per row)
and the kept selections (with their tables). Every step reads
immutable Relations and the new state is committed at the end, so a failure leaves the engine
as it was (a table taken by a failed update is dropped, and rebuilt by the next one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from herbrand.evaluators.fixpoint import DELTA_PREFIX, delta_name, delta_variants
from herbrand.evaluators.incremental.changes import (
    RESERVED_PREFIX,
    apply_updates,
    as_batch_changes,
    visible,
)
from herbrand.evaluators.incremental.engine_base import StoredEngine
from herbrand.evaluators.incremental.programs import (
    IncrementalProgram,
    change_variants,
    head_restricted,
    with_empty_reads,
)
from herbrand.evaluators.incremental.relation_sets import (
    RelationSet,
    RelationSets,
    hashed_changes,
)
from herbrand.evaluators.incremental.selections import KeptSelections, select_constants
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.evaluators.row_sets import RowSet
from herbrand.framework.analysis import Stratum, rule_literals
from herbrand.framework.contracts import Batch, BatchChanges
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Program, Rule

# The changes and the overdeleted facts that the rewritten rules start from are named as delta
# relations, so that the join order starts from them whatever the sizes the relational
# evaluator saw when it planned (and cached) the rule: a plan made on a large first change,
# reused for a tiny one, would otherwise scan the whole state.
PLUS, MINUS, OVER = (DELTA_PREFIX + "plus:", DELTA_PREFIX + "minus:", DELTA_PREFIX + "over:")


class DRedEngine(StoredEngine):
    """Delete-rederive. ``index``: the relational evaluator's index backing; ``spine`` by
    default, because an update changes each relation by a few rows and the engine tells the
    evaluator's indexes of every change (``RelationalEvaluator.relation_changed``): spine
    appends a small run for an insert and copies only the runs that lose rows for a delete,
    where sorted_vector merges its whole run (O(n)) after every change (on RDFS LUBM(1), a
    one-fact delete 5 -> 1.6 ms; 1% updates and the bootstrap the same within noise).
    ``prepare``: the Bootstrap also builds the plans, selections and indexes an update's first
    derivations would (``_prepare``): a first update costs what later ones do, for a longer
    Bootstrap (on RDFS over LUBM(1), ``bf``: 67 -> 90 ms, its first 1% delete 44 -> 19 ms);
    False leaves them to the first update that probes them."""

    STRATEGY = "dred"  # the name of an update in ``last_strategy``

    def __init__(self, index: str = "spine", prepare: bool = True):
        self.index = index
        self.prepare = prepare  # whether the Bootstrap builds what updates probe (``_prepare``)
        self._evaluator = RelationalEvaluator(index=index)
        self._program: IncrementalProgram | None = None
        self._state: Database | None = None
        self._sets = RelationSets()  # hash tables of the current relations, for the next update
        # constant selections of the state relations, carried along their changes
        self._selections = KeptSelections(self._evaluator)
        super().__init__()

    # -- contract --------------------------------------------------------------------------------

    def bootstrap(self, program: Program, database: Database) -> None:
        """Materialize semi-naively: the insertion step with every rule as a seed rule."""
        prepared, instance = IncrementalProgram.prepare(program, database)
        self._sets = RelationSets.of({name: instance[name] for name in prepared.inputs})
        self._selections = KeptSelections(self._evaluator)
        for stratum in prepared.strata:
            known = {name: RelationSet(instance[name]) for name in stratum.relations}
            instance, _ = self._closure(stratum, instance, stratum.rules, {}, known, grow=True)
            self._keep(known)
        if self.prepare:
            self._prepare(prepared, instance)
        self._commit(prepared, instance, "bootstrap")

    def update(self, insert: Mapping[str, Batch], delete: Mapping[str, Batch]) -> BatchChanges:
        """Apply deletes then inserts to the inputs and maintain each stratum in order."""
        old = self._state
        new, added, removed = apply_updates(old, insert, delete, self._sets)
        for name in added:
            self._changed(name, old[name], new[name], removed[name].columns, added[name].columns)
        for stratum in self._program.strata:
            new = self._maintain(stratum, old, new, added, removed)
        changes = as_batch_changes(added, removed)
        self._commit(self._program, new, self.STRATEGY)
        return changes

    def state_size(self) -> tuple[int, int]:
        """The base facts of derived relations (tuples and bytes), plus the bytes of the hash
        tables and constant selections kept for the next update (``RelationSets``,
        ``KeptSelections``). O(relations)."""
        kept = [r for name, r in self._state.items() if name.startswith(RESERVED_PREFIX)]
        return sum(map(len, kept)), (sum(r.nbytes for r in kept) + self._sets.nbytes
                                     + self._selections.nbytes)

    # -- steps -----------------------------------------------------------------------------------

    def _prepare(self, program: IncrementalProgram, state: Database) -> None:
        """Make in the Bootstrap what an update's first derivations over ``state`` would make
        before their first probe, as a dataflow engine builds its arrangements up front: per
        stratum, the plans of its change variants (as if every lower relation it reads gained
        and lost rows), the constant selections they read and the evaluator's indexes they
        probe, and the same for the deletion step (``_prepare_deletion``). An update then
        costs what the ones after it cost (on TC over graph10000, ``bf``'s first 1% insert
        built an index of ``tc`` on its second column: 17 ms, 4 ms after). Cost: O(n) per
        selection and O(n log n) per index not kept yet, once; their memory."""
        for stratum in program.strata:
            lower = {literal.atom.relation for rule in stratum.rules
                     for literal, _ in rule_literals(rule)} - set(stratum.relations)
            plus = {name: PLUS + name for name in lower}
            minus = {name: MINUS + name for name in lower}
            self._prepare_rules(_variants(stratum.rules, positive=plus, negative=minus), state)
            self._prepare_deletion(stratum, state,
                                   _variants(stratum.rules, positive=minus, negative=plus))

    def _prepare_deletion(self, stratum: Stratum, state: Database,
                          deletion_rules: Sequence[Rule]) -> None:
        """Prepare ``_delete``'s overdeletion over ``state`` (the deletion variants, then the
        stratum's delta variants). Not the rederivation: it reads the state without the
        overdeleted facts, whose sizes (the join order's hint) only the update knows (on TC
        over graph10000 a 1% delete overdeletes nearly all of ``tc``, and a plan made over
        the whole of it took 1.2 s instead of 0.6)."""
        self._prepare_rules(tuple(deletion_rules) + _delta_variants(stratum), state)

    def _prepare_rules(self, rules: Sequence[Rule], instance: Database) -> None:
        """Prepare the evaluator for ``rules`` as ``_derive`` runs them over ``instance``
        (constant atoms reading the kept selections; the relations it lacks empty)."""
        rules, instance = select_constants(rules, with_empty_reads(rules, instance),
                                           self._selections)
        self._evaluator.prepare(rules, instance)

    def _commit(self, program: IncrementalProgram, state: Database, strategy: str) -> None:
        database = visible(state)  # the last call that can fail; then plain assignments
        self._program, self._state, self._database, self._strategy = (
            program, state, database, strategy)

    def _maintain(self, stratum: Stratum, old: Database, new: Database,
                  added: dict[str, Relation], removed: dict[str, Relation]) -> Database:
        """``new`` with ``stratum``'s relations maintained; records their changes in ``added``
        and ``removed``."""
        plus = {name: PLUS + name for name, rows in added.items() if len(rows)}
        minus = {name: MINUS + name for name, rows in removed.items() if len(rows)}
        deletion_rules = _variants(stratum.rules, positive=minus, negative=plus)
        insert_rules = _variants(stratum.rules, positive=plus, negative=minus)
        if not deletion_rules and not insert_rules:
            return new
        deltas = {**{plus[n]: added[n] for n in plus}, **{minus[n]: removed[n] for n in minus}}
        reads = new.with_relations(deltas)
        gone, remaining, seeds = self._delete(stratum, old.with_relations(deltas), reads,
                                              deletion_rules)
        instance = reads.with_relations(remaining)
        known = {name: self._sets.take(name, remaining[name]) for name in stratum.relations}
        instance, inserted = self._closure(stratum, instance, insert_rules, seeds, known,
                                           grow=True)
        self._keep(known)
        for name in stratum.relations:
            added[name], removed[name] = hashed_changes(gone[name], inserted[name])
        return new.with_relations({name: instance[name] for name in stratum.relations})

    def _delete(self, stratum: Stratum, old: Database, new: Database,
                deletion_rules: Sequence[Rule]) -> tuple[dict[str, Relation],
                                                         dict[str, Relation], dict]:
        """The deletion step of one stratum: ``(gone, remaining, seeds)``, the stratum's facts
        taken out, the rest of its old facts, and the batches the insertion step starts from.
        ``old`` / ``new`` are the states before and after the lower strata's changes (both
        with the change relations the ``deletion_rules`` read; the stratum's relations old in
        both). Here: overdelete, then rederive the overdeleted facts that one rule application
        still derives (they are inserted again)."""
        empty = {name: RowSet(old[name].columns[:, :0]) for name in stratum.relations}
        _, over = self._closure(stratum, old, deletion_rules, {}, empty, grow=False)
        remaining = {name: self._without(name, old[name], over[name])
                     for name in stratum.relations}
        instance = new.with_relations({**remaining,
                                       **{OVER + n: rows for n, rows in over.items()}})
        rederive = tuple(head_restricted(rule, OVER + rule.head.relation)
                         for rule in stratum.rules if len(over[rule.head.relation]))
        if not rederive:
            return over, remaining, {}
        rederive, instance = select_constants(rederive, instance, self._selections)
        return over, remaining, self._evaluator.derive(rederive, instance)

    def _without(self, name: str, relation: Relation, rows: Relation) -> Relation:
        """``relation`` without ``rows``, through (and keeping) its RelationSet, the
        evaluator's indexes and the kept selections of it told of the change. O(m) expected
        for m rows, plus the O(n) copy when some leave and the indexes' deletes."""
        kept, gone = self._sets.take(name, relation).remove(rows.columns)
        self._sets.put(name, kept)
        self._changed(name, relation, kept.relation, gone, gone[:, :0])
        return kept.relation

    def _changed(self, name: str, before: Relation, after: Relation, removed: np.ndarray,
                 added: np.ndarray) -> None:
        """Tell the evaluator's indexes and the kept selections of relation ``name`` that
        ``after`` is ``before`` without ``removed`` and with ``added``. O(m) expected plus
        the indexes' and views' updates."""
        self._evaluator.relation_changed(name, before, after, removed, added)
        self._selections.changed(name, before, after, removed, added)

    def _keep(self, known: Mapping[str, RelationSet]) -> None:
        """Keep the grown sets for the next update (they match the Relations committed, and
        are never matched by identity if this update fails)."""
        for name, kept in known.items():
            self._sets.put(name, kept)

    def _closure(self, stratum: Stratum, instance: Database, seed_rules: Sequence[Rule],
                 seeds: Mapping, known: dict[str, RelationSet | RowSet],
                 grow: bool) -> tuple[Database, dict[str, Relation]]:
        """Semi-naive propagation within ``stratum`` from the heads of ``seed_rules`` over
        ``instance`` plus the ``seeds`` batches: every fact derivable that is not in ``known``
        (whose sets grow in place in the dict: the caller owns them). With ``grow`` (``known``:
        the RelationSet of each of the instance's stratum relations) those relations are the
        sets' relations as they grow (insertion); without (``known``: RowSets, empty at first,
        growing without copies) the relations stay as they are (overdeletion over the old
        state), so the rules read constant selections of them made once
        (``select_constants``). Returns the instance and the facts found per relation."""
        start = {name: len(known[name].relation) if grow else len(known[name])
                 for name in stratum.relations}
        variants = _delta_variants(stratum)
        if not grow and seed_rules:  # a fixed instance: constant atoms read selections of it
            rules, instance = select_constants(tuple(seed_rules) + variants, instance,
                                               self._selections)
            seed_rules, variants = rules[:len(seed_rules)], rules[len(seed_rules):]
        derived = dict(seeds)
        for name, rows in (self._derive(seed_rules, instance, grow) if seed_rules
                           else {}).items():
            derived[name] = _concat(derived.get(name), rows)
        while True:
            new_rows = {}
            for name in stratum.relations:
                rows = instance[name].columns[:, :0]
                if name in derived and grow:
                    before = known[name].relation
                    known[name], rows = known[name].insert(derived[name])
                    self._selections.changed(name, before, known[name].relation, rows[:, :0],
                                             rows)
                    self._evaluator.relation_extended(name, before, known[name].relation)
                elif name in derived:
                    rows = known[name].insert(derived[name])
                new_rows[name] = Relation(rows, unique=True)
            if not any(map(len, new_rows.values())):
                break
            if grow:
                instance = instance.with_relations(
                    {name: known[name].relation for name in stratum.relations})
            if not variants:
                break
            reads = instance.with_relations(
                {delta_name(name): rows for name, rows in new_rows.items()})
            derived = self._derive(variants, reads, grow)
        found = {name: known[name].relation.columns if grow else known[name].rows()
                 for name in stratum.relations}
        return instance, {name: Relation(rows[:, start[name]:], unique=True)
                          for name, rows in found.items()}


    def _derive(self, rules: Sequence[Rule], instance: Database,
                select: bool) -> dict[str, np.ndarray]:
        """The evaluator's derivations of ``rules``, their constant atoms over state relations
        reading the kept selections when ``select`` (``KeptSelections``)."""
        if select:
            rules, instance = select_constants(rules, instance, self._selections)
        return self._evaluator.derive(rules, instance)


def _delta_variants(stratum: Stratum) -> tuple[Rule, ...]:
    """The semi-naive delta variants of a recursive stratum's rules (none otherwise)."""
    if not stratum.recursive:
        return ()
    return tuple(v for rule in stratum.rules for v in delta_variants(rule, set(stratum.relations)))


def _variants(rules: Sequence[Rule], positive: Mapping[str, str],
              negative: Mapping[str, str]) -> tuple[Rule, ...]:
    return tuple(v for rule in rules for v in change_variants(rule, positive, negative))


def _concat(first: np.ndarray | None, second: np.ndarray) -> np.ndarray:
    return second if first is None else np.concatenate([first, second], axis=1)
