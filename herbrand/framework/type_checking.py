"""Type checking of one rule: every constant and variable is a ``number`` or a ``symbol``.

Types come from the declarations' column types. A variable's type is fixed by its first
occurrence in an atom (the body in source order, aggregate bodies included, then the head), and
every other occurrence must agree: other atom columns, comparisons with constants or with other
variables (``x = y`` makes x and y one type), arithmetic (numbers only) and aggregates (their
result is a number; the targets of ``sum``, ``min``, ``max`` and ``mean`` must be numbers).
Order comparisons (``<``, ``<=``, ``>``, ``>=``) are defined on numbers only.

An aggregate's variables are scoped as Soufflé does (``syntax.injected_variables``): a variable
the enclosing body binds without the aggregate's value, outside the aggregate's target, is the
enclosing scope's; every other variable of the aggregate is local to it, so two aggregates may
use the same local name with different types, and ``y = min z + y : {...}`` has two ``y``.

Cost: linear in the size of the rule (variables are unified with a union-find; aggregate nesting
depth is taken as a constant).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from herbrand.framework.errors import HerbrandTypeError, SourceLocation
from herbrand.framework.syntax import (
    NUMBER,
    SYMBOL,
    Aggregate,
    Arith,
    Atom,
    BodyElement,
    Comparison,
    Const,
    Literal,
    Program,
    Rule,
    Term,
    Var,
    Wildcard,
    element_terms,
    element_variables,
    injected_variables,
    term_aggregates,
    term_variables,
)

ORDER_OPS = ("<", "<=", ">", ">=")


def location_text(*candidates: SourceLocation | None) -> str:
    """``file:line:col`` of the first known location among ``candidates``."""
    for location in candidates:
        if location is not None:
            return str(location)
    return "<unknown location>"


def rule_variables(rule: Rule) -> dict[Var, None]:
    """The variables of a rule outside aggregate bodies, in order of first occurrence."""
    found: dict[Var, None] = {}
    for term in rule.head.terms:
        found.update(dict.fromkeys(term_variables(term)))
    for element in rule.body:
        found.update(dict.fromkeys(element_variables(element)))
    return found


def aggregate_variables(aggregate: Aggregate) -> dict[Var, None]:
    """The variables of an aggregate's target and body outside nested aggregates, in order."""
    found = dict.fromkeys(term_variables(aggregate.target))
    for element in aggregate.body:
        found.update(dict.fromkeys(element_variables(element)))
    return found


def variable_types(rule: Rule, program: Program) -> dict[Var, str]:
    """Check the types of ``rule`` and return the type of each of its variables.

    The result maps every variable of the rule outside aggregate bodies whose type is known
    (``number`` or ``symbol``), in order of first occurrence. Every relation of the rule must be
    declared in ``program`` with the atom's arity (``analysis.check_rule`` checks that first).

    Raises HerbrandTypeError naming both places of a conflict and the rule. Cost: linear in the
    size of the rule.
    """
    return _RuleTypes(rule, program).check()


class VariableScope:
    """The variables owned by a rule or by one aggregate of it, within the enclosing scopes.

    A scope owns ``variables``; an aggregate owns those of its target and body (outside nested
    aggregates) that are not injected from the enclosing scope (``aggregate_scope``). Lookups
    walk the chain of scopes (cost: the aggregate nesting depth).
    """

    def __init__(self, parent: VariableScope | None, variables: Iterable[Var]):
        self.parent = parent
        self.own = dict.fromkeys(variables)

    def sees(self, var: Var) -> bool:
        """True when ``var`` belongs to this scope or an enclosing one."""
        return self.owner(var) is not None

    def owner(self, var: Var) -> VariableScope | None:
        scope: VariableScope | None = self
        while scope is not None and var not in scope.own:
            scope = scope.parent
        return scope

    def key(self, var: Var) -> _Key:
        """The identity of ``var`` here: its owning scope and the variable."""
        return self.owner(var), var


