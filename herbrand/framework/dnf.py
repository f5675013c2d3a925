"""Body formulas in disjunctive normal form, as the parser expands ``;``, ``!(...)``, ``true``
and ``false``: a ``Dnf`` is a list of conjunctions (tuples of body elements); ``[]`` is false and
``[()]`` is true. Pure functions; ``conjoin`` and ``negate`` are exponential in the worst case,
as DNF is.

    >>> from herbrand.framework.syntax import Atom, Literal, Var
    >>> a, b = (Literal(Atom(r, (Var("x"),))) for r in "ab")
    >>> [" , ".join(map(str, c)) for c in negate([(a, b)])]
    ['!a(x)', '!b(x)']
"""

from __future__ import annotations

from dataclasses import replace

from herbrand.framework.syntax import BodyElement, Literal

Dnf = list[tuple[BodyElement, ...]]

_COMPLEMENT = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def conjoin(left: Dnf, right: Dnf) -> Dnf:
    """The DNF of ``left, right``: every conjunction of left with every one of right."""
    return [a + b for a in left for b in right]


def negate(dnf: Dnf) -> Dnf:
    """The DNF of ``!dnf`` by De Morgan: a conjunction of the complements' disjunctions."""
    result: Dnf = [()]
    for conjunction in dnf:
        result = conjoin(result, [(complement(element),) for element in conjunction])
    return result


def complement(element: BodyElement) -> BodyElement:
    """``!a`` for ``a``, ``a`` for ``!a``, and the opposite comparison for a comparison."""
    if isinstance(element, Literal):
        return replace(element, negated=not element.negated)
    return replace(element, op=_COMPLEMENT[element.op])
