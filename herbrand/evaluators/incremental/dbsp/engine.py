"""``dbsp``: the program as a DBSP circuit whose inputs are facts and rules (tagged
``dynamic_rules``).

Facts: each update is one epoch of the circuit. Strata run in order; a stratum whose inputs
changed runs ``StratumCircuit.update`` with those changes as Z-sets (+1 inserted, -1 deleted),
and its own relations' changes become inputs of the strata above.

Rules are data too: the engine keeps the program's rules as a Z-set (rule -> multiplicity), and
``add_rules`` / ``remove_rules`` add +1 / -1 to it. A rule change is checked first (the new
program must pass ``analyse``: unsafe rules and negation or aggregation through recursion are
rejected, naming the rule and the cycle, with nothing changed). It is then applied by re-running,
with the circuit's bootstrap, every stratum of the new program that is not an unchanged stratum
of the old one (same relations and rules) reading only unchanged relations; the traces of all
other strata are kept. This is a coarser grain than a fully incremental rule change (which would
push the rule's own derivations through the circuit as a delta), chosen for simplicity; the
materialization and the returned changes are the same.

Aggregates are not maintained incrementally: a stratum with an aggregate whose inputs changed is
bootstrapped again and diffed. Atomic: updates build new immutable traces and commit them last.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from herbrand.evaluators.incremental.changes import (
    apply_updates,
    database_changes,
    require_inputs,
    visible,
)
from herbrand.evaluators.incremental.dbsp.circuit import StratumCircuit, Trace
from herbrand.evaluators.incremental.dbsp.operators import LiftedRule
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


@dataclass(frozen=True)
class _StratumPlan:
    stratum: Stratum
    rules: tuple[LiftedRule, ...]
    reads: frozenset[str]  # relations of lower strata or inputs that the stratum reads
    aggregated: bool

    @classmethod
    def of(cls, stratum: Stratum) -> _StratumPlan:
        reads = {lit.atom.relation for rule in stratum.rules for lit, _ in rule_literals(rule)}
        return cls(stratum, tuple(LiftedRule.of(rule) for rule in stratum.rules),
                   frozenset(reads - set(stratum.relations)),
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


class DbspEngine(IncrementalEvaluator):
    """Incremental maintenance as a DBSP circuit over (epoch, iteration) time, rules included.
    ``index``: the relational evaluator's index backing.

    Cost: bootstrap as semi-naive evaluation with derivation counts; an update per stratum and
    iteration the lifted join's terms from the changes, and O(n) per changed relation to merge
    its trace; the update of the input relations themselves is hash probes into their kept
    tables (``RelationSets``). A rule change: a bootstrap of the affected strata. State
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

    # -- facts -----------------------------------------------------------------------------------

    def bootstrap(self, program: Program, database: Database) -> None:
        """Run the circuit from empty relations. Raises the analysis errors of ``program``."""
        self._snapshot = self._built(Counter(program.rules), program, database, None)
        self._strategy = "bootstrap"

    def update(self, insert: Mapping[str, Batch], delete: Mapping[str, Batch]) -> BatchChanges:
        """One epoch: deletes, then inserts, of input relations. Raises EvaluationError for a
        relation that is not an input."""
        snapshot = self._require()
        require_inputs(insert.keys() | delete.keys(), snapshot.prepared.inputs)
        database, added, removed = apply_updates(snapshot.database, insert, delete, self._sets)
        given = snapshot.given.with_relations({name: database[name] for name in added})
        changes = {name: ZSet.change(added[name].columns, removed[name].columns)
                   for name in added}
        traces = dict(snapshot.traces)
        for plan in snapshot.plans:
            if not plan.reads & changes.keys():
                continue
            inputs_old = {r: snapshot.database[r] for r in plan.reads}
            inputs_new = {r: database[r] for r in plan.reads}
            if plan.aggregated:
                fresh = self._circuit(plan, database).bootstrap(inputs_new, database.symbols)
                for name, change in database_changes(
                        snapshot.database, _with_traces(database, fresh), fresh).items():
                    changes[name] = ZSet.change(*change)
            else:
                fresh, stratum_changes = self._circuit(plan, database).update(
                    {r: traces[r] for r in plan.stratum.relations}, inputs_old, inputs_new,
                    {r: changes[r] for r in plan.reads if r in changes}, database.symbols)
                changes.update({r: z for r, z in stratum_changes.items() if len(z)})
            traces.update(fresh)
            database = _with_traces(database, fresh)
        result = {name: (z.positive(), z.negative()) for name, z in changes.items()}
        self._snapshot = _Snapshot(snapshot.rules, snapshot.program, given, snapshot.prepared,
                                   snapshot.plans, database, traces)
        self._strategy = "update"
        return result

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
        fresh = self._built(rules, program, snapshot.given, snapshot)
        names = [n for n in visible(fresh.database) if n in snapshot.database]
        changes = database_changes(snapshot.database, fresh.database, names)
        self._snapshot, self._strategy = fresh, "rules"
        return changes

    # -- contract ----------------------------------------------------------------------------------

    @property
    def database(self) -> Database:
        return visible(self._require().database)

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
        return StratumCircuit(plan.rules, plan.stratum.relations,
                              {r: database[r].arity for r in plan.stratum.relations},
                              self._evaluator)

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


def _with_traces(database: Database, traces: Mapping[str, Trace]) -> Database:
    return database.with_relations({r: t.relation for r, t in traces.items()})
