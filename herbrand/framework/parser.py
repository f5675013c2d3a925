"""Datalog text in the Soufflé subset -> ``Program``: a hand-written recursive-descent parser.

Grammar (``{x}`` repeats, ``[x]`` is optional; tokens come from ``herbrand.framework.lexer``)::

    program     = {statement}
    statement   = ".decl" name {"," name} "(" [name ":" type {"," name ":" type}] ")" {qualifier}
                | ".type" name ("<:" type | "=" type {"|" type})
                | (".number_type" | ".symbol_type") name
                | (".input" | ".output" | ".printsize") name {"," name} ["(" [param {"," param}] ")"]
                | ".pragma" string [string]
                | ".plan" number ":" "(" [number {"," number}] ")" {"," number ":" "(" ... ")"}
                | atom "."
                | atom {"," atom} ":-" disjunction "."
    param       = name "=" (string | name | number)
    disjunction = conjunction {";" conjunction}
    conjunction = literal {"," literal}
    literal     = "!" literal | "(" disjunction ")" | "true" | "false" | atom | expr cmp expr
    atom        = name "(" [expr {"," expr}] ")"
    cmp         = "=" | "!=" | "<" | "<=" | ">" | ">="
    expr        = binary operators, loosest first, all left-associative:
                  lor | lxor | land | bor | bxor | band | bshl bshr bshru | + - | * / %
    unary       = ("-" | "bnot" | "lnot") unary | power
    power       = primary ["^" unary]                                 (right-associative)
    primary     = number | string | "_" | variable | "(" expr ")"
                | ("min" | "max") "(" expr "," expr {"," expr} ")" | "abs" "(" expr ")"
                | "as" "(" expr "," type ")"
                | "count" ":" agg_body | ("sum" | "min" | "max" | "mean") expr ":" agg_body
    agg_body    = atom | "{" disjunction "}"

What the values look like:

- Types resolve to their base type (``number`` or ``symbol``) after the whole text is read, so a
  type may be used before its ``.type``; a union must not mix the two bases. ``.decl a, b(...)``
  declares both. Qualifiers that do not change the answer (``inline``, ``magic``, ``brie``, ...)
  are dropped; ``input``/``output``/``printsize`` qualifiers become Directives.
- Several heads, ``;`` and ``!`` over parenthesised formulas are expanded into disjunctive normal
  form: one Rule per head and disjunct, heads first, disjuncts left to right; negation is pushed
  inward (De Morgan, ``!(x < y)`` is ``x >= y``, ``!!a`` is ``a``). ``true`` is dropped, a
  disjunct with ``false`` disappears. An aggregate body must expand to a single conjunction.
- ``.pragma "key" ["value"]`` is kept as a Pragma, whatever its key; its readers decide what
  it means (``magic-transform``) and ignore the others.
- ``-`` before a number literal gives a negative Const (``-2^2`` is still ``-(2^2)``); ``as(x, T)``
  is ``x``. Each Rule's location is its head's; Atom, Comparison, Declaration and Directive
  locations are those of their first token (the relation name for declarations and directives).

Errors: every malformed input raises HerbrandSyntaxError at the offending token, and features
outside the subset (records, ADTs, floats, unsigned, string functors, user functors, counters,
``eqrel``, ``choice-domain``, subsumption, components, preprocessor lines) raise one whose
message starts with ``unsupported:``. Cost: linear in the text, except the DNF expansion, which
is exponential in the number of nested disjunctions of one rule.
"""

from __future__ import annotations

import os

from herbrand.framework.dnf import Dnf, conjoin, negate
from herbrand.framework.errors import HerbrandSyntaxError
from herbrand.framework.lexer import Source, Token
from herbrand.framework.source_files import read_source
from herbrand.framework.syntax import (
    AGGREGATE_FUNCTIONS,
    COMPARISON_OPS,
    NUMBER,
    SYMBOL,
    Aggregate,
    Arith,
    Atom,
    BodyElement,
    Column,
    Comparison,
    Const,
    Declaration,
    Directive,
    Literal,
    Pragma,
    Program,
    Rule,
    Term,
    Var,
    Wildcard,
)
from herbrand.framework.token_cursor import TokenCursor

__all__ = ["parse", "parse_atom", "parse_file"]

_BINARY_LEVELS = (
    ("lor",), ("lxor",), ("land",), ("bor",), ("bxor",), ("band",),
    ("bshl", "bshr", "bshru"), ("+", "-"), ("*", "/", "%"),
)
_WORD_PREFIX_OPS = ("bnot", "lnot")
_INT64 = range(-(2**63), 2**63)

