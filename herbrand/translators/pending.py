"""``Pending``: a rule part-way through lowering, and what the lowering passes share.

``translate_rule`` starts from ``Pending.of(rule)``: the whole body pending over ``Unit``. Each
lowering pass moves body elements of every Pending into relational operators over its ``child``
and records in ``columns`` which child column holds which variable; ``head_projection`` finally
replaces a Pending whose body is empty by a Project of the head. Because a Pending has a meaning
of its own (below), the plan after every pass can be evaluated, and each pass can be checked to
preserve the result.

Column variables: a column whose value is fixed by something other than a fresh variable (a
constant, a repeated variable, an aggregate's result) is named ``#<column>``, a name no Datalog
text can contain, and the condition on it is added to the body (``#1 = 0``, ``y = #3``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import chain, count

from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    Atom,
    BodyElement,
    Const,
    Literal,
    Rule,
    Term,
    Var,
    Wildcard,
    element_variables,
    injected_variables,
    term_aggregates,
    term_variables,
)
from herbrand.translators.ir import ColumnRef, Expr, Node, Plan, TranslationError, Unit, transform


def column_variable(column: int) -> Var:
    """The variable naming ``column`` of a Pending's child."""
    return Var(f"#{column}")


def level_variables(body: tuple[BodyElement, ...]) -> set[Var]:
    """The variables of ``body`` outside its aggregates' bodies."""
    return set(chain.from_iterable(map(element_variables, body)))


def name_wildcards(body: tuple[BodyElement, ...]) -> tuple[BodyElement, ...]:
    """``body`` with the k-th wildcard of its positive atoms renamed to the variable ``_#k``, so
    that the distinct matches of an aggregate body tell its wildcards apart."""
    numbers = count()

    def name(term: Term) -> Term:
        return Var(f"_#{next(numbers)}") if isinstance(term, Wildcard) else term

    return tuple(
        Literal(Atom(e.atom.relation, tuple(map(name, e.atom.terms)), e.atom.location))
        if isinstance(e, Literal) and not e.negated else e
        for e in body
    )


def to_expression(term: Term, columns: Mapping[str, int]) -> Expr:
    """``term`` as an expression over columns, variable v read from column ``columns[v]``.

    Raises TranslationError for a wildcard, an aggregate or a variable not in ``columns``.
    """
    if isinstance(term, Var) and term.name in columns:
        return ColumnRef(columns[term.name])
    if isinstance(term, Arith):
        return Arith(term.op, tuple(to_expression(a, columns) for a in term.args))
    if isinstance(term, Const):
        return term
    raise TranslationError(f"{term} cannot be used as a value here")


@dataclass(frozen=True)
class Pending(Node):
    """The rows of ``head`` (terms over variables) for every way to extend a row of ``child``,
    whose column ``c`` holds the variable named ``v`` for each ``(v, c)`` in ``columns``, to a
    match of the ``body`` elements not yet lowered.

    An aggregate of the body (or head) correlates with its injected variables given the body
    and the variables of ``columns`` (``aggregate_correlation``), as in Soufflé.
    """

    child: Plan
    head: tuple[Term, ...]
    columns: tuple[tuple[str, int], ...]
    body: tuple[BodyElement, ...]
    child_fields = ("child",)

    @classmethod
    def of(cls, rule: Rule) -> Pending:
        """The whole of ``rule`` pending over Unit."""
        return cls(Unit(), rule.head.terms, (), rule.body)

    @property
    def arity(self) -> int:
        return len(self.head)

    @property
    def column_of(self) -> dict[str, int]:
        return dict(self.columns)

    @property
    def bound(self) -> frozenset[Var]:
        """The variables of ``columns``: bound on entry to the body."""
        return frozenset(Var(name) for name, _ in self.columns)

    def is_bound(self, term: Term) -> bool:
        """Whether the value of ``term`` is known from the child's columns."""
        columns = self.column_of
        return (not isinstance(term, Wildcard) and not any(term_aggregates(term))
                and all(v.name in columns for v in term_variables(term)))

    def expression(self, term: Term) -> Expr:
        """``term`` (bound) as an expression over the child's columns."""
        return to_expression(term, self.column_of)

    def lowered(self, element: BodyElement, child: Plan, bind: tuple[str, int] | None = None
                ) -> Pending:
        """This Pending over ``child`` without ``element``, binding ``bind`` = (variable name,
        column) if given."""
        body = list(self.body)
        body.remove(element)
        columns = self.columns + ((bind,) if bind else ())
        return Pending(child, self.head, columns, tuple(body))

    def unbound_variables(self) -> list[str]:
        """The names of the body's variables that no column holds, sorted."""
        return sorted(v.name for v in level_variables(self.body) if v.name not in self.column_of)

    def label(self) -> str:
        columns = ", ".join(f"{v}: {c}" for v, c in self.columns)
        head = ", ".join(map(str, self.head))
        return (f"Pending head=({head}) columns={{{columns}}} "
                f"body=[{', '.join(map(str, self.body))}]")


def lower_elements(plan: Plan, lower: Callable[[Pending, BodyElement], Pending | None]) -> Plan:
    """Rewrite every Pending of ``plan`` by lowering, again and again, the first body element
    for which ``lower(pending, element)`` returns a new Pending, until it returns None for all.

    O(elements²) calls of ``lower`` per Pending.
    """

    def rewrite(node: Plan) -> Plan:
        if not isinstance(node, Pending):
            return node
        while True:
            lowered = next(filter(None, (lower(node, e) for e in node.body)), None)
            if lowered is None:
                return node
            node = lowered

    return transform(plan, rewrite)


def aggregate_correlation(
    aggregate: Aggregate, body: tuple[BodyElement, ...], bound: Iterable[Var] = ()
) -> list[Var]:
    """The variables of ``aggregate`` shared with the enclosing scope, sorted by name: its
    injected variables (``syntax.injected_variables``) as an aggregate of ``body`` entered
    with ``bound``; its other variables are local to it."""
    return sorted(injected_variables(aggregate, body, bound), key=lambda v: v.name)