def aggregate_scope(
    aggregate: Aggregate,
    parent: VariableScope,
    body: tuple[BodyElement, ...],
    bound: Iterable[Var] = (),
) -> tuple[VariableScope, set[Var]]:
    """The scope of ``aggregate`` within ``parent``, and its injected variables.

    ``body`` holds the aggregate and ``bound`` are the variables injected into that body (see
    ``syntax.injected_variables``); the aggregate owns its other variables.
    """
    injected = injected_variables(aggregate, body, bound)
    own = (var for var in aggregate_variables(aggregate) if var not in injected)
    return VariableScope(parent, own), injected


_Key = tuple[VariableScope | None, Var]  # a variable's identity in a rule: (owning scope, var)
_Context = tuple[tuple[BodyElement, ...], tuple[Var, ...]]  # a body and the variables injected


@dataclass(frozen=True)
class _Place:
    """Where a type is fixed or required: a location and what sits there (formatted on demand)."""

    location: SourceLocation | None
    what: tuple[object, ...]  # pieces of the description, joined by str()
    declared_at: SourceLocation | None = None  # the declaration's location, for atom columns

    @property
    def text(self) -> str:
        return location_text(self.location)

    @property
    def description(self) -> str:
        return "".join(map(str, self.what))

    def __str__(self) -> str:
        return f"{self.text} ({self.description})"


@dataclass(frozen=True)
class _Typing:
    type: str
    place: _Place
    var: Var  # the variable whose occurrence fixed the type


