"""check_evaluator: named checks, each a small program whose result is compared with the oracle.

See ``herbrand.framework.testing`` for how to use the suite.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from herbrand.framework.analysis import analyse
from herbrand.framework.check_runner import check_params, run_checks
from herbrand.framework.encoding import encode_rows
from herbrand.framework.oracle import Facts, Model, check_model, oracle_materialize
from herbrand.framework.parser import parse
from herbrand.framework.registry import FIXPOINTS
from herbrand.framework.storage import Database
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import (
    COMPARISON_OPS,
    INFIX_OPS,
    Program,
)

Check = Callable[[Callable, Callable | None], None]


# ---------------------------------------------------------------------------------------------
# check_evaluator: named checks, each one program compared with the oracle
# ---------------------------------------------------------------------------------------------

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def encode_facts(program: Program, facts: Facts, symbols: SymbolTable | None = None) -> Database:
    """A Database of ``facts`` (relation -> decoded tuples) typed by ``program``'s
    declarations, with symbols interned in ``symbols`` (a new table by default)."""
    types = {d.name: d.types for d in program.declarations}
    symbols = symbols if symbols is not None else SymbolTable()
    relations = {name: encode_rows(name, list(rows), types[name], symbols)
                 for name, rows in facts.items()}
    return Database(relations, symbols, types)


def _fixpoint(evaluator_factory: Callable, fixpoint_factory: Callable | None):
    factory = fixpoint_factory if fixpoint_factory is not None else FIXPOINTS.get("seminaive")
    return factory(evaluator_factory())


def _assert_same(expected: Model, actual: Model) -> None:
    for name in sorted(expected.keys() | actual.keys()):
        missing = expected.get(name, set()) - actual.get(name, set())
        extra = actual.get(name, set()) - expected.get(name, set())
        assert not missing and not extra, (
            f"relation {name}: {len(missing)} missing {sorted(missing, key=repr)[:5]}, "
            f"{len(extra)} unexpected {sorted(extra, key=repr)[:5]}"
        )


def compare_with_oracle(
    program: Program | str,
    facts: Facts,
    evaluator_factory: Callable,
    fixpoint_factory: Callable | None = None,
) -> Model:
    """Materialize ``program`` over ``facts`` with ``fixpoint_factory(evaluator_factory())``
    and assert that every declared relation equals the oracle's and that ``check_model`` holds.
    Returns the decoded result."""
    if isinstance(program, str):
        program = parse(program)
    result = _fixpoint(evaluator_factory, fixpoint_factory).materialize(
        program, encode_facts(program, facts)
    )
    actual = {d.name: set(result.decoded_rows(d.name)) for d in program.declarations}
    _assert_same(oracle_materialize(program, facts), actual)
    check_model(program, facts, actual)
    return actual


def _case(name: str, doc: str, program: str, facts: Facts | None = None) -> Check:
    """A named check comparing one program's materialization with the oracle."""

    def check(evaluator_factory: Callable, fixpoint_factory: Callable | None = None) -> None:
        compare_with_oracle(program, facts or {}, evaluator_factory, fixpoint_factory)

    check.__name__ = check.__qualname__ = f"check_{name}"
    check.__doc__ = doc
    return check


