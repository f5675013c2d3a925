"""The rules of one stratum rewritten so that every derivation reports where its body came from.

The elastic engine needs, for each rule instantiation, the first iteration of each body tuple
in the previous and in the current epoch. ``ProbeRule.of(rule)`` rewrites a rule so that the
relational evaluator returns that information as extra head columns:

- each positive atom ``r(t...)`` reads ``@U:r`` (the rows of ``r`` of either epoch, with the
  row's position in the engine's arrays as one extra column) and binds a fresh ``@pos<j>``;
- each negated atom ``!q(t...)`` reads ``@keep:q:<cols>``, the projection of ``q`` on its
  non-wildcard columns restricted to the instances present in both epochs (an instance absent
  in one epoch makes the derivation valid in that epoch), and reports those terms;
- the head ``h(u...)`` becomes ``@probe(u..., @pos0, ..., negated terms...)``.

Variants: ``full`` (every atom as above), ``seeded[e]`` (body element e reads a small seed
relation named with ``DELTA_PREFIX`` so that the join starts from it: ``@delta:seed:r`` for a
positive atom, ``@delta:nseed:q:<cols>`` for a negated one, which becomes positive there), and
``head_seeded`` (a first atom ``@delta:head:h(u..., @head)`` restricts the derivations to given
heads, given with their positions in the engine's arrays, and each derivation reports its
head's position as a last column: the provenance queries of the re-discovery term and of the
proof counts, which sum by that position without searching the heads). ``seed_constants``
and ``head_constants`` are the integer constants a seed's rows must hold to derive anything
(``counting_selections.integer_constants`` of the seeded atom, of the head). Pure; O(rule
size) per variant.

    >>> from herbrand.framework.parser import parse
    >>> rule = parse("p(x, z) :- p(x, y), e(y, z), !q(z, _).").rules[0]
    >>> print(ProbeRule.of(rule).seeded[0])
    @probe(x, z, @pos0, @pos1, z) :- @delta:seed:p(x, y, @pos0), @U:e(y, z, @pos1), !@keep:q:0(z).
"""

from __future__ import annotations

from dataclasses import dataclass

from herbrand.evaluators.incremental.counting_selections import Constants, integer_constants
from herbrand.framework.syntax import Atom, Literal, Rule, Var, Wildcard
from herbrand.translators.join_ordering import DELTA_PREFIX

PROBE = "@probe"


def universe_name(relation: str) -> str:
    """The relation of ``relation``'s rows of both epochs with their positions."""
    return "@U:" + relation


def seed_name(relation: str) -> str:
    return DELTA_PREFIX + "seed:" + relation


def head_seed_name(relation: str) -> str:
    return DELTA_PREFIX + "head:" + relation


@dataclass(frozen=True)
class NegatedSlot:
    """A negated atom ``!q(...)``: its relation and the columns that are not wildcards."""

    relation: str
    columns: tuple[int, ...]

    @property
    def suffix(self) -> str:
        return f"{self.relation}:{','.join(map(str, self.columns))}"

    @property
    def keep_name(self) -> str:
        return "@keep:" + self.suffix

    @property
    def seed_name(self) -> str:
        return DELTA_PREFIX + "nseed:" + self.suffix


@dataclass(frozen=True)
class ProbeRule:
    """One rule and its probe variants (see the module docstring).

    Derivation columns: ``head_arity`` head values, then one position per positive atom (in
    ``positives`` order), then the non-wildcard terms of each negated atom (``negatives``).
    Body elements are numbered positives first, then negatives. ``head_seeded``'s derivations
    have one more column, last: the position its seed gives the head. ``seed_constants[e]``:
    the (column, value) constants of element e's seed rows (none for a negated element).
    """

    rule: Rule
    head: str
    head_arity: int
    positives: tuple[str, ...]
    negatives: tuple[NegatedSlot, ...]
    full: Rule
    seeded: tuple[Rule, ...]
    head_seeded: Rule
    seed_constants: tuple[Constants, ...]
    head_constants: Constants

    @classmethod
    def of(cls, rule: Rule) -> ProbeRule:
        positives: list[str] = []
        constants: list[Constants] = []
        negatives: list[NegatedSlot] = []
        reported: list = []
        body: list = []  # (element index or None, rewritten element, seeded element)
        for element in rule.body:
            if isinstance(element, Literal) and not element.negated:
                atom = element.atom
                position = Var(f"@pos{len(positives)}")
                terms = atom.terms + (position,)
                body.append((len(positives), Literal(Atom(universe_name(atom.relation), terms)),
                             Literal(Atom(seed_name(atom.relation), terms))))
                positives.append(atom.relation)
                constants.append(integer_constants(atom))
            elif isinstance(element, Literal):
                atom = element.atom
                columns = tuple(i for i, t in enumerate(atom.terms) if not isinstance(t, Wildcard))
                slot = NegatedSlot(atom.relation, columns)
                terms = tuple(atom.terms[i] for i in columns)
                body.append((None, Literal(Atom(slot.keep_name, terms), negated=True),
                             Literal(Atom(slot.seed_name, terms))))
                negatives.append(slot)
                reported.extend(terms)
            else:
                body.append((None, element, element))
        head = Atom(PROBE, rule.head.terms
                    + tuple(Var(f"@pos{j}") for j in range(len(positives))) + tuple(reported))
        plain = tuple(rewritten for _, rewritten, _ in body)
        literal_slots = [i for i, element in enumerate(rule.body) if isinstance(element, Literal)]
        positive_slots = [i for i in literal_slots if not rule.body[i].negated]
        negative_slots = [i for i in literal_slots if rule.body[i].negated]
        seeded = tuple(
            Rule(head, (body[slot][2],) + plain[:slot] + plain[slot + 1:], rule.location)
            for slot in positive_slots + negative_slots
        )
        head_position = Var("@head")
        head_seed = Literal(Atom(head_seed_name(rule.head.relation),
                                 rule.head.terms + (head_position,)))
        return cls(
            rule=rule, head=rule.head.relation, head_arity=rule.head.arity,
            positives=tuple(positives), negatives=tuple(negatives),
            full=Rule(head, plain, rule.location), seeded=seeded,
            head_seeded=Rule(Atom(PROBE, head.terms + (head_position,)), (head_seed,) + plain,
                             rule.location),
            seed_constants=tuple(constants) + ((),) * len(negatives),
            head_constants=integer_constants(rule.head),
        )
