"""The substitution evaluator, one semantic point per test, with hand-computed answers."""

from __future__ import annotations

import doctest
import time

import pytest

from herbrand.evaluators import substitution
from herbrand.evaluators.arithmetic import apply_operator, evaluate_ground_term, wrap64
from herbrand.evaluators.substitution import IndexCache, SubstitutionEvaluator
from herbrand.framework.errors import ArityError, EvaluationError
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Arith, Const, lift_atom_expressions
from herbrand.framework.testing import encode_facts

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def derive(text: str, facts: dict | None = None, evaluator: SubstitutionEvaluator | None = None):
    """One application of the rules of ``text`` to ``facts``: head relation -> decoded rows."""
    program = parse(text)
    instance = encode_facts(program, facts or {})
    for declaration in program.declarations:  # declared relations without facts are empty
        if declaration.name not in instance:
            empty = Relation.empty(declaration.arity)
            instance = instance.with_relations({declaration.name: empty})
    derived = (evaluator or SubstitutionEvaluator()).evaluate(program.proper_rules, instance)
    decoded = Database(derived, instance.symbols, instance.types)
    return {name: set(decoded.decoded_rows(name)) for name in derived}


EDGE = ".decl edge(x: number, y: number)\n"
EDGES = {"edge": [(1, 2), (1, 3), (2, 3), (3, 3)]}


def test_join_extends_substitutions_atom_by_atom():
    out = derive(EDGE + ".decl two(x: number, z: number)\ntwo(x, z) :- edge(x, y), edge(y, z).",
                 EDGES)
    assert out == {"two": {(1, 3), (2, 3), (3, 3)}}


def test_every_head_relation_is_returned_even_when_empty():
    out = derive(EDGE + ".decl none(x: number)\nnone(x) :- edge(x, _), x > 10.", EDGES)
    assert out == {"none": set()}


def test_several_rules_for_one_head_are_united():
    out = derive(EDGE + ".decl node(x: number)\nnode(x) :- edge(x, _).\nnode(y) :- edge(_, y).",
                 EDGES)
    assert out == {"node": {(1,), (2,), (3,)}}


def test_repeated_variable_within_an_atom():
    out = derive(EDGE + ".decl loop(x: number)\nloop(x) :- edge(x, x).", EDGES)
    assert out == {"loop": {(3,)}}


def test_constants_in_body_select_and_in_head_are_output():
    out = derive(EDGE + '.decl r(x: number, k: number, s: symbol)\nr(y, 7, "t") :- edge(1, y).',
                 EDGES)
    assert out == {"r": {(2, 7, "t"), (3, 7, "t")}}


def test_wildcards_match_anything_independently():
    out = derive(EDGE + ".decl r(x: number)\nr(x) :- edge(x, _), edge(_, x).", EDGES)
    assert out == {"r": {(2,), (3,)}}


def test_negation_holds_when_no_row_matches():
    text = EDGE + ".decl src(x: number)\nsrc(x) :- edge(x, _), !edge(_, x)."
    assert derive(text, EDGES) == {"src": {(1,)}}


def test_negation_with_bound_variables_and_constants():
    text = EDGE + """.decl r(x: number, y: number)
              .decl s(x: number, y: number)
              r(x, y) :- edge(x, y), !edge(y, y).
              s(x, y) :- edge(x, y), !edge(1, x)."""
    assert derive(text, EDGES) == {"r": {(1, 2)}, "s": {(1, 2), (1, 3)}}


def test_nullary_relations():
    text = EDGE + ".decl some()\n.decl none()\nsome() :- edge(_, _).\nnone() :- !edge(_, _)."
    assert derive(text, EDGES) == {"some": {()}, "none": set()}
    assert derive(text, {}) == {"some": set(), "none": {()}}


