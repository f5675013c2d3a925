"""Pivots of recursive strata: the column on which a stratum's fixpoint splits into independent
parts (generalized pivoting, Seib and Lausen, "Parallelizing Datalog programs by generalized
pivoting", PODS 1991).

A pivot gives each relation of a recursive stratum one argument position such that every
recursive rule passes one variable unchanged from each recursive body atom's pivot position to
its head's pivot position: as ``x`` in ``tc(x, z) :- tc(x, y), e(y, z)``. A derived tuple then
has the pivot value of every recursive tuple it was derived from, so the stratum's fixpoint is
the union, over the pivot values, of the fixpoints started from the seeds (the tuples of the
exit rules, which have no recursive atom) of that value, each reading the relations of lower
strata whole. Partitioning the seeds by the pivot value (hash partitioning is enough) lets
every partition run to its fixpoint alone, with no exchange between partitions: a distributed
backend can run each on a local engine.

``tc(x, z) :- tc(x, y), tc(y, z)`` (non-linear) and same-generation have no pivot; a stratum
without a recursive rule needs none (and gets None).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from herbrand.framework.analysis import Stratum
from herbrand.framework.syntax import Atom, Literal, Rule, Var


@dataclass(frozen=True)
class Pivot:
    """The pivot position of each relation of a stratum, as (relation, position) pairs in the
    stratum's relation order."""

    positions: tuple[tuple[str, int], ...]

    def position(self, relation: str) -> int:
        """The pivot position of ``relation`` (KeyError if it is not the stratum's)."""
        return dict(self.positions)[relation]

    def __str__(self) -> str:
        return ", ".join(f"{relation}={position}" for relation, position in self.positions)


def _recursive_atoms(rule: Rule, relations: frozenset[str]) -> tuple[Atom, ...]:
    """The positive body atoms of ``rule`` over ``relations`` (a stratum's own: they can be
    neither negated nor aggregated)."""
    return tuple(element.atom for element in rule.body
                 if isinstance(element, Literal) and not element.negated
                 and element.atom.relation in relations)


def _passes(rule: Rule, atoms: tuple[Atom, ...], positions: dict[str, int]) -> bool:
    """Whether ``rule`` carries one variable from every atom of ``atoms`` at its pivot
    position to its head's."""
    carried = rule.head.terms[positions[rule.head.relation]]
    return isinstance(carried, Var) and all(
        atom.terms[positions[atom.relation]] == carried for atom in atoms)


def find_pivot(stratum: Stratum) -> Pivot | None:
    """A pivot of ``stratum`` (the first in the order of positions, relation by relation), or
    None when it is not recursive or has none. Cost: O(product of the relations' arities x the
    size of the recursive rules): strata have a few relations of small arity."""
    if not stratum.recursive:
        return None
    relations = frozenset(stratum.relations)
    recursive = [(rule, atoms) for rule in stratum.rules
                 if (atoms := _recursive_atoms(rule, relations))]
    arities = {rule.head.relation: rule.head.arity for rule in stratum.rules}
    names = [name for name in stratum.relations if name in arities]
    for choice in product(*(range(arities[name]) for name in names)):
        positions = dict(zip(names, choice, strict=True))
        if all(_passes(rule, atoms, positions) for rule, atoms in recursive):
            return Pivot(tuple((name, positions[name]) for name in names))
    return None