class _RuleTypes:
    """One run of the checker over one rule."""

    def __init__(self, rule: Rule, program: Program):
        self.rule = rule
        self.declaration_of = program.declaration_of
        self.parent: dict[_Key, _Key] = {}  # non-roots only
        self.typed: dict[_Key, _Typing] = {}  # roots only
        self.deferred: list[Callable[[], None]] = []
        self.orders: list[tuple[VariableScope, Comparison, _Place]] = []

    def check(self) -> dict[Var, str]:
        scope = VariableScope(None, rule_variables(self.rule))
        self._body(scope, self.rule.body, ())
        self._atom(scope, self.rule.head, (self.rule.body, ()))
        for check in self.deferred:  # atoms first, then expressions, each in source order
            check()
        for order_scope, comparison, place in self.orders:
            if SYMBOL in (self._type_of(order_scope, comparison.left, place),
                          self._type_of(order_scope, comparison.right, place)):
                raise self._error(
                    place.text,
                    f"order comparison on symbols is not supported: {comparison}",
                )
        types = {}
        for var in scope.own:
            typing = self.typed.get(self._find((scope, var)))
            if typing is not None:
                types[var] = typing.type
        return types

    # -- the walk: atoms now, everything else deferred ------------------------------------------

    def _body(
        self, scope: VariableScope, body: tuple[BodyElement, ...], bound: Iterable[Var]
    ) -> None:
        """Check ``body`` in ``scope``; ``bound`` are the variables injected into it."""
        context = (body, tuple(bound))
        for element in body:
            if isinstance(element, Literal):
                self._atom(scope, element.atom, context)
                continue
            place = _Place(element.location or self.rule.location, (element,))
            self.deferred.append(partial(self._compare, scope, element, place))
            if element.op in ORDER_OPS:
                self.orders.append((scope, element, place))
            for term in element_terms(element):
                self._aggregates(scope, term, place, context)

    def _atom(self, scope: VariableScope, atom: Atom, context: _Context) -> None:
        declaration = self.declaration_of[atom.relation]
        location = atom.location or self.rule.location
        columns = zip(atom.terms, declaration.columns, strict=True)
        for number, (term, column) in enumerate(columns, 1):
            place = _Place(location, (atom.relation, " column ", number), declaration.location)
            if isinstance(term, Var):
                self._assign(scope.key(term), column.type, place)
            elif isinstance(term, (Const, Arith, Aggregate)):
                self.deferred.append(partial(self._expect, scope, term, column.type, place))
                self._aggregates(scope, term, place, context)

    def _aggregates(
        self, scope: VariableScope, term: Term | None, place: _Place, context: _Context
    ) -> None:
        """Check the aggregates of ``term``; ``context`` is the body holding them and the
        variables injected into it."""
        for aggregate in term_aggregates(term):
            inner, injected = aggregate_scope(aggregate, scope, *context)
            if aggregate.function != "count" and aggregate.target is not None:
                target_place = _Place(place.location, ("target of ", aggregate.function))
                self.deferred.append(
                    partial(self._expect, inner, aggregate.target, NUMBER, target_place)
                )
            self._aggregates(inner, aggregate.target, place, (aggregate.body, tuple(injected)))
            self._body(inner, aggregate.body, injected)

    # -- checks ---------------------------------------------------------------------------------

    def _expect(self, scope: VariableScope, term: Term, expected: str, place: _Place) -> None:
        """``term`` must have type ``expected`` at ``place``."""
        if isinstance(term, Var):
            self._assign(scope.key(term), expected, place)
            return
        if isinstance(term, Wildcard):
            return
        actual = term.type if isinstance(term, Const) else NUMBER
        if actual != expected:
            kind = {Const: "constant", Arith: "arithmetic", Aggregate: "aggregate"}[type(term)]
            declared = ""
            if place.declared_at is not None:
                declared = f" (declared at {location_text(place.declared_at)})"
            raise self._error(
                place.text,
                f"{kind} {term} is a {actual} but {place.description} is a {expected}{declared}",
            )
        if isinstance(term, Arith):
            operand = _Place(place.location, ("operand of ", term))
            for arg in term.args:
                self._expect(scope, arg, NUMBER, operand)

    def _type_of(self, scope: VariableScope, term: Term, place: _Place) -> str | None:
        """The type of ``term`` if known; arithmetic operands are checked on the way."""
        if isinstance(term, Var):
            typing = self.typed.get(self._find(scope.key(term)))
            return typing.type if typing is not None else None
        if isinstance(term, Const):
            return term.type
        if isinstance(term, Arith):
            self._expect(scope, term, NUMBER, place)
            return NUMBER
        if isinstance(term, Aggregate):
            return NUMBER
        return None

    def _compare(self, scope: VariableScope, comparison: Comparison, place: _Place) -> None:
        left, right = comparison.left, comparison.right
        if isinstance(left, Var) and isinstance(right, Var):
            self._union(scope.key(left), scope.key(right), place)
            return
        left_type = self._type_of(scope, left, place)
        right_type = self._type_of(scope, right, place)
        if isinstance(left, Var) and right_type is not None:
            self._expect(scope, left, right_type, place)
        elif isinstance(right, Var) and left_type is not None:
            self._expect(scope, right, left_type, place)
        elif None not in (left_type, right_type) and left_type != right_type:
            raise self._error(
                place.text, f"comparison {comparison} compares a {left_type} with a {right_type}"
            )

    # -- union-find over variables --------------------------------------------------------------

    def _find(self, key: _Key) -> _Key:
        root = key
        while root in self.parent:
            root = self.parent[root]
        while key != root:  # path compression
            self.parent[key], key = root, self.parent[key]
        return root

    def _assign(self, key: _Key, type_: str, place: _Place) -> None:
        root = self._find(key)
        typing = self.typed.get(root)
        if typing is None:
            self.typed[root] = _Typing(type_, place, key[1])
        elif typing.type != type_:
            raise self._error(
                place.text, f"{_describe(key[1], typing)} but a {type_} at {place}"
            )

    def _union(self, a: _Key, b: _Key, place: _Place) -> None:
        root_a, root_b = self._find(a), self._find(b)
        if root_a == root_b:
            return
        typing_a, typing_b = self.typed.get(root_a), self.typed.get(root_b)
        if typing_a is not None and typing_b is not None and typing_a.type != typing_b.type:
            raise self._error(
                place.text,
                f"{_describe(a[1], typing_a)} but {_describe(b[1], typing_b)}; "
                f"they meet at {place}",
            )
        self.parent[root_b] = root_a
        if typing_a is None and typing_b is not None:
            self.typed[root_a] = typing_b
        self.typed.pop(root_b, None)

    def _error(self, location: str, message: str) -> HerbrandTypeError:
        kind = "fact" if self.rule.is_fact else "rule"
        return HerbrandTypeError(f"{location}: {message}, in {kind}: {self.rule}")


def _describe(var: Var, typing: _Typing) -> str:
    """``variable x is a number at <place>``, naming the variable that fixed the type."""
    alias = "" if typing.var == var else f" (equal to {typing.var})"
    return f"variable {var}{alias} is a {typing.type} at {typing.place}"