_EDGE = ".decl edge(x: number, y: number)\n"
_PATH = """
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""
_NODE = """
.decl node(x: number)
node(x) :- edge(x, _).
node(y) :- edge(_, y).
"""
_PAIRS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (5, 0), (0, 5), (3, -1), (2, 63), (-1, 4),
          (INT64_MAX, 1), (INT64_MIN, -1), (INT64_MIN, 1)]
_EXPRESSIONS = [(op, f"x {op} y") for op in INFIX_OPS if op not in ("/", "%")] + [
    ("min", "min(x, y)"), ("max", "max(x, y, 0)"), ("neg", "-x"), ("bnot", "bnot(x)"),
    ("lnot", "lnot(x)"), ("abs", "abs(x)")]
_SALES = {"sale": [(1, 1, 5), (1, 2, 5), (2, 1, -3), (2, 2, 7)]}
_SALES_PROGRAM = """
.decl sale(item: number, shop: number, price: number)
.decl item(i: number)
item(i) :- sale(i, _, _).
item(100).
"""

_CASE_CHECKS: tuple[Check, ...] = (
    _case("tc_chain", "Left-linear transitive closure of a chain.",
          _EDGE + _PATH, {"edge": [(i, i + 1) for i in range(1, 7)]}),
    _case("tc_cycle", "Non-linear transitive closure of a graph with a cycle and a self-loop.",
          _EDGE + """
          .decl path(x: number, y: number)
          path(x, y) :- edge(x, y).
          path(x, z) :- path(x, y), path(y, z).
          """, {"edge": [(1, 2), (2, 3), (3, 1), (3, 4), (5, 5)]}),
    _case("same_generation", "Recursion through a rule with three body atoms.", """
          .decl parent(p: number, c: number)  .decl sg(x: number, y: number)
          sg(x, y) :- parent(p, x), parent(p, y), x != y.
          sg(x, y) :- parent(px, x), sg(px, py), parent(py, y).
          """, {"parent": [(1, 2), (1, 3), (2, 4), (3, 5), (4, 6), (5, 7), (5, 8)]}),
    _case("negation", "Negation of a recursive relation of a lower stratum.",
          _EDGE + _NODE + _PATH + """
          .decl unreachable(x: number, y: number)
          unreachable(x, y) :- node(x), node(y), !path(x, y).
          """, {"edge": [(1, 2), (2, 3), (4, 1)]}),
    _case("negation_with_wildcards", "A wildcard in a negated atom matches any value.",
          _EDGE + """
          .decl source(x: number)  .decl sink(x: number)
          source(x) :- edge(x, _), !edge(_, x).
          sink(y) :- edge(_, y), !edge(y, _).
          """, {"edge": [(1, 2), (2, 3), (3, 2), (4, 4), (5, 2)]}),
    _case("comparisons", "Each comparison operator on numbers, negative ones included.",
          ".decl pair(x: number, y: number)\n.decl holds(op: symbol, x: number, y: number)\n"
          + "\n".join(f'holds("{op}", x, y) :- pair(x, y), x {op} y.' for op in COMPARISON_OPS),
          {"pair": [(a, b) for a in (-1, 0, 2) for b in (-1, 0, 2)]}),
    _case("arithmetic", "Every operator and functor, with signed 64-bit wrap-around.",
          ".decl pair(x: number, y: number)\n"
          ".decl result(op: symbol, x: number, y: number, r: number)\n"
          + "\n".join(f'result("{name}", x, y, r) :- pair(x, y), r = {expression}.'
                      for name, expression in _EXPRESSIONS),
          {"pair": _PAIRS}),
    _case("c_division", "/ truncates toward zero, % has the dividend's sign, by zero fails.", """
          .decl pair(x: number, y: number)  .decl quotient(x: number, y: number, q: number)
          .decl remainder(x: number, y: number, r: number)
          quotient(x, y, q) :- pair(x, y), q = x / y.
          remainder(x, y, x % y) :- pair(x, y).
          """, {"pair": _PAIRS}),
    _case("binding_equality", "x = expr binds x, on either side, in any body order.", """
          .decl n(x: number)  .decl double(x: number, y: number)
          .decl twice(x: number, y: number)  .decl chained(x: number, z: number)
          .decl same(x: number)
          double(x, y) :- n(x), y = x * 2.
          twice(x, y) :- n(x), x * 2 = y.
          chained(x, z) :- z = y + 1, y = x * 10, n(x).
          same(x) :- n(x), y = x, x = y, y = 2.
          """, {"n": [(1,), (2,), (3,)]}),
    _case("head_arithmetic", "Arithmetic in rule heads.", """
          .decl n(x: number)  .decl succ(x: number)
          .decl scaled(x: number, y: number)
          succ(x + 1) :- n(x), x < 3.
          scaled(x, x * x - 1) :- n(x).
          """, {"n": [(1,), (2,), (3,), (-4,)]}),
    _case("atom_expressions", "Expressions as atom arguments, over variables bound earlier, "
          "by the atom itself, or by a later atom.", """
          .decl t(x: number, y: number)  .decl r(x: number, y: number)
          .decl s(x: number)  .decl u(x: number, y: number)
          r(x, y) :- t(x - 1, y), t(y, x).
          s(x) :- t(2 * x, x).
          u(x, y) :- t(x, y), t(x + 1, y * 2).
          """, {"t": [(1, 2), (2, 2), (3, 1), (2, 3), (2, 1), (4, 2), (2, 4)]}),
    _case("bounded_arithmetic_recursion", "Recursion through arithmetic, bounded by filters.", """
          .decl steps(x: number)  .decl up(x: number)
          steps(6).
          steps(y) :- steps(x), x > 1, x % 2 = 0, y = x / 2.
          steps(y) :- steps(x), x > 1, x % 2 = 1, y = 3 * x + 1.
          up(0).
          up(y) :- up(x), y = x + 3, y < 20.
          """),
    _case("aggregate_count", "count : {edge(x, _)} counts the edges from x (0 when none).",
          _EDGE + _NODE + """
          .decl outdegree(x: number, n: number)  .decl edges(n: number)
          .decl into_three(n: number)
          outdegree(x, n) :- node(x), n = count : { edge(x, _) }.
          edges(n) :- n = count : { edge(_, _) }.
          into_three(n) :- n = count : { edge(_, 3) }.
          """, {"edge": [(1, 2), (1, 3), (2, 3), (4, 1)]}),
    _case("aggregate_sum", "sum ranges over distinct matches, so equal prices add up; "
          "sum of nothing is 0.", _SALES_PROGRAM + """
          .decl revenue(i: number, s: number)  .decl nothing(s: number)
          revenue(i, s) :- item(i), s = sum p : { sale(i, _, p) }.
          nothing(s) :- s = sum p : { sale(999, _, p) }.
          """, _SALES),
    _case("aggregate_min_max", "min and max; over nothing the rule does not fire.",
          _SALES_PROGRAM + """
          .decl cheapest(i: number, p: number)  .decl dearest(i: number, p: number)
          cheapest(i, p) :- item(i), p = min q : { sale(i, _, q) }.
          dearest(i, p) :- item(i), p = max q + 1 : { sale(i, _, q) }.
          """, _SALES),
    _case("aggregates_in_expressions",
          "Aggregates left of a comparison, inside arithmetic, and nested.",
          _EDGE + _NODE + """
          .decl busy(x: number)  .decl weighted(x: number, n: number)
          .decl max_outdegree(n: number)
          busy(x) :- node(x), count : { edge(x, _) } > 1.
          weighted(x, n) :- node(x), n = 1 + count : { edge(x, _) } * 2.
          max_outdegree(m) :- m = max d : { node(y), d = count : { edge(y, _) } }.
          """, {"edge": [(1, 2), (1, 3), (2, 3), (3, 1)]}),
    _case("aggregate_over_recursion", "Aggregates over a recursive relation of a lower stratum.",
          _EDGE + _NODE + _PATH + """
          .decl reach(x: number, n: number)  .decl total(n: number)
          reach(x, n) :- node(x), n = count : { path(x, _) }.
          total(s) :- s = sum n : { reach(_, n) }.
          """, {"edge": [(1, 2), (2, 3), (3, 1), (3, 4), (5, 4)]}),
    _case("wildcards", "Every wildcard is a distinct anonymous variable.", _EDGE + """
          .decl has_out(x: number)  .decl in_and_out(x: number)
          .decl any_edge()
          has_out(x) :- edge(x, _).
          in_and_out(x) :- edge(x, _), edge(_, x).
          any_edge() :- edge(_, _).
          """, {"edge": [(1, 2), (2, 3), (4, 4)]}),
    _case("symbols", "Symbol columns, symbol constants in bodies and heads, = and != on symbols.",
          """
          .decl parent(p: symbol, c: symbol)  .decl ancestor(a: symbol, d: symbol)
          .decl alice_child(c: symbol)  .decl other(a: symbol, b: symbol)
          .decl tagged(c: symbol, t: symbol)
          ancestor(a, d) :- parent(a, d).
          ancestor(a, d) :- ancestor(a, m), parent(m, d).
          alice_child(c) :- parent("alice", c).
          other(a, b) :- parent(a, b), a != b, b != "dave".
          tagged(c, "kid") :- parent(_, c), c = "bob".
          """, {"parent": [("alice", "bob"), ("bob", "carol"), ("carol", "dave"), ("eve", "eve")]}),
    _case("repeated_variables", "A variable repeated in one atom or across atoms.", _EDGE + """
          .decl triple(x: number, y: number, z: number)  .decl self_loop(x: number)
          .decl mutual(x: number, y: number)  .decl triangle(x: number)
          .decl diagonal(x: number)
          self_loop(x) :- edge(x, x).
          mutual(x, y) :- edge(x, y), edge(y, x).
          triangle(x) :- edge(x, y), edge(y, z), edge(z, x).
          diagonal(x) :- triple(x, x, x).
          """, {"edge": [(1, 1), (1, 2), (2, 1), (2, 3), (3, 1)],
                "triple": [(1, 1, 1), (1, 1, 2), (2, 1, 2), (3, 3, 3)]}),
    _case("constants_in_atoms", "Constants in body atoms select; in heads they are output.",
          _EDGE + """
          .decl from_one(y: number)  .decl into_three(x: number)
          .decl loop_at_one()  .decl tagged(x: number, k: number, s: symbol)
          from_one(y) :- edge(1, y).
          into_three(x) :- edge(x, 3).
          loop_at_one() :- edge(1, 1).
          tagged(x, 42, "tag") :- edge(x, _).
          """, {"edge": [(1, 2), (1, 3), (2, 3), (3, 3)]}),
    _case("nullary", "Relations of arity 0, positive, negated, as facts and in heads.", _EDGE + """
          .decl nonempty()  .decl empty()
          .decl flag()  .decl gated(x: number)
          flag().
          nonempty() :- edge(_, _).
          empty() :- !nonempty().
          gated(x) :- flag(), edge(x, _), nonempty().
          """, {"edge": [(1, 2)]}),
    _case("empty_input", "No facts at all: recursion, negation and count still run.",
          _EDGE + _NODE + _PATH + """
          .decl lonely(x: number)  .decl total(n: number)
          lonely(x) :- node(x), !path(x, _).
          total(n) :- n = count : { path(_, _) }.
          """),
    _case("mutual_recursion", "Two relations defined through each other.", _EDGE + """
          .decl even(x: number)  .decl odd(x: number)
          .decl a(x: number)  .decl b(x: number)
          even(0).
          even(y) :- odd(x), y = x + 1, y <= 10.
          odd(y) :- even(x), y = x + 1, y <= 10.
          a(1).
          a(y) :- b(x), edge(x, y).
          b(y) :- a(x), edge(x, y).
          """, {"edge": [(1, 2), (2, 3), (3, 4), (4, 1), (2, 5)]}),
    _case("several_strata", "A tower of strata through negation and aggregation.",
          _EDGE + _NODE + _PATH + """
          .decl cut(x: number, y: number)  .decl hub(x: number)
          .decl spoke(x: number)  .decl hubs(n: number)
          cut(x, y) :- node(x), node(y), !path(x, y).
          hub(x) :- node(x), !cut(x, _).
          spoke(x) :- node(x), !hub(x).
          hubs(n) :- n = count : { hub(_) }.
          """, {"edge": [(1, 2), (2, 3), (3, 1), (3, 4), (4, 5)]}),
    _case("inline_facts", "Facts in the program, with arithmetic, beside given facts.", """
          .decl n(x: number)  .decl s(x: symbol)
          .decl big(x: number)
          n(1).
          n(2 + 3).
          n(-7 / 2).
          n(1 / 0).
          s("hello").
          big(x) :- n(x), x > 2.
          """, {"n": [(10,), (1,)]}),
    _case("facts_for_derived_relation", "Given facts of a relation that rules also derive.",
          _EDGE + _PATH, {"edge": [(1, 2), (2, 3)], "path": [(0, 1), (7, 7)]}),
)


def check_result_database(evaluator_factory: Callable,
                          fixpoint_factory: Callable | None = None) -> None:
    """The result has every declared relation typed by its declaration, shares the input's
    SymbolTable, and leaves the input Database unchanged."""
    program = parse(_EDGE + _PATH + """
        .decl label(x: number, name: symbol)
        .decl unused(a: symbol, b: number, c: number)
        label(x, "node") :- path(x, _).
        """)
    database = encode_facts(program, {"edge": [(1, 2), (2, 3)]})
    before = {name: relation.to_set() for name, relation in database.items()}
    result = _fixpoint(evaluator_factory, fixpoint_factory).materialize(program, database)
    for declaration in program.declarations:
        assert declaration.name in result, f"declared relation {declaration.name} is missing"
        assert result[declaration.name].arity == declaration.arity, declaration.name
        assert result.column_types(declaration.name) == declaration.types, declaration.name
    assert result.symbols is database.symbols, "the result must share the input's SymbolTable"
    assert not len(result["unused"]), "a relation with no facts and no rules must be empty"
    after = {name: relation.to_set() for name, relation in database.items()}
    assert before == after and set(database) == {"edge"}, "the input Database was modified"


def check_stats_and_progress(evaluator_factory: Callable,
                             fixpoint_factory: Callable | None = None) -> None:
    """``stats`` has one StratumStats per stratum, whose derived counts add up to the tuples
    derived; the observer sees one Progress per iteration with a running total."""
    program = parse(_EDGE + _NODE + _PATH + """
        .decl lonely(x: number)
        lonely(x) :- node(x), !path(_, x).
        """)
    facts = {"edge": [(1, 2), (2, 3), (3, 4)]}
    events = []
    fixpoint = _fixpoint(evaluator_factory, fixpoint_factory)
    result = fixpoint.materialize(program, encode_facts(program, facts), observer=events.append)
    strata = analyse(program)
    assert [s.relations for s in fixpoint.stats] == [s.relations for s in strata], fixpoint.stats
    derived = sum(len(result[name]) for s in strata for name in s.relations)
    assert sum(s.derived for s in fixpoint.stats) == derived, (fixpoint.stats, derived)
    assert sum(s.iterations for s in fixpoint.stats) == len(events), (fixpoint.stats, events)
    assert events and events[-1].total == derived, events
    totals = [e.total for e in events]
    assert totals == sorted(totals) and all(e.strata == len(strata) for e in events), events


def check_evaluate_returns_each_head(evaluator_factory: Callable,
                                     fixpoint_factory: Callable | None = None) -> None:
    """``evaluate`` maps every head relation to a Relation of its arity (empty when nothing is
    derived) and leaves the instance unchanged."""
    program = parse(_EDGE + """
        .decl out(x: number)
        .decl none(x: number, y: number)
        out(y) :- edge(_, y).
        none(x, y) :- edge(x, y), x > 100.
        """)
    instance = encode_facts(program, {"edge": [(1, 2), (2, 3)]})
    derived = evaluator_factory().evaluate(program.proper_rules, instance)
    assert set(derived) == {"out", "none"}, sorted(derived)
    assert derived["out"].to_set() == {(2,), (3,)}, derived["out"].to_rows()
    assert derived["none"].arity == 2 and not len(derived["none"]), derived["none"]
    assert set(instance) == {"edge"} and instance["edge"].to_set() == {(1, 2), (2, 3)}


def evaluator_checks() -> tuple[tuple[str, Check], ...]:
    """Every check of the evaluator suite as (name, check), each check a function
    ``check(evaluator_factory, fixpoint_factory=None)`` raising AssertionError on failure."""
    checks = (*_CASE_CHECKS, check_result_database, check_stats_and_progress,
              check_evaluate_returns_each_head)
    return tuple((check.__name__, check) for check in checks)


def check_evaluator(
    evaluator_factory: Callable,
    fixpoint_factory: Callable | None = None,
    expected_failures: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Run every check of ``evaluator_checks()`` on ``evaluator_factory`` (a callable returning
    a RuleEvaluator) with ``fixpoint_factory`` (a FixpointEvaluator class or callable taking the
    rule evaluator; the registered "seminaive" by default).

    ``expected_failures``: check name -> reason, for known gaps; such a check must fail, and a
    declared check that passes is an error. Returns check name -> "passed" or
    "expected failure: <reason>". Raises AssertionError naming every unexpected outcome.
    """
    return run_checks(evaluator_checks(), (evaluator_factory, fixpoint_factory),
                      expected_failures)


def evaluator_check_params(expected_failures: Mapping[str, str] | None = None) -> list:
    """The checks as ``pytest.param`` values with the check names as ids, for
    ``@pytest.mark.parametrize("check", evaluator_check_params())``; declared failures carry a
    strict xfail mark with their reason. Imports pytest."""
    return check_params(evaluator_checks(), expected_failures)


