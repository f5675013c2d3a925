"""The bad-input catalogue: what a new user or a hostile tester gives herbrand, one row each.

A row is data: the input (a program, files beside it, command-line flags, an updates file, or a
Python call), the HerbrandError class it must raise, and the place its one-line message must
name (file:line:col, relation, column, flag, argument). ``test_bad_inputs`` runs each row every
way it applies (``BadInput.ways``): through ``herbrand run`` (exit status 1, one line on stderr,
no traceback), through the Python API (the error class, a one-line message), the facts rows also
through ``--backend spark`` (the Spark reader must say what the local one says), and the update
rows against every incremental engine, checking that a failed update changes nothing.

Kinds: ``syntax`` and ``semantics`` (the program), ``facts`` (the files read by ``.input``),
``cli`` (flags and paths of the command line), ``updates`` (an ``--updates`` file), ``python``
(values given to the API), ``incremental`` (calls on a Materialization).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import herbrand
from herbrand.framework.errors import (
    ArityError,
    FactsError,
    HerbrandSyntaxError,
    HerbrandTypeError,
    OutputError,
    ProgramFileError,
    RedefinitionError,
    ReportError,
    StratificationError,
    UndeclaredRelationError,
    UnknownComponentError,
    UnknownRelationError,
    UnsafeRuleError,
    UpdateError,
    UsageError,
)
from herbrand.translators.ir import TranslationError

KINDS = ("syntax", "semantics", "facts", "cli", "updates", "python", "incremental")
ENGINES = ("recompute", "dred", "bf", "counting", "elastic", "dbsp")


class UsageExit(Exception):
    """Expected outcome of a malformed command line: argparse's usage line, exit status 2."""


