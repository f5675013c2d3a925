"""The rules of a program matched against its model: what proofs and why-nots are built from.

``Derivations`` answers, for a tuple given as encoded values:

- ``rules_of(relation)``: the proper rules deriving it, with their positions in the program;
- ``start(rule, row)``: the substitution that unifies the rule's head with the tuple (head
  variables bound to the tuple's values), or why it does not unify;
- ``body(rule)``: the rule's body prepared for matching (``matching.prepare``), with one
  equality ``@h<i> = term`` per head argument that is an expression (bound by ``start``);
- ``instance(rule, solution)``: the ground instance of the body under one substitution,
  values decoded (symbols as strings), with the premises it names and the aggregates' values;
- ``fact_of(relation, row)``: the inline fact of the program that states the tuple, if any.

Values are int64 as stored; ``decode`` turns them into what a user reads, by column type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from herbrand.evaluators.arithmetic import evaluate_ground_term
from herbrand.framework.syntax import (
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
    Var,
    Wildcard,
    element_aggregates,
)
from herbrand.framework.type_checking import variable_types
from herbrand.provenance.heights import HeightedModel
from herbrand.provenance.matching import Matcher, Matches, PreparedBody, name_wildcards, prepare
from herbrand.provenance.proofs import AggregateValue, Value

HEAD_PREFIX = "@h"  # the variable standing for the i-th head argument when it is an expression

Row = tuple[int, ...]


@dataclass(frozen=True)
class Instance:
    """A rule's body under one substitution: ``body`` ground (decoded), the ``premises``
    (relation, encoded row) of its positive atoms in body order, and its aggregates' values."""

    body: tuple[BodyElement, ...]
    premises: tuple[tuple[str, Row], ...]
    aggregates: tuple[AggregateValue, ...]


