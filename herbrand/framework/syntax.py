"""Datalog syntax as frozen, hashable values.

Every node prints as valid source with ``str()``, and ``parse(str(program)) == program``.
Source locations ride along for error messages but take no part in equality or hashing.

The tree::

    Program
      declarations: Declaration(name, columns=(Column(name, type), ...))
      rules:        Rule(head=Atom, body=(Literal | Comparison, ...))   # a fact has an empty body
      directives:   Directive(kind="input" | "output" | "printsize", relation, params)
      pragmas:      Pragma(key, value)                               # .pragma "key" "value"

    Term = Var | Const | Wildcard | Arith | Aggregate
    Literal(atom, negated)          Comparison(op, left, right)
    Arith(op, args)                 Aggregate(function, target, body)

Disjunction and several heads are not nodes: the parser expands them into several rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from herbrand.framework.errors import SourceLocation

NUMBER = "number"
SYMBOL = "symbol"
BASE_TYPES = (NUMBER, SYMBOL)

COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=")
# Binary operators printed infix; the symbolic ones and Soufflé's word operators.
INFIX_OPS = (
    "+", "-", "*", "/", "%", "^",
    "band", "bor", "bxor", "bshl", "bshr", "bshru", "land", "lor", "lxor",
)
# Prefix operators: arithmetic negation and the bitwise/logical complements.
PREFIX_OPS = ("neg", "bnot", "lnot")
# Functors written as calls, with one or more arguments.
FUNCTOR_OPS = ("min", "max", "abs")
AGGREGATE_FUNCTIONS = ("count", "sum", "min", "max", "mean")


def _location_field():
    return field(default=None, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Var:
    """A named variable."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Wildcard:
    """``_``: an anonymous variable; every occurrence is distinct."""

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class Const:
    """An integer (``number``) or string (``symbol``) constant."""

    value: int | str

    @property
    def type(self) -> str:
        return SYMBOL if isinstance(self.value, str) else NUMBER

    def __str__(self) -> str:
        if isinstance(self.value, str):
            escaped = self.value.replace("\\", "\\\\").replace('"', '\\"')
            return f'"{escaped}"'
        return str(self.value)


@dataclass(frozen=True)
class Arith:
    """An arithmetic expression: ``op`` from INFIX_OPS (two args), PREFIX_OPS (one) or
    FUNCTOR_OPS (one or more)."""

    op: str
    args: tuple[Term, ...]

    def __str__(self) -> str:
        if self.op in INFIX_OPS:
            left, right = self.args
            if self.op == "^" and _starts_with_prefix_op(left):
                return f"(({left}) ^ {right})"  # prefix operators bind looser than ^
            return f"({left} {self.op} {right})"
        if self.op == "neg":
            return f"-({self.args[0]})"
        if self.op in PREFIX_OPS:
            return f"{self.op}({self.args[0]})"
        return f"{self.op}({', '.join(map(str, self.args))})"


def _starts_with_prefix_op(term: Term) -> bool:
    """Whether ``term`` prints with a leading ``-``, ``bnot`` or ``lnot``."""
    if isinstance(term, Const):
        return isinstance(term.value, int) and term.value < 0
    return isinstance(term, Arith) and term.op in PREFIX_OPS


@dataclass(frozen=True)
class Aggregate:
    """``function target : { body }``; ``target`` is None for ``count``.

    Semantics (as Soufflé): the body is evaluated with the enclosing rule's bound variables
    fixed; the aggregate ranges over the distinct matches of the body, where each wildcard is a
    distinct anonymous variable. ``count`` and ``sum`` of nothing are 0; ``min``, ``max`` and
    ``mean`` of nothing make the enclosing rule not fire.
    """

    function: str
    target: Term | None
    body: tuple[BodyElement, ...]

    def __str__(self) -> str:
        head = self.function if self.target is None else f"{self.function} {self.target}"
        return f"{head} : {{ {', '.join(map(str, self.body))} }}"


Term = Var | Const | Wildcard | Arith | Aggregate


@dataclass(frozen=True)
class Atom:
    """``relation(t1, ..., tn)``."""

    relation: str
    terms: tuple[Term, ...]
    location: SourceLocation | None = _location_field()

    @property
    def arity(self) -> int:
        return len(self.terms)

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(map(str, self.terms))})"


@dataclass(frozen=True)
class Literal:
    """A body atom, positive or negated (``!atom``)."""

    atom: Atom
    negated: bool = False

    @property
    def location(self) -> SourceLocation | None:
        return self.atom.location

    def __str__(self) -> str:
        return f"!{self.atom}" if self.negated else str(self.atom)