TC = """.decl edge(x: number, y: number)
.input edge
.decl path(x: number, y: number)
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""
SYMBOLS = """.decl person(id: number, name: symbol)
.input person
.decl known(name: symbol)
.output known
known(n) :- person(_, n).
"""
UNARY = """.decl n(x: number)
.input n
.decl m(x: number)
.output m
m(x) :- n(x).
"""
WIDE = """.decl w(a: number, b: symbol, c: number, d: symbol, e: number, f: number)
.input w
.decl v(a: number)
.output v
v(a) :- w(a, _, _, _, _, _).
"""
GOOD_EDGES = {"facts/edge.facts": b"1\t2\n2\t3\n"}


@dataclass(frozen=True)
class BadInput:
    """One bad input and what herbrand must say about it.

    ``program`` is written to ``prog.dl`` and ``files`` (path relative to the case's directory
    -> bytes, or None for a directory) beside it; ``flags`` follow ``herbrand run prog.dl -F
    facts -D out`` (``{dir}`` stands for the case's directory); ``command`` replaces the whole
    command line when the row is not a ``run``; ``updates`` is written to ``u.txt`` and run with
    ``--engine dred --updates``. ``call`` is the Python call of a ``python`` row (no argument)
    or an ``incremental`` row (given a fresh Materialization of ``INCREMENTAL`` on each engine
    of ``engines``). ``spark``: a ``facts`` row the Spark reader must reject alike."""

    id: str
    kind: str
    error: type[Exception]
    place: str
    program: str | bytes = TC
    files: Mapping[str, bytes | None] = field(default_factory=lambda: dict(GOOD_EDGES))
    flags: tuple[str, ...] = ()
    command: tuple[str, ...] | None = None
    updates: bytes | None = None
    call: Callable | None = None
    engines: tuple[str, ...] = ENGINES
    spark: bool = False

    @property
    def ways(self) -> tuple[str, ...]:
        """How the row is run: ``cli``, ``api``, ``spark``, ``call``."""
        if self.kind in ("python", "incremental"):
            return ("call",)
        if self.kind in ("cli", "updates"):
            return ("cli",)
        return ("cli", "api", "spark") if self.spark else ("cli", "api")


def _program(row_id: str, kind: str, error: type[Exception], place: str, text: str | bytes,
             ) -> BadInput:
    return BadInput(row_id, kind, error, place, program=text)


def _facts(row_id: str, content: bytes | None, place: str, *, program: str = TC,
           name: str = "edge.facts", spark: bool = True,
           error: type[Exception] = FactsError) -> BadInput:
    return BadInput(row_id, "facts", error, place, program=program,
                    files={f"facts/{name}": content}, spark=spark)


def _flags(row_id: str, error: type[Exception], place: str, *flags: str,
           files: Mapping[str, bytes | None] | None = None, program: str = TC) -> BadInput:
    return BadInput(row_id, "cli", error, place, program=program, flags=flags,
                    files=dict(GOOD_EDGES if files is None else files))


def _updates(row_id: str, content: bytes, place: str,
             error: type[Exception] = FactsError) -> BadInput:
    return BadInput(row_id, "updates", error, place, updates=content)


def _python(row_id: str, error: type[Exception], place: str, call: Callable) -> BadInput:
    return BadInput(row_id, "python", error, place, call=call)


def _update(row_id: str, error: type[Exception], place: str, call: Callable,
            engines: tuple[str, ...] = ENGINES) -> BadInput:
    return BadInput(row_id, "incremental", error, place, call=call, engines=engines)


S = HerbrandSyntaxError

SYNTAX = [
    _program("unterminated-string", "syntax", S, "prog.dl:2:3: unterminated string",
             '.decl s(x: symbol)\ns("abc).\n'),
    _program("unterminated-comment", "syntax", S, "prog.dl:2:1: unterminated comment",
             ".decl e(x: number)\n/* never closed\ne(1).\n"),
    _program("bad-character", "syntax", S, "prog.dl:2:14: unexpected character '&'",
             ".decl e(x: number)\ne(1) :- e(1) & e(2).\n"),
    _program("float-literal", "syntax", S, "prog.dl:2:3: unsupported: float literal '1.5'",
             ".decl e(x: number)\ne(1.5).\n"),
    _program("unsigned-literal", "syntax", S, "prog.dl:2:3: unsupported: unsigned literal",
             ".decl e(x: number)\ne(5u).\n"),
    _program("missing-dot", "syntax", S, "prog.dl:3:1: expected '.' or ':-'",
             ".decl e(x: number)\ne(1)\ne(2).\n"),
    _program("missing-parenthesis", "syntax", S, "prog.dl:1:18: expected ',' or ')'",
             ".decl e(x: number\n"),
    _program("missing-comma", "syntax", S, "prog.dl:2:5: expected ',' or ')' but found '2'",
             ".decl e(x: number, y: number)\ne(1 2).\n"),
    _program("empty-body", "syntax", S, "prog.dl:2:9: missing body after ':-'",
             ".decl e(x: number)\ne(1) :- .\n"),
    _program("rule-without-head", "syntax", S, "prog.dl:2:1: expected a declaration",
             ".decl e(x: number)\n:- e(1).\n"),
    _program("unknown-directive", "syntax", S, "prog.dl:2:1: unknown directive '.foo'",
             ".decl e(x: number)\n.foo e\n"),
    _program("preprocessor-line", "syntax", S, "prog.dl:1:1: unsupported: preprocessor",
             '#include "x.dl"\n.decl e(x: number)\n'),
    _program("record-type", "syntax", S, "prog.dl:1:11: unsupported type 'R': record",
             ".type R = [a: number]\n"),
    _program("adt", "syntax", S, "prog.dl:1:13: unsupported type 'T': algebraic data type",
             ".type T = A {} | B {}\n"),
    _program("float-type", "syntax", S, "prog.dl:1:12: unsupported type 'float'",
             ".decl e(x: float)\n"),
    _program("unsigned-type", "syntax", S, "prog.dl:1:12: unsupported type 'unsigned'",
             ".decl e(x: unsigned)\n"),
    _program("functor-cat", "syntax", S, "prog.dl:2:3: unsupported: functor 'cat'",
             '.decl s(x: symbol)\ns(cat("a", "b")).\n'),
    _program("functor-strlen", "syntax", S, "prog.dl:2:3: unsupported: functor 'strlen'",
             '.decl e(x: number)\ne(strlen("ab")).\n'),
    _program("user-functor", "syntax", S, "prog.dl:2:3: unsupported: user-defined functor",
             ".decl e(x: number)\ne(@f(1)).\n"),
    _program("counter", "syntax", S, "prog.dl:2:3: unsupported: counter '$'",
             ".decl e(x: number)\ne($).\n"),
    _program("eqrel", "syntax", S, "prog.dl:1:31: unsupported: eqrel",
             ".decl e(x: number, y: number) eqrel\n"),
    _program("choice-domain", "syntax", S, "prog.dl:1:31: unsupported: choice-domain",
             ".decl e(x: number, y: number) choice-domain x\n"),
    _program("component", "syntax", S, "prog.dl:1:1: unsupported: directive '.comp'",
             ".comp C {}\n"),
    _program("init", "syntax", S, "prog.dl:1:1: unsupported: directive '.init'",
             ".init c = C\n"),
    _program("number-out-of-range", "syntax", S, "prog.dl:2:3: number out of range",
             ".decl e(x: number)\ne(99999999999999999999).\n"),
    _program("bad-hex-literal", "syntax", S, "prog.dl:2:3: invalid number literal '0xZZ'",
             ".decl e(x: number)\ne(0xZZ).\n"),
    _program("number-then-letters", "syntax", S, "prog.dl:2:3: invalid number literal '12ab'",
             ".decl e(x: number)\ne(12ab).\n"),
    _program("decl-without-types", "syntax", S, "prog.dl:1:10: expected ':' but found ','",
             ".decl e(x, y)\n"),
    _program("unknown-type", "syntax", S, "prog.dl:1:12: unknown type 'colour'",
             ".decl e(x: colour)\n"),
    _program("union-mixes-bases", "syntax", S, "prog.dl:1:7: union type 'U' mixes number and "
             "symbol", ".type U = number | symbol\n.decl e(x: U)\n"),
    _program("type-defined-twice", "syntax", S, "prog.dl:2:7: duplicate type 'T'",
             ".type T <: number\n.type T <: symbol\n.decl e(x: T)\n"),
    _program("cyclic-type", "syntax", S, "prog.dl:1:7: cyclic type definition 'A'",
             ".type A <: B\n.type B <: A\n.decl e(x: A)\n"),
    _program("nul-byte", "syntax", S, r"prog.dl:2:1: unexpected character '\x00'",
             ".decl e(x: number)\n\x00e(1).\n"),
    _program("byte-not-utf8-in-name", "syntax", S, r"prog.dl:2:2: unexpected character '\xe9'",
             b".decl e(x: number)\ne\xe9(1).\n"),
    _program("keyword-as-relation", "syntax", S, "prog.dl:1:7: expected a relation name but "
             "found 'count'", ".decl count(x: number)\n"),
    _program("parameter-without-value", "syntax", S, "prog.dl:2:18: expected '=' but found ')'",
             ".decl e(x: number)\n.input e(filename)\n"),
    _program("aggregate-over-a-disjunction", "syntax", S, "prog.dl:3:21: unsupported: aggregate "
             "body", ".decl e(x: number)\n.decl c(n: number)\nc(n) :- n = count : { e(1) ; "
             "e(2) }.\n"),
]

SEMANTICS = [
    _program("undeclared-head", "semantics", UndeclaredRelationError,
             "prog.dl:2:1: undeclared relation f", ".decl e(x: number)\nf(x) :- e(x).\n"),
    _program("undeclared-body", "semantics", UndeclaredRelationError,
             "prog.dl:2:9: undeclared relation g", ".decl e(x: number)\ne(x) :- g(x).\n"),
    _program("undeclared-negation", "semantics", UndeclaredRelationError,
             "prog.dl:3:16: undeclared relation g",
             ".decl e(x: number)\n.decl f(x: number)\nf(x) :- e(x), !g(x).\n"),
    _program("undeclared-in-aggregate", "semantics", UndeclaredRelationError,
             "prog.dl:3:21: undeclared relation g",
             ".decl e(x: number)\n.decl c(n: number)\nc(n) :- n = count : g(_).\n"),
    _program("undeclared-input", "semantics", UndeclaredRelationError,
             "prog.dl:2:8: .input names undeclared relation g", ".decl e(x: number)\n.input g\n"),
    _program("undeclared-output", "semantics", UndeclaredRelationError,
             "prog.dl:2:9: .output names undeclared relation g",
             ".decl e(x: number)\n.output g\n"),
    _program("undeclared-fact", "semantics", UndeclaredRelationError,
             "prog.dl:2:1: undeclared relation g", ".decl e(x: number)\ng(1).\n"),
    _program("arity-in-head", "semantics", ArityError, "prog.dl:3:1: f has 2 argument(s) here "
             "but 1", ".decl e(x: number)\n.decl f(x: number)\nf(x, x) :- e(x).\n"),
    _program("arity-in-body", "semantics", ArityError, "prog.dl:3:9: e has 2 argument(s) here "
             "but 1", ".decl e(x: number)\n.decl f(x: number)\nf(x) :- e(x, x).\n"),
    _program("arity-of-fact", "semantics", ArityError, "prog.dl:2:1: e has 1 argument(s) here",
             ".decl e(x: number, y: number)\ne(1).\n"),
    _program("symbol-in-number-fact", "semantics", HerbrandTypeError, "prog.dl:2:1: constant "
             '"a" is a symbol but e column 1 is a number', '.decl e(x: number)\ne("a").\n'),
    _program("number-in-symbol-fact", "semantics", HerbrandTypeError, "prog.dl:2:1: constant 1 "
             "is a number but s column 1 is a symbol", ".decl s(x: symbol)\ns(1).\n"),
    _program("join-of-number-and-symbol", "semantics", HerbrandTypeError,
             "prog.dl:4:15: variable x is a number",
             ".decl e(x: number)\n.decl s(x: symbol)\n.decl f(x: number)\n"
             "f(x) :- e(x), s(x).\n"),
    _program("symbol-into-number-head", "semantics", HerbrandTypeError,
             "prog.dl:3:1: variable x is a symbol",
             ".decl s(x: symbol)\n.decl f(x: number)\nf(x) :- s(x).\n"),
    _program("arithmetic-on-a-symbol", "semantics", HerbrandTypeError,
             "prog.dl:3:15: variable x is a symbol",
             ".decl s(x: symbol)\n.decl f(x: number)\nf(y) :- s(x), y = x + 1.\n"),
    _program("comparison-of-number-and-symbol", "semantics", HerbrandTypeError,
             "prog.dl:4:21: variable x is a number",
             ".decl s(x: symbol)\n.decl e(x: number)\n.decl f(x: number)\n"
             "f(x) :- e(x), s(y), x < y.\n"),
    _program("unbound-head-variable", "semantics", UnsafeRuleError,
             "prog.dl:3:1: variable y in the head is not bound",
             ".decl e(x: number)\n.decl f(x: number, y: number)\nf(x, y) :- e(x).\n"),
    _program("unbound-in-negation", "semantics", UnsafeRuleError,
             "prog.dl:3:16: variable y in the negated atom !e(y) is not bound",
             ".decl e(x: number)\n.decl f(x: number)\nf(x) :- e(x), !e(y).\n"),
    _program("unbound-in-comparison", "semantics", UnsafeRuleError,
             "prog.dl:3:15: variable y in the comparison y < 3 is not bound",
             ".decl e(x: number)\n.decl f(x: number)\nf(x) :- e(x), y < 3.\n"),
    _program("variable-in-fact", "semantics", UnsafeRuleError,
             "prog.dl:2:1: facts must be ground: variable x", ".decl e(x: number)\ne(x).\n"),
    _program("unbound-in-arithmetic", "semantics", UnsafeRuleError,
             "prog.dl:3:15: variable z in the comparison y = (z + 1) is not bound",
             ".decl e(x: number)\n.decl f(x: number)\nf(y) :- e(x), y = z + 1.\n"),
    _program("unbound-aggregate-target", "semantics", UnsafeRuleError,
             "prog.dl:3:9: variable y in the target of sum y",
             ".decl e(x: number)\n.decl c(n: number)\nc(n) :- n = sum y : e(x).\n"),
    _program("wildcard-in-head", "semantics", UnsafeRuleError, "prog.dl:3:1: wildcard _ in the "
             "head", ".decl e(x: number)\n.decl f(x: number)\nf(_) :- e(_).\n"),
    _program("negation-through-recursion", "semantics", StratificationError,
             "negation through recursion: p -> q -> p (rule at ",
             ".decl e(x: number)\n.decl p(x: number)\n.decl q(x: number)\n"
             "p(x) :- e(x), !q(x).\nq(x) :- e(x), !p(x).\n"),
    _program("self-negation", "semantics", StratificationError,
             "negation through recursion: p -> p (rule at ",
             ".decl e(x: number)\n.decl p(x: number)\np(x) :- e(x), !p(x).\n"),
    _program("aggregation-through-recursion", "semantics", StratificationError,
             "aggregation through recursion: c -> c (rule at ",
             ".decl e(x: number)\n.decl c(n: number)\nc(n) :- e(_), n = count : c(_).\n"),
    _program("relation-declared-twice", "semantics", RedefinitionError,
             "prog.dl:3:7: relation e is declared twice (first at ",
             ".decl e(x: number)\n.decl f(x: number)\n.decl e(x: symbol)\n"),
    _program("same-declaration-twice", "semantics", RedefinitionError,
             "prog.dl:2:7: relation e is declared twice",
             ".decl e(x: number)\n.decl e(x: number)\n"),
    _program("column-named-twice", "semantics", RedefinitionError,
             "prog.dl:1:7: relation e names column x twice", ".decl e(x: number, x: number)\n"),
    _program("mean-aggregate", "semantics", TranslationError, "prog.dl:3:1: aggregate mean is "
             "not supported", ".decl e(x: number)\n.decl c(n: number)\n"
             "c(n) :- n = mean x : e(x).\n"),
    _program("unsupported-input-parameter", "semantics", FactsError,
             "prog.dl:2:8: .input edge: unsupported parameter compress",
             TC.replace(".input edge", ".input edge(compress=true)")),
    _program("unsupported-input-io", "semantics", FactsError,
             "prog.dl:2:8: .input edge: unsupported IO=sqlite",
             TC.replace(".input edge", ".input edge(IO=sqlite)")),
    _program("unsupported-output-io", "semantics", FactsError,
             "prog.dl:4:9: .output path: unsupported IO=sqlite",
             TC.replace(".output path", ".output path(IO=sqlite)")),
    _program("empty-delimiter", "semantics", FactsError, "invalid delimiter ''",
             TC.replace(".input edge", '.input edge(delimiter="")')),
    *(_program(f"output-filename-{row_id}", "semantics", FactsError,
               f"prog.dl:4:9: .output path: filename '{name}' names a folder, not a file",
               TC.replace(".output path", f'.output path(filename="{name}")'))
      for row_id, name in (("empty", ""), ("dot", "."), ("dot-dot", "sub/.."))),
]

BIG = b"".join(b"%d\t%d\n" % (i, i + 1) for i in range(60_000))

FACTS = [
    BadInput("missing-file", "facts", FactsError, "edge.facts: cannot open facts file of "
             "relation edge: no such file", files={}, spark=True),
    _facts("directory-named-like-a-file", None, "edge.facts: cannot read facts file of relation "
           "edge: is a directory"),
    _facts("letter-in-number-column", b"1\t2\n3\tx\n", "edge.facts:2: relation edge: column 2 "
           "expects a number, got 'x'"),
    _facts("underscore-in-number", b"1_000\t2\n", "edge.facts:1: relation edge: column 1 "
           "expects a number, got '1_000'"),
    _facts("hex-number", b"1\t2\n0x10\t2\n", "edge.facts:2: relation edge: column 1 expects a "
           "number, got '0x10'"),
    _facts("float-number", b"1.5\t2\n", "edge.facts:1: relation edge: column 1 expects a "
           "number, got '1.5'"),
    _facts("trailing-blank-after-number", b"1 \t2\n", "edge.facts:1: relation edge: column 1 "
           "expects a number, got '1 '"),
    _facts("number-above-int64", b"9223372036854775808\t1\n", "edge.facts:1: relation edge: "
           "column 1 expects a number"),
    _facts("number-below-int64", b"1\t-9223372036854775809\n", "edge.facts:1: relation edge: "
           "column 2 expects a number"),
    _facts("two-signs", b"+-1\t2\n", "edge.facts:1: relation edge: column 1 expects a number"),
    _facts("empty-number-field", b"\t2\n", "edge.facts:1: relation edge: column 1 expects a "
           "number, got ''"),
    _facts("too-few-fields", b"1\t2\n3\n", "edge.facts:2: relation edge: expected 2 fields "
           "separated by '\\t', found 1"),
    _facts("too-many-fields", b"1\t2\t3\n", "edge.facts:1: relation edge: expected 2 fields"),
    _facts("trailing-delimiter", b"1\t2\t\n", "edge.facts:1: relation edge: expected 2 fields"),
    _facts("blank-line-in-the-middle", b"1\t2\n\n3\t4\n", "edge.facts:2: relation edge: "
           "expected 2 fields"),
    _facts("blank-line-at-the-end", b"1\t2\n\n", "edge.facts:2: relation edge: expected 2 "
           "fields"),
    _facts("blank-line-at-the-start", b"\n1\t2\n", "edge.facts:1: relation edge: expected 2 "
           "fields"),
    _facts("crlf-then-a-bad-value", b"1\t2\r\n3\tx\r\n", "edge.facts:2: relation edge: column 2 "
           "expects a number, got 'x'"),
    _facts("bad-line-far-into-a-big-file", BIG + b"7\tseven\n", "edge.facts:60001: relation "
           "edge: column 2 expects a number, got 'seven'"),
    _facts("byte-not-utf8-in-number", b"1\t\xff\n", r"edge.facts:1: relation edge: column 2 "
           r"expects a number, got '\xff'"),
    _facts("nul-in-number", b"1\t2\x00\n", r"edge.facts:1: relation edge: column 2 expects a "
           r"number, got '2\x00'"),
    _facts("symbol-in-id-column", b"1\tann\nbob\tbob\n", "person.facts:2: relation person: "
           "column 1 expects a number, got 'bob'", program=SYMBOLS, name="person.facts"),
    _facts("blank-line-in-unary-numbers", b"1\n\n2\n", "n.facts:2: relation n: column 1 expects "
           "a number, got ''", program=UNARY, name="n.facts"),
    _facts("wide-relation-bad-fifth-column", b"1\ta\t2\tb\t3\t4\n5\tc\t6\td\tx\t8\n",
           "w.facts:2: relation w: column 5 expects a number, got 'x'", program=WIDE,
           name="w.facts"),
    _facts("wide-relation-missing-field", b"1\ta\t2\tb\t3\n", "w.facts:1: relation w: expected "
           "6 fields", program=WIDE, name="w.facts"),
    _facts("corrupt-gzip", b"not gzip at all", "edge.facts.gz: cannot read facts file of "
           "relation edge", name="edge.facts.gz",
           program=TC.replace(".input edge", '.input edge(filename="edge.facts.gz")')),
    _facts("other-delimiter-not-found", b"1;2\n", "edge.facts:1: relation edge: expected 2 "
           "fields separated by ','",
           program=TC.replace(".input edge", '.input edge(delimiter=",")')),
    _facts("file-named-by-the-directive-missing", b"1\t2\n", "nope.tsv: cannot open facts file "
           "of relation edge", program=TC.replace(".input edge", '.input edge(filename='
                                                  '"nope.tsv")')),
]

CLI = [
    _flags("unknown-evaluator", UnknownComponentError, "unknown evaluator 'nope'",
           "--evaluator", "nope"),
    _flags("unknown-index", UnknownComponentError, "unknown index 'nope'", "--index", "nope"),
    _flags("unknown-backend", UnknownComponentError, "unknown backend 'nope'",
           "--backend", "nope"),
    _flags("unknown-fixpoint", UnknownComponentError, "unknown fixpoint 'nope'",
           "--fixpoint", "nope"),
    _flags("unknown-engine", UnknownComponentError, "unknown incremental engine 'nope'",
           "--engine", "nope"),
    _flags("workers-on-local", UsageError, "backend 'local' does not take --workers",
           "--workers", "2"),
    _flags("master-on-local", UsageError, "backend 'local' does not take --master",
           "--master", "local[2]"),
    _flags("spark-conf-on-local", UsageError, "backend 'local' does not take --spark-conf",
           "--spark-conf", "a=b"),
    _flags("checkpoint-dir-on-parallel", UsageError, "backend 'parallel' does not take "
           "--checkpoint-dir", "--backend", "parallel", "--checkpoint-dir", "/tmp"),
    _flags("spark-conf-without-equals", UsageError, "--spark-conf 'nokey': expected KEY=VALUE",
           "--backend", "spark", "--spark-conf", "nokey"),
    _flags("parquet-on-local", UsageError, "--output-format parquet needs a backend",
           "--output-format", "parquet"),
    _flags("summary-on-spark", UsageError, "--summary needs a local backend",
           "--backend", "spark", "--summary"),
    _flags("index-on-spark", UsageError, "--index does not go with --backend spark",
           "--backend", "spark", "--index", "hash"),
    _flags("evaluator-on-spark", UsageError, "--evaluator does not go with --backend spark",
           "--backend", "spark", "--evaluator", "substitution"),
    _flags("fixpoint-on-spark", UsageError, "--fixpoint does not go with --backend spark",
           "--backend", "spark", "--fixpoint", "naive"),
    _flags("backend-with-engine", UsageError, "--backend does not go with --engine",
           "--engine", "counting", "--backend", "parallel"),
    _flags("evaluator-with-engine", UsageError, "--evaluator does not go with --engine",
           "--engine", "counting", "--evaluator", "substitution"),
    _flags("fixpoint-with-engine", UsageError, "--fixpoint does not go with --engine",
           "--engine", "dred", "--fixpoint", "naive"),
    _flags("workers-with-engine", UsageError, "--workers does not go with --engine",
           "--engine", "dred", "--workers", "2"),
    _flags("master-with-engine", UsageError, "--master does not go with --engine",
           "--engine", "elastic", "--master", "local[2]"),
    _flags("output-format-with-engine", UsageError, "--output-format does not go with --engine",
           "--engine", "dbsp", "--output-format", "csv"),
    _flags("spark-conf-with-engine", UsageError, "--spark-conf does not go with --engine",
           "--engine", "dbsp", "--spark-conf", "a=b"),
    _flags("updates-without-engine", UsageError, "--updates needs --engine",
           "--updates", "{dir}/u.txt", files={**GOOD_EDGES, "u.txt": b"+edge\t1\t2\n"}),
    _flags("index-with-substitution", UsageError, "evaluator 'substitution' does not use an "
           "index", "--evaluator", "substitution", "--index", "hash"),
    _flags("zero-workers", UsageError, "workers", "--backend", "parallel", "--workers", "0"),
    _flags("negative-workers", UsageError, "workers", "--backend", "parallel", "--workers", "-2"),
    _flags("output-directory-is-a-file", OutputError, "a-file: cannot write outputs there: it "
           "is a file", "-D", "{dir}/a-file", files={**GOOD_EDGES, "a-file": b""}),
    _flags("output-directory-below-a-file", OutputError, "a-file/out: cannot create the output "
           "directory", "-D", "{dir}/a-file/out", files={**GOOD_EDGES, "a-file": b""}),
    _flags("output-directory-under-proc", OutputError, "/proc/herbrand-out: cannot create the "
           "output directory", "-D", "/proc/herbrand-out"),
    _flags("output-file-below-a-file", OutputError, "f: cannot write outputs there: it is a "
           "file", files={**GOOD_EDGES, "out/f": b""},
           program=TC.replace(".output path", '.output path(filename="f/path.csv")')),
    _flags("facts-directory-missing", FactsError, "no-such-dir: facts directory: no such "
           "directory", "-F", "{dir}/no-such-dir"),
    _flags("facts-directory-is-a-file", FactsError, "a-file: facts directory: not a directory",
           "-F", "{dir}/a-file", files={**GOOD_EDGES, "a-file": b""}),
    BadInput("program-file-missing", "cli", ProgramFileError, "missing.dl: cannot read program "
             "file: no such file", command=("run", "{dir}/missing.dl", "-D", "-")),
    BadInput("program-file-is-a-directory", "cli", ProgramFileError, "facts: cannot read "
             "program file: is a directory", command=("run", "{dir}/facts", "-D", "-")),
    BadInput("translate-missing-program", "cli", ProgramFileError, "missing.dl: cannot read "
             "program file", command=("translate", "{dir}/missing.dl")),
    BadInput("bench-report-not-json", "cli", ReportError, "r.json: not a pytest-benchmark JSON "
             "file", files={"r.json": b"not json"}, command=("bench", "report", "{dir}/r.json")),
    BadInput("bench-report-empty-object", "cli", ReportError, "r.json: no benchmarks in this "
             "file", files={"r.json": b"{}"}, command=("bench", "report", "{dir}/r.json")),
    BadInput("bench-report-missing", "cli", ReportError, "r.json: cannot read benchmark results: "
             "no such file", command=("bench", "report", "{dir}/r.json")),
    BadInput("unknown-option", "cli", UsageExit, "unrecognized arguments: --frobnicate",
             command=("run", "{dir}/prog.dl", "--frobnicate")),
    BadInput("workers-not-a-number", "cli", UsageExit, "argument --workers: invalid int value",
             command=("run", "{dir}/prog.dl", "--workers", "two")),
    BadInput("output-format-unknown", "cli", UsageExit, "argument --output-format: invalid "
             "choice: 'xml'", command=("run", "{dir}/prog.dl", "--output-format", "xml")),
    BadInput("no-program", "cli", UsageExit, "the following arguments are required: program",
             command=("run",)),
    BadInput("no-command", "cli", UsageExit, "the following arguments are required: command",
             command=()),
]

UPDATES = [
    _updates("no-sign", b"+edge\t1\t2\nedge\t3\t4\n", "u.txt:2: expected '+relation', "
             "'-relation' or 'commit'"),
    _updates("undeclared-relation", b"+edgez\t1\t2\n", "u.txt:1: relation 'edgez' is not "
             "declared"),
    _updates("derived-relation", b"commit\n+path\t1\t2\n", "u.txt:2: relation path is derived "
             "by rules"),
    _updates("too-few-values", b"-edge\t1\n", "u.txt:1: relation edge has 2 columns, the line "
             "has 1 values"),
    _updates("letter-for-a-number", b"+edge\t1\tx\n", "u.txt:1: relation edge column 2: 'x' is "
             "not a number"),
    _updates("hex-for-a-number", b"+edge\t0x1\t2\n", "u.txt:1: relation edge column 1: '0x1' is "
             "not a number"),
    _updates("byte-not-utf8-for-a-number", b"+edge\t1\t\xfe\n", r"u.txt:1: relation edge column "
             r"2: '\xfe' is not a number"),
    _updates("space-separated-values", b"+edge 1 2\n", "u.txt:1: relation 'edge 1 2' is not "
             "declared"),
    BadInput("updates-file-missing", "updates", FactsError, "nope.txt: cannot read updates file: "
             "no such file", flags=("--engine", "dred", "--updates", "{dir}/nope.txt")),
    BadInput("updates-file-is-a-directory", "updates", FactsError, "facts: cannot read updates "
             "file: is a directory", flags=("--engine", "dred", "--updates", "{dir}/facts")),
]

# -- Python values -------------------------------------------------------------------------------

PROGRAM = herbrand.parse(TC)
SYMBOL_PROGRAM = herbrand.parse(SYMBOLS)


def _edges(rows: object) -> Callable[[], object]:
    return lambda: herbrand.materialize(PROGRAM, facts={"edge": rows})


def _people(rows: object) -> Callable[[], object]:
    return lambda: herbrand.materialize(SYMBOL_PROGRAM, facts={"person": rows})


def _pandas(data: Mapping[str, list], **options) -> Callable[[], object]:
    def call():
        import pandas

        return herbrand.materialize(PROGRAM, facts={"edge": pandas.DataFrame(data, **options)})
    return call


def _arrow(data: Mapping[str, list]) -> Callable[[], object]:
    def call():
        import pyarrow

        return herbrand.materialize(PROGRAM, facts={"edge": pyarrow.table(data)})
    return call


def _wrong_kind(row_id: str, place: str, call: Callable,
                error: type[Exception] = HerbrandTypeError) -> BadInput:
    return _python(row_id, error, place, call)


T = HerbrandTypeError
PYTHON = [
    _wrong_kind("float-array", "relation edge: column 1", _edges(np.array([[1.5, 2.9]]))),
    _wrong_kind("integral-float-array", "relation edge: column 1",
                _edges(np.array([[1.0, 2.0]]))),
    _wrong_kind("nan-in-array", "relation edge: column 1", _edges(np.array([[np.nan, 1]]))),
    _wrong_kind("inf-in-array", "relation edge: column 1", _edges(np.array([[1, np.inf]]))),
    _wrong_kind("huge-float-in-array", "relation edge: column 1", _edges(np.array([[1e19, 1]]))),
    _wrong_kind("uint64-beyond-int64", "relation edge: row 1 column 2",
                _edges(np.array([[1, 2**64 - 1]], dtype=np.uint64))),
    _wrong_kind("one-dimensional-array", "relation edge: an array of shape (4,)",
                _edges(np.array([1, 2, 3, 4])), ArityError),
    _wrong_kind("three-dimensional-array", "relation edge: an array of shape (1, 1, 2)",
                _edges(np.zeros((1, 1, 2), dtype=np.int64)), ArityError),
    _wrong_kind("array-of-wrong-width", "relation edge: the array's rows have 3 columns",
                _edges(np.zeros((2, 3), dtype=np.int64)), ArityError),
    _wrong_kind("bool-array", "relation edge: column 1 expects a number",
                _edges(np.array([[True, False]]))),
    _wrong_kind("str-array-for-numbers", "relation edge: column 1 expects a number",
                _edges(np.array([["1", "2"]]))),
    _wrong_kind("bytes-array", "relation edge: column 1", _edges(np.array([[b"1", b"2"]]))),
    _wrong_kind("complex-array", "relation edge: column 1", _edges(np.array([[1 + 2j, 1]]))),
    _wrong_kind("datetime-array", "relation edge: column 1",
                _edges(np.array([["2026-01-01", "2026-01-02"]], dtype="datetime64[D]"))),
    _wrong_kind("object-array-with-a-float", "relation edge: row 1 column 2",
                _edges(np.array([[1, 2.5]], dtype=object))),
    _wrong_kind("tuple-with-a-float", "relation edge: row 2 column 1",
                _edges([(1, 2), (3.0, 4)])),
    _wrong_kind("tuple-with-an-int-beyond-int64", "relation edge: row 1 column 2",
                _edges([(1, 2**63)])),
    _wrong_kind("tuple-with-a-bool", "relation edge: row 1 column 1", _edges([(True, 2)])),
    _wrong_kind("tuple-with-none", "relation edge: row 1 column 2", _edges([(1, None)])),
    _wrong_kind("tuple-with-a-str-for-a-number", "relation edge: row 1 column 1",
                _edges([("1", 2)])),
    _wrong_kind("row-that-is-an-int", "relation edge: row 2 is not a tuple",
                _edges([(1, 2), 3])),
    _wrong_kind("row-of-wrong-length", "relation edge: row 1 (1, 2, 3) has 3 values",
                _edges([(1, 2, 3)]), ArityError),
    _wrong_kind("rows-none", "relation edge: rows must be", _edges(None)),
    _wrong_kind("rows-a-bare-tuple", "relation edge: rows must be a collection of rows",
                _edges((1, 2))),
    _wrong_kind("rows-a-str", "relation edge: rows must be", _edges("1\t2")),
    _wrong_kind("rows-a-dict", "relation edge: rows must be", _edges({1: 2})),
    _wrong_kind("number-for-a-symbol", "relation person: row 1 column 2 expects a symbol",
                _people([(1, 2)])),
    _wrong_kind("unknown-symbol-id", "relation person: row 1 column 2 expects a symbol",
                _people(np.array([[1, 5]]))),
    _wrong_kind("symbol-str-array-for-the-id-column", "relation person: column 1 expects a "
                "number", _people(np.array([["ann", "bob"]]))),
    _wrong_kind("pandas-float-column", "relation edge: column 1",
                _pandas({"x": [1.5], "y": [2]})),
    _wrong_kind("pandas-missing-value", "relation edge: row 2 column 1 is a missing value",
                _pandas({"x": [1, None], "y": [2, 3]}, dtype="Int64")),
    _wrong_kind("pandas-too-many-columns", "relation edge: the DataFrame has 3 columns",
                _pandas({"x": [1], "y": [2], "z": [3]}), ArityError),
    _wrong_kind("pandas-str-column-for-numbers", "relation edge: row 1 column 2",
                _pandas({"x": [1], "y": ["2"]})),
    _wrong_kind("arrow-null", "relation edge: row 1 column 2 is a missing value",
                _arrow({"x": [1], "y": [None]})),
    _wrong_kind("arrow-float-column", "relation edge: column 1", _arrow({"x": [1.5], "y": [2]})),
    _python("facts-a-list", UsageError, "facts must be a mapping of relation name to rows",
            lambda: herbrand.materialize(PROGRAM, facts=[(1, 2)])),
    _python("facts-key-not-a-str", UsageError, "facts: relation names are str",
            lambda: herbrand.materialize(PROGRAM, facts={1: [(1, 2)]})),
    _python("facts-for-an-undeclared-relation", UndeclaredRelationError, "'edges'",
            lambda: herbrand.materialize(PROGRAM, facts={"edges": [(1, 2)]})),
    _python("parse-none", UsageError, "parse(text_or_path) must be",
            lambda: herbrand.parse(None)),
    _python("parse-an-int", UsageError, "parse(text_or_path) must be", lambda: herbrand.parse(7)),
    _python("materialize-a-dict", UsageError, "materialize(program) must be",
            lambda: herbrand.materialize({"edge": [(1, 2)]})),
    _python("parse-a-missing-file", ProgramFileError, "missing.dl: cannot read program file: "
            "no such file", lambda: herbrand.parse("missing.dl")),
    _python("materialize-a-missing-file", ProgramFileError, "missing.dl: cannot read program "
            "file", lambda: herbrand.materialize("missing.dl")),
    _python("parse-a-missing-path", ProgramFileError, "missing.dl: cannot read program file",
            lambda: herbrand.parse(Path("missing.dl"))),
    _python("unknown-evaluator-name", UnknownComponentError, "unknown evaluator 'fast'",
            lambda: herbrand.materialize(PROGRAM, evaluator="fast")),
    _python("index-with-an-evaluator-instance", UsageError, "pass index= only with an evaluator "
            "name", lambda: herbrand.materialize(PROGRAM, evaluator=_substitution(),
                                                 index="hash")),
    _python("master-on-the-local-backend", UsageError, "backend 'local' does not take a master",
            lambda: herbrand.materialize(PROGRAM, master="local[2]")),
    _python("evaluator-on-spark", UsageError, "evaluator= does not go with backend "
            "SparkBackend", lambda: herbrand.materialize(PROGRAM, backend="spark",
                                                         evaluator="substitution")),
    _python("master-not-a-str", UsageError, "master= must be a master URL (str), got int",
            lambda: herbrand.materialize(PROGRAM, backend="spark", master=2)),
    _python("observer-not-callable", UsageError, "observer= must be callable",
            lambda: herbrand.materialize(PROGRAM, observer=3)),
    _python("relation-not-in-the-database", UnknownRelationError, "relation 'paths' is not in "
            "this database (it holds edge, path)",
            lambda: herbrand.materialize(PROGRAM).to_pandas("paths")),
    _python("rows-of-a-relation-not-in-the-database", UnknownRelationError, "relation 'paths'",
            lambda: herbrand.materialize(PROGRAM).decoded_rows("paths")),
    _python("unknown-incremental-engine", UnknownComponentError, "unknown incremental engine "
            "'magic'", lambda: herbrand.incremental(PROGRAM, engine="magic")),
    _python("unknown-engine-option", UnknownComponentError, "incremental engine 'dred' takes "
            "no option 'speed'", lambda: herbrand.incremental(PROGRAM, engine="dred", speed=2)),
]


def _substitution():
    from herbrand.evaluators.substitution import SubstitutionEvaluator

    return SubstitutionEvaluator()


# -- updates of a Materialization ----------------------------------------------------------------

INCREMENTAL = herbrand.parse(""".decl edge(x: number, y: number)
.decl label(x: number, name: symbol)
.decl path(x: number, y: number)
.decl named(x: symbol, y: symbol)
.decl free(x: number)
.output path
.output named
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
named(a, b) :- path(x, y), label(x, a), label(y, b).
""")
INCREMENTAL_FACTS = {"edge": [(1, 2), (2, 3)], "label": [(1, "one"), (3, "three")]}

U = UpdateError
INCREMENTAL_ROWS = [
    _update("insert-into-a-derived-relation", U, "relation path is derived by rules",
            lambda m: m.update(insert={"path": [(5, 6)]})),
    _update("delete-from-a-derived-relation", U, "relation path is derived by rules",
            lambda m: m.update(delete={"path": [(1, 2)]})),
    _update("insert-into-an-undeclared-relation", UndeclaredRelationError, "'edges'",
            lambda m: m.update(insert={"edges": [(5, 6)]})),
    _update("row-of-wrong-arity", ArityError, "relation edge: row 1 (5,) has 1 values",
            lambda m: m.update(insert={"edge": [(5,)]})),
    _update("symbol-for-a-number", T, "relation edge: row 1 column 2 expects a number",
            lambda m: m.update(insert={"edge": [(5, "six")]})),
    _update("float-array", T, "relation edge: column 1",
            lambda m: m.update(insert={"edge": np.array([[5.0, 6.0]])})),
    _update("one-dimensional-array", ArityError, "relation edge: an array of shape (2,)",
            lambda m: m.update(delete={"edge": np.array([1, 2])})),
    _update("int-beyond-int64", T, "relation edge: row 1 column 1",
            lambda m: m.update(insert={"edge": [(2**64, 1)]})),
    _update("rows-none", T, "relation edge: rows must be",
            lambda m: m.update(insert={"edge": None})),
    _update("rows-a-bare-tuple", T, "relation edge: rows must be a collection of rows",
            lambda m: m.update(insert={"edge": (5, 6)})),
    _update("insert-a-list", UsageError, "update(insert=...) must be a mapping",
            lambda m: m.update(insert=[("edge", (5, 6))])),
    _update("delete-a-tuple", UsageError, "update(delete=...) must be a mapping",
            lambda m: m.update(delete=("edge", (1, 2)))),
    _update("relation-name-not-a-str", UsageError, "update(insert=...): relation names are str",
            lambda m: m.update(insert={("edge",): [(5, 6)]})),
    _update("good-insert-bad-delete", T, "relation edge: row 1 column 2 expects a number",
            lambda m: m.update(insert={"edge": [(3, 4)], "label": [(4, "four")]},
                               delete={"edge": [(1, "2")]})),
    _update("good-relation-then-bad-relation", T, "relation label: row 2 column 2 expects a "
            "symbol", lambda m: m.update(insert={"edge": [(3, 1)],
                                                 "label": [(2, "two"), (4, 4)]})),
    _update("new-symbol-then-bad-row", ArityError, "relation label: row 2",
            lambda m: m.update(insert={"label": [(9, "never-interned"), (1, "a", "b")]})),
    _update("add-rules-without-dynamic-rules", U, "add_rules needs an engine with dynamic rules",
            lambda m: m.add_rules("path(x, x) :- edge(x, _)."),
            engines=("recompute", "dred", "bf", "counting", "elastic")),
    _update("remove-rules-without-dynamic-rules", U, "remove_rules needs an engine with dynamic "
            "rules", lambda m: m.remove_rules("path(x, y) :- edge(x, y)."),
            engines=("recompute", "dred", "bf", "counting", "elastic")),
    _update("add-rules-with-a-declaration", UsageError, "add_rules takes rules only",
            lambda m: m.add_rules(".decl q(x: number)\nq(x) :- edge(x, _)."), engines=("dbsp",)),
    _update("add-rules-deriving-an-input-relation", U, "edge",
            lambda m: m.add_rules("edge(x, x) :- edge(x, _)."), engines=("dbsp",)),
    _update("add-rules-fact-of-an-input-relation", U, "edge",
            lambda m: m.add_rules("edge(7, 8)."), engines=("dbsp",)),
    _update("add-rules-syntax-error", S, "<add_rules>:1:19: expected ',' or ')'",
            lambda m: m.add_rules("free(x) :- edge(x _)."), engines=("dbsp",)),
    _update("add-rules-undeclared-relation", UndeclaredRelationError, "undeclared relation q",
            lambda m: m.add_rules("free(x) :- q(x)."), engines=("dbsp",)),
    _update("add-rules-unsafe", UnsafeRuleError, "variable y in the head",
            lambda m: m.add_rules("free(y) :- edge(x, _)."), engines=("dbsp",)),
    _update("add-rules-negation-cycle", StratificationError, "negation through recursion",
            lambda m: m.add_rules("free(x) :- edge(x, _), !free(x)."), engines=("dbsp",)),
    _update("add-rules-type-mismatch", T, "variable a is a symbol",
            lambda m: m.add_rules("free(a) :- label(_, a)."), engines=("dbsp",)),
    _update("add-rules-not-text", UsageError, "add_rules",
            lambda m: m.add_rules(42), engines=("dbsp",)),
    _update("remove-a-rule-not-in-the-program", U, "free(x) :- edge(x, _).",
            lambda m: m.remove_rules("free(x) :- edge(x, _)."), engines=("dbsp",)),
]

CATALOGUE: tuple[BadInput, ...] = (*SYNTAX, *SEMANTICS, *FACTS, *CLI, *UPDATES, *PYTHON,
                                   *INCREMENTAL_ROWS)
