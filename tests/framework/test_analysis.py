"""Tests of herbrand.framework.analysis: strata, dependency graph, components, and each check."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from herbrand.framework.analysis import (
    AGGREGATE,
    NEGATIVE,
    POSITIVE,
    analyse,
    check_rule,
    dependency_graph,
    strongly_connected_components,
    variable_types,
)
from herbrand.framework.errors import (
    ArityError,
    HerbrandAnalysisError,
    HerbrandTypeError,
    RedefinitionError,
    SourceLocation,
    StratificationError,
    UndeclaredRelationError,
    UnsafeRuleError,
)
from herbrand.framework.parser import parse
from herbrand.framework.syntax import (
    NUMBER,
    SYMBOL,
    Aggregate,
    Atom,
    Column,
    Comparison,
    Const,
    Declaration,
    Directive,
    Literal,
    Program,
    Rule,
    Var,
    Wildcard,
)
from herbrand.workloads.shared import workloads_root

WORKLOADS = workloads_root()


def program_of(text: str) -> Program:
    return parse(textwrap.dedent(text).lstrip("\n"), file="t.dl")


def strata_of(text: str) -> list[tuple[tuple[str, ...], bool]]:
    return [(s.relations, s.recursive) for s in analyse(program_of(text))]


def error_of(kind: type[HerbrandAnalysisError], text: str, *fragments: str) -> str:
    """Analyse ``text`` (file t.dl), expect ``kind``, and check the message names every fragment."""
    with pytest.raises(kind) as caught:
        analyse(program_of(text))
    message = str(caught.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return message


# ---------------------------------------------------------------------------------------------
# Programs built by hand with the syntax constructors
# ---------------------------------------------------------------------------------------------


def at(line: int, column: int) -> SourceLocation:
    return SourceLocation(line, column, "h.dl")


def term(value):
    if value == "_":
        return Wildcard()
    return Var(value) if isinstance(value, str) else Const(value)


def atom(relation: str, *terms, line: int = 9, column: int = 1) -> Atom:
    return Atom(relation, tuple(map(term, terms)), location=at(line, column))


def pos(relation: str, *terms, line: int = 9, column: int = 1) -> Literal:
    return Literal(atom(relation, *terms, line=line, column=column))


def neg(relation: str, *terms, line: int = 9, column: int = 1) -> Literal:
    return Literal(atom(relation, *terms, line=line, column=column), negated=True)


def rule(head: Atom, *body) -> Rule:
    return Rule(head, tuple(body), location=head.location)


def declare(name: str, *types: str, line: int = 1) -> Declaration:
    columns = tuple(Column(f"c{i}", t) for i, t in enumerate(types))
    return Declaration(name, columns, location=at(line, 7))


TC_BY_HAND = Program(
    declarations=(declare("e", NUMBER, NUMBER), declare("t", NUMBER, NUMBER, line=2)),
    rules=(
        rule(atom("e", 1, 2, line=3)),
        rule(atom("t", "x", "y", line=4), pos("e", "x", "y", line=4, column=12)),
        rule(atom("t", "x", "z", line=5), pos("t", "x", "y", line=5, column=12),
             pos("e", "y", "z", line=5, column=21)),
    ),
    directives=(Directive("output", "t", location=at(3, 9)),),
)


def test_transitive_closure_built_by_hand():
    (stratum,) = analyse(TC_BY_HAND)
    assert stratum.index == 0 and stratum.relations == ("t",) and stratum.recursive
    assert stratum.rules == TC_BY_HAND.rules[1:]


def test_hand_built_errors_name_their_locations():
    unsafe = Program(TC_BY_HAND.declarations, (
        rule(atom("t", "x", "w", line=7), pos("e", "x", "y", line=7, column=12)),))
    with pytest.raises(UnsafeRuleError, match=r"^h\.dl:7:1: variable w in the head .*"
                       r"t\(x, w\) :- e\(x, y\)\."):
        analyse(unsafe)
    wrong_arity = Program(TC_BY_HAND.declarations, (
        rule(atom("t", "x", "y", line=7), pos("e", "x", "y", "y", line=7, column=12)),))
    with pytest.raises(ArityError, match=r"h\.dl:7:12: e has 3 .* 2 .* at h\.dl:1:7"):
        analyse(wrong_arity)
    through_negation = Program(TC_BY_HAND.declarations, TC_BY_HAND.rules + (
        rule(atom("t", "x", "y", line=8), pos("e", "x", "y", line=8, column=12),
             neg("t", "y", "x", line=8, column=21)),))
    with pytest.raises(StratificationError, match=r"negation through recursion: t -> t "
                       r"\(rule at h\.dl:8:1: t\(x, y\) :- e\(x, y\), !t\(y, x\)\.\)"):
        analyse(through_negation)


def test_hand_built_aggregate_and_types():
    total = Aggregate("sum", Var("y"), (pos("e", "x", "y", line=4, column=30),))
    program = Program(
        declarations=(declare("e", NUMBER, NUMBER), declare("s", NUMBER, NUMBER, line=2),
                      declare("n", SYMBOL, NUMBER, line=3)),
        rules=(
            rule(atom("s", "x", "t", line=4), pos("e", "x", "_", line=4, column=12),
                 Comparison("=", Var("t"), total, location=at(4, 21))),
            rule(atom("n", "x", "y", line=5), pos("e", "x", "y", line=5, column=12)),
        ),
    )
    assert variable_types(program.rules[0], program) == {Var("x"): NUMBER, Var("t"): NUMBER}
    check_rule(program.rules[0], program)
    with pytest.raises(HerbrandTypeError, match=r"^h\.dl:5:1: variable x is a number at "
                       r"h\.dl:5:12 \(e column 1\) but a symbol at h\.dl:5:1 \(n column 1\)"):
        analyse(program)


# ---------------------------------------------------------------------------------------------
# Strongly connected components and the dependency graph
# ---------------------------------------------------------------------------------------------


def test_components_come_dependencies_first():
    graph = {"a": ["b"], "b": ["a", "c"], "c": ["c"], "d": ["a", "e"]}
    assert strongly_connected_components(graph) == [("c",), ("a", "b"), ("e",), ("d",)]


def test_components_with_no_edges_and_successor_only_nodes():
    assert strongly_connected_components({}) == []
    assert strongly_connected_components({1: [], 2: [3]}) == [(1,), (3,), (2,)]


def test_components_of_a_long_chain_and_a_long_cycle_are_iterative():
    n = 50_000
    chain = {i: [i + 1] for i in range(n)}
    assert strongly_connected_components(chain) == [(i,) for i in range(n, -1, -1)]
    cycle = {i: [(i + 1) % n] for i in range(n)}
    (component,) = strongly_connected_components(cycle)
    assert component == tuple(range(n))


def test_components_are_topologically_ordered_on_a_random_graph():
    import random

    generator = random.Random(7)
    graph = {i: [generator.randrange(60) for _ in range(2)] for i in range(60)}
    components = strongly_connected_components(graph)
    position = {node: k for k, component in enumerate(components) for node in component}
    assert sorted(position) == list(range(60))
    for node, successors in graph.items():
        for successor in successors:
            assert position[successor] <= position[node]
    # mutually reachable nodes share a component: compare with reachability sets
    reach = {}
    for start in graph:
        seen, todo = {start}, [start]
        while todo:
            for s in graph[todo.pop()]:
                if s not in seen:
                    seen.add(s)
                    todo.append(s)
        reach[start] = seen
    for a in graph:
        for b in graph:
            same = a in reach[b] and b in reach[a]
            assert same == (position[a] == position[b])


def test_dependency_graph_polarities():
    program = program_of("""
        .decl e(x: number, y: number)
        .decl p(x: number)
        .decl q(x: number)
        .decl r(x: number, c: number)
        e(1, 2).
        p(x) :- e(x, _), !q(x).
        p(x) :- e(_, x).
        q(x) :- e(x, x).
        r(x, c) :- p(x), c = count : { e(x, y), !q(y) }.
    """)
    assert dependency_graph(program) == {
        "p": {("e", POSITIVE), ("q", NEGATIVE)},
        "q": {("e", POSITIVE)},
        "r": {("p", POSITIVE), ("e", AGGREGATE), ("q", AGGREGATE)},
    }
    assert list(dependency_graph(program)) == ["p", "q", "r"]


# ---------------------------------------------------------------------------------------------
# Strata
# ---------------------------------------------------------------------------------------------


def test_transitive_closure():
    program = program_of("""
        .decl edge(x: number, y: number)
        .decl path(x: number, y: number)
        .input edge
        .output path
        path(x, y) :- edge(x, y).
        path(x, z) :- path(x, y), edge(y, z).
    """)
    (stratum,) = analyse(program)
    assert (stratum.index, stratum.relations, stratum.recursive) == (0, ("path",), True)
    assert stratum.rules == program.rules


def test_mutual_recursion_is_one_stratum():
    assert strata_of("""
        .decl succ(x: number, y: number)
        .decl even(x: number)
        .decl odd(x: number)
        even(0).
        odd(y) :- even(x), succ(x, y).
        even(y) :- odd(x), succ(x, y).
    """) == [(("odd", "even"), True)]


def test_negation_across_strata():
    program = program_of("""
        .decl node(x: number)
        .decl edge(x: number, y: number)
        .decl reach(x: number, y: number)
        .decl unreached(x: number, y: number)
        .decl isolated(x: number)
        unreached(x, y) :- node(x), node(y), !reach(x, y), x != y.
        reach(x, y) :- edge(x, y).
        reach(x, z) :- reach(x, y), edge(y, z).
        isolated(x) :- node(x), !reach(x, _), !reach(_, x).
    """)
    strata = analyse(program)
    assert [(s.index, s.relations, s.recursive) for s in strata] == [
        (0, ("reach",), True), (1, ("unreached",), False), (2, ("isolated",), False)]
    assert strata[1].rules == (program.rules[0],)


def test_aggregation_across_strata():
    assert strata_of("""
        .decl edge(x: number, y: number)
        .decl reach(x: number, y: number)
        .decl degree(x: number, d: number)
        .decl top(d: number)
        top(m) :- m = max d : { degree(_, d) }.
        degree(x, d) :- reach(x, _), d = count : { reach(x, _) }.
        reach(x, y) :- edge(x, y).
        reach(x, z) :- reach(x, y), edge(y, z).
    """) == [(("reach",), True), (("degree",), False), (("top",), False)]


def test_several_mutually_recursive_relations_and_order_of_rules():
    program = program_of("""
        .decl e(x: number, y: number)
        .decl a(x: number)
        .decl b(x: number)
        .decl c(x: number)
        .decl d(x: number)
        d(x) :- c(x), !e(x, x).
        a(x) :- e(x, _).
        b(y) :- a(x), e(x, y).
        c(y) :- b(x), e(x, y).
        a(y) :- c(x), e(x, y).
        b(x) :- c(x), a(x).
    """)
    first, second = analyse(program)
    assert first.relations == ("a", "b", "c") and first.recursive
    assert first.rules == program.rules[1:]
    assert (second.relations, second.recursive, second.rules) == (("d",), False, program.rules[:1])


def test_base_relations_are_in_no_stratum():
    program = program_of("""
        .decl edge(x: number, y: number)
        .decl colour(x: number, c: symbol)
        .decl unused(x: symbol)
        .decl seeded(x: number)
        .decl out(x: number, c: symbol)
        .input edge
        colour(1, "red").
        seeded(1).
        seeded(y) :- seeded(x), edge(x, y).
        out(x, c) :- seeded(x), colour(x, c).
    """)
    strata = analyse(program)
    assert [s.relations for s in strata] == [("seeded",), ("out",)]
    assert strata[0].rules == (program.rules[2],)  # the fact seeded(1) is not a proper rule
    assert analyse(program_of(".decl e(x: number)\ne(1).\n.output e\n")) == ()


def test_disjunction_expanded_rules():
    program = program_of("""
        .decl e(x: number, y: number)
        .decl f(x: number, y: number)
        .decl p(x: number)
        .decl q(x: number)
        p(x) :- e(x, _) ; f(_, x) ; q(x).
        q(x) :- p(y), (e(y, x) ; f(y, x)), !e(x, x).
    """)
    (stratum,) = analyse(program)
    assert stratum.relations == ("p", "q") and stratum.recursive
    assert len(stratum.rules) == 5 and stratum.rules == program.rules


def test_recursive_flag_and_independent_strata_order():
    assert strata_of("""
        .decl e(x: number, y: number)
        .decl p(x: number)
        .decl q(x: number)
        .decl r(x: number)
        .decl s(x: number)
        q(x) :- e(x, _).
        p(x) :- e(_, x).
        r(x) :- r(x), p(x).
        s(x) :- q(x), p(x).
    """) == [(("q",), False), (("p",), False), (("r",), True), (("s",), False)]


def test_strata_respect_every_dependency():
    program = program_of("""
        .decl e(x: number, y: number)
        .decl p(x: number, y: number)
        .decl q(x: number)
        .decl r(x: number)
        .decl s(x: number, n: number)
        s(x, n) :- r(x), n = count : { p(x, _) }.
        r(x) :- q(x), !p(x, x).
        q(x) :- p(x, _), !e(x, x).
        p(x, y) :- e(x, y).
        p(x, z) :- p(x, y), p(y, z).
    """)
    strata = analyse(program)
    stratum_of = {relation: s.index for s in strata for relation in s.relations}
    assert [s.index for s in strata] == list(range(len(strata)))
    for relation, edges in dependency_graph(program).items():
        for used, polarity in edges:
            if used in stratum_of:
                assert stratum_of[used] <= stratum_of[relation]
                if polarity != POSITIVE:
                    assert stratum_of[used] < stratum_of[relation]


# ---------------------------------------------------------------------------------------------
# Undeclared relations
# ---------------------------------------------------------------------------------------------


def test_undeclared_relation_in_a_head_or_body():
    error_of(UndeclaredRelationError, """
        .decl edge(x: number, y: number)
        pth(x, y) :- edge(x, y).
    """, "t.dl:2:1", "undeclared relation pth", "pth(x, y) :- edge(x, y).")
    message = error_of(UndeclaredRelationError, """
        .decl edge(x: number, y: number)
        .decl path(x: number, y: number)
        path(x, y) :- edge(x, y), egde(y, x).
    """, "t.dl:3:27", "relation egde", "path(x, y) :- edge(x, y), egde(y, x).")
    assert "did you mean edge?" in message


def test_undeclared_relation_in_a_negation_or_an_aggregate():
    error_of(UndeclaredRelationError, """
        .decl a(x: number)
        a(x) :- a(x), !b(x).
    """, "t.dl:2:16", "relation b", "a(x) :- a(x), !b(x).")
    error_of(UndeclaredRelationError, """
        .decl a(x: number, n: number)
        a(x, n) :- a(x, _), n = count : { b(x) }.
    """, "t.dl:2:35", "relation b", "a(x, n) :- a(x, _), n = count : { b(x) }.")


def test_undeclared_relation_in_a_fact_or_a_directive():
    error_of(UndeclaredRelationError, """
        .decl a(x: number)
        a(1).
        c(2).
    """, "t.dl:3:1", "relation c", "fact: c(2).")
    error_of(UndeclaredRelationError, """
        .decl a(x: number)
        .output a
        .input b
    """, "t.dl:3:8", ".input", "relation b")
    error_of(UndeclaredRelationError, """
        .decl a(x: number)
        .output c
    """, "t.dl:2:9", ".output", "relation c")


# ---------------------------------------------------------------------------------------------
# Arities
# ---------------------------------------------------------------------------------------------


def test_arity_of_a_body_atom_names_both_places():
    error_of(ArityError, """
        .decl edge(x: number, y: number)
        .decl path(x: number, y: number)
        path(x, y) :- edge(x, y, 1).
    """, "t.dl:3:15", "edge has 3 argument(s)", "2 in its declaration at t.dl:1:7",
        "path(x, y) :- edge(x, y, 1).")


def test_arity_of_a_head_a_fact_a_negation_and_an_aggregate():
    error_of(ArityError, """
        .decl e(x: number, y: number)
        .decl p(x: number)
        p(x, y) :- e(x, y).
    """, "t.dl:3:1", "p has 2", "1 in its declaration at t.dl:2:7", "p(x, y) :- e(x, y).")
    error_of(ArityError, """
        .decl e(x: number, y: number)
        e(1).
    """, "t.dl:2:1", "e has 1", "declaration at t.dl:1:7", "fact: e(1).")
    error_of(ArityError, """
        .decl e(x: number, y: number)
        .decl p(x: number)
        p(x) :- e(x, _), !p(x, x).
    """, "t.dl:3:19", "p has 2", "t.dl:2:7", "p(x) :- e(x, _), !p(x, x).")
    error_of(ArityError, """
        .decl e(x: number, y: number)
        .decl p(x: number)
        p(n) :- n = count : { e(_) }.
    """, "t.dl:3:23", "e has 1", "t.dl:1:7", "p(n) :- n = count : { e(_) }.")


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------


def test_a_variable_used_with_two_types_names_both_places():
    error_of(HerbrandTypeError, """
        .decl edge(x: number, y: number)
        .decl name(x: number, n: symbol)
        .decl p(x: number)
        p(x) :- edge(x, y), name(y, x).
    """, "variable x is a number at t.dl:4:9 (edge column 1) but a symbol at t.dl:4:21 "
         "(name column 2)", "p(x) :- edge(x, y), name(y, x).")
    error_of(HerbrandTypeError, """
        .decl edge(x: number, y: number)
        .decl label(n: symbol)
        label(y) :- edge(_, y).
    """, "t.dl:3:1: variable y is a number at t.dl:3:13 (edge column 2) but a symbol at "
         "t.dl:3:1 (label column 1)", "label(y) :- edge(_, y).")


def test_a_constant_of_the_wrong_type():
    error_of(HerbrandTypeError, """
        .decl edge(x: number, y: number)
        .decl p(x: number)
        p(x) :- edge(x, "a").
    """, "t.dl:3:9", 'constant "a" is a symbol but edge column 2 is a number',
        "declared at t.dl:1:7", 'p(x) :- edge(x, "a").')
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        name(1, "one").
        name("two", 2).
    """, "t.dl:3:1", 'constant "two" is a symbol but name column 1 is a number',
        'fact: name("two", 2).')