@dataclass(frozen=True)
class Comparison:
    """``left op right`` with op in COMPARISON_OPS. ``x = expr`` binds ``x`` when expr is bound."""

    op: str
    left: Term
    right: Term
    location: SourceLocation | None = _location_field()

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


BodyElement = Literal | Comparison


@dataclass(frozen=True)
class Rule:
    """``head :- body.``; a fact is a rule with an empty body and a ground head."""

    head: Atom
    body: tuple[BodyElement, ...] = ()
    location: SourceLocation | None = _location_field()

    @property
    def is_fact(self) -> bool:
        return not self.body

    def __str__(self) -> str:
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(map(str, self.body))}."


@dataclass(frozen=True)
class Column:
    """A column of a declaration: its name and base type (``number`` or ``symbol``)."""

    name: str
    type: str

    def __str__(self) -> str:
        return f"{self.name}: {self.type}"


@dataclass(frozen=True)
class Declaration:
    """``.decl name(col: type, ...)``; declared types are resolved to their base type."""

    name: str
    columns: tuple[Column, ...]
    location: SourceLocation | None = _location_field()

    @property
    def arity(self) -> int:
        return len(self.columns)

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(c.type for c in self.columns)

    def __str__(self) -> str:
        return f".decl {self.name}({', '.join(map(str, self.columns))})"


@dataclass(frozen=True)
class Directive:
    """``.input``, ``.output`` or ``.printsize`` of one relation, with ``key=value`` params."""

    kind: str
    relation: str
    params: tuple[tuple[str, str], ...] = ()
    location: SourceLocation | None = _location_field()

    def param(self, key: str, default: str | None = None) -> str | None:
        return dict(self.params).get(key, default)

    def __str__(self) -> str:
        if not self.params:
            return f".{self.kind} {self.relation}"
        body = ", ".join(f'{k}="{_escape(v)}"' for k, v in self.params)
        return f".{self.kind} {self.relation}({body})"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


@dataclass(frozen=True)
class Pragma:
    """``.pragma "key" "value"`` (``value`` None when only the key is written). Pragmas are
    kept as written; which ones mean anything is up to their readers (``magic-transform``:
    ``herbrand.translators.magic_pragma``)."""

    key: str
    value: str | None = None
    location: SourceLocation | None = _location_field()

    def __str__(self) -> str:
        if self.value is None:
            return f'.pragma "{_escape(self.key)}"'
        return f'.pragma "{_escape(self.key)}" "{_escape(self.value)}"'


@dataclass(frozen=True)
class Program:
    """A whole program: declarations, rules (facts included), I/O directives and pragmas, in
    source order."""

    declarations: tuple[Declaration, ...] = ()
    rules: tuple[Rule, ...] = ()
    directives: tuple[Directive, ...] = ()
    pragmas: tuple[Pragma, ...] = ()
    source: str | None = field(default=None, compare=False, hash=False, repr=False)

    @cached_property
    def declaration_of(self) -> dict[str, Declaration]:
        """Relation name -> its declaration."""
        return {d.name: d for d in self.declarations}

    def _directed(self, kind: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(d.relation for d in self.directives if d.kind == kind))

    @property
    def inputs(self) -> tuple[str, ...]:
        return self._directed("input")

    @property
    def outputs(self) -> tuple[str, ...]:
        return self._directed("output")

    @property
    def printsizes(self) -> tuple[str, ...]:
        return self._directed("printsize")

    def directives_of(self, kind: str, relation: str) -> tuple[Directive, ...]:
        return tuple(d for d in self.directives if d.kind == kind and d.relation == relation)

    @property
    def facts(self) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.is_fact)

    @property
    def proper_rules(self) -> tuple[Rule, ...]:
        """The rules with a non-empty body."""
        return tuple(r for r in self.rules if not r.is_fact)

    def __str__(self) -> str:
        lines = [str(p) for p in self.pragmas]
        lines += [str(d) for d in self.declarations]
        lines += [str(d) for d in self.directives]
        lines += [str(r) for r in self.rules]
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Traversals
# ---------------------------------------------------------------------------------------------


def term_variables(term: Term | None) -> Iterator[Var]:
    """The variables of a term, excluding those local to a nested aggregate's body.

    An aggregate contributes nothing here: its body variables are either local to it or
    correlated with the enclosing rule, which ``injected_variables`` decides.
    """
    if isinstance(term, Var):
        yield term
    elif isinstance(term, Arith):
        for arg in term.args:
            yield from term_variables(arg)


def term_aggregates(term: Term | None) -> Iterator[Aggregate]:
    """The aggregates occurring in a term (not descending into their bodies)."""
    if isinstance(term, Aggregate):
        yield term
    elif isinstance(term, Arith):
        for arg in term.args:
            yield from term_aggregates(arg)


