"""The rule rewrites of the counting engine: exact differences of derivation bags.

Counting needs every derivation exactly once, so the variants follow the product rule of
differences, ``Δ(a ⋈ b) = Δa ⋈ b_old + a_new ⋈ Δb``: the body elements before the changed one
read the new version of their relation, those after it the old version.

- ``iteration_variants`` (bootstrap, along the iterations of one stratum): the variant for the
  i-th recursive atom reads the tuples new in the last iteration (``@delta:p``) there, the
  previous iteration's relation (``@prev:p``) in the recursive atoms before it and the current
  relation after it. Their derivations are exactly the instances over the current relations
  that are not instances over the previous ones.
- ``epoch_variants`` (update, between the old and the new state in one iteration): a
  ``SignedRule`` per changed body literal and direction. A positive literal over r reads
  ``@plus:r`` (weight +1) or ``@minus:r`` (weight -1); a negated literal ``!r(t)`` flips off
  for added rows (``@plus:r(t)``, weight -1) and on for removed ones (``@minus:r(t)``, +1).
  Literals before it read the new relations (plain names), literals after it the old ones
  (``@old:r``). A rule whose aggregate reads a changed relation, or whose changed negated
  literal has a wildcard or an expression, is returned in ``whole``: its difference is its
  derivations over the new state minus those over the old state.
- ``twofold_variants`` (update, iterations k >= 2): the change of D_k = C_k - C_{k-1} between
  the states, by the product rule applied twice (between the states at position p, along the
  iterations at a recursive position q). Factor i reads the new state if i < p and the old one
  if i > p, iteration k - 2 if i < q and k - 1 if i > q; at p it reads the change between the
  states (``@plus:`` / ``@minus:``, or their k - 2 versions), at q the tuples first derived in
  iteration k - 1 (new state if q < p, old if q > p), and when p = q the difference of those
  (``@gained:`` / ``@dropped:``). Each variant is small: it joins a change with a delta.

All rewrites are pure, O(body length) per variant.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property
from itertools import product

from herbrand.evaluators.fixpoint import delta_name
from herbrand.evaluators.incremental.instance_rules import RuleReads
from herbrand.evaluators.incremental.programs import aggregated_relations, renamed, with_body
from herbrand.framework.syntax import Const, Literal, Rule, Var

PREV, OLD, PLUS, MINUS = "@prev:", "@old:", "@plus:", "@minus:"
NEW_PREV, OLD_PREV = "@newprev:", "@oldprev:"  # X'_{k-2}, X_{k-2}
PLUS_PREV, MINUS_PREV = "@plusprev:", "@minusprev:"  # X'_{k-2} - X_{k-2} and the reverse
NEW_DELTA, OLD_DELTA = "@newdelta:", "@olddelta:"  # Δ'_{k-1}, Δ_{k-1}
GAINED, DROPPED = "@gained:", "@dropped:"  # Δ'_{k-1} - Δ_{k-1} and the reverse


@dataclass(frozen=True)
class SignedRule:
    """A rule whose derivations count with ``sign`` (+1 or -1); ``delta`` is the relation its
    first literal reads (the variant derives nothing while it is empty)."""

    rule: Rule
    sign: int
    delta: str

    @cached_property
    def reads(self) -> RuleReads:
        """What tells that an application derives nothing (``instance_rules.RuleReads``),
        found on first use and kept with the variant."""
        return RuleReads.of(self.rule)


def iteration_variants(rule: Rule, recursive: Collection[str]) -> tuple[Rule, ...]:
    """One variant per positive literal over ``recursive`` (see the module doc)."""
    positions = [i for i, e in enumerate(rule.body)
                 if isinstance(e, Literal) and not e.negated and e.atom.relation in recursive]
    variants = []
    for number, position in enumerate(positions):
        body = list(rule.body)
        for earlier in positions[:number]:
            body[earlier] = renamed(body[earlier], PREV + body[earlier].atom.relation)
        delta = renamed(body.pop(position), delta_name(rule.body[position].atom.relation))
        variants.append(with_body(rule, (delta, *body)))
    return tuple(variants)


def _plain_terms(literal: Literal) -> bool:
    return all(isinstance(t, Var | Const) for t in literal.atom.terms)


def epoch_variants(rule: Rule, changed: Collection[str]) -> tuple[tuple[SignedRule, ...], bool]:
    """``(signed variants, whole)`` of ``rule`` for the relations ``changed`` between the old
    and the new state (see the module doc); ``whole`` is True when the rule must be differenced
    whole, and then there are no variants."""
    factors = [i for i, e in enumerate(rule.body)
               if isinstance(e, Literal) and e.atom.relation in changed]
    if aggregated_relations(rule) & set(changed) or any(
            rule.body[i].negated and not _plain_terms(rule.body[i]) for i in factors):
        return (), True
    variants = []
    for position in factors:
        body = [renamed(e, OLD + e.atom.relation) if i in factors and i > position else e
                for i, e in enumerate(rule.body)]
        literal = body.pop(position)
        name = literal.atom.relation
        signs = ((PLUS, -1), (MINUS, 1)) if literal.negated else ((PLUS, 1), (MINUS, -1))
        for prefix, sign in signs:
            delta = renamed(literal, prefix + name, negated=False)
            variants.append(SignedRule(with_body(rule, (delta, *body)), sign, prefix + name))
    return tuple(variants), False


def _version(relation: str, recursive: bool, new: bool, lag: int) -> str:
    """The name of ``relation`` in the new or old state at iteration k - lag."""
    if not recursive:
        return relation if new else OLD + relation
    if new:
        return relation if lag == 1 else NEW_PREV + relation
    return OLD + relation if lag == 1 else OLD_PREV + relation


def _state_change(literal: Literal, recursive: bool, lag: int) -> list[tuple[Literal, int]]:
    name = literal.atom.relation
    if literal.negated:
        return [(renamed(literal, PLUS + name, negated=False), -1),
                (renamed(literal, MINUS + name, negated=False), 1)]
    plus, minus = (PLUS_PREV, MINUS_PREV) if recursive and lag == 2 else (PLUS, MINUS)
    return [(renamed(literal, plus + name), 1), (renamed(literal, minus + name), -1)]


def twofold_variants(rule: Rule, lower: Collection[str],
                     recursive: Collection[str]) -> tuple[SignedRule, ...]:
    """The signed variants of ``rule`` whose derivations sum to the change of D_k between the
    old and the new state for k >= 2 (see the module doc), for a rule that ``epoch_variants``
    does not difference whole. ``lower``: the changed lower relations; ``recursive``: the
    stratum's relations. The change at p comes first in each body."""
    changed = set(lower) | set(recursive)
    factors = [i for i, e in enumerate(rule.body)
               if isinstance(e, Literal) and e.atom.relation in changed]
    variants = []
    for p in factors:
        for q in factors:
            if rule.body[q].atom.relation not in recursive:
                continue
            choices = []
            for i in factors:
                literal = rule.body[i]
                name, is_recursive = literal.atom.relation, literal.atom.relation in recursive
                if i == q == p:
                    choices.append([(renamed(literal, GAINED + name), 1),
                                    (renamed(literal, DROPPED + name), -1)])
                elif i == q:
                    delta = NEW_DELTA if q < p else OLD_DELTA
                    choices.append([(renamed(literal, delta + name), 1)])
                elif i == p:
                    choices.append(_state_change(literal, is_recursive, 2 if i < q else 1))
                else:
                    version = _version(name, is_recursive, i < p, 2 if i < q else 1)
                    choices.append([(renamed(literal, version), 1)])
            for combination in product(*choices):
                body, sign = list(rule.body), 1
                for i, (literal, factor_sign) in zip(factors, combination, strict=True):
                    body[i], sign = literal, sign * factor_sign
                first = body.pop(p)
                variants.append(SignedRule(with_body(rule, (first, *body)), sign,
                                           first.atom.relation))
    return tuple(variants)