def test_arithmetic_is_on_numbers_only():
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl p(x: number)
        p(y) :- name(_, n), y = (n + 1).
    """, "variable n is a symbol at t.dl:3:9 (name column 2) but a number at t.dl:3:21 "
         "(operand of (n + 1))", "p(y) :- name(_, n), y = (n + 1).")
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        name(1, (2 + 3)).
    """, "t.dl:2:1", "arithmetic (2 + 3) is a number but name column 2 is a symbol",
        "fact: name(1, (2 + 3)).")
    assert analyse(program_of(".decl n(x: number)\nn((2 * 3)).\nn(-(4)).\n")) == ()


def test_comparisons_must_compare_one_type():
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl p(x: number)
        p(x) :- name(x, n), n != 3.
    """, "t.dl:3:21", "variable n is a symbol at t.dl:3:9 (name column 2) but a number at "
         "t.dl:3:21 (n != 3)", "p(x) :- name(x, n), n != 3.")
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl p(x: number)
        p(x) :- name(x, n), x = n.
    """, "variable x is a number at t.dl:3:9 (name column 1) but variable n is a symbol at "
         "t.dl:3:9 (name column 2); they meet at t.dl:3:21 (x = n)")
    error_of(HerbrandTypeError, """
        .decl p(x: number)
        p(1) :- "a" = 1.
    """, "t.dl:2:9", 'comparison "a" = 1 compares a symbol with a number')