@pytest.mark.parametrize(("op", "expected"), [
    ("=", {(1, 1)}), ("!=", {(1, 2), (2, 1)}), ("<", {(1, 2)}),
    ("<=", {(1, 1), (1, 2)}), (">", {(2, 1)}), (">=", {(1, 1), (2, 1)}),
])
def test_comparisons(op, expected):
    text = (".decl p(x: number, y: number)\n.decl r(x: number, y: number)\n"
            f"r(x, y) :- p(x, y), x {op} y.")
    assert derive(text, {"p": [(1, 1), (1, 2), (2, 1)]}) == {"r": expected}


def test_symbols_compare_by_identity():
    text = """.decl p(a: symbol, b: symbol)
              .decl same(a: symbol)
              .decl other(a: symbol, b: symbol)
              same(a) :- p(a, b), a = b.
              other(a, b) :- p(a, b), a != b, b != "z"."""
    out = derive(text, {"p": [("x", "x"), ("x", "y"), ("y", "z")]})
    assert out == {"same": {("x",)}, "other": {("x", "y")}}


def test_symbol_constants_are_interned_in_the_instance():
    program = parse('.decl r(s: symbol)\n.decl n(x: number)\nr("new") :- n(_).')
    instance = encode_facts(program, {"n": [(1,)]})
    derived = SubstitutionEvaluator().evaluate(program.proper_rules, instance)
    assert derived["r"].to_rows() == [(instance.symbols.lookup("new"),)]


def test_equality_binds_an_unbound_variable_on_either_side():
    text = """.decl n(x: number)
              .decl r(x: number, y: number, z: number)
              r(x, y, z) :- z = y * 10, n(x), x + 1 = y."""
    assert derive(text, {"n": [(1,), (2,)]}) == {"r": {(1, 2, 20), (2, 3, 30)}}


def test_equality_of_two_bound_variables_filters():
    text = ".decl p(x: number, y: number)\n.decl r(x: number)\nr(x) :- p(x, y), y = x."
    assert derive(text, {"p": [(1, 1), (1, 2)]}) == {"r": {(1,)}}


def test_arithmetic_in_atoms_and_heads():
    text = """.decl n(x: number)
              .decl succ(x: number, y: number)
              .decl r(x: number)
              succ(x, x + 1) :- n(x).
              r(x) :- n(x), n(x * 2)."""
    assert derive(text, {"n": [(1,), (2,), (4,)]}) == {
        "succ": {(1, 2), (2, 3), (4, 5)}, "r": {(1,), (2,)}}


@pytest.mark.parametrize(("op", "args", "expected"), [
    ("+", (INT64_MAX, 1), INT64_MIN),
    ("-", (INT64_MIN, 1), INT64_MAX),
    ("*", (2**62, 4), 0),
    ("*", (-3, 5), -15),
    ("/", (7, 2), 3), ("/", (-7, 2), -3), ("/", (7, -2), -3), ("/", (-7, -2), 3),
    ("/", (INT64_MIN, -1), INT64_MIN),
    ("/", (1, 0), None),
    ("%", (7, 2), 1), ("%", (-7, 2), -1), ("%", (7, -2), 1), ("%", (-7, -2), -1),
    ("%", (1, 0), None),
    ("^", (2, 10), 1024), ("^", (2, 63), INT64_MIN), ("^", (-3, 3), -27), ("^", (0, 0), 1),
    ("^", (2, -1), None),
    ("band", (12, 10), 8), ("bor", (12, 10), 14), ("bxor", (12, 10), 6),
    ("band", (-1, 5), 5),
    ("bshl", (1, 63), INT64_MIN), ("bshl", (1, 64), 1), ("bshl", (3, 2), 12),
    ("bshr", (-8, 1), -4), ("bshru", (-1, 60), 15), ("bshru", (8, 2), 2),
    ("land", (2, 3), 1), ("land", (2, 0), 0), ("lor", (0, 0), 0), ("lor", (0, -4), 1),
    ("lxor", (1, 5), 0), ("lxor", (0, 5), 1),
    ("neg", (5,), -5), ("neg", (INT64_MIN,), INT64_MIN),
    ("bnot", (0,), -1), ("bnot", (INT64_MAX,), INT64_MIN),
    ("lnot", (0,), 1), ("lnot", (7,), 0),
    ("min", (3, -1, 2), -1), ("max", (3, -1, 2), 3), ("min", (4,), 4),
    ("abs", (-5,), 5), ("abs", (INT64_MIN,), INT64_MIN),
])
def test_operators(op, args, expected):
    assert apply_operator(op, args) == expected


