"""``HeadReach``: what a saturation rule of the backward/forward step (``forward_saturation``)
can prove in a round, told before the evaluator runs it.

The saturation proves only checked facts: a derived head that is not in C, or is in P already,
changes nothing. So a round need not run a rule when no fact of C outside P holds the rule's
head constants and, in the head columns the delta literal binds, the values of one delta row
holding that literal's constants (``bf_kernels.unproved_head_held``). On RDFS over LUBM(1) the
saturation's small rounds (1-16 newly proved facts) run 5-9 rules at 20-50 us each, and about
half of them can prove nothing by this test; the test costs a kernel call (about 3 us) and a
scan of C's unproved positions, ending at the first that fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.fixpoint import delta_name
from herbrand.evaluators.incremental.bf_kernels import unproved_head_held
from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.counting_selections import integer_constants
from herbrand.framework.syntax import Literal, Rule, Var


def _frozen(values: Sequence[int]) -> np.ndarray:
    """``values`` as a read-only int64 array (a kernel argument kept in a frozen value)."""
    array = np.array(values, dtype=np.int64)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class HeadReach:
    """Of a saturation rule ``head :- @delta:source(..), ...``: the ``head`` relation, its
    integer constants (values ``head_value`` at columns ``head_at``), the ``source`` relation
    whose delta the rule reads, that literal's integer constants (``delta_value`` at
    ``delta_at``), and the head columns it binds (``head_bound``, read from its columns
    ``delta_bound``)."""

    head: str
    source: str
    head_at: np.ndarray
    head_value: np.ndarray
    delta_at: np.ndarray
    delta_value: np.ndarray
    head_bound: np.ndarray
    delta_bound: np.ndarray

    # above this many delta rows a round tests the head's constants alone (the test is
    # O(unproved facts x delta rows) when nothing fits)
    BOUND_ROWS = 64

    @classmethod
    def of(cls, rule: Rule, relations: Sequence[str]) -> HeadReach | None:
        """The HeadReach of a delta variant ``rule`` of the stratum of ``relations``, or None
        when it has no single positive delta literal, or its head neither holds an integer
        constant nor has a column the delta literal binds (nothing to test). O(body
        length)."""
        deltas = {delta_name(n): n for n in relations}
        literals = [e.atom for e in rule.body if isinstance(e, Literal) and not e.negated
                    and e.atom.relation in deltas]
        if len(literals) != 1:
            return None
        (delta,) = literals
        column = {}
        for c, term in enumerate(delta.terms):
            if isinstance(term, Var):
                column.setdefault(term, c)
        bound = [(c, column[t]) for c, t in enumerate(rule.head.terms) if t in column]
        head, read = integer_constants(rule.head), integer_constants(delta)
        if not head and not bound:
            return None
        return cls(rule.head.relation, deltas[delta.relation],
                   _frozen([c for c, _ in head]), _frozen([v for _, v in head]),
                   _frozen([c for c, _ in read]), _frozen([v for _, v in read]),
                   _frozen([h for h, _ in bound]), _frozen([d for _, d in bound]))

    def may_prove(self, facts: CheckedFacts, unproved: np.ndarray, delta: np.ndarray) -> bool:
        """False when no fact of ``facts`` (the head relation's C and P) at the positions
        ``unproved`` (a superset of those outside P) can be the head of an application of the
        rule from a row of ``delta`` (its source's newly proved rows), by the test of the
        module doc; the head columns bound are not compared above ``BOUND_ROWS`` delta rows.
        O(delta rows + unproved x delta rows kept), through one kernel call."""
        bound = delta.shape[1] <= self.BOUND_ROWS
        return unproved_head_held(
            facts.checked_rows(), unproved, facts.proved_mask(), self.head_at, self.head_value,
            delta, self.delta_at, self.delta_value,
            self.head_bound if bound else self.head_bound[:0],
            self.delta_bound if bound else self.delta_bound[:0])