def test_types_flow_through_equalities():
    error_of(HerbrandTypeError, """
        .decl q(x: number)
        .decl p(x: number)
        p(z) :- q(z), x = "a", y = x, z = y.
    """, "variable z is a number at t.dl:3:9 (q column 1) but variable y (equal to x) is a "
         'symbol at t.dl:3:15 (x = "a"); they meet at t.dl:3:31 (z = y)')
    error_of(HerbrandTypeError, """
        .decl q(x: number)
        .decl p(x: number)
        p(z) :- q(z), y = x, x = "a", y < 3.
    """, 'variable y (equal to x) is a symbol at t.dl:3:22 (x = "a") but a number at '
         "t.dl:3:31 (y < 3)")


def test_order_comparison_on_symbols():
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl p(x: number)
        p(x) :- name(x, n), name(y, m), n < m, x != y.
    """, "t.dl:3:33: order comparison on symbols is not supported: n < m",
        "p(x) :- name(x, n), name(y, m), n < m, x != y.")
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl p(x: number)
        p(x) :- name(x, n), "b" >= n.
    """, "t.dl:3:21", 'order comparison on symbols is not supported: "b" >= n')
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl p(x: number)
        p(x) :- name(x, n), y <= z, z = y, z = n.
    """, "order comparison on symbols is not supported: y <= z")


def test_aggregate_results_and_targets_are_numbers():
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl p(x: number)
        p(m) :- m = max n : { name(_, n) }.
    """, "t.dl:3:9", "variable n is a symbol at t.dl:3:23 (name column 2) but a number at "
         "t.dl:3:9 (target of max)", "p(m) :- m = max n : { name(_, n) }.")
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl label(n: symbol)
        label(c) :- c = count : { name(_, _) }.
    """, "t.dl:3:13: variable c is a symbol at t.dl:3:1 (label column 1) but a number at "
         "t.dl:3:13 (c = count : { name(_, _) })")
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl p(n: symbol)
        p(n) :- name(_, n), n = sum x : { name(x, _) }.
    """, "variable n is a symbol at t.dl:3:9 (name column 2) but a number at t.dl:3:21")