def test_wrap64():
    assert wrap64(2**63) == INT64_MIN and wrap64(-(2**63) - 1) == INT64_MAX and wrap64(5) == 5


def test_failed_arithmetic_yields_no_derivation():
    text = """.decl p(x: number, y: number)
              .decl q(x: number, y: number, r: number)
              .decl m(x: number, y: number)
              .decl e(x: number, y: number)
              q(x, y, x / y) :- p(x, y).
              m(x, y) :- p(x, y), x % y = 0.
              e(x, y) :- p(x, y), z = x ^ y, z > 0."""
    out = derive(text, {"p": [(6, 3), (6, 0), (2, -1)]})
    assert out == {"q": {(6, 3, 2), (2, -1, -2)}, "m": {(6, 3), (2, -1)}, "e": {(6, 3), (6, 0)}}


def test_failed_arithmetic_in_a_negated_atom_fails_the_substitution():
    text = ".decl p(x: number)\n.decl r(x: number)\nr(x) :- p(x), !p(6 / x)."
    assert derive(text, {"p": [(0,), (2,), (3,), (4,)]}) == {"r": {(4,)}}


def test_evaluate_ground_term():
    symbols = SymbolTable()
    assert evaluate_ground_term(Arith("+", (Const(1), Const(2))), symbols) == 3
    assert evaluate_ground_term(Arith("/", (Const(1), Const(0))), symbols) is None
    assert evaluate_ground_term(Const("a"), symbols) == symbols.lookup("a")


def test_expressions_in_atoms_may_use_variables_bound_later():
    text = """.decl t(x: number, y: number)
              .decl r(x: number, y: number)
              r(x, y) :- t(x - 1, y), t(y, x)."""
    assert derive(text, {"t": [(1, 2), (2, 2), (3, 1), (2, 3)]}) == {"r": {(2, 2), (3, 2)}}


def test_expressions_in_atoms_may_use_variables_the_atom_binds():
    text = """.decl choose(n: number, k: number, c: number)
              .decl r(n: number, c: number)
              r(n, c) :- choose(2 * n, n, c)."""
    assert derive(text, {"choose": [(2, 1, 2), (4, 2, 6), (4, 1, 4)]}) == {"r": {(1, 2), (2, 6)}}


def test_lift_atom_expressions():
    rule_body = parse("r(x) :- t(x - 1, y), !t(x + 1, y).").rules[0].body
    assert ", ".join(map(str, lift_atom_expressions(rule_body))) == \
        "t(@e0, y), !t((x + 1), y), @e0 = (x - 1)"


def test_atoms_binding_nothing_are_existence_tests():
    text = """.decl a(x: number)
              .decl b(x: number)
              .decl c(x: number, y: number)
              .decl q(x: number)
              q(x) :- c(x, _), a(_), b(_), c(_, _)."""
    rows = [(i,) for i in range(1000)]
    start = time.perf_counter()
    out = derive(text, {"a": rows, "b": rows, "c": [(i, i % 7) for i in range(1000)]})
    assert out == {"q": set(rows)} and time.perf_counter() - start < 5


# -- aggregates --------------------------------------------------------------------------------

NODE = ".decl node(x: number)\n"
NODES = {"node": [(1,), (2,), (3,), (4,)], **EDGES}


def test_count_counts_distinct_matches_with_wildcards_as_variables():
    text = EDGE + NODE + """.decl deg(x: number, n: number)
              deg(x, n) :- node(x), n = count : { edge(x, _) }."""
    assert derive(text, NODES) == {"deg": {(1, 2), (2, 1), (3, 1), (4, 0)}}


