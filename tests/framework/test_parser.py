"""The parser: each construct's exact syntax values, errors with positions, and the corpus."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.framework.errors import HerbrandSyntaxError, ProgramFileError, SourceLocation
from herbrand.framework.parser import parse, parse_file
from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    Atom,
    Column,
    Comparison,
    Const,
    Declaration,
    Directive,
    Literal,
    Pragma,
    Program,
    Rule,
    Var,
    Wildcard,
)
from herbrand.workloads.shared import workloads_root

WORKLOADS = workloads_root()
CONFORMANCE = "souffle-conformance"
TIERS = {"tierA_plain": 80, "tierB_arith_agg": 58, "tierD_ignorable_directives": 23}
OTHER_PROGRAMS = (
    "dyre/tc.dl",
    "dyre/rdfs.dl",
    "galen-el/el-calc.souffle.dl",
    "lubm-chasebench/lubm_datalog.dl",
    "dynamic-datalog/crdt/query.dl",
    "dynamic-datalog/crdt/query_flat.dl",
)
# Corpus programs the parser rejects, by path under the workloads directory, with the reason.
# Every one of tier A must parse; a case listed here that starts parsing fails the test.
REJECTED = {
    "dynamic-datalog/crdt/query.dl": "records: .type id = [ctr: number, node: number]",
}


def corpus_files() -> list[str]:
    """Every corpus program, as a path relative to WORKLOADS."""
    files = [
        path.relative_to(WORKLOADS).as_posix()
        for tier in TIERS
        for path in sorted((WORKLOADS / CONFORMANCE / tier).glob("*/*.dl"))
    ]
    return files + [p for p in OTHER_PROGRAMS if (WORKLOADS / p).exists()]


X, Y, Z = Var("x"), Var("y"), Var("z")


def rules(text: str) -> tuple[Rule, ...]:
    return parse(text).rules


def body(text: str) -> tuple:
    """The body of the one rule ``h() :- text.``."""
    (rule,) = rules(f"h() :- {text}.")
    return rule.body


def term(text: str):
    """The right side of ``x = text`` in a rule body."""
    (comparison,) = body(f"x = {text}")
    return comparison.right


def atom(relation: str, *terms) -> Atom:
    return Atom(relation, tuple(terms))


def lit(relation: str, *terms, negated: bool = False) -> Literal:
    return Literal(atom(relation, *terms), negated)


# ---------------------------------------------------------------------------------------------
# Declarations and types
# ---------------------------------------------------------------------------------------------


def test_declarations_with_columns_and_empty_parentheses():
    program = parse(".decl edge(x: number, y:symbol)\n.decl good()")
    assert program.declarations == (
        Declaration("edge", (Column("x", "number"), Column("y", "symbol"))),
        Declaration("good", ()),
    )
    assert program.declarations[0].location == SourceLocation(1, 7)
    assert program.declarations[1].location == SourceLocation(2, 7)


def test_one_decl_declares_several_relations():
    program = parse(".decl A, B(x: number)")
    assert program.declarations == (
        Declaration("A", (Column("x", "number"),)),
        Declaration("B", (Column("x", "number"),)),
    )
    assert [d.location for d in program.declarations] == [SourceLocation(1, 7), SourceLocation(1, 10)]


def test_qualifiers_that_keep_the_answer_are_dropped():
    text = ".decl a(x: number) inline no_inline magic no_magic brie btree btree_delete overridable"
    assert parse(text) == parse(".decl a(x: number)")


def test_old_style_io_qualifiers_become_directives():
    program = parse(".decl a, b(x: number) input output printsize")
    assert program.directives == (
        Directive("input", "a"), Directive("input", "b"),
        Directive("output", "a"), Directive("output", "b"),
        Directive("printsize", "a"), Directive("printsize", "b"),
    )
    assert program.directives[0].location == SourceLocation(1, 23)


def test_types_resolve_to_their_base_type():
    program = parse(
        ".type Node <: symbol\n"
        ".type Card <: number\n"
        ".type Small <: Card\n"
        ".type Either = Name | Other\n"   # union used before its members are defined
        ".type Name <: symbol\n"
        ".type Other = Node\n"            # alias
        ".number_type Legacy\n"
        ".symbol_type LegacySym\n"
        ".decl r(a: Node, b: Card, c: Small, d: Either, e: Other, f: Legacy, g: LegacySym)"
    )
    assert program.declarations[0].types == (
        "symbol", "number", "number", "symbol", "symbol", "number", "symbol",
    )


@pytest.mark.parametrize(
    "text, line, column, message",
    [
        (".decl a(x: Foo)", 1, 12, "unknown type 'Foo'"),
        (".type T <: Foo", 1, 12, "unknown type 'Foo'"),
        (".decl a(x: float)", 1, 12, "unsupported type 'float'"),
        (".decl a(x: unsigned)", 1, 12, "unsupported type 'unsigned'"),
        (".type A = B | C\n.type B <: number\n.type C <: symbol", 1, 7,
         "union type 'A' mixes number and symbol"),
        (".type A = B\n.type B = A", 1, 7, "cyclic type definition 'A'"),
        (".type A <: number\n.type A <: number", 2, 7, "duplicate type 'A'"),
        (".type number <: symbol", 1, 7, "cannot redefine built-in type 'number'"),
        (".type id = [ctr: number, node: number]", 1, 12, "unsupported type 'id': record"),
        (".type T = A {x: number} | B {}", 1, 13, "unsupported type 'T': algebraic data type"),
        (".type T", 1, 8, "expected '<:' or '=' but found end of input"),
    ],
)
def test_type_errors(text, line, column, message):
    with pytest.raises(HerbrandSyntaxError) as raised:
        parse(text)
    assert (raised.value.location.line, raised.value.location.column) == (line, column)
    assert raised.value.message == message


# ---------------------------------------------------------------------------------------------
# Directives
# ---------------------------------------------------------------------------------------------


def test_io_directives():
    program = parse(
        ".input edge\n"
        ".input node()\n"
        '.input t(IO=file, filename="x.facts", delimiter=",", headers=true, n=3)\n'
        ".output a, b(IO=stdout)\n"
        ".printsize p\n"
    )
    assert program.directives == (
        Directive("input", "edge"),
        Directive("input", "node"),
        Directive("input", "t", (
            ("IO", "file"), ("filename", "x.facts"), ("delimiter", ","), ("headers", "true"),
            ("n", "3"),
        )),
        Directive("output", "a", (("IO", "stdout"),)),
        Directive("output", "b", (("IO", "stdout"),)),
        Directive("printsize", "p"),
    )
    assert [d.location for d in program.directives] == [
        SourceLocation(1, 8), SourceLocation(2, 8), SourceLocation(3, 8), SourceLocation(4, 9),
        SourceLocation(4, 12), SourceLocation(5, 12),
    ]
    assert program.inputs == ("edge", "node", "t")


def test_directive_string_values_are_unescaped():
    (directive,) = parse(r'.input t(filename="a \"b\" \\ c")').directives
    assert directive.params == (("filename", 'a "b" \\ c'),)


def test_pragmas_are_kept_and_plans_ignored():
    program = parse(
        '.pragma "magic-transform" "*"\n'
        '.pragma "legacy"\n'
        "a(x) :- b(x), c(x).\n"
        ".plan 0: (1, 2), 1: (2, 1)\n"
    )
    assert program == Program(rules=(Rule(atom("a", X), (lit("b", X), lit("c", X))),),
                              pragmas=(Pragma("magic-transform", "*"), Pragma("legacy")))
    assert program.pragmas[1].location.line == 2


def test_pragmas_print_back():
    program = parse('.pragma "k" "a \\"b\\""\n.pragma "legacy"\n')
    assert str(program) == '.pragma "k" "a \\"b\\""\n.pragma "legacy"\n'
    assert parse(str(program)) == program


# ---------------------------------------------------------------------------------------------
# Rules, bodies, expansion
# ---------------------------------------------------------------------------------------------


def test_facts_and_rules_with_locations():
    program = parse("edge(1, 2).\npath(x, y) :-\n  edge(x, y), !stop(x), x != y.")
    fact, rule = program.rules
    assert fact == Rule(atom("edge", Const(1), Const(2)))
    assert fact.location == SourceLocation(1, 1) == fact.head.location
    assert rule == Rule(
        atom("path", X, Y),
        (lit("edge", X, Y), lit("stop", X, negated=True), Comparison("!=", X, Y)),
    )
    assert rule.location == SourceLocation(2, 1)
    assert [e.location for e in rule.body] == [
        SourceLocation(3, 3), SourceLocation(3, 16), SourceLocation(3, 25),
    ]
    assert program.source == "edge(1, 2).\npath(x, y) :-\n  edge(x, y), !stop(x), x != y."


def test_nullary_atoms():
    assert rules("good() :- a(), !b().") == (Rule(atom("good"), (lit("a"), lit("b", negated=True))),)


def test_several_heads_expand_into_one_rule_each():
    assert rules("a(x), b(x) :- c(x) ; d(x).") == (
        Rule(atom("a", X), (lit("c", X),)),
        Rule(atom("a", X), (lit("d", X),)),
        Rule(atom("b", X), (lit("c", X),)),
        Rule(atom("b", X), (lit("d", X),)),
    )
    assert [r.location for r in rules("a(x),\n b(x) :- c(x).")] == [
        SourceLocation(1, 1), SourceLocation(2, 2),
    ]


def test_disjunction_expands_left_to_right():
    assert rules("q(x) :- (a(x) ; e(x)), g(), (a(y) ; f(y)).") == tuple(
        Rule(atom("q", X), (lit(first, X), lit("g"), lit(second, Y)))
        for first in ("a", "e") for second in ("a", "f")
    )
    assert rules("r(x) :- a(x) ; b(x), d(x).") == (
        Rule(atom("r", X), (lit("a", X),)),
        Rule(atom("r", X), (lit("b", X), lit("d", X))),
    )


def test_negated_formulas_follow_de_morgan():
    u, b, d = lit("u", X), lit("b", X), lit("d", X)
    not_b, not_d = lit("b", X, negated=True), lit("d", X, negated=True)
    assert body("u(x), !(b(x) ; d(x))") == (u, not_b, not_d)
    assert body("u(x), !!!(b(x) ; d(x))") == (u, not_b, not_d)
    assert rules("h() :- u(x), !(b(x), d(x)).") == (
        Rule(atom("h"), (u, not_b)), Rule(atom("h"), (u, not_d)),
    )
    assert body("!!b(x)") == (b,)
    assert rules("h() :- (!b(x) ; d(x)), u(x).") == (
        Rule(atom("h"), (not_b, u)), Rule(atom("h"), (d, u)),
    )


@pytest.mark.parametrize(
    "op, complement", [("=", "!="), ("!=", "="), ("<", ">="), (">=", "<"), (">", "<="), ("<=", ">")]
)
def test_negated_comparisons_flip_their_operator(op, complement):
    (comparison,) = body(f"!(x {op} y)")
    assert comparison == Comparison(complement, X, Y)
    assert comparison.location == SourceLocation(1, 10)


def test_true_and_false():
    assert body("a(x), true") == (lit("a", X),)
    assert rules("h(x) :- a(x), false.") == ()
    assert rules("h(x) :- a(x) ; false.") == (Rule(atom("h", X), (lit("a", X),)),)
    assert rules("h(1) :- !false.") == (Rule(atom("h", Const(1))),)


def test_parentheses_around_an_expression_start_a_comparison():
    assert body("(x + 1) < y, (x) = 2") == (
        Comparison("<", Arith("+", (X, Const(1))), Y), Comparison("=", X, Const(2)),
    )
    assert body("(x + 1 < y)") == (Comparison("<", Arith("+", (X, Const(1))), Y),)


def test_comments():
    text = "// line\na(1). /* block\n spanning // lines */ b(2). // end"
    program = parse(text)
    assert program.rules == (Rule(atom("a", Const(1))), Rule(atom("b", Const(2))))
    assert program.rules[1].location == SourceLocation(3, 23)


def test_facts_need_no_space_after_the_dot():
    assert rules("a(1).b(2).") == (Rule(atom("a", Const(1))), Rule(atom("b", Const(2))))


# ---------------------------------------------------------------------------------------------
# Terms
# ---------------------------------------------------------------------------------------------


def test_variables_wildcards_and_constants():
    assert body('a(x?, _y, _, 0x1F, 0XfF, 0b101, -3, 42, 007, "s")') == (
        lit("a", Var("x?"), Var("_y"), Wildcard(), Const(31), Const(255), Const(5), Const(-3),
            Const(42), Const(7), Const("s")),
    )


def test_string_escapes():
    assert term(r'"a\"b\\c"') == Const('a"b\\c')
    assert term(r'"tab\t"') == Const("tab\\t")  # other escapes are kept as written, as Soufflé
    assert str(Const('a"b\\c')) == r'"a\"b\\c"'


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1 + 2 * 3", "(1 + (2 * 3))"),
        ("1 - 2 - 3", "((1 - 2) - 3)"),
        ("20 / 2 % 5", "((20 / 2) % 5)"),
        ("2 ^ 2 ^ 3", "(2 ^ (2 ^ 3))"),
        ("2 ^ 4 % 13", "((2 ^ 4) % 13)"),
        ("-2 * 10", "(-2 * 10)"),
        ("-2 ^ 2", "-((2 ^ 2))"),
        ("(-2) ^ 2", "((-2) ^ 2)"),
        ("--2", "-(-2)"),
        ("-x", "-(x)"),
        ("2 ^ -2", "(2 ^ -2)"),
        ("bnot x + 1", "(bnot(x) + 1)"),
        ("lnot x ^ 2", "lnot((x ^ 2))"),
        ("1 lor 2 lxor 3 land 4", "(1 lor (2 lxor (3 land 4)))"),
        ("1 bor 2 bxor 3 band 4", "(1 bor (2 bxor (3 band 4)))"),
        ("1 band 2 bshl 3 + 4", "(1 band (2 bshl (3 + 4)))"),
        ("1 bshr 2 bshru 3", "((1 bshr 2) bshru 3)"),
        ("1 land 2 bor 3", "(1 land (2 bor 3))"),
        ("min(x, y, 3)", "min(x, y, 3)"),
        ("max(x - y, 0) + abs(x)", "(max((x - y), 0) + abs(x))"),
        ("as(x, number) + 1", "(x + 1)"),
    ],
)
def test_arithmetic_precedence(text, expected):
    assert str(term(text)) == expected


def test_arithmetic_values():
    assert term("-2 ^ 2") == Arith("neg", (Arith("^", (Const(2), Const(2))),))
    assert term("min(x, 1)") == Arith("min", (X, Const(1)))
    assert term("abs(-x)") == Arith("abs", (Arith("neg", (X,)),))
    assert term("bnot 1") == Arith("bnot", (Const(1),))


def test_abs_is_also_a_relation_name():
    program = parse(".decl abs(i: number)\nabs(1).\nr(x) :- abs(x), abs(x) > abs, abs(abs) = 0.")
    assert program.declarations[0].name == "abs"
    assert program.rules[1].body == (
        lit("abs", X),
        Comparison(">", Arith("abs", (X,)), Var("abs")),
        Comparison("=", Arith("abs", (Var("abs"),)), Const(0)),
    )
    assert parse(str(program)) == program


def test_aggregates():
    a_xy = lit("a", X, Y)
    assert term("count : a(x, y)") == Aggregate("count", None, (a_xy,))
    assert term("count : { a(x, y), x != 1 }") == Aggregate(
        "count", None, (a_xy, Comparison("!=", X, Const(1)))
    )
    assert term("sum y : a(x, y)") == Aggregate("sum", Y, (a_xy,))
    assert term("min y + x : { a(x, y) }") == Aggregate("min", Arith("+", (Y, X)), (a_xy,))
    assert term("max (y / x) : a(x, y)") == Aggregate("max", Arith("/", (Y, X)), (a_xy,))
    assert term("mean 2 * y : { a(x, y), !b(y) }") == Aggregate(
        "mean", Arith("*", (Const(2), Y)), (a_xy, lit("b", Y, negated=True))
    )
    assert term("max y : { !(b(y) ; c(y)), a(x, y) }") == Aggregate(
        "max", Y, (lit("b", Y, negated=True), lit("c", Y, negated=True), a_xy)
    )


def test_aggregates_in_expressions_atoms_and_nested():
    agg = Aggregate("max", Var("s"), (lit("b", Var("d"), Var("s")),))
    assert term("2 * max s : { b(d, s) } + 1") == Arith(
        "+", (Arith("*", (Const(2), agg)), Const(1))
    )
    assert body("c(max s : { b(d, s) })") == (lit("c", agg),)
    inner = Aggregate("min", Y, (lit("d", Y, Z),))
    assert term("count : { b(x, _), x > min y : { d(y, z) } }") == Aggregate(
        "count", None, (lit("b", X, Wildcard()), Comparison(">", X, inner))
    )


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

MALFORMED = [
    # (text, line, column, message)
    ("a(x) :- b(x", 1, 12, "expected ',' or ')' but found end of input"),
    ("a(x) :- b(x,).", 1, 13, "expected a term but found ')'"),
    ("a(x) :- b(x y).", 1, 13, "expected ',' or ')' but found 'y'"),
    ("a(x) :- b(x)\nc(y) :- d(y).", 2, 1, "expected '.' at end of rule but found 'c'"),
    ("a(x)\nb(x).", 2, 1, "expected '.' or ':-' but found 'b'"),
    ("a(x), b(x).", 1, 11, "expected ':-' but found '.'"),
    ("a(x) :- .", 1, 9, "missing body after ':-'"),
    ("a(x) :- b(x), .", 1, 15, "expected a literal but found '.'"),
    ("a(x) :- b(x), y.", 1, 16, "expected '(' or a comparison operator but found '.'"),
    ("a(x) :- (b(x) ; c(x).", 1, 21, "expected ')' but found '.'"),
    ('a("abc) :- b(x).', 1, 3, "unterminated string"),
    ("a(1).\n/* never\nclosed", 2, 1, "unterminated comment"),
    ("a(x) :- b(x) & c(x).", 1, 14, "unexpected character '&'"),
    (".decl a(x: number)\n.foo a", 2, 1, "unknown directive '.foo'"),
    (". decl a(x: number)", 1, 1, "expected a declaration, directive or rule but found '.'"),
    (".decl a(x number)", 1, 11, "expected ':' but found 'number'"),
    (".input a(IO=file, filename=)", 1, 28, "expected a parameter value but found ')'"),
    ("count(x) :- b(x).", 1, 1, "expected a relation name but found 'count'"),
    ("a(x) :- b(x), x = foo(x).", 1, 19, "unknown functor 'foo'"),
    ("a(x) :- b(x), x = abs(x, 1).", 1, 19, "abs takes one argument"),
    ("a(x) :- b(x), x = count y : b(y).", 1, 25, "expected ':' but found 'y'"),
    ("a(x) :- b(x), x = sum y : !b(y).", 1, 27, "expected '{' or an atom but found '!'"),
    ("a(x) :- b(x), x = 0x.", 1, 19, "invalid number literal '0x'"),
    ("a(x) :- x = 99999999999999999999.", 1, 13, "number out of range '99999999999999999999'"),
    ("\ta(x) :-\n\t\tb(x) c(x).", 2, 8, "expected '.' at end of rule but found 'c'"),
    ("a(x) :- b(y), x = as(y, Foo).", 1, 25, "unknown type 'Foo'"),
    (".pragma magic", 1, 9, "expected a string but found 'magic'"),
    # Features outside the subset.
    (".decl a(x: number) eqrel", 1, 20, "unsupported: eqrel"),
    (".decl a(x: number) choice-domain x", 1, 20, "unsupported: choice-domain"),
    ("a(x) <= a(y) :- b(x, y).", 1, 6, "unsupported: subsumption"),
    ('#include "x.dl"', 1, 1, "unsupported: preprocessor directive"),
    (".functor f(x: number): number", 1, 1, "unsupported: directive '.functor'"),
    (".comp C { }", 1, 1, "unsupported: directive '.comp'"),
    ('a(x) :- b(x), x = cat("a", "b").', 1, 19, "unsupported: functor 'cat'"),
    ('a(x) :- b(x), match("a.*", x).', 1, 15, "unsupported: functor 'match'"),
    ("a(x) :- b(x), x = $.", 1, 19, "unsupported: counter '$'"),
    ("a(x) :- b(x), x = autoinc().", 1, 19, "unsupported: counter 'autoinc()'"),
    ("a(x) :- b(x), x = @f(x).", 1, 19, "unsupported: user-defined functor"),
    ("a([x, y]) :- b(x, y).", 1, 3, "unsupported: record"),
    ("a(x) :- b(x), x = 1.5.", 1, 19, "unsupported: float literal '1.5'"),
    ("a(x) :- b(x), x = 5u.", 1, 19, "unsupported: unsigned literal '5u'"),
    ("a(c) :- c = count : { b(y) ; d(y) }.", 1, 21,
     "unsupported: aggregate body that is not one conjunction"),
]


@pytest.mark.parametrize("text, line, column, message", MALFORMED)
def test_malformed_input_is_reported_at_the_offending_token(text, line, column, message):
    with pytest.raises(HerbrandSyntaxError) as raised:
        parse(text, file="bad.dl")
    error = raised.value
    assert (error.location, error.message) == (SourceLocation(line, column, "bad.dl"), message)
    source_line = text.split("\n")[line - 1]
    assert error.source_line == source_line
    indent = "".join(c if c == "\t" else " " for c in source_line[: column - 1])
    caret = indent.ljust(column - 1) + "^"
    assert str(error) == f"bad.dl:{line}:{column}: {message}\n{source_line}\n{caret}"


def test_caret_under_a_tab_indented_line():
    with pytest.raises(HerbrandSyntaxError) as raised:
        parse("\ta(x) :-\n\t\tb(x) c(x).")
    assert str(raised.value).splitlines()[1:] == ["\t\tb(x) c(x).", "\t\t     ^"]


def test_parse_file_names_the_file(tmp_path):
    path = tmp_path / "prog.dl"
    path.write_text(".decl a(x: number)\na(1).\n", encoding="utf-8-sig")
    program = parse_file(path)
    assert program.rules[0].location == SourceLocation(2, 1, str(path))
    assert program.source == ".decl a(x: number)\na(1).\n"
    path.write_text("a(1)", encoding="utf-8")
    with pytest.raises(HerbrandSyntaxError, match=r"prog\.dl:1:5: expected '\.' or ':-'"):
        parse_file(path)


def test_bytes_that_are_not_utf8_are_kept_in_strings_and_comments(tmp_path):
    path = tmp_path / "prog.dl"
    path.write_bytes(b'.decl e(x: symbol)\n// caf\xe9\ne("a\xffb").\n/* \xfe */\n')
    (fact,) = parse_file(path).rules
    assert fact.head.terms[0].value.encode("utf-8", "surrogateescape") == b"a\xffb"


@pytest.mark.parametrize(("data", "where", "shown"), [
    (b".decl e(x: number)\ne\xe9(1).\n", "prog.dl:2:2", r"'\xe9'"),
    (b".decl e(x: number)\n\x00e(1).\n", "prog.dl:2:1", r"'\x00'"),
    (b".decl e\xc3\xa9(x: number)\n", "prog.dl:1:8", "'\u00e9'"),
])
def test_a_stray_byte_outside_strings_is_shown_escaped_at_its_place(tmp_path, data, where, shown):
    path = tmp_path / "prog.dl"
    path.write_bytes(data)
    with pytest.raises(HerbrandSyntaxError) as raised:
        parse_file(path)
    assert str(raised.value).splitlines()[0].endswith(f"{where}: unexpected character {shown}")


@pytest.mark.parametrize(("make", "reason"), [
    (lambda d: d / "missing.dl", "no such file"),
    (lambda d: d, "is a directory"),
])
def test_an_unreadable_program_file_is_one_line_naming_it(tmp_path, make, reason):
    with pytest.raises(ProgramFileError, match=f"^{re.escape(str(make(tmp_path)))}: cannot read "
                                               f"program file: {reason}$"):
        parse_file(make(tmp_path))


# ---------------------------------------------------------------------------------------------
# The corpus
# ---------------------------------------------------------------------------------------------


def test_corpus_is_present():
    for tier, count in TIERS.items():
        assert len(list((WORKLOADS / CONFORMANCE / tier).glob("*/*.dl"))) == count, tier
    for name in OTHER_PROGRAMS:
        assert (WORKLOADS / name).exists(), name


def test_every_tier_a_program_is_accepted():
    assert not [name for name in REJECTED if "/tierA_plain/" in name]


@pytest.mark.parametrize("name", corpus_files())
def test_corpus_program_parses_or_is_known_rejected(name):
    if name in REJECTED:
        with pytest.raises(HerbrandSyntaxError, match="unsupported"):
            parse_file(WORKLOADS / name)
    else:
        parse_file(WORKLOADS / name)


@pytest.mark.parametrize("name", [n for n in corpus_files() if n not in REJECTED])
def test_corpus_program_round_trips(name):
    program = parse_file(WORKLOADS / name)
    assert parse(str(program)) == program
    assert str(parse(str(program))) == str(program)


# ---------------------------------------------------------------------------------------------
# Round trip of arbitrary programs
# ---------------------------------------------------------------------------------------------

RESERVED = {
    "count", "sum", "min", "max", "mean", "as", "true", "false", "bnot", "lnot", "band",
    "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor", "nil", "autoinc", "cat", "ord",
    "range", "strlen", "substr", "to_float", "to_number", "to_string", "to_unsigned", "match",
    "contains", "inline", "no_inline", "magic", "no_magic", "brie", "btree", "btree_delete",
    "overridable", "input", "output", "printsize", "eqrel",
}
names = st.from_regex(r"[A-Za-z?][A-Za-z0-9_?]{0,5}", fullmatch=True).filter(
    lambda name: name not in RESERVED
)
strings = st.text(st.characters(blacklist_characters="\n", codec="utf-8"), max_size=6)
leaf_terms = st.one_of(
    names.map(Var),
    st.just(Wildcard()),
    st.integers(-(2**63), 2**63 - 1).map(Const),
    strings.map(Const),
)


def extend_terms(children):
    binary = st.tuples(
        st.sampled_from(["+", "-", "*", "/", "%", "^", "band", "bor", "bxor", "bshl", "bshr",
                         "bshru", "land", "lor", "lxor"]),
        children, children,
    ).map(lambda t: Arith(t[0], (t[1], t[2])))
    prefix = st.tuples(st.sampled_from(["neg", "bnot", "lnot", "abs"]), children).map(
        lambda t: Arith(t[0], (t[1],))
    )
    functor = st.tuples(
        st.sampled_from(["min", "max"]), st.lists(children, min_size=2, max_size=3)
    ).map(lambda t: Arith(t[0], tuple(t[1])))
    aggregate = st.tuples(
        st.sampled_from(["count", "sum", "min", "max", "mean"]),
        children,
        st.lists(body_elements(children), min_size=1, max_size=2),
    ).map(lambda t: Aggregate(t[0], None if t[0] == "count" else t[1], tuple(t[2])))
    return st.one_of(binary, prefix, functor, aggregate)


def atoms(term_strategy):
    return st.builds(lambda r, ts: Atom(r, tuple(ts)), names, st.lists(term_strategy, max_size=3))


def body_elements(term_strategy):
    return st.one_of(
        st.builds(Literal, atoms(term_strategy), st.booleans()),
        st.builds(Comparison, st.sampled_from(["=", "!=", "<", "<=", ">", ">="]),
                  term_strategy, term_strategy),
    )


terms = st.recursive(leaf_terms, extend_terms, max_leaves=8)
programs = st.builds(
    Program,
    st.lists(st.builds(
        lambda n, cols: Declaration(n, tuple(Column(c, t) for c, t in cols)),
        names, st.lists(st.tuples(names, st.sampled_from(["number", "symbol"])), max_size=3),
    ), max_size=2).map(tuple),
    st.lists(st.builds(
        lambda head, body: Rule(head, tuple(body)),
        atoms(terms), st.lists(body_elements(terms), max_size=3),
    ), max_size=3).map(tuple),
    st.lists(st.builds(
        lambda kind, relation, params: Directive(kind, relation, tuple(params)),
        st.sampled_from(["input", "output", "printsize"]), names,
        st.lists(st.tuples(names, strings), max_size=2),
    ), max_size=2).map(tuple),
)


@settings(max_examples=200, deadline=None)
@given(programs)
def test_any_program_round_trips(program):
    assert parse(str(program)) == program


# -- parse_atom (explain's goals) ----------------------------------------------------------------


def test_parse_atom_reads_one_atom_and_nothing_after_it():
    from herbrand.framework.parser import parse_atom
    from herbrand.framework.syntax import Const

    assert parse_atom(' tc(1, -2, "a") // goal').terms == (Const(1), Const(-2), Const("a"))
    with pytest.raises(HerbrandSyntaxError, match="<goal>:1:7: expected the end of the atom"):
        parse_atom("tc(1) x", file="<goal>")