def test_aggregate_local_variables_are_scoped():
    program = program_of("""
        .decl name(x: number, n: symbol)
        .decl p(a: number, b: number)
        p(a, b) :- a = count : { name(v, _), v > 2 }, b = count : { name(_, v), v != "x" }.
    """)
    assert variable_types(program.rules[0], program) == {Var("a"): NUMBER, Var("b"): NUMBER}
    assert [s.relations for s in analyse(program)] == [("p",)]


def test_correlated_aggregate_variables_share_the_outer_type():
    error_of(HerbrandTypeError, """
        .decl name(x: number, n: symbol)
        .decl p(x: symbol, c: number)
        p(x, c) :- name(_, x), c = count : { name(x, _) }.
    """, "variable x is a symbol at t.dl:3:12 (name column 2) but a number at t.dl:3:38 "
         "(name column 1)")


def test_variable_types_of_a_rule():
    program = program_of("""
        .decl name(x: number, n: symbol)
        .decl p(x: number, n: symbol, k: number)
        p(x, n, k) :- name(x, n), k = (x * 2), m = n, m != "z".
    """)
    assert variable_types(program.rules[0], program) == {
        Var("x"): NUMBER, Var("n"): SYMBOL, Var("k"): NUMBER, Var("m"): SYMBOL}