def test_sum_adds_equal_values_of_distinct_matches_and_is_zero_over_nothing():
    text = """.decl sale(i: number, shop: number, p: number)
              .decl item(i: number)
              .decl revenue(i: number, s: number)
              revenue(i, s) :- item(i), s = sum p : { sale(i, _, p) }."""
    facts = {"sale": [(1, 1, 5), (1, 2, 5), (2, 1, -3)], "item": [(1,), (2,), (3,)]}
    assert derive(text, facts) == {"revenue": {(1, 10), (2, -3), (3, 0)}}


def test_min_and_max_of_nothing_do_not_fire():
    text = EDGE + NODE + """.decl lo(x: number, m: number)
              .decl hi(x: number, m: number)
              lo(x, m) :- node(x), m = min y : { edge(x, y) }.
              hi(x, m) :- node(x), m = max y : { edge(x, y) }."""
    assert derive(text, NODES) == {"lo": {(1, 2), (2, 3), (3, 3)}, "hi": {(1, 3), (2, 3), (3, 3)}}


def test_mean_is_rejected_naming_the_rule():
    text = EDGE + ".decl avg(m: number)\navg(m) :- m = mean y : { edge(_, y) }."
    with pytest.raises(EvaluationError, match="mean.*|avg"):
        derive(text, EDGES)


def test_aggregate_left_of_a_comparison_and_inside_arithmetic():
    text = EDGE + NODE + """.decl busy(x: number)
              .decl w(x: number, n: number)
              busy(x) :- node(x), count : { edge(x, _) } > 1.
              w(x, n) :- node(x), n = 1 + 2 * count : { edge(x, _) }."""
    assert derive(text, NODES) == {"busy": {(1,)}, "w": {(1, 5), (2, 3), (3, 3), (4, 1)}}


def test_nested_aggregates():
    text = EDGE + NODE + """.decl top(n: number)
              top(m) :- m = max d : { node(y), d = count : { edge(y, _) } }."""
    assert derive(text, NODES) == {"top": {(2,)}}


def test_variable_shared_only_by_two_aggregates_is_local_to_each():
    text = EDGE + """.decl r(a: number, b: number)
              r(a, b) :- a = count : { edge(x, _) }, b = count : { edge(_, x) }."""
    assert derive(text, EDGES) == {"r": {(4, 4)}}


def test_aggregate_with_negation_in_its_body():
    text = EDGE + NODE + """.decl sinks(n: number)
              sinks(n) :- n = count : { node(x), !edge(x, _) }."""
    assert derive(text, NODES) == {"sinks": {(1,)}}


def test_aggregate_target_variables_are_local():
    text = """.decl n(x: number)
              .decl r(x: number, s: number)
              r(x, s) :- n(x), s = sum x : { n(x) }."""
    assert derive(text, {"n": [(1,), (2,)]}) == {"r": {(1, 3), (2, 3)}}


def test_a_variable_bound_only_by_its_own_aggregate_is_local_to_it():
    text = """.decl a(n: symbol, x: number)
              .decl r(y: number)
              r(y) :- y = min z + y : { a(p, z), a(q, y), p != q }."""
    facts = {"a": [("A", 3), ("A", 4), ("B", 2), ("D", 4)]}
    assert derive(text, facts) == {"r": {(5,)}}


def test_aggregates_as_atom_and_head_arguments():
    text = EDGE + NODE + """.decl deg(x: number, n: number)
              .decl top(x: number)
              deg(x, count : { edge(x, _) }) :- node(x).
              top(x) :- node(x), deg(x, max d : { deg(_, d) })."""
    out = derive(text, {**NODES, "deg": [(1, 2), (2, 1), (3, 1), (4, 0)]})
    assert out == {"deg": {(1, 2), (2, 1), (3, 1), (4, 0)}, "top": {(1,)}}


