"""Sideways information passing: which arguments of each body atom are bound, left to right.

``adorn_body(rule, adornment)`` gives each positive body atom of ``rule`` its adornment (one
``b`` or ``f`` per argument) when the rule's head is called with ``adornment``::

    sg(x, y) :- parent(x, a), sg(a, b), parent(y, b).     called as sg_bf
    parent: bf   (x is bound by the head)
    sg:     bf   (a is bound by parent(x, a); b is not yet)
    parent: fb   (b is bound by sg(a, b))

A variable is bound by a bound argument of the head, by a positive atom to its left, or by
``x = expr`` (either side) once the variables of ``expr`` are bound; a constant argument is
bound; wildcards, aggregates and negated atoms bind nothing.

Termination (as Soufflé's BindingStore): a value computed by arithmetic from variables bound
*only* by the head is not a binding. ``gen(x) :- gen(x + 1), valid(x)`` called as ``gen_b``
would otherwise ask for ``gen(x + 1)`` for every ``x`` asked for, without end. Values
computed from variables that positive atoms bind are finite (the model is), so those bind;
``y = x`` (a copy) binds ``y`` as ``x`` is bound. Cost: linear in the body times the number of
equalities.
"""

from __future__ import annotations

from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    BodyElement,
    Comparison,
    Const,
    Literal,
    Rule,
    Term,
    Var,
    term_aggregates,
    term_variables,
)

BOUND = "b"
FREE = "f"


def adorn_body(rule: Rule, adornment: str) -> tuple[str | None, ...]:
    """For each element of ``rule.body``: the adornment of a positive atom, None for anything
    else, when the head is called with ``adornment`` (its bound head arguments are the plain
    variables at ``b`` positions)."""
    bindings = _Bindings(rule.body)
    bindings.by_head.update(
        term for term, mark in zip(rule.head.terms, adornment, strict=True)
        if mark == BOUND and isinstance(term, Var)
    )
    bindings.close()
    adorned: list[str | None] = []
    for element in rule.body:
        if isinstance(element, Literal) and not element.negated:
            adorned.append("".join(BOUND if bindings.binds(t) else FREE
                                   for t in element.atom.terms))
            bindings.by_body.update(t for t in element.atom.terms if isinstance(t, Var))
            bindings.close()
        else:
            adorned.append(None)
    return tuple(adorned)


class _Bindings:
    """The variables bound so far, split by where the binding came from (see the module doc)."""

    def __init__(self, body: tuple[BodyElement, ...]):
        self.by_head: set[Var] = set()
        self.by_body: set[Var] = set()
        self.equalities = [
            (side, other)
            for e in body if isinstance(e, Comparison) and e.op == "="
            for side, other in ((e.left, e.right), (e.right, e.left))
            if isinstance(side, Var) and not any(True for _ in term_aggregates(other))
        ]

    def binds(self, term: Term) -> bool:
        """Whether ``term`` as an atom argument has a value that may be passed on."""
        if isinstance(term, Var):
            return term in self.by_head or term in self.by_body
        if isinstance(term, Const):
            return True
        if isinstance(term, Arith) and not _has_aggregate_or_wildcard(term):
            return set(term_variables(term)) <= self.by_body
        return False

    def close(self) -> None:
        """Bind what the equalities bind, to a fixpoint."""
        changed = True
        while changed:
            changed = False
            for var, expression in self.equalities:
                if var in self.by_body:
                    continue
                if isinstance(expression, Var):
                    target = (self.by_body if expression in self.by_body
                              else self.by_head if expression in self.by_head else None)
                elif self.binds(expression):
                    target = self.by_body
                else:
                    target = None
                if target is not None and var not in target:
                    target.add(var)
                    changed = True


def _has_aggregate_or_wildcard(term: Term) -> bool:
    if isinstance(term, Aggregate):
        return True
    if isinstance(term, Arith):
        return any(_has_aggregate_or_wildcard(arg) for arg in term.args)
    return not isinstance(term, (Var, Const))
