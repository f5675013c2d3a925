"""check_incremental: named checks of an IncrementalEvaluator against the oracle.

Each check bootstraps a fresh engine (``engine_factory()``) on a small program and runs a
sequence of updates. After the bootstrap and after every update, every declared relation of the
engine's ``database`` must equal ``oracle_materialize`` over the current input facts
(recomputation from scratch by the brute-force oracle), and the changes the update returned must
equal the set differences of the oracle's models before and after. The checks work at the
engine level (encoded batches), so this module imports no engine; ``Materialization`` builds on
any engine that passes.

Use it as ``check_incremental(MyEngine)`` (a plain function raising AssertionError that names
every failed check) or as a pytest parametrisation::

    @pytest.mark.parametrize("check", incremental_check_params())
    def test_mine(check):
        check(MyEngine)

Known failures are declared as data (``expected_failures={"check_name": "reason"}``) and are
strict, as in ``check_evaluator``.

Atomicity is checked by fault injection: a trace function raises at the k-th call of a
``herbrand`` function made during an update, for several k spread over the update (measured on a
clean run); afterwards the engine must hold exactly its previous state and apply the same update
correctly.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping

from herbrand.framework.check_runner import check_params, run_checks
from herbrand.framework.contracts import BatchChanges, IncrementalEvaluator
from herbrand.framework.encoding import encode_rows
from herbrand.framework.evaluator_checks import encode_facts
from herbrand.framework.oracle import Facts, Model, oracle_materialize
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Program

Check = Callable[[Callable[[], IncrementalEvaluator]], None]
Update = tuple[Facts, Facts]  # (insert, delete), decoded rows by input relation


def _decoded(database: Database, program: Program) -> Model:
    return {d.name: set(database.decoded_rows(d.name)) for d in program.declarations}


def _differences(label: str, expected: Model, actual: Model) -> None:
    for name in sorted(expected):
        missing = expected[name] - actual.get(name, set())
        extra = actual.get(name, set()) - expected[name]
        assert not missing and not extra, (
            f"{label}: relation {name}: {len(missing)} missing {sorted(missing, key=repr)[:5]}, "
            f"{len(extra)} unexpected {sorted(extra, key=repr)[:5]}")


class IncrementalSession:
    """A fresh engine bootstrapped on ``program`` over ``facts``, with the oracle's model of the
    current facts alongside; ``update`` applies one transaction and checks the state and the
    returned changes. Brute force (the oracle): for small programs only."""

    def __init__(self, engine_factory: Callable[[], IncrementalEvaluator],
                 program: Program | str, facts: Facts):
        self.program = parse(program) if isinstance(program, str) else program
        self.engine = engine_factory()
        self.facts = {name: set(map(tuple, rows)) for name, rows in facts.items()}
        self.engine.bootstrap(self.program, encode_facts(self.program, self.facts))
        self.expected = oracle_materialize(self.program, self.facts)
        self.check_state("after bootstrap")

    def state(self) -> Model:
        return _decoded(self.engine.database, self.program)

    def check_state(self, label: str) -> None:
        _differences(label, self.expected, self.state())

    def batches(self, rows: Facts) -> dict:
        """Decoded rows by relation as encoded batches of the engine's database."""
        database = self.engine.database
        types = {d.name: d.types for d in self.program.declarations}
        return {name: encode_rows(name, list(r), types[name], database.symbols).columns
                for name, r in rows.items()}

    def update(self, insert: Facts | None = None, delete: Facts | None = None,
               label: str = "update") -> BatchChanges:
        """Apply one transaction and check the new state and the changes against the oracle."""
        insert, delete = insert or {}, delete or {}
        changes = self.engine.update(self.batches(insert), self.batches(delete))
        for name in insert.keys() | delete.keys():
            current = self.facts.setdefault(name, set())
            self.facts[name] = (current - set(map(tuple, delete.get(name, ())))) | set(
                map(tuple, insert.get(name, ())))
        before, self.expected = self.expected, oracle_materialize(self.program, self.facts)
        self.check_state(label)
        self._check_changes(label, before, changes)
        return changes

    def _check_changes(self, label: str, before: Model, changes: BatchChanges) -> None:
        database = self.engine.database
        for name in sorted(self.expected):
            added, removed = changes.get(name, (None, None))
            actual_added = self._decode(database, name, added)
            actual_removed = self._decode(database, name, removed)
            assert actual_added == self.expected[name] - before[name], (
                f"{label}: relation {name}: reported added {sorted(actual_added)[:5]}, expected "
                f"{sorted(self.expected[name] - before[name])[:5]}")
            assert actual_removed == before[name] - self.expected[name], (
                f"{label}: relation {name}: reported removed {sorted(actual_removed)[:5]}, "
                f"expected {sorted(before[name] - self.expected[name])[:5]}")

    @staticmethod
    def _decode(database: Database, name: str, batch) -> set:
        if batch is None:
            return set()
        decoded = Database({name: Relation(batch)}, database.symbols, database.types)
        return set(decoded.decoded_rows(name))


