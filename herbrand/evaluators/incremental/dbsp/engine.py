"""``dbsp``: the program as a DBSP circuit whose inputs are facts and rules (tagged
``dynamic_rules``).

Facts: each update is one epoch of the circuit. Strata run in order; a stratum whose inputs
changed runs ``StratumCircuit.update`` with those changes as Z-sets (+1 inserted, -1 deleted),
and its own relations' changes become inputs of the strata above.

Rules are data too: the engine keeps the program's rules as a Z-set (rule -> multiplicity), and
``add_rules`` / ``remove_rules`` add +1 / -1 to it. A rule change is checked first (the new
program must pass ``analyse``: unsafe rules and negation or aggregation through recursion are
rejected, naming the rule and the cycle, with nothing changed). It then runs as one epoch of the
circuit whose input is the rule Z-set's change: a stratum that gains rule r (or loses it) gets,
at every iteration i, r's derivations over the previous epoch's R_{i-1} with weight +1 (or -1)
added to ΔX_i (``StratumCircuit.update``); the changes of its relations flow to the strata above
as in a fact update, and strata that neither changed nor read a change keep their traces.

The stratum is bootstrapped again (from the new program, its changes diffed against the old
relations) instead, only when:

- the strata differ as sets of relations (a new head relation, a relation no longer derived,
  recursion made or broken between strata merging or splitting them), or the inline facts
  changed: then the whole change is a re-run of every stratum that is not an unchanged stratum
  of the old program reading only unchanged relations (``_built``);
- the stratum has an aggregate, or the changed rule has one (aggregates are not incremental);
- the change's work in the circuit (the rule's derivations, plus the rows of ΔR summed over
  the iterations) passes ``RULE_CHANGE_BUDGET`` plus half the stratum's dX entries, or the
  rule's derivations alone pass half of that. ΔR_i is the whole difference of R_i between
  epochs, so a change that grows a shallow stratum over many iterations (the recursive TC
  rule added to ``tc :- e``) or removes most of a stratum (that rule removed again) would
  cost more than the bootstrap; the circuit gives up at that point and the bootstrap runs.

Aggregates are not maintained incrementally: a stratum with an aggregate whose inputs changed is
bootstrapped again and diffed. Atomic: updates build new immutable traces and commit them last.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from herbrand.evaluators.incremental.changes import (
    apply_updates,
    database_changes,
    require_inputs,
    visible,
)
from herbrand.evaluators.incremental.counting_semijoins import Semijoins
from herbrand.evaluators.incremental.dbsp.circuit import StratumCircuit
from herbrand.evaluators.incremental.dbsp.operators import LiftedRule
from herbrand.evaluators.incremental.dbsp.trace import Trace
from herbrand.evaluators.incremental.dbsp.zset import ZSet
from herbrand.evaluators.incremental.programs import IncrementalProgram, aggregated_relations
from herbrand.evaluators.incremental.relation_sets import RelationSets
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.analysis import Stratum, rule_literals
from herbrand.framework.contracts import (
    Batch,
    BatchChanges,
    IncrementalEvaluator,
    IncrementalTags,
)
from herbrand.framework.errors import EvaluationError
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Program, Rule

# A rule change runs as the circuit's input while its work (the changed rules' derivations and
# the rows of ΔR over the iterations) stays under this many rows plus half the entries of the
# stratum's dX (its bootstrap's derivations); past that, the stratum is bootstrapped again,
# which then costs less (see the module docstring).
RULE_CHANGE_BUDGET = 1024


@dataclass(frozen=True)
class _StratumPlan:
    stratum: Stratum
    rules: tuple[LiftedRule, ...]
    reads: frozenset[str]  # relations of lower strata or inputs that the stratum reads
    aggregated: bool

    @classmethod
    def of(cls, stratum: Stratum) -> _StratumPlan:
        return cls(stratum, tuple(LiftedRule.of(rule) for rule in stratum.rules),
                   _reads(stratum.rules) - set(stratum.relations),
                   any(aggregated_relations(rule) for rule in stratum.rules))

    @property
    def signature(self) -> tuple:
        return self.stratum.relations, Counter(self.stratum.rules)


@dataclass(frozen=True)
class _Snapshot:
    rules: Counter  # the program's rules as a Z-set (multiplicities)
    program: Program
    given: Database  # the facts given at bootstrap, with the updates to inputs applied
    prepared: IncrementalProgram
    plans: tuple[_StratumPlan, ...]
    database: Database
    traces: Mapping[str, Trace]

    @cached_property
    def shown(self) -> Database:
        """``database`` without the engine-internal relations (made once per snapshot: the
        materialization reads it several times per update)."""
        return visible(self.database)


class DbspEngine(IncrementalEvaluator):
    """Incremental maintenance as a DBSP circuit over (epoch, iteration) time, rules included.
    ``index``: the relational evaluator's index backing.

    Cost: bootstrap as semi-naive evaluation with derivation counts; an update per stratum and
    iteration the lifted join's terms from the changes, and O(n) per changed relation to merge
    its trace; the update of the input relations themselves is hash probes into their kept
    tables (``RelationSets``). A rule change: the changed rules' derivations over the traces
    plus the update of what they change, bounded by about a bootstrap of the stratum. State
    (``state_size``): the dX Z-sets (derivation-count differences per iteration), the iteration
    offsets and the input relations' hash tables.
    """

    tags = IncrementalTags(dynamic_rules=True)

    def __init__(self, *, index: str = "sorted_vector"):
        self.index = index
        self._evaluator = RelationalEvaluator(index=index)
        self._snapshot: _Snapshot | None = None
        self._strategy = "none"
        self._sets = RelationSets()  # hash tables of the input relations, for the next update
        self._semijoins = Semijoins()  # its analyses of the circuits' terms, kept
        # each stratum's circuit, built once for its plan: relations -> (plan, circuit)
        self._circuits: dict[tuple[str, ...], tuple[_StratumPlan, StratumCircuit]] = {}

    # -- facts -----------------------------------------------------------------------------------

    def bootstrap(self, program: Program, database: Database) -> None:
        """Run the circuit from empty relations, and build the input relations' hash tables
        that the first update reads (``RelationSets.of``: O(n) expected). Raises the analysis
        errors of ``program``."""
        snapshot = self._built(Counter(program.rules), program, database, None)
        self._sets = RelationSets.of({name: snapshot.database[name]
                                      for name in snapshot.prepared.inputs})
        self._snapshot, self._strategy = snapshot, "bootstrap"

    def update(self, insert: Mapping[str, Batch], delete: Mapping[str, Batch]) -> BatchChanges:
        """One epoch: deletes, then inserts, of input relations. Raises EvaluationError for a
        relation that is not an input."""
        snapshot = self._require()
        require_inputs(insert.keys() | delete.keys(), snapshot.prepared.inputs)
        database, added, removed = apply_updates(snapshot.database, insert, delete, self._sets)
        given = snapshot.given.with_relations({name: database[name] for name in added})
        changes = {name: ZSet.change(added[name].columns, removed[name].columns)
                   for name in added}
        database, traces = self._propagated(snapshot, snapshot.plans, database, changes, {})
        result = {name: (z.positive(), z.negative()) for name, z in changes.items()}
        self._snapshot = _Snapshot(snapshot.rules, snapshot.program, given, snapshot.prepared,
                                   snapshot.plans, database, traces)
        self._strategy = "update"
        return result

    def _propagated(self, snapshot: _Snapshot, plans: Sequence[_StratumPlan],
                    database: Database, changes: dict[str, ZSet],
                    rule_changes: Mapping[tuple[str, ...], list[tuple[LiftedRule, int]]]
                    ) -> tuple[Database, dict[str, Trace]]:
        """Run one epoch of the circuit over ``plans`` (strata in order) from the state of
        ``snapshot``: ``changes`` holds the changed inputs' Z-sets and receives each derived
        relation's change; ``rule_changes`` maps a stratum's relations to the rules it gains
        (+1) or loses (-1). A stratum runs only when something it reads or its rules changed.
        Returns the new database and traces."""
        traces = dict(snapshot.traces)
        for plan in plans:
            rules = rule_changes.get(plan.stratum.relations, [])
            if not rules and not plan.reads & changes.keys():
                continue
            reads = plan.reads | _reads(rule.rule for rule, _ in rules) - set(
                plan.stratum.relations)
            inputs_old = {r: snapshot.database[r] for r in reads}
            inputs_new = {r: database[r] for r in reads}
            updated = None
            if not plan.aggregated and not any(aggregated_relations(r.rule) for r, _ in rules):
                budget = RULE_CHANGE_BUDGET + sum(
                    traces[r].tuples for r in plan.stratum.relations) // 2 if rules else None
                updated = self._circuit(plan, database).update(
                    {r: traces[r] for r in plan.stratum.relations}, inputs_old, inputs_new,
                    {r: changes[r] for r in plan.reads if r in changes}, database.symbols,
                    rules, budget)
            if updated is None:
                fresh = self._circuit(plan, database).bootstrap(
                    {r: database[r] for r in plan.reads}, database.symbols)
                for name, change in database_changes(
                        snapshot.database, _with_traces(database, fresh), fresh).items():
                    changes[name] = ZSet.change(*change)
            else:
                fresh, stratum_changes = updated
                changes.update({r: z for r, z in stratum_changes.items() if len(z)})
            traces.update(fresh)
            database = _with_traces(database, fresh)
        return database, traces

    # -- rules -----------------------------------------------------------------------------------

    def add_rules(self, rules: Sequence[Rule]) -> BatchChanges:
        """Add rules (+1 each in the program's rule Z-set); see the module docstring."""
        snapshot = self._require()
        return self._rules_changed(snapshot.rules + Counter(rules))

    def remove_rules(self, rules: Sequence[Rule]) -> BatchChanges:
        """Remove rules (-1 each). Raises EvaluationError naming a rule not in the program."""
        snapshot = self._require()
        removed = Counter(rules)
        for rule in removed:
            if snapshot.rules[rule] < removed[rule]:
                raise EvaluationError(f"rule {rule} is not in the program")
        return self._rules_changed(snapshot.rules - removed)

    def _rules_changed(self, rules: Counter) -> BatchChanges:
        snapshot = self._require()
        program = Program(snapshot.program.declarations, tuple(rules.elements()),
                          snapshot.program.directives)
        prepared, _ = IncrementalProgram.prepare(program, snapshot.given)  # the check first
        plans = tuple(_StratumPlan.of(s) for s in prepared.strata)
        rule_changes = _rule_changes(snapshot, prepared, plans, program)
        if rule_changes is None:
            fresh = self._built(rules, program, snapshot.given, snapshot)
            names = [n for n in visible(fresh.database) if n in snapshot.database]
            changes = database_changes(snapshot.database, fresh.database, names)
            self._snapshot, self._strategy = fresh, "rules"
            return changes
        zsets: dict[str, ZSet] = {}
        database, traces = self._propagated(snapshot, plans, snapshot.database, zsets,
                                            rule_changes)
        self._snapshot = _Snapshot(rules, program, snapshot.given, prepared, plans, database,
                                   traces)
        self._strategy = "rules"
        return {name: (z.positive(), z.negative()) for name, z in zsets.items()}

    # -- contract ----------------------------------------------------------------------------------

    @property
    def database(self) -> Database:
        return self._require().shown

    @property
    def last_strategy(self) -> str:
        return self._strategy

    def state_size(self) -> tuple[int, int]:
        """(rows of the dX Z-sets, bytes of them, of the iteration offsets and of the input
        relations' hash tables kept for the next update)."""
        traces = self._require().traces.values()
        return (sum(t.tuples for t in traces),
                sum(t.nbytes for t in traces) + self._sets.nbytes)

    # -- internals -------------------------------------------------------------------------------

    def _require(self) -> _Snapshot:
        if self._snapshot is None:
            raise EvaluationError("the engine has not been bootstrapped")
        return self._snapshot

    def _circuit(self, plan: _StratumPlan, database: Database) -> StratumCircuit:
        """The circuit of ``plan``: built on first use, then kept while the stratum has this
        plan (its analyses of the rules' terms, their rewrites, serve every update)."""
        kept = self._circuits.get(plan.stratum.relations)
        if kept is not None and kept[0] is plan:
            return kept[1]
        circuit = StratumCircuit(plan.rules, plan.stratum.relations,
                                 {r: database[r].arity for r in plan.stratum.relations},
                                 self._evaluator, self._semijoins)
        self._circuits[plan.stratum.relations] = plan, circuit
        return circuit

    def _built(self, rules: Counter, program: Program, given: Database,
               previous: _Snapshot | None) -> _Snapshot:
        """Prepare ``program`` over ``given`` and run every stratum, reusing the traces of
        ``previous`` for strata that are unchanged and read only unchanged relations."""
        prepared, database = IncrementalProgram.prepare(program, given)
        plans = tuple(_StratumPlan.of(s) for s in prepared.strata)
        kept_plans = {} if previous is None else {p.stratum.relations: p for p in previous.plans}
        unchanged = set() if previous is None else {
            name for name, relation in database.items()
            if name not in prepared.derived and name not in previous.prepared.derived
            and name in previous.database and relation == previous.database[name]}
        traces: dict[str, Trace] = {}
        for plan in plans:
            old = kept_plans.get(plan.stratum.relations)
            if old is not None and old.signature == plan.signature and plan.reads <= unchanged:
                fresh = {r: previous.traces[r] for r in plan.stratum.relations}
                unchanged.update(plan.stratum.relations)
            else:
                fresh = self._circuit(plan, database).bootstrap(
                    {r: database[r] for r in plan.reads}, database.symbols)
            traces.update(fresh)
            database = _with_traces(database, fresh)
        return _Snapshot(rules, program, given, prepared, plans, database, traces)


def _rule_changes(snapshot: _Snapshot, prepared: IncrementalProgram,
                  plans: Sequence[_StratumPlan], program: Program
                  ) -> dict[tuple[str, ...], list[tuple[LiftedRule, int]]] | None:
    """Per stratum of the new program, the rules it gains (+1) and loses (-1), one entry per
    occurrence; None when the change cannot run as a circuit input: the inline facts change,
    the derived relations change, the strata are not the old ones (recursion made or broken
    across strata merges or splits them), or a stratum reads a relation the state lacks."""
    if (Counter(program.facts) != Counter(snapshot.program.facts)
            or prepared.derived != snapshot.prepared.derived):
        return None
    old = {frozenset(p.stratum.relations): p for p in snapshot.plans}
    if {frozenset(p.stratum.relations) for p in plans} != old.keys():
        return None
    if any(not plan.reads <= snapshot.database.keys() for plan in plans):
        return None
    changes = {}
    for plan in plans:
        before, after = Counter(old[frozenset(plan.stratum.relations)].stratum.rules), Counter(
            plan.stratum.rules)
        changed = [(LiftedRule.of(r), 1) for r in (after - before).elements()] + [
            (LiftedRule.of(r), -1) for r in (before - after).elements()]
        if changed:
            changes[plan.stratum.relations] = changed
    return changes


def _reads(rules: Iterable[Rule]) -> frozenset[str]:
    """The relations the rules' bodies read (aggregates included)."""
    return frozenset(lit.atom.relation for rule in rules for lit, _ in rule_literals(rule))


def _with_traces(database: Database, traces: Mapping[str, Trace]) -> Database:
    return database.with_relations({r: t.relation for r, t in traces.items()})