# ---------------------------------------------------------------------------------------------
# Safety
# ---------------------------------------------------------------------------------------------


def test_unbound_head_variable():
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(x: number, y: number)
        p(x, z) :- e(x, y).
    """, "t.dl:3:1", "variable z in the head", "p(x, z) :- e(x, y).")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(x: number)
        p(x) :- !e(x, _).
    """, "t.dl:3:1", "variable x in the head", "p(x) :- !e(x, _).")


def test_unbound_variable_of_a_negation_or_a_comparison():
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(x: number)
        p(x) :- e(x, _), !e(x, z).
    """, "t.dl:3:19", "variable z in the negated atom !e(x, z)", "p(x) :- e(x, _), !e(x, z).")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(x: number)
        p(x) :- e(x, _), x < z.
    """, "t.dl:3:18", "variable z in the comparison x < z", "p(x) :- e(x, _), x < z.")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(x: number)
        p(x) :- e(x, _), e((y + 1), x).
    """, "t.dl:3:18", "variable y in the atom e((y + 1), x)")


def test_unbound_variables_of_aggregates():
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(x: number, n: number)
        p(x, n) :- n = count : { e(x, _) }, x != 0.
    """, "t.dl:3:1", "variable x in the head", "p(x, n) :- n = count : { e(x, _) }, x != 0.")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(n: number)
        p(n) :- e(n, _), n < count : { e(x, _), x < w }.
    """, "t.dl:3:41", "variable w in the comparison x < w")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(n: number)
        p(n) :- n = sum w : { e(x, _) }.
    """, "t.dl:3:9", "variable w in the target of sum w : { e(x, _) }")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(n: number)
        p(n) :- n = count : { e(x, _), !e(_, y) }.
    """, "t.dl:3:33", "variable y in the negated atom !e(_, y)")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(n: number)
        p(n) :- e(_, n), n < count : { e(x, _) }, x != n.
    """, "t.dl:3:43", "variable x in the comparison x != n",
        "p(n) :- e(_, n), n < count : { e(x, _) }, x != n.")