def _scenario(name: str, doc: str, program: str, facts: Facts,
              updates: tuple[Update, ...]) -> Check:
    """A named check: bootstrap, then each (insert, delete) update, all checked."""

    def check(engine_factory: Callable[[], IncrementalEvaluator]) -> None:
        session = IncrementalSession(engine_factory, program, facts)
        for number, (insert, delete) in enumerate(updates, start=1):
            session.update(insert, delete, label=f"update {number}")

    check.__name__ = check.__qualname__ = f"check_{name}"
    check.__doc__ = doc
    return check


TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""
FULL = TC + """
.decl node(x: number)
.decl unreached(x: number, y: number)
.decl degree(x: number, n: number)
.decl reach_total(n: number)
.decl farthest(x: number, m: number)
node(x) :- e(x, _).
node(y) :- e(_, y).
unreached(x, y) :- node(x), node(y), !tc(x, y), x != y.
degree(x, n) :- node(x), n = count : { e(x, _) }.
reach_total(n) :- n = count : { tc(_, _) }.
farthest(x, m) :- node(x), m = max y : { tc(x, y) }.
"""
_CHAIN = [(i, i + 1) for i in range(30)]
_CYCLE = [(i, (i + 1) % 8) for i in range(8)] + [(7, 20), (20, 21)]