def element_terms(element: BodyElement) -> tuple[Term, ...]:
    if isinstance(element, Literal):
        return element.atom.terms
    return (element.left, element.right)


def element_variables(element: BodyElement) -> Iterator[Var]:
    for term in element_terms(element):
        yield from term_variables(term)


def body_variables(body: tuple[BodyElement, ...]) -> Iterator[Var]:
    """Every variable occurring in a body, aggregate bodies included (recursively)."""
    for element in body:
        yield from element_variables(element)
        for term in element_terms(element):
            for aggregate in term_aggregates(term):
                yield from term_variables(aggregate.target)
                yield from body_variables(aggregate.body)


def element_aggregates(element: BodyElement) -> Iterator[Aggregate]:
    """The aggregates at the top level of one body element."""
    for term in element_terms(element):
        yield from term_aggregates(term)


def rule_aggregates(rule: Rule) -> Iterator[Aggregate]:
    """The aggregates at the top level of a rule's body."""
    for element in rule.body:
        for term in element_terms(element):
            yield from term_aggregates(term)


def grounded_variables(
    body: tuple[BodyElement, ...], bound: Iterable[Var] = (), without: Aggregate | None = None
) -> set[Var]:
    """The variables ``body`` binds, starting from ``bound``: those of its positive atoms, then
    ``x`` of ``x = expr`` (or ``expr = x``) once the variables of ``expr`` are bound. The value
    of an aggregate counts as bound, except the value of ``without``."""
    grounded = set(bound)
    for element in body:
        if isinstance(element, Literal) and not element.negated:
            grounded.update(t for t in element.atom.terms if isinstance(t, Var))
    bindings = [
        (side, other)
        for e in body if isinstance(e, Comparison) and e.op == "="
        for side, other in ((e.left, e.right), (e.right, e.left))
        if isinstance(side, Var) and without not in term_aggregates(other)
    ]
    changed = True
    while changed:
        changed = False
        for var, expression in bindings:
            if var not in grounded and set(term_variables(expression)) <= grounded:
                grounded.add(var)
                changed = True
    return grounded


def injected_variables(
    aggregate: Aggregate, body: tuple[BodyElement, ...], bound: Iterable[Var] = ()
) -> set[Var]:
    """The variables of ``aggregate`` whose values come from the enclosing scope (Soufflé's
    "injected" variables); all its other variables are local to it.

    ``body`` is the body holding the aggregate (the rule's, or an enclosing aggregate's with
    ``bound`` its own injected variables). A variable of the aggregate (body, nested aggregates
    and target) is injected when ``body`` binds it without this aggregate's value and it does
    not occur in the target. So in ``r(y) :- y = min z + y : { a(z), b(y) }`` the inner ``y`` is
    local, and in ``r(x, n) :- e(x), n = count : { f(x, _) }`` x is injected.
    """
    inner = set(body_variables(aggregate.body)) | set(term_variables(aggregate.target))
    grounded = grounded_variables(body, bound, without=aggregate)
    return (inner & grounded) - set(term_variables(aggregate.target))


def lift_atom_expressions(
    body: tuple[BodyElement, ...], prefix: str = "@e"
) -> tuple[BodyElement, ...]:
    """``body`` with each expression argument (arithmetic or aggregate) of a positive atom
    replaced by a fresh variable ``<prefix><k>``, and ``<prefix><k> = expression`` appended.
    The meaning is the same, and every positive atom then binds or matches plain values:
    ``t(x - 1, y), t(y, x)`` becomes ``t(@e0, y), t(y, x), @e0 = (x - 1)``. Fresh names start
    with '@', which user variables cannot. O(size of the body)."""
    lifted: list[BodyElement] = []
    equalities: list[BodyElement] = []
    for element in body:
        if isinstance(element, Literal) and not element.negated:
            terms = []
            for term in element.atom.terms:
                if isinstance(term, (Arith, Aggregate)):
                    fresh = Var(f"{prefix}{len(equalities)}")
                    equalities.append(Comparison("=", fresh, term, element.location))
                    term = fresh
                terms.append(term)
            atom = element.atom
            element = Literal(Atom(atom.relation, tuple(terms), atom.location))
        lifted.append(element)
    return tuple(lifted + equalities)


def relations_of_body(body: tuple[BodyElement, ...]) -> Iterator[tuple[Literal, bool]]:
    """Every literal of a body, with True when it sits inside an aggregate."""
    for element in body:
        if isinstance(element, Literal):
            yield element, False
        for term in element_terms(element):
            for aggregate in term_aggregates(term):
                for literal, _ in relations_of_body(aggregate.body):
                    yield literal, True