def test_wildcards_in_heads_comparisons_and_arithmetic():
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        e(x, _) :- e(x, 1).
    """, "t.dl:2:1", "wildcard _ in the head", "e(x, _) :- e(x, 1).")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        e(1, _).
    """, "t.dl:2:1", "wildcard _ in the head", "fact: e(1, _).")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        e(x, x) :- e(x, _), x != _.
    """, "t.dl:2:21", "wildcard _ in the comparison x != _")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        e(x, x) :- e(x, _), !e((_ + 1), x).
    """, "t.dl:2:22", "wildcard _ in the expression (_ + 1)")


def test_facts_must_be_ground():
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        e(1, x).
    """, "t.dl:2:1", "facts must be ground: variable x", "in fact: e(1, x).")
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        e((1 + y), 2).
    """, "t.dl:2:1", "facts must be ground: variable y", "in fact: e((1 + y), 2).")


def test_bindings_propagate_through_equalities():
    program = program_of("""
        .decl e(x: number, y: number)
        .decl p(x: number, y: number)
        p(x, z) :- z = (y * 2), e(x, _), (x + 1) = y, w = count : { e(z, _) }, w > 0.
        p(x, y) :- e(x, _), !e(_, x), y = x, !e(y, y), 3 = v, v != y.
        p(x, x) :- x = max y : { e(y, _), !e(_, y) }.
    """)
    assert [s.relations for s in analyse(program)] == [("p",)]
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(x: number)
        p(x) :- e(z, _), x = y, y = x.
    """, "t.dl:3:1", "variable x in the head", "p(x) :- e(z, _), x = y, y = x.")


def test_a_variable_only_the_aggregate_binds_is_local_to_it():
    # As in Soufflé: the inner y is not injected (the body binds y only through this
    # aggregate's value), so it is the aggregate's own and the rule is safe.
    program = program_of("""
        .decl a(n: symbol, x: number)
        .decl res(x: number)
        res(y) :- y = min (z + y) : { a(_, z), a(_, y) }.
        res(y) :- y = min (z + y) : { a(p, z), a(q, y), p != q }.
    """)
    assert [s.relations for s in analyse(program)] == [("res",)]
    # The outer and inner y are different variables: their types are independent.
    program = program_of("""
        .decl a(n: symbol, x: number)
        .decl res(x: number)
        res(y) :- y = count : { a(y, _) }.
    """)
    analyse(program)
    assert variable_types(program.rules[0], program) == {Var("y"): "number"}


def test_a_variable_the_body_binds_is_injected_into_the_aggregate():
    program = program_of("""
        .decl e(x: number)
        .decl f(x: number, y: symbol)
        .decl r(x: number, n: number)
        r(x, n) :- e(x), n = count : { f(x, _) }.
    """)
    assert [s.relations for s in analyse(program)] == [("r",)]
    # x is shared: its type must agree with the enclosing rule's.
    error_of(HerbrandTypeError, """
        .decl e(x: symbol)
        .decl f(x: number, y: symbol)
        .decl r(x: symbol, n: number)
        r(x, n) :- e(x), n = count : { f(x, _) }.
    """, "variable x")
    # A variable of the target is local even when the body binds it.
    error_of(UnsafeRuleError, """
        .decl e(x: number)
        .decl r(x: number, n: number)
        r(x, n) :- e(x), n = sum x : { e(_) }.
    """, "variable x in the target of sum x : { e(_) }")


def test_a_head_variable_bound_only_inside_an_aggregate_is_unsafe():
    # A Soufflé witness: the inner x is local, so the head's x is not bound.
    error_of(UnsafeRuleError, """
        .decl e(x: number, y: number)
        .decl p(x: number, n: number)
        p(x, n) :- n = max y : { e(x, y) }.
    """, "t.dl:3:1", "variable x in the head", "p(x, n) :- n = max y : { e(x, y) }.")


# ---------------------------------------------------------------------------------------------
# Stratification
# ---------------------------------------------------------------------------------------------


def test_negation_through_recursion_names_the_cycle():
    error_of(StratificationError, """
        .decl e(x: number)
        .decl p(x: number)
        p(x) :- e(x), !p(x).
    """, "negation through recursion: p -> p (rule at t.dl:3:1: p(x) :- e(x), !p(x).)")
    error_of(StratificationError, """
        .decl e(x: number)
        .decl p(x: number)
        .decl q(x: number)
        q(x) :- p(x).
        p(x) :- e(x), !q(x).
    """, "negation through recursion: p -> q -> p (rule at t.dl:5:1: p(x) :- e(x), !q(x).)")


def test_negation_through_a_longer_cycle():
    error_of(StratificationError, """
        .decl e(x: number)
        .decl p(x: number)
        .decl q(x: number)
        .decl r(x: number)
        .decl s(x: number)
        p(x) :- q(x), s(x).
        q(x) :- r(x).
        r(x) :- e(x), !p(x).
        s(x) :- p(x).
    """, "negation through recursion: r -> p -> q -> r (rule at t.dl:8:1: "
         "r(x) :- e(x), !p(x).)")


def test_aggregation_through_recursion():
    error_of(StratificationError, """
        .decl e(x: number, y: number)
        .decl size(x: number, n: number)
        size(x, n) :- e(x, _), n = count : { size(x, _) }.
    """, "aggregation through recursion: size -> size (rule at t.dl:3:1: "
         "size(x, n) :- e(x, _), n = count : { size(x, _) }.)")
    error_of(StratificationError, """
        .decl e(x: number, y: number)
        .decl p(x: number)
        .decl q(x: number, n: number)
        p(x) :- q(x, _).
        q(x, n) :- e(x, _), n = count : { e(x, y), !p(y) }.
    """, "aggregation through recursion: q -> p -> q (rule at t.dl:5:1:")


# ---------------------------------------------------------------------------------------------
# Workloads: Soufflé's plain test programs all analyse
# ---------------------------------------------------------------------------------------------

TIER_A = WORKLOADS / "souffle-conformance" / "tierA_plain"


def tier_a_programs() -> list[Path]:
    return sorted(TIER_A.glob("*/*.dl")) if TIER_A.is_dir() else []


@pytest.mark.skipif(not TIER_A.is_dir(), reason=f"workloads not found at {TIER_A}")
@pytest.mark.parametrize("path", tier_a_programs(), ids=lambda path: path.parent.name)
def test_tier_a_conformance_programs_analyse(path: Path):
    program = parse(path.read_text(), file=str(path))
    strata = analyse(program)
    assert sum(len(s.rules) for s in strata) == len(program.proper_rules)


@pytest.mark.parametrize(("text", "message"), [
    (".decl e(x: number)\n.decl e(y: symbol)\n",
     "<input>:2:7: relation e is declared twice (first at <input>:1:7)"),
    (".decl e(x: number)\n.decl e(x: number)\n",
     "<input>:2:7: relation e is declared twice (first at <input>:1:7)"),
    (".decl a, a(x: number)\n", "<input>:1:10: relation a is declared twice (first at <input>:1:7)"),
    (".decl e(x: number, x: symbol)\n", "<input>:1:7: relation e names column x twice"),
])
def test_a_redefinition_names_both_places(text, message):
    with pytest.raises(RedefinitionError) as raised:
        analyse(parse(text))
    assert str(raised.value) == message


def test_an_unbound_head_variable_names_the_variable_its_equality_lacks():
    error_of(UnsafeRuleError, """
        .decl e(x: number)
        .decl f(x: number)
        f(y) :- e(x), y = w + 1, w = z * 2.
    """, "t.dl:3:26", "variable z in the comparison w = (z * 2)")
