"""``elastic``: Bootstrap / Update with a sparse state and the switch (the elastic paper).

The state is two int64 numbers per derived tuple, in numpy arrays aligned with the relation's
rows (``RelationState``): the iteration in which semi-naive evaluation first derives it and its
proof count in that iteration (the native Bootstrap counts them in a stratum of linear rules
and leaves them UNKNOWN in others, until an Update needs them: see ``elastic_native``).
``bootstrap`` runs Algorithm 2 stratum by stratum; ``update`` runs Algorithm 3
(``elastic_stratum``) on each stratum whose inputs changed, in order, the changes of lower
strata acting as input changes of the higher ones (negated relations included).

The switch: an Update that runs longer than ``switch`` times the last Bootstrap's time is
abandoned (checked before each stratum and after every join of the Update) and the engine
bootstraps from the updated inputs instead; ``last_strategy`` is then "switched-to-bootstrap"
(else "bootstrap" or "update"). After abandoned attempts in a row of one kind (inserts,
deletes, or both) the engine bootstraps at once for a few updates of that kind (exponential
backoff, ``elastic_budget.SwitchBackoff``): on a small program an Update's fixed cost in
Python exceeds a whole Bootstrap, and every attempt was wasted. ``last_switch`` records the
budget, the work counted against it and how the update ended. The work an Update does for
the native Bootstrap (the proof counts, row indexes and join indexes it deferred) is that
Bootstrap's: it does not count against the Update and counts in the Bootstrap's time, which
the budget is a share of (``elastic_budget``, ``elastic_setup``).

Aggregates are not maintained incrementally: a stratum with an aggregate rule whose inputs
changed is bootstrapped again on its own (Algorithm 2 over the new inputs) and diffed with its
previous state; the strata above it see the difference as input changes.

Atomic: an update computes new immutable states and commits them at its end; an exception
leaves the previous ones. ``clock`` (a class attribute) is the timer the switch reads; tests
may replace it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.incremental.changes import (
    apply_updates,
    as_batch_changes,
    database_changes,
    require_inputs,
    visible,
)
from herbrand.evaluators.incremental.counting_selections import GrowingSelections
from herbrand.evaluators.incremental.elastic_budget import (
    Abandoned,
    SwitchBackoff,
    SwitchBudget,
    SwitchRecord,
)
from herbrand.evaluators.incremental.elastic_derivations import NegatedInput
from herbrand.evaluators.incremental.elastic_native import NativeNumbering
from herbrand.evaluators.incremental.elastic_rules import NegatedSlot, ProbeRule, universe_name
from herbrand.evaluators.incremental.elastic_setup import SetUpEvaluator
from herbrand.evaluators.incremental.elastic_state import NEVER, UNKNOWN, RelationState
from herbrand.evaluators.incremental.elastic_stratum import StratumRun
from herbrand.evaluators.incremental.elastic_universe import InputNumbers, Universe
from herbrand.evaluators.incremental.programs import IncrementalProgram, aggregated_relations
from herbrand.evaluators.incremental.relation_sets import RelationSet, RelationSets
from herbrand.evaluators.incremental.row_index import RowIndex
from herbrand.framework.analysis import Stratum
from herbrand.framework.contracts import Batch, BatchChanges, IncrementalEvaluator
from herbrand.framework.errors import EvaluationError
from herbrand.framework.growing import prefix_view
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Program


@dataclass(frozen=True)
class _StratumPlan:
    stratum: Stratum
    probes: tuple[ProbeRule, ...]
    positives: frozenset[str]  # relations read by positive atoms (own relations included)
    negated: tuple[NegatedSlot, ...]
    aggregated: frozenset[str]  # relations read inside aggregates

    @classmethod
    def of(cls, stratum: Stratum) -> _StratumPlan:
        probes = tuple(ProbeRule.of(rule) for rule in stratum.rules)
        return cls(
            stratum, probes,
            frozenset(r for p in probes for r in p.positives),
            tuple(dict.fromkeys(s for p in probes for s in p.negatives)),
            frozenset().union(*(aggregated_relations(rule) for rule in stratum.rules)),
        )

    @property
    def reads(self) -> frozenset[str]:
        return (self.positives | self.aggregated | {s.relation for s in self.negated}) - set(
            self.stratum.relations)


@dataclass(frozen=True)
class _Snapshot:
    """Everything an update reads and replaces."""

    prepared: IncrementalProgram
    plans: tuple[_StratumPlan, ...]
    database: Database  # inputs, @base relations and the materialization
    states: Mapping[str, RelationState]


class ElasticEngine(IncrementalEvaluator):
    """The elastic engine. ``switch``: abandon an Update that runs longer than this fraction of
    the last Bootstrap's time (the set-up it deferred included). ``index``: the relational
    evaluator's index backing.
    ``native_bootstrap``: Bootstrap numbers the tuples of each stratum it can by a native
    semi-naive run (``elastic_native``) that counts their proofs where its rules are linear
    and leaves them UNKNOWN elsewhere, computed by an Update when it must lower them; False
    runs Algorithm 2 with the relational evaluator, counting every proof (the reference the
    tests compare with).

    Cost: Bootstrap as a native semi-naive materialization plus O(n log n) to index the
    rows (Algorithm 2 in Python: a materialization that also counts derivations); Update per
    iteration the joins seeded by the changes so far (see ``elastic_stratum``) plus O(n)
    vectorised bookkeeping per changed stratum; the inputs' changes come from hash tables of
    the inputs kept across updates (``RelationSets``: O(m) expected for m given rows, where a
    search of every input row among them cost RDFS LUBM(1)'s 1% delete 12 of its 43 ms). State
    (``state_size``): 16 bytes per derived tuple, the tombstones of removed tuples (at most as
    many as live ones), row indexes and the inputs' hash tables.
    """

    clock = staticmethod(time.perf_counter)

    def __init__(self, *, switch: float = 0.2, index: str = "sorted_vector",
                 native_bootstrap: bool = True):
        self.switch = switch
        self.index = index
        self.native_bootstrap = native_bootstrap
        self._evaluator = SetUpEvaluator(index=index)
        self._snapshot: _Snapshot | None = None
        self._bootstrap_seconds = 0.0
        self._backoffs: dict[str, SwitchBackoff] = {}  # by kind of update (``_kind``)
        self._strategy = "none"
        self.last_switch: SwitchRecord | None = None  # the last Update against its budget
        self._sets = RelationSets()  # hash tables of the input relations, for the next update
        self._input_numbers = InputNumbers()  # the numbers of the inputs' universes
        # per stratum (its index), the constant selections of its universes, for the next update
        self._selections: dict[int, GrowingSelections] = {}

    # -- contract --------------------------------------------------------------------------------

    def bootstrap(self, program: Program, database: Database) -> None:
        """Materialize ``program`` over ``database`` with Algorithm 2. Raises the analysis
        errors of the program."""
        start = self.clock()
        prepared, instance = IncrementalProgram.prepare(program, database)
        self._sets = RelationSets.of({name: instance[name] for name in prepared.inputs})
        snapshot = self._bootstrapped(prepared, instance)
        _set_up(snapshot)
        self._snapshot, self._bootstrap_seconds = snapshot, self.clock() - start
        self._backoffs, self._strategy = {}, "bootstrap"

    def update(self, insert: Mapping[str, Batch], delete: Mapping[str, Batch]) -> BatchChanges:
        """Apply one transaction (deletes first) with Algorithm 3, or bootstrap again when the
        switch fires (or without an attempt, after abandoned ones: ``SwitchBackoff``). Raises
        EvaluationError for a relation that is not an input."""
        snapshot = self._require()
        budget = SwitchBudget(self.clock, self.switch, self._bootstrap_seconds)
        database, input_changes = self._updated_inputs(snapshot, insert, delete)
        size = sum(a.shape[1] + r.shape[1] for a, r in input_changes.values())
        backoff = self._backoffs.setdefault(_kind(input_changes), SwitchBackoff())
        if not backoff.attempt(size):
            strategy = "skipped-to-bootstrap"
        else:
            try:
                with self._evaluator.deferring(budget):
                    new_snapshot, changes = self._propagated(
                        snapshot, database, dict(input_changes), budget)
                strategy = "update"
            except Abandoned:
                strategy = "switched-to-bootstrap"
            backoff.record(strategy != "update", size)
        self.last_switch = SwitchRecord(budget.limit, budget.counted(), budget.exempted,
                                        strategy)
        if strategy == "update":
            # the counts and indexes computed here were the Bootstrap's deferred work
            self._bootstrap_seconds += budget.exempted
        else:
            new_snapshot, changes = self._rebootstrapped(snapshot, database, input_changes)
            strategy = "switched-to-bootstrap"
        self._snapshot, self._strategy = new_snapshot, strategy
        return changes

    @property
    def database(self) -> Database:
        return visible(self._require().database)

    @property
    def last_strategy(self) -> str:
        return self._strategy

    def state_size(self) -> tuple[int, int]:
        """(tuples with a state, tombstones included; bytes of their iterations and counts,
        of the tombstones, of the row indexes, of the inputs' hash tables and of the kept
        constant selections, with the rows they were taken from but the states' own)."""
        snapshot = self._require()
        states = snapshot.states.values()
        owned = {universe_name(r) for r in snapshot.states}
        return (sum(len(s.iteration) for s in states),
                sum(s.nbytes for s in states) + self._sets.nbytes + self._input_numbers.nbytes
                + sum(kept.held_nbytes(owned) for kept in self._selections.values()))

    # -- internals -----------------------------------------------------------------------------

    def _require(self) -> _Snapshot:
        if self._snapshot is None:
            raise EvaluationError("the engine has not been bootstrapped")
        return self._snapshot

    def _rebootstrapped(self, snapshot: _Snapshot, database: Database, input_changes
                        ) -> tuple[_Snapshot, BatchChanges]:
        """The switch: Bootstrap from ``database``'s inputs (timed as the new Bootstrap) and
        the changes of every derived relation against ``snapshot``."""
        bootstrap_start = self.clock()
        new_snapshot = self._bootstrapped(snapshot.prepared, _inputs_only(database, snapshot))
        self._bootstrap_seconds = self.clock() - bootstrap_start
        changes = dict(input_changes)
        for name, state in new_snapshot.states.items():
            added, removed = snapshot.states[name].changes_to(state)
            if added.shape[1] or removed.shape[1]:
                changes[name] = (added, removed)
        return new_snapshot, changes

    def _bootstrapped(self, prepared: IncrementalProgram, instance: Database) -> _Snapshot:
        self._evaluator.reset()  # the indexes the next Update builds first are set-up
        self._selections = {}
        plans = tuple(_StratumPlan.of(s) for s in prepared.strata)
        states: dict[str, RelationState] = {}
        numbering = NativeNumbering()
        for plan in plans:
            numbered = (numbering.number(plan.stratum, instance, bool(plan.aggregated))
                        if self.native_bootstrap else None)
            if numbered is None:
                fresh = self._bootstrap_stratum(plan, instance)
            else:
                grown, iterations, counts = numbered
                fresh = {r: RelationState.of(grown[r].columns, iterations[r],
                                             np.full(len(iterations[r]), UNKNOWN)
                                             if counts is None else counts[r])
                         for r in plan.stratum.relations}
            states.update(fresh)
            instance = instance.with_relations({r: s.relation for r, s in fresh.items()})
        return _Snapshot(prepared, plans, instance, states)

    def _bootstrap_stratum(self, plan: _StratumPlan,
                           instance: Database) -> dict[str, RelationState]:
        universes = {r: Universe.of_empty(instance[r].arity) for r in plan.stratum.relations}
        universes.update({r: Universe.of_current(instance[r])
                          for r in plan.positives if r not in universes})
        negated = {s: NegatedInput.of(s, instance[s.relation], instance[s.relation])
                   for s in plan.negated}
        run = StratumRun(plan.probes, universes, negated, self._evaluator, instance.symbols,
                         {r: instance[r] for r in plan.aggregated})
        run.bootstrap(plan.stratum.recursive)
        return {r: universes[r].state() for r in plan.stratum.relations}

    def _updated_inputs(self, snapshot: _Snapshot, insert, delete):
        """(the new database, the inputs' changes); the inputs' kept RelationSets hold the new
        relations."""
        require_inputs(insert.keys() | delete.keys(), snapshot.prepared.inputs)
        database, added, removed = apply_updates(snapshot.database, insert, delete, self._sets)
        return database, as_batch_changes(added, removed)

    def _propagated(self, snapshot: _Snapshot, database: Database, changes: BatchChanges,
                    budget: SwitchBudget) -> tuple[_Snapshot, BatchChanges]:
        """Run Update on every stratum whose inputs changed, in order."""
        states = dict(snapshot.states)
        for number, plan in enumerate(snapshot.plans):
            if not plan.reads & changes.keys():
                continue
            budget.check()  # before a stratum's first join: the inputs' update may have used it up
            if plan.aggregated:
                fresh = self._bootstrap_stratum(plan, database)
                budget.check()
                changes.update(database_changes(
                    snapshot.database, database.with_relations(
                        {r: s.relation for r, s in fresh.items()}), fresh))
            else:
                fresh = self._update_stratum(plan, snapshot, database, changes, budget,
                                             self._kept_selections(number, plan))
            states.update(fresh)
            database = database.with_relations({r: s.relation for r, s in fresh.items()})
        return _Snapshot(snapshot.prepared, snapshot.plans, database, states), changes

    def _update_stratum(self, plan: _StratumPlan, snapshot: _Snapshot, new: Database,
                        changes: BatchChanges, budget: SwitchBudget,
                        selections: GrowingSelections) -> dict[str, RelationState]:
        """Algorithm 3 on one stratum; records the changes of its relations in ``changes``.
        ``selections``: its universes' constant selections, extended by this run. An input's
        universe is in its new relation's order, searched by its kept RelationSet
        (``_input_universe``); a lower stratum's relation's is in its old one's."""
        old, own = snapshot.database, plan.stratum.relations
        universes = {r: _universe(snapshot.states[r], budget) for r in own}
        inputs = plan.positives & snapshot.prepared.inputs
        for r in plan.positives - set(own) - inputs:
            universes[r] = (Universe.of_input(old[r], *changes[r])
                            if r in changes else Universe.of_current(new[r]))
        for r in inputs:
            universes[r] = _input_universe(self._kept_set(r, new[r]), old[r],
                                           *changes.get(r, (None, None)), self._input_numbers)
        # whole-row joins read their row indexes; a join index in their order takes it
        self._evaluator.universes({universe_name(r): universes[r]
                                   for r in (*own, *inputs)})
        negated = {s: NegatedInput.of(s, old[s.relation], new[s.relation]) for s in plan.negated}
        run = StratumRun(plan.probes, universes, negated, self._evaluator, new.symbols, {},
                         budget, selections)
        run.update()
        for r in own:
            added, removed = universes[r].changes()
            if added.shape[1] or removed.shape[1]:
                changes[r] = (added, removed)
        return {r: universes[r].state() for r in own}

    def _kept_set(self, name: str, relation: Relation) -> RelationSet:
        """The RelationSet of input ``name``'s current ``relation`` kept for the next update
        (``RelationSets``; built on a miss, O(n), and kept). O(1) on a hit."""
        kept = self._sets.take(name, relation)
        self._sets.put(name, kept)
        return kept

    def _kept_selections(self, number: int, plan: _StratumPlan) -> GrowingSelections:
        """The constant selections of the universes of the stratum numbered ``number``, kept
        across its Updates since the last Bootstrap: a universe of a derived relation is its
        last one grown (its state's table), so they are extended by the rows appended since,
        and their join indexes too, where a run's own selections were taken from every row
        and compared with the last ones by value (RDFS LUBM(1), one fact: 0.5 ms). O(1)."""
        if number not in self._selections:
            self._selections[number] = GrowingSelections(
                {universe_name(r) for r in plan.positives | set(plan.stratum.relations)})
        return self._selections[number]


def _set_up(snapshot: _Snapshot) -> None:
    """Build what an Update reads of each state it updates (``RelationState.set_up``: the
    rows with their positions, growable numbers, tuples per iteration; and a row index,
    ``RelationState.index``), as part of the engine's first Bootstrap, where it is paid
    once: the first Update after it did that work (RDFS LUBM(1): about 2 ms of a 1% insert's
    8). A switched epoch's Bootstrap leaves it to the next Update (``_universe``,
    ``Universe.find``): the switch backs off, so its states are likely replaced by another
    Bootstrap before one is read. O(n) per state."""
    for plan in snapshot.plans:
        if not plan.aggregated:  # an aggregate's stratum is bootstrapped again per Update
            for name in plan.stratum.relations:
                snapshot.states[name].set_up()
                snapshot.states[name].index()


def _universe(state: RelationState, budget: SwitchBudget) -> Universe:
    """``Universe.of_state``; a switched Bootstrap's state is not set up (its table: its
    rows with their positions, an O(n) copy, growable numbers, tuples per iteration:
    ``RelationState.set_up``): building them is that Bootstrap's deferred set-up, exempt from
    the Update's budget as its row index is (``StratumRun._find``)."""
    if not state.is_set_up:
        budget.exempt(state.set_up)
    return Universe.of_state(state)


def _input_universe(kept: RelationSet, old: Relation, added: np.ndarray | None,
                    removed: np.ndarray | None, numbers: InputNumbers) -> Universe:
    """An input of the stratum (every row at iteration 0) after an update that gained the
    rows ``added`` and lost ``removed`` from its ``old`` relation (exact set differences;
    None: unchanged), in the order of its new relation, which ``kept`` holds and finds (its
    RelationSet: the added rows are its last ones, as ``RelationSet.insert`` appends them),
    the removed rows after them: when they were ``old``'s last rows and none was added (a
    delete of the rows the update before inserted), the new relation is a prefix of
    ``old``'s memory (``RelationSet.remove``) and the universe's rows are ``old``'s, not a
    copy. Its whole-row searches (the provenance queries' joins of it) read ``kept``'s table
    and a row index of the removed rows: no O(n) index of the input is built per update.
    Its numbers are read-only views of ``numbers`` (O(1)), but the old iterations of an
    update that both adds and removes rows (O(n)); O(n) to copy the rows when they are not
    ``old``'s; O(m) expected for m changed rows."""
    new = kept.relation.columns
    n = new.shape[1]
    a = 0 if added is None else added.shape[1]
    r = 0 if removed is None else removed.shape[1]
    if a and r:
        old_iteration = np.zeros(n + r, dtype=np.int64)
        old_iteration[n - a:n] = NEVER
    else:  # n - a zeros and a NEVERs, or n + r zeros
        old_iteration = numbers.runs(n - a, a) if a else numbers.runs(n + r)
    rows, index = new, (_KeptRows(kept),)
    if r:
        if not a and len(old) == n + r and prefix_view(old.columns, new):
            rows = old.columns
            removed = rows[:, n:]
        else:
            rows = np.concatenate([new, removed], axis=1)
        index += (RowIndex(removed, np.arange(n, n + r, dtype=np.int64)),)
    zeros = numbers.runs(n + r)
    return Universe(rows, old_iteration, zeros, numbers.runs(n, r), index,
                    moved=np.arange(n - a, n + r, dtype=np.int64), new_count=zeros)


class _KeptRows:
    """A RelationSet read as a universe's row index (its positions are the rows')."""

    __slots__ = ("_kept",)

    def __init__(self, kept: RelationSet):
        self._kept = kept

    def find(self, rows: np.ndarray) -> np.ndarray:
        """The position of each row of an (arity, m) batch, ABSENT where it is not held.
        O(m) expected."""
        return self._kept.positions(rows)


def _kind(changes: BatchChanges) -> str:
    """"insert", "delete" or "mixed": the switch backs off each kind apart (on RDFS over LUBM
    an insert of 0.1% is a cheap Update and a delete of 0.1% is abandoned: one does not
    predict the other)."""
    inserts = any(added.shape[1] for added, _ in changes.values())
    deletes = any(removed.shape[1] for _, removed in changes.values())
    return "mixed" if inserts and deletes else "delete" if deletes else "insert"


def _inputs_only(database: Database, snapshot: _Snapshot) -> Database:
    """``database`` with the derived relations emptied (the start of a Bootstrap)."""
    return database.with_relations({
        name: Relation(np.zeros((database[name].arity, 0), dtype=np.int64), unique=True)
        for name in snapshot.prepared.derived
    })