# -- errors ------------------------------------------------------------------------------------


def test_unbound_head_variable_is_an_error_naming_the_rule():
    with pytest.raises(EvaluationError, match=r"r\(x, y\) :- edge\(x, _\)"):
        derive(EDGE + ".decl r(x: number, y: number)\nr(x, y) :- edge(x, _).", EDGES)


def test_unbound_comparison_is_an_error():
    with pytest.raises(EvaluationError, match="never bound"):
        derive(EDGE + ".decl r(x: number)\nr(x) :- edge(x, _), y > 1.", EDGES)


def test_missing_relation_is_an_error():
    program = parse(".decl r(x: number)\nr(x) :- nowhere(x).")
    with pytest.raises(EvaluationError, match="nowhere"):
        SubstitutionEvaluator().evaluate(program.proper_rules, Database({}))


def test_arity_mismatch_is_an_error():
    program = parse(".decl r(x: number)\nr(x) :- e(x).")
    instance = Database({"e": Relation.from_rows([(1, 2)])})
    with pytest.raises(ArityError, match="e"):
        SubstitutionEvaluator().evaluate(program.proper_rules, instance)


# -- indexes and purity ------------------------------------------------------------------------


def test_evaluate_leaves_the_instance_unchanged():
    program = parse(EDGE + ".decl r(x: number)\nr(x) :- edge(x, _).")
    instance = encode_facts(program, EDGES)
    SubstitutionEvaluator().evaluate(program.proper_rules, instance)
    assert set(instance) == {"edge"} and instance["edge"].to_set() == set(EDGES["edge"])


def test_an_index_is_built_once_per_relation():
    cache = IndexCache()
    relation = Relation.from_rows([(1, 2), (1, 3), (2, 3)])
    index = cache.index("r", relation, (0,))
    assert index == {(1,): [(1, 2), (1, 3)], (2,): [(2, 3)]}
    assert cache.index("r", relation, (0,)) is index
    assert cache.index("r", relation, ()) == {(): relation.to_rows()}
    assert cache.index("r", Relation.empty(2), ()) == {}
    assert len(cache) == 2


def test_an_index_grows_with_a_union_and_is_rebuilt_otherwise():
    cache = IndexCache()
    first = Relation.from_rows([(1, 2), (2, 3)])
    index = cache.index("r", first, (1,))
    grown = first.union(Relation.from_rows([(4, 3), (1, 2), (5, 6)]))
    extended = cache.index("r", grown, (1,))
    assert extended is index
    assert extended == {(2,): [(1, 2)], (3,): [(2, 3), (4, 3)], (6,): [(5, 6)]}
    other = Relation.from_rows([(2, 3), (1, 2), (7, 7)])  # same rows, another order
    assert cache.index("r", other, (1,)) == {(3,): [(2, 3)], (2,): [(1, 2)], (7,): [(7, 7)]}
    cache.clear()
    assert len(cache) == 0


def test_an_evaluator_reuses_indexes_across_calls():
    evaluator = SubstitutionEvaluator()
    program = parse(EDGE + ".decl r(x: number)\nr(z) :- edge(x, y), edge(y, z).")
    instance = encode_facts(program, EDGES)
    first = evaluator.evaluate(program.proper_rules, instance)["r"]
    indexes = dict(evaluator._cache._entries)
    assert set(indexes) == {("edge", ()), ("edge", (0,))}
    second = evaluator.evaluate(program.proper_rules, instance)["r"]
    assert first == second
    assert all(evaluator._cache._entries[k][1] is v[1] for k, v in indexes.items())


def test_repr_and_tags():
    evaluator = SubstitutionEvaluator()
    assert repr(evaluator) == "SubstitutionEvaluator()"
    tags = evaluator.tags
    assert tags.negation and tags.arithmetic and tags.aggregates and not tags.uses_index


def test_doctests():
    assert doctest.testmod(substitution).failed == 0