_SCENARIOS = (
    _scenario("update_sequence", "A sequence of mixed updates over recursion, negation and "
              "aggregates; state and changes match recomputation after each.", FULL,
              {"e": [(1, 2), (2, 3), (3, 4), (4, 2), (5, 6)]},
              (({"e": [(6, 1)]}, {}), ({}, {"e": [(3, 4)]}),
               ({"e": [(4, 5), (7, 7)]}, {"e": [(1, 2), (5, 6)]}), ({}, {"e": [(4, 2), (7, 7)]}),
               ({"e": [(1, 2), (3, 4)]}, {}))),
    _scenario("delete_deep_in_chain", "Deleting the middle edge of a 30-edge chain removes "
              "every path through it; re-inserting it restores them.", TC, {"e": _CHAIN},
              (({}, {"e": [(15, 16)]}), ({"e": [(15, 16)]}, {}), ({}, {"e": [(0, 1), (29, 30)]}))),
    _scenario("delete_in_cycle", "Deleting an edge of a cycle removes the tuples the cycle "
              "supported, though each kept a derivation through the cycle itself.", TC,
              {"e": _CYCLE}, (({}, {"e": [(3, 4)]}), ({}, {"e": [(7, 20)]}),
                              ({"e": [(3, 4)]}, {"e": [(0, 1)]}))),
    _scenario("delete_and_insert_same_fact", "Deletes apply before inserts: a fact both deleted "
              "and inserted is present afterwards, whether it was before or not.", FULL,
              {"e": [(1, 2), (2, 3)]},
              (({"e": [(1, 2)]}, {"e": [(1, 2)]}), ({"e": [(3, 1)]}, {"e": [(3, 1), (2, 3)]}))),
    _scenario("noop_updates", "Inserting present facts, deleting absent ones and the empty "
              "update change nothing.", FULL, {"e": [(1, 2), (2, 3)]},
              (({"e": [(1, 2)]}, {"e": [(5, 5)]}), ({}, {}), ({"e": [(2, 3)]}, {}))),
    _scenario("negation_flips", "A negated relation gaining or losing facts flips the rule "
              "above it, through a chain of strata.", """
              .decl a(x: number)
              .decl b(x: number)
              .decl not_b(x: number)
              .decl not_not_b(x: number)
              not_b(x) :- a(x), !b(x).
              not_not_b(x) :- a(x), !not_b(x).
              """, {"a": [(1,), (2,), (3,)], "b": [(2,)]},
              (({"b": [(1,), (3,)]}, {}), ({}, {"b": [(2,), (3,)]}), ({"b": [(4,)]}, {"a": [(1,)]}))),
    _scenario("aggregate_flips", "count, sum, min and max follow inserts and deletes, "
              "including groups that appear and vanish.", """
              .decl sale(item: number, price: number)
              .decl item(i: number)
              .decl sold(i: number, n: number)
              .decl revenue(s: number)
              .decl cheapest(i: number, m: number)
              .decl dearest(m: number)
              item(i) :- sale(i, _).
              sold(i, n) :- item(i), n = count : { sale(i, _) }.
              revenue(s) :- s = sum p : { sale(_, p) }.
              cheapest(i, m) :- item(i), m = min p : { sale(i, p) }.
              dearest(m) :- item(_), m = max p : { sale(_, p) }.
              """, {"sale": [(1, 5), (1, 7), (2, 3)]},
              (({"sale": [(1, 2), (3, 9)]}, {}), ({}, {"sale": [(1, 2), (2, 3)]}),
               ({}, {"sale": [(1, 5), (1, 7), (3, 9)]}))),
    _scenario("base_facts_of_derived_relations", "Inline facts of a derived relation survive "
              "the loss of their rule derivations.", TC + """
              .decl p(x: number)
              p(1).
              p(x) :- e(x, _).
              tc(9, 9).
              """, {"e": [(1, 2), (9, 9)]}, (({}, {"e": [(1, 2), (9, 9)]}), ({"e": [(9, 1)]}, {}))),
    _scenario("mutual_recursion", "Two mutually recursive relations with deletes inside the "
              "recursion.", """
              .decl e(x: number, y: number)
              .decl even(x: number)
              .decl odd(x: number)
              .decl start(x: number)
              even(x) :- start(x).
              odd(y) :- even(x), e(x, y).
              even(y) :- odd(x), e(x, y).
              """, {"start": [(0,)], "e": _CHAIN[:10] + [(10, 0)]},
              (({}, {"e": [(4, 5)]}), ({"e": [(4, 5)]}, {"e": [(10, 0)]}), ({}, {"start": [(0,)]}))),
    _scenario("arithmetic_recursion", "Recursion through arithmetic with a bound, and "
              "comparisons.", """
              .decl start(x: number)
              .decl e(x: number, y: number)
              .decl hops(x: number, d: number)
              .decl near(x: number)
              hops(x, 0) :- start(x).
              hops(y, d + 1) :- hops(x, d), e(x, y), d < 6.
              near(x) :- hops(x, d), d <= 2.
              """, {"start": [(0,)], "e": _CYCLE},
              (({"start": [(4,)]}, {}), ({}, {"start": [(0,)], "e": [(5, 6)]}))),
    _scenario("symbols", "Symbol-typed relations, with symbols new in an update.", """
              .decl parent(p: symbol, c: symbol)
              .decl ancestor(a: symbol, d: symbol)
              ancestor(a, d) :- parent(a, d).
              ancestor(a, d) :- ancestor(a, x), parent(x, d).
              """, {"parent": [("ann", "bob"), ("bob", "cy")]},
              (({"parent": [("cy", "dee"), ("eve", "ann")]}, {"parent": [("bob", "cy")]}),)),
)


def check_insert_then_delete_restores(engine_factory: Callable[[], IncrementalEvaluator]) -> None:
    """Inserting a batch and then deleting it restores the initial state exactly."""
    session = IncrementalSession(engine_factory, FULL, {"e": [(1, 2), (2, 3), (3, 1)]})
    initial = session.state()
    batch = {"e": [(3, 4), (4, 5), (5, 1), (6, 6)]}
    session.update(insert=batch, label="insert")
    session.update(delete=batch, label="delete")
    _differences("insert then delete", initial, session.state())