_IO_KINDS = ("input", "output", "printsize")
_IGNORED_QUALIFIERS = frozenset({
    "inline", "no_inline", "magic", "no_magic", "brie", "btree", "btree_delete", "overridable",
})
# Qualifier words are keywords: they never name a relation (Soufflé reserves them too).
_QUALIFIERS = frozenset({*_IGNORED_QUALIFIERS, *_IO_KINDS, "eqrel"})
_UNSUPPORTED_TYPES = ("unsigned", "float")

_UNSUPPORTED_TERMS = {
    "$": "counter '$'",
    "autoinc": "counter 'autoinc()'",
    "@": "user-defined functor",
    "[": "record",
    "nil": "record constant 'nil'",
    **{name: f"functor '{name}'" for name in (
        "cat", "ord", "range", "strlen", "substr", "to_float", "to_number", "to_string",
        "to_unsigned", "match", "contains",
    )},
}
_WORD_OPS = frozenset(op for level in _BINARY_LEVELS for op in level if op.isalpha())
# Words that never name a relation or a variable.
_KEYWORDS = frozenset({
    *AGGREGATE_FUNCTIONS, "as", "true", "false", *_WORD_PREFIX_OPS, *_WORD_OPS,
    *(word for word in _UNSUPPORTED_TERMS if word.isalpha()),
})
# Tokens that can start a term (and so a comparison).
_TERM_START = ("number", "string", "ident", "(", "-", "$", "@", "[")


def parse(text: str, file: str | None = None) -> Program:
    """Parse Datalog ``text``; ``file`` names it in error locations. ``Program.source`` is
    ``text``. Raises HerbrandSyntaxError at the first error. Cost: linear in ``text`` (plus the
    DNF expansion of disjunctive bodies)."""
    return _Parser(Source(text, file)).program()


def parse_atom(text: str, file: str | None = None) -> Atom:
    """One atom, ``relation(term, ...)``, and nothing after it but blanks and comments (a
    goal such as ``"tc(1, 5)"``); ``file`` names the text in error locations. Raises
    HerbrandSyntaxError at the first token that does not fit. Cost: linear in ``text``.

    >>> print(parse_atom('tc(1, "a")'))
    tc(1, "a")
    """
    parser = _Parser(Source(text, file))
    atom = parser.atom()
    parser.expect("eof", "the end of the atom")
    return atom


def parse_file(path: str | os.PathLike[str]) -> Program:
    """Parse the file at ``path``; its name appears in error locations.

    The file is read as Soufflé reads it, byte for byte: UTF-8 (a byte-order mark is skipped),
    and bytes that are not UTF-8 are kept (``surrogateescape``) inside strings, where they
    become symbols with those bytes, and in comments; anywhere else they are an unexpected
    character at their file:line:col. Raises ProgramFileError naming the path when it is
    missing, a directory or unreadable."""
    return parse(read_source(path, "program"), file=str(path))