class Derivations:
    """``program``'s rules over ``model`` (see the module doc). Caches what it prepares."""

    def __init__(self, program: Program, model: HeightedModel):
        self.program = program
        self.model = model
        self.matcher = Matcher(model)
        self.symbols = model.database.symbols
        self._rules: dict[str, list[tuple[int, Rule]]] = {}
        self._facts: dict[tuple[str, Row], tuple[int, Rule]] = {}
        for index, rule in enumerate(program.rules):
            if not rule.is_fact:
                self._rules.setdefault(rule.head.relation, []).append((index, rule))
                continue
            values = tuple(evaluate_ground_term(t, self.symbols) for t in rule.head.terms)
            if None not in values:
                self._facts.setdefault((rule.head.relation, values), (index, rule))
        self._bodies: dict[Rule, PreparedBody] = {}
        self._types: dict[Rule, dict[Var, str]] = {}

    # -- rules -----------------------------------------------------------------------------------

    def rules_of(self, relation: str) -> list[tuple[int, Rule]]:
        return self._rules.get(relation, [])

    def fact_of(self, relation: str, row: Row) -> tuple[int, Rule] | None:
        return self._facts.get((relation, tuple(row)))

    def body(self, rule: Rule) -> PreparedBody:
        """The rule's body with wildcards named and expressions lifted, then the head
        equalities (their origins are ``len(rule.body)`` and on)."""
        if rule not in self._bodies:
            head = tuple(Comparison("=", Var(f"{HEAD_PREFIX}{i}"), term, rule.head.location)
                         for i, term in enumerate(rule.head.terms)
                         if not isinstance(term, (Var, Const)))
            self._bodies[rule] = prepare(name_wildcards(rule.body) + head)
        return self._bodies[rule]

    def start(self, rule: Rule, row: Row) -> Matches | None:
        """The substitution unifying ``rule``'s head with ``row``, or None when a constant or
        a repeated variable of the head disagrees with it."""
        bindings: dict[Var, int] = {}
        for i, (term, value) in enumerate(zip(rule.head.terms, row, strict=True)):
            if isinstance(term, Const):
                if self.matcher.encode(term) != value:
                    return None
            elif isinstance(term, Var):
                if bindings.setdefault(term, value) != value:
                    return None
            else:
                bindings[Var(f"{HEAD_PREFIX}{i}")] = value
        return Matches.one(bindings)

    # -- values ----------------------------------------------------------------------------------

    def decode(self, relation: str, row: Sequence[int]) -> tuple[Value, ...]:
        """``row`` of ``relation`` with symbol ids turned back into strings."""
        types = self.program.declaration_of[relation].types
        return tuple(self._decoded(int(v), t) for v, t in zip(row, types, strict=True))

    def _decoded(self, value: int, type_: str) -> Value:
        return self.symbols.symbol(value) if type_ == SYMBOL else value

    def variable_types(self, rule: Rule) -> dict[Var, str]:
        if rule not in self._types:
            self._types[rule] = variable_types(rule, self.program)
        return self._types[rule]

    def shown(self, rule: Rule, values: Mapping[Var, int]) -> dict[Var, Const]:
        """``values`` (encoded) as constants a user reads, by the variables' types."""
        types = self.variable_types(rule)
        return {var: Const(self._decoded(value, types.get(var, "number")))
                for var, value in values.items()}

    # -- instances -------------------------------------------------------------------------------

    def instance(self, rule: Rule, matches: Matches, choice: int) -> Instance:
        """The ground instance of ``rule``'s body under substitution ``choice`` of
        ``matches``."""
        solution = {var: int(matches.values[i, choice])
                    for i, var in enumerate(matches.variables)}
        encoded = {var: Const(value) for var, value in solution.items()}
        shown = self.shown(rule, solution)
        body, premises, aggregates = [], [], []
        for element in name_wildcards(rule.body):
            if isinstance(element, Literal):
                atom = element.atom
                types = self.program.declaration_of[atom.relation].types
                values = [None if isinstance(t, Wildcard)
                          else evaluate_ground_term(substitute(t, encoded), self.symbols)
                          for t in atom.terms]
                terms = tuple(Wildcard() if v is None else Const(self._decoded(v, types[i]))
                              for i, v in enumerate(values))
                body.append(Literal(Atom(atom.relation, terms, atom.location), element.negated))
                if not element.negated:
                    premises.append((atom.relation, tuple(values)))
                continue
            injected = self.body(rule).injected
            body.append(substitute(element, shown, injected))
            for aggregate in element_aggregates(element):
                value, _ = self.matcher.values(aggregate, matches.take([choice]), injected)
                aggregates.append(AggregateValue(substitute(aggregate, shown, injected),
                                                 int(value[0])))
        return Instance(tuple(body), tuple(premises), tuple(aggregates))


def substitute(item, values: Mapping[Var, Const],
               injected: Mapping[Aggregate, frozenset[Var]] | None = None):
    """``item`` (a term or body element) with the variables of ``values`` replaced by their
    constants. Inside an aggregate of ``injected`` only its injected variables are replaced
    (the others are local to it); without ``injected``, every variable. O(size of the item)."""
    if isinstance(item, Var):
        return values.get(item, item)
    if isinstance(item, Arith):
        return Arith(item.op, tuple(substitute(a, values, injected) for a in item.args))
    if isinstance(item, Aggregate):
        if injected is not None:
            values = {v: c for v, c in values.items() if v in injected.get(item, ())}
        target = None if item.target is None else substitute(item.target, values)
        return Aggregate(item.function, target, tuple(substitute(e, values) for e in item.body))
    if isinstance(item, Comparison):
        return Comparison(item.op, substitute(item.left, values, injected),
                          substitute(item.right, values, injected), item.location)
    if isinstance(item, Literal):
        atom = item.atom
        return Literal(Atom(atom.relation, tuple(substitute(t, values, injected)
                                                 for t in atom.terms), atom.location),
                       item.negated)
    return item  # Const, Wildcard