def check_split_batches_agree(engine_factory: Callable[[], IncrementalEvaluator]) -> None:
    """A batch applied at once and the same batch split into single-row updates (in two
    orders) give the same final state."""
    facts = {"e": [(1, 2), (2, 3), (3, 4), (4, 1)]}
    insert, delete = [(4, 5), (5, 6), (6, 1), (2, 2)], [(2, 3), (4, 1)]
    whole = IncrementalSession(engine_factory, FULL, facts)
    whole.update({"e": insert}, {"e": delete}, label="whole batch")
    for order in (1, -1):
        split = IncrementalSession(engine_factory, FULL, facts)
        for row in delete[::order]:
            split.update(delete={"e": [row]}, label=f"delete {row}")
        for row in insert[::order]:
            split.update(insert={"e": [row]}, label=f"insert {row}")
        _differences("split batch", whole.state(), split.state())


class InjectedFault(Exception):
    """Raised into an engine by ``check_atomic_under_injected_fault``."""


class _FaultAt:
    """A trace function counting calls of herbrand functions (outside this module), raising
    InjectedFault at the ``at``-th call (never when ``at`` is None). Generator frames are not
    counted: their "call" events include being closed when collected, where a raised fault is
    not the update's but an ignored exception."""

    def __init__(self, at: int | None):
        self.at = at
        self.calls = 0

    def __call__(self, frame, event, arg):
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            if (module.startswith("herbrand") and module != __name__
                    and not frame.f_code.co_flags & inspect.CO_GENERATOR):
                self.calls += 1
                if self.calls == self.at:
                    self.at = None  # one fault per run
                    raise InjectedFault(f"fault injected at call {self.calls}")

    def run(self, action: Callable[[], object]) -> None:
        sys.settrace(self)
        try:
            action()
        finally:
            sys.settrace(None)


def check_atomic_under_injected_fault(engine_factory: Callable[[], IncrementalEvaluator]) -> None:
    """A fault injected anywhere in an update leaves the engine exactly as before the call,
    and the same update then applies correctly."""
    facts = {"e": [(1, 2), (2, 3), (3, 4), (4, 2), (5, 6)]}
    insert, delete = {"e": [(6, 1), (4, 5)]}, {"e": [(2, 3)]}
    reference = IncrementalSession(engine_factory, FULL, facts)
    reference.update(insert, delete, label="the update without a fault")
    probe = IncrementalSession(engine_factory, FULL, facts)
    counter = _FaultAt(None)
    counter.run(lambda: probe.engine.update(probe.batches(insert), probe.batches(delete)))
    points = sorted({max(1, counter.calls * i // 8) for i in range(8)} | {counter.calls})
    for at in points:
        session = IncrementalSession(engine_factory, FULL, facts)
        before = session.state()
        try:
            _FaultAt(at).run(lambda s=session: s.engine.update(s.batches(insert),
                                                              s.batches(delete)))
        except InjectedFault:
            _differences(f"after a fault at call {at} of {counter.calls}", before, session.state())
            session.update(insert, delete, label=f"the update after a fault at call {at}")
        else:  # the engine caught the fault and carried on: it must still be right
            _differences(f"an update that caught the fault at call {at}",
                         reference.expected, session.state())


def incremental_checks() -> tuple[tuple[str, Check], ...]:
    """Every check of the suite as (name, check), each ``check(engine_factory)`` raising
    AssertionError on failure."""
    checks = (*_SCENARIOS, check_insert_then_delete_restores, check_split_batches_agree,
              check_atomic_under_injected_fault)
    return tuple((check.__name__, check) for check in checks)


def check_incremental(
    engine_factory: Callable[[], IncrementalEvaluator],
    expected_failures: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Run every check of ``incremental_checks()`` on ``engine_factory`` (a callable returning
    a fresh IncrementalEvaluator). ``expected_failures``: check name -> reason, strict. Returns
    check name -> "passed" or "expected failure: <reason>"; raises AssertionError naming every
    unexpected outcome."""
    return run_checks(incremental_checks(), (engine_factory,), expected_failures)


def incremental_check_params(expected_failures: Mapping[str, str] | None = None) -> list:
    """The checks as ``pytest.param`` values with the check names as ids; declared failures
    carry a strict xfail mark with their reason. Imports pytest."""
    return check_params(incremental_checks(), expected_failures)