class _Parser(TokenCursor):
    """Recursive descent over the token list (``TokenCursor``: ``pos`` indexes the next
    token)."""

    def __init__(self, source: Source):
        super().__init__(source)
        self.declarations: list[tuple[Token, list[tuple[str, Token]]]] = []
        self.rules: list[Rule] = []
        self.directives: list[Directive] = []
        self.pragmas: list[Pragma] = []
        # type name -> (its name token, the (type name, token) pairs it is a subset or union of)
        self.types: dict[str, tuple[Token, list[tuple[str, Token]]]] = {}
        self.type_refs: list[tuple[str, Token]] = []
        self.base_types: dict[str, str] = {}

    def relation_name(self) -> Token:
        """Consume a relation name: an identifier that is not a keyword."""
        if self.peek().text in _KEYWORDS or self.peek().text in _QUALIFIERS:
            self.fail("expected a relation name")
        return self.name("a relation name")

    # -- statements ------------------------------------------------------------------------

    def program(self) -> Program:
        """Parse every statement, then resolve types and build the Program."""
        while (token := self.peek()).kind != "eof":
            if token.kind == "directive":
                self.directive()
            elif token.kind == "ident":
                self.rule()
            elif token.kind == "." and self._names_unknown_directive():
                raise self.error(f"unknown directive '.{self.peek(1).text}'", token)
            else:
                self.fail("expected a declaration, directive or rule")
        for type_name, token in self.type_refs:
            self.base_type(type_name, token)
        declarations = tuple(
            Declaration(
                name.text,
                tuple(Column(column, self.base_type(t.text, t)) for column, t in columns),
                location=self.location(name),
            )
            for name, columns in self.declarations
        )
        return Program(declarations, tuple(self.rules), tuple(self.directives),
                       tuple(self.pragmas), source=self.source.text)

    def _names_unknown_directive(self) -> bool:
        """Whether the '.' at hand is glued to a following identifier, as in ``.foo``."""
        dot, word = self.peek(), self.peek(1)
        return word.kind == "ident" and (word.line, word.column) == (dot.line, dot.end_column)

    def directive(self) -> None:
        """A statement that starts with a directive token."""
        token = self.advance()
        kind = token.text[1:]
        if kind in _IO_KINDS:
            self.io_directive(kind)
        elif kind == "decl":
            self.declaration()
        elif kind == "type":
            self.type_definition()
        elif kind in ("number_type", "symbol_type"):
            name = self.name("a type name")
            self.define_type(name, [(kind.removesuffix("_type"), name)])
        elif kind == "pragma":
            key = self.expect("string", "a string")
            value = self.advance().value if self.peek().kind == "string" else None
            self.pragmas.append(Pragma(key.value, value, location=self.location(key)))
        elif kind == "plan":
            self.plan()
        else:
            raise self.error(f"unsupported: directive '{token.text}'", token)

    def io_directive(self, kind: str) -> None:
        """``.input a, b(key=value, ...)``: one Directive per relation, sharing the params."""
        names = [self.relation_name()]
        while self.accept(","):
            names.append(self.relation_name())
        params = tuple(self.sequence(self.param, ")")) if self.accept("(") else ()
        self.directives.extend(
            Directive(kind, name.text, params, location=self.location(name)) for name in names
        )

    def param(self) -> tuple[str, str]:
        """``key = value``; a string value is unquoted, a name or number kept as written."""
        key = self.name("a parameter name")
        self.expect("=")
        value = self.peek()
        if value.kind not in ("string", "ident", "number"):
            self.fail("expected a parameter value")
        self.advance()
        return key.text, value.value if value.kind == "string" else value.text

    def plan(self) -> None:
        """``.plan 0: (1, 2), 1: (2, 1)``: an execution plan, read and ignored."""
        while True:
            self.expect("number", "a rule version number")
            self.expect(":")
            self.expect("(")
            self.sequence(lambda: self.expect("number", "an atom number"), ")")
            if not self.accept(","):
                return

    def declaration(self) -> None:
        """``.decl a, b(x: T, ...) qualifiers``; column types are resolved at the end."""
        names = [self.relation_name()]
        while self.accept(","):
            names.append(self.relation_name())
        self.expect("(")
        columns = self.sequence(self.column, ")")
        while (token := self.peek()).kind == "ident":
            if token.text == "eqrel":
                raise self.error("unsupported: eqrel", token)
            if (token.text, self.peek(1).kind, self.peek(2).text) == ("choice", "-", "domain"):
                raise self.error("unsupported: choice-domain", token)
            if token.text in _IO_KINDS:
                self.directives.extend(
                    Directive(token.text, name.text, location=self.location(token))
                    for name in names
                )
            elif token.text not in _IGNORED_QUALIFIERS:
                break
            self.advance()
        self.declarations.extend((name, columns) for name in names)

    def column(self) -> tuple[str, Token]:
        """``name: type``, returning the name and the type's token."""
        name = self.name("a column name")
        self.expect(":")
        type_token = self.name("a type name")
        self.type_refs.append((type_token.text, type_token))
        return name.text, type_token

    def type_definition(self) -> None:
        """``.type T <: U`` or ``.type T = U | V | ...``; records and ADTs are unsupported."""
        name = self.name("a type name")
        if self.accept("<:"):
            members = [self.name("a type name")]
        elif self.accept("="):
            if self.peek().kind == "[":
                raise self.error(f"unsupported type '{name.text}': record", self.peek())
            members = [self.union_member(name)]
            while self.accept("|"):
                members.append(self.union_member(name))
        else:
            self.fail("expected '<:' or '='")
        self.define_type(name, [(member.text, member) for member in members])

    def union_member(self, union: Token) -> Token:
        """One type name of a union; a ``{`` after it means an ADT branch."""
        member = self.name("a type name")
        if self.peek().kind == "{":
            raise self.error(f"unsupported type '{union.text}': algebraic data type", self.peek())
        return member

    def define_type(self, name: Token, members: list[tuple[str, Token]]) -> None:
        """Record a type definition, to be resolved when the whole text is read."""
        if name.text in (NUMBER, SYMBOL, *_UNSUPPORTED_TYPES):
            raise self.error(f"cannot redefine built-in type '{name.text}'", name)
        if name.text in self.types:
            raise self.error(f"duplicate type '{name.text}'", name)
        self.types[name.text] = (name, members)
        self.type_refs.append((name.text, name))

    def base_type(self, name: str, token: Token, visiting: tuple[str, ...] = ()) -> str:
        """The base type (number or symbol) of type ``name``, referenced at ``token``."""
        if name in (NUMBER, SYMBOL):
            return name
        if name in _UNSUPPORTED_TYPES:
            raise self.error(f"unsupported type '{name}'", token)
        if name in self.base_types:
            return self.base_types[name]
        if name not in self.types:
            raise self.error(f"unknown type '{name}'", token)
        definition, members = self.types[name]
        if name in visiting:
            raise self.error(f"cyclic type definition '{name}'", definition)
        bases = {self.base_type(m, m_token, (*visiting, name)) for m, m_token in members}
        if len(bases) > 1:
            raise self.error(f"union type '{name}' mixes number and symbol", definition)
        self.base_types[name] = bases.pop()
        return self.base_types[name]

    def rule(self) -> None:
        """A fact ``a(...).`` or a rule ``a(...), b(...) :- body.``, expanded to DNF."""
        heads = [self.atom()]
        while self.accept(","):
            heads.append(self.atom())
        if self.peek().kind == "<=":
            raise self.error("unsupported: subsumption", self.peek())
        if len(heads) == 1 and self.accept("."):
            self.rules.append(Rule(heads[0], (), location=heads[0].location))
            return
        self.expect(":-", "'.' or ':-'" if len(heads) == 1 else "':-'")
        if self.peek().kind == ".":
            raise self.error("missing body after ':-'", self.peek())
        bodies = self.disjunction()
        self.expect(".", "'.' at end of rule")
        self.rules.extend(
            Rule(head, body, location=head.location) for head in heads for body in bodies
        )

    # -- bodies ----------------------------------------------------------------------------

    def disjunction(self) -> Dnf:
        """``conjunction {; conjunction}``."""
        dnf = self.conjunction()
        while self.accept(";"):
            dnf = dnf + self.conjunction()
        return dnf

    def conjunction(self) -> Dnf:
        """``literal {, literal}``."""
        dnf = self.literal()
        while self.accept(","):
            dnf = conjoin(dnf, self.literal())
        return dnf

    def literal(self) -> Dnf:
        """A negation, parenthesised formula, ``true``/``false``, atom or comparison."""
        token = self.peek()
        if token.kind == "!":
            self.advance()
            return negate(self.literal())
        if token.kind == "ident" and token.text in ("true", "false"):
            self.advance()
            return [()] if token.text == "true" else []
        if token.kind == "(":
            return self.parenthesised()
        if token.kind not in _TERM_START:
            self.fail("expected a literal")
        if token.kind == "ident" and token.text not in _KEYWORDS and self.peek(1).kind == "(":
            start = self.pos
            atom = self.atom()
            # ``abs`` names a relation in real programs, and the functor before an operator.
            if token.text != "abs" or not self.at_operator():
                return [(Literal(atom),)]
            self.pos = start
        return [(self.comparison(),)]

    def at_operator(self) -> bool:
        """Whether the next token is a comparison or arithmetic operator."""
        text = self.peek().text
        return text in COMPARISON_OPS or text == "^" or any(
            text in level for level in _BINARY_LEVELS
        )

    def parenthesised(self) -> Dnf:
        """``( disjunction )``, or else a comparison whose left side starts with ``(``; when
        both readings fail, the error that got further is raised."""
        start = self.pos
        try:
            self.advance()
            dnf = self.disjunction()
            self.expect(")", "')'")
            return dnf
        except HerbrandSyntaxError as as_formula:
            self.pos = start
            try:
                return [(self.comparison(),)]
            except HerbrandSyntaxError as as_comparison:
                raise max(as_formula, as_comparison, key=_position) from None

    def atom(self) -> Atom:
        """``name(term, ...)``."""
        name = self.relation_name()
        self.expect("(")
        terms = self.sequence(self.expression, ")")
        return Atom(name.text, tuple(terms), location=self.location(name))

    def comparison(self) -> Comparison:
        """``expr op expr``."""
        start = self.peek()
        left = self.expression()
        operator = self.peek()
        if operator.kind not in COMPARISON_OPS:
            self.fail(
                "expected '(' or a comparison operator" if isinstance(left, Var)
                else "expected a comparison operator"
            )
        self.advance()
        return Comparison(operator.kind, left, self.expression(), location=self.location(start))

    # -- terms -----------------------------------------------------------------------------

    def expression(self, level: int = 0) -> Term:
        """Binary operators from ``_BINARY_LEVELS[level]`` on, left-associative."""
        if level == len(_BINARY_LEVELS):
            return self.unary()
        left = self.expression(level + 1)
        while self.peek().text in _BINARY_LEVELS[level]:
            operator = self.advance().text
            left = Arith(operator, (left, self.expression(level + 1)))
        return left

    def unary(self) -> Term:
        """Prefix ``-``, ``bnot``, ``lnot``; ``-`` on a number literal (not a power's base)
        makes a negative constant."""
        token = self.peek()
        if token.kind == "-":
            self.advance()
            if self.peek().kind == "number" and self.peek(1).kind != "^":
                number = self.advance()
                return self.number(number, -number.value)
            return Arith("neg", (self.unary(),))
        if token.kind == "ident" and token.text in _WORD_PREFIX_OPS:
            self.advance()
            return Arith(token.text, (self.unary(),))
        base = self.primary()
        return Arith("^", (base, self.unary())) if self.accept("^") else base

    def number(self, token: Token, value: int) -> Const:
        """A number constant, which must fit in 64 signed bits."""
        if value not in _INT64:
            raise self.error(f"number out of range '{token.text}'", token)
        return Const(value)

    def primary(self) -> Term:
        """A constant, variable, wildcard, parenthesised expression, functor, cast or
        aggregate."""
        token = self.peek()
        if token.kind == "number":
            return self.number(self.advance(), token.value)
        if token.kind == "string":
            return Const(self.advance().value)
        if token.kind == "(":
            self.advance()
            term = self.expression()
            self.expect(")")
            return term
        if token.text in _UNSUPPORTED_TERMS:
            raise self.error(f"unsupported: {_UNSUPPORTED_TERMS[token.text]}", token)
        if token.kind != "ident" or token.text in ("true", "false") or token.text in _WORD_OPS:
            self.fail("expected a term")
        if token.text in AGGREGATE_FUNCTIONS:
            return self.aggregate()
        if token.text == "abs" and self.peek(1).kind == "(":
            self.advance()
            self.expect("(")
            args = self.sequence(self.expression, ")", empty_ok=False)
            if len(args) != 1:
                raise self.error("abs takes one argument", token)
            return Arith("abs", (args[0],))
        if token.text == "as":
            return self.cast()
        if self.peek(1).kind == "(":
            raise self.error(f"unknown functor '{token.text}'", token)
        self.advance()
        return Wildcard() if token.text == "_" else Var(token.text)

    def cast(self) -> Term:
        """``as(term, Type)``: the term itself; the type must exist."""
        self.advance()
        self.expect("(")
        term = self.expression()
        self.expect(",")
        type_token = self.name("a type name")
        self.type_refs.append((type_token.text, type_token))
        self.expect(")")
        return term

    def aggregate(self) -> Term:
        """``count : body`` or ``f target : body``; ``min(a, b, ...)`` and ``max(...)`` with
        two or more arguments are functors."""
        function = self.advance()
        if function.text in ("min", "max") and self.peek().kind == "(":
            start = self.pos
            self.advance()
            first = self.expression()
            if self.accept(","):
                rest = self.sequence(self.expression, ")", empty_ok=False)
                return Arith(function.text, (first, *rest))
            self.pos = start
        target = None if function.text == "count" else self.expression()
        self.expect(":")
        return Aggregate(function.text, target, self.aggregate_body())

    def aggregate_body(self) -> tuple[BodyElement, ...]:
        """An atom, or ``{ formula }`` whose DNF is a single conjunction."""
        brace = self.peek()
        if brace.kind != "{":
            if brace.kind != "ident":
                self.fail("expected '{' or an atom")
            return (Literal(self.atom()),)
        self.advance()
        dnf = self.disjunction()
        self.expect("}", "'}'")
        if len(dnf) != 1:
            raise self.error("unsupported: aggregate body that is not one conjunction", brace)
        return dnf[0]


def _position(error: HerbrandSyntaxError) -> tuple[int, int]:
    """Where an error occurred, to compare which of two parse attempts got further."""
    return error.location.line, error.location.column
