"""Static analysis of a Program: declarations, arities, types, safety, stratification.

(Interface fixed; implementation in progress.)
"""

from __future__ import annotations

from dataclasses import dataclass

from herbrand.framework.syntax import Program, Rule


@dataclass(frozen=True)
class Stratum:
    """One strongly connected component of the dependency graph, in evaluation order.

    ``relations``: the relations whose rules are evaluated here (the heads of ``rules``).
    ``rules``: the proper rules (non-empty body) with a head in ``relations``.
    ``recursive``: True when some rule's body uses (outside negation and aggregates, which must
    refer to lower strata) a relation of this stratum.
    """

    index: int
    relations: tuple[str, ...]
    rules: tuple[Rule, ...]
    recursive: bool


def analyse(program: Program) -> tuple[Stratum, ...]:
    """Check ``program`` and return its strata in evaluation order."""
    raise NotImplementedError
