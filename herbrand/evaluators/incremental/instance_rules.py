"""The rules the backward/forward deletion step (``backward_forward``) evaluates, rewritten
from a stratum's rules: *instance rules* (a rule head-restricted to the frontier, ``@focus:``,
deriving one row per rule instance: its head, then its stratum atoms; atoms the rest of the body
binds are left out of the join and probed), *saturation rules* (the delta variants reading the
proved facts, ``@proved:``), *unfolded rules* (a rule whose stratum atoms are read as the
lower relations their copy rules copy, ``unfolding``: instance rules without stratum atoms),
and whether a rule's batches can drive it at all (``driven``, ``RuleReads``).
All are O(body length) per rule, made once per stratum (``StepRules``): an engine keeps them
across updates, so that its rule evaluator finds their plans by identity.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

import numpy as np

from herbrand.evaluators.fixpoint import delta_name, delta_variants
from herbrand.evaluators.incremental.counting_selections import holding, integer_constants
from herbrand.evaluators.incremental.head_reach import HeadReach
from herbrand.evaluators.incremental.programs import renamed, with_body
from herbrand.evaluators.incremental.selections import Selection, selecting
from herbrand.framework.analysis import Stratum, rule_literals
from herbrand.framework.storage import Relation
from herbrand.framework.syntax import Atom, Const, Literal, Rule, Var, Wildcard

INSTANCE, PROVED = "@instance:", "@proved:"
# the frontier, named as a delta so that join ordering starts every instance rule from it
FOCUS = delta_name("focus:")
# the focus's last column: each frontier fact's position in C, carried to its instances
AT = Var("@at")


@dataclass(frozen=True)
class InstanceRule:
    """``rule`` head-restricted to ``@focus:<head>`` (the frontier's facts, each followed by
    its position in C: ``AT``), deriving one row per instance: the head's terms, the head's
    position in C, then the terms of each body atom over a relation of the stratum
    (``atoms``: relation, arity; wildcards become fresh variables). ``members``: the positions in
    ``atoms`` of the atoms without constants left out of ``rule``'s body because the focus and
    the literals joined (over lower relations, or with a constant) bind all their variables:
    their rows are kept when the old relation holds them (a hash probe each, not a join).
    ``probed``: the literals left out of the join and probed right after it instead (each
    row kept when the relation holds the literal's row): the literals over lower relations
    whose terms are all variables of the head (as ``m(s, p, o) :- t(s, p, o)``, probed in
    the new lower relation) and the atoms over the stratum with a constant whose variables
    the rest binds (as ``m(z, 4, x)`` in ``m(z, 4, y) :- m(x, 0, y), m(z, 4, x)``, probed
    in the old relation): relation, and the columns of the instance row holding its
    terms."""

    rule: Rule
    head: str
    head_arity: int
    atoms: tuple[tuple[str, int], ...]
    members: tuple[int, ...] = ()
    probed: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def atom_columns(self, rows: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """Each stratum atom of each row: (relation, its columns of ``rows``)."""
        out, start = [], self.head_arity + 1
        for relation, arity in self.atoms:
            out.append((relation, rows[start:start + arity]))
            start += arity
        return out


def instance_rule(rule: Rule, number: int, relations: Sequence[str],
                  lower_probed: bool = False) -> InstanceRule:
    """The InstanceRule of the stratum's ``number``-th rule. ``lower_probed``: the literals
    over lower relations whose variables the rest binds are probed too (an unfolded rule's,
    ``unfolding``), their terms appended to the instance row. O(body length squared)."""
    body, atoms, members, probed, terms = [], [], [], [], [*rule.head.terms, AT]
    left_out = _left_out(rule, relations, lower_probed)
    bound = _bound_by_joined(rule, relations, left_out)
    columns = {}
    for column, term in enumerate(rule.head.terms):
        columns.setdefault(term, column)
    lower = []
    for position, element in enumerate(rule.body):
        if (isinstance(element, Literal) and not element.negated
                and element.atom.relation not in relations
                and all(isinstance(t, Var) and t in columns for t in element.atom.terms)):
            probed.append((element.atom.relation,
                           tuple(columns[t] for t in element.atom.terms)))
            continue
        if position in left_out and element.atom.relation not in relations:
            lower.append(element.atom)
            continue
        if (isinstance(element, Literal) and not element.negated
                and element.atom.relation in relations):
            named = tuple(Var(f"@w{len(terms) + i}") if isinstance(term, Wildcard) else term
                          for i, term in enumerate(element.atom.terms))
            element = Literal(Atom(element.atom.relation, named, element.atom.location))
            atoms.append((element.atom.relation, len(named)))
            terms.extend(named)
            if position in left_out:
                probed.append((element.atom.relation,
                               tuple(range(len(terms) - len(named), len(terms)))))
                continue
            if bound is not None and all(isinstance(t, Var) and t in bound for t in named):
                members.append(len(atoms) - 1)
                continue
        body.append(element)
    for atom in lower:
        probed.append((atom.relation, tuple(range(len(terms), len(terms) + atom.arity))))
        terms.extend(atom.terms)
    focus = Literal(Atom(FOCUS + rule.head.relation, (*rule.head.terms, AT)))
    head = Atom(f"{INSTANCE}{number}", tuple(terms))
    return InstanceRule(Rule(head, (focus, *body), rule.location), rule.head.relation,
                        rule.head.arity, tuple(atoms), tuple(members), tuple(probed))


def _left_out(rule: Rule, relations: Sequence[str], lower: bool) -> set[int]:
    """The body positions of the literals probed after the join instead of joined: over
    ``relations`` with a constant and no wildcard, or (``lower``) over a lower relation with
    variables only, whose variables the head and the other literals that stay joined bind
    (each chosen in body order, the ones chosen before it no longer joined). A chosen
    literal binds no variable the others do not, so the variables the joined literals bind
    stay the same. O(body length squared) per literal."""
    chosen: set[int] = set()
    for position, element in enumerate(rule.body):
        if not isinstance(element, Literal) or element.negated:
            continue
        terms = element.atom.terms
        if (element.atom.relation in relations and any(isinstance(t, Const) for t in terms)
                and not any(isinstance(t, Wildcard) for t in terms)
                or lower and element.atom.relation not in relations and terms
                and all(isinstance(t, Var) for t in terms)):
            bound = _bound_by_joined(rule, relations, chosen | {position})
            if bound is not None and all(t in bound for t in terms if isinstance(t, Var)):
                chosen.add(position)
    return chosen


def _bound_by_joined(rule: Rule, relations: Sequence[str],
                     left_out: set[int] = frozenset()) -> set[Var] | None:
    """The variables that the head (the focus) and the literals that stay joined bind: the
    positive literals over lower relations and those over ``relations`` with a constant
    (selections, usually small) but for the body positions ``left_out``, when they are
    connected to the focus through shared variables (so a join of the focus and them is no
    product); else None. O(body length squared)."""
    bound = {t for t in rule.head.terms if isinstance(t, Var)}
    lower = [{t for t in e.atom.terms if isinstance(t, Var)}
             for position, e in enumerate(rule.body)
             if isinstance(e, Literal) and not e.negated and position not in left_out
             and (e.atom.relation not in relations
                  or any(isinstance(t, Const) for t in e.atom.terms))]
    lower = [variables for variables in lower if variables]
    while lower:
        joined = [variables for variables in lower if variables & bound]
        if not joined:
            return None
        for variables in joined:
            bound |= variables
        lower = [variables for variables in lower if not variables & bound]
    return bound


def _distinct_variables(rule: Rule) -> bool:
    """Whether the head of ``rule`` (its focus, the first literal, but for ``AT``) holds
    distinct variables only."""
    terms = rule.body[0].atom.terms[:-1]
    return all(isinstance(t, Var) for t in terms) and len(set(terms)) == len(terms)


def reading_proved(rule: Rule, relations: Sequence[str]) -> Rule:
    """``rule`` with its positive literals over ``relations`` reading ``@proved:`` instead."""
    return with_body(rule, tuple(
        renamed(e, PROVED + e.atom.relation)
        if isinstance(e, Literal) and not e.negated and e.atom.relation in relations else e
        for e in rule.body))


def driven(rule: Rule, batches: Mapping[str, np.ndarray],
           seen: dict[tuple, bool] | None = None) -> bool:
    """Whether each literal of ``rule`` over a relation of ``batches`` (its delta or focus) has
    a row of its batch with the literal's integer constants: else the rule derives nothing,
    and skipping it saves a plan run (on RDFS, most rules read one predicate). O(batch rows)
    per literal with constants; ``seen`` keeps the answers by (relation, constants) for a
    caller that checks many rules over the same batches (each is then found once)."""
    return RuleReads.of(rule).may_derive(batches, {}, {} if seen is None else seen)


@dataclass(frozen=True)
class RuleReads:
    """The positive literals of a rule as (relation, integer constants), found once per rule:
    what tells, from its batches and the sizes of what it reads alone, that an application
    derives nothing (``may_derive``), so that the plan is not run (15-80 us each on RDFS)."""

    literals: tuple[tuple[str, tuple[tuple[int, int], ...]], ...]

    @classmethod
    def of(cls, rule: Rule) -> RuleReads:
        """O(body length)."""
        return cls(tuple((e.atom.relation, integer_constants(e.atom)) for e in rule.body
                         if isinstance(e, Literal) and not e.negated))

    def may_derive(self, batches: Mapping[str, np.ndarray], instance: Mapping[str, Relation],
                   seen: dict[tuple, bool]) -> bool:
        """False when a literal over a relation of ``batches`` has no row of its batch with its
        constants (``driven``; ``seen`` keeps the answers by (relation, constants) for the
        rules of one call), or reads a relation that ``instance`` holds empty (one it lacks
        is left to the evaluator's error). O(batch rows) per literal with constants not
        seen yet, O(1) per other literal."""
        for relation, constants in self.literals:
            rows = batches.get(relation)
            if rows is not None:
                if not rows.shape[1]:
                    return False
                if constants:
                    key = (relation, constants)
                    found = seen.get(key)
                    if found is None:
                        found = seen[key] = bool(holding(rows, constants).any())
                    if not found:
                        return False
                continue
            read = instance.get(relation)
            if read is not None and not len(read):
                return False
        return True


@dataclass(frozen=True)
class PairRule:
    """A saturation rule ``head :- @delta:source(..), lower(..)`` as data: the join columns
    (``source_key`` of the source atom equal to ``lower_key`` of the lower one) and, per head
    column, where its value comes from (``head_of``: source column c for c >= 0, lower column
    -c - 1 otherwise)."""

    head: str
    source: str
    lower: str
    source_key: tuple[int, ...]
    lower_key: tuple[int, ...]
    head_of: tuple[int, ...]

    @classmethod
    def of(cls, rule: Rule, relations: Sequence[str]) -> PairRule | None:
        """The PairRule of a delta variant ``rule`` of the stratum of ``relations``, or None
        when it has another shape: two positive literals, one over the delta of a stratum
        relation and one over a lower relation, only variables, none repeated within a
        literal, at least one shared (the join key), the head's variables all bound.
        O(body length)."""
        deltas = {delta_name(n): n for n in relations}
        if len(rule.body) != 2 or not rule.head.terms or not all(
                isinstance(e, Literal) and not e.negated and e.atom.terms
                and all(isinstance(t, Var) for t in e.atom.terms)
                and len(set(e.atom.terms)) == len(e.atom.terms) for e in rule.body):
            return None
        first, second = (e.atom for e in rule.body)
        if second.relation in deltas:
            first, second = second, first
        if (first.relation not in deltas or second.relation in deltas
                or second.relation in relations):
            return None
        source = {t: c for c, t in enumerate(first.terms)}
        lower = {t: c for c, t in enumerate(second.terms)}
        shared = [t for t in first.terms if t in lower]
        if not shared or not all(t in source or t in lower for t in rule.head.terms):
            return None
        return cls(rule.head.relation, deltas[first.relation], second.relation,
                   tuple(source[t] for t in shared), tuple(lower[t] for t in shared),
                   tuple(source[t] if t in source else -lower[t] - 1
                         for t in rule.head.terms))


@dataclass(frozen=True)
class TwoStepRule:
    """An unfolded rule ``h(x, z) :- l(x, y), m(y, z)`` (``unfolding``) as data: two lower
    atoms of two distinct variables each, one of the head's two (distinct) variables in
    each and one more they share. ``first`` and ``second``: each atom's relation, its
    column holding its head variable, the head column that variable is in, and its column
    holding the shared variable."""

    head: str
    first: tuple[str, int, int, int]
    second: tuple[str, int, int, int]

    @classmethod
    def of(cls, rule: Rule) -> TwoStepRule | None:
        """The TwoStepRule of an unfolded ``rule``, or None when it has another shape.
        O(body length)."""
        head = rule.head.terms
        if (len(head) != 2 or len(rule.body) != 2 or not all(isinstance(t, Var) for t in head)
                or head[0] == head[1]):
            return None
        atoms = []
        for element in rule.body:
            if (not isinstance(element, Literal) or element.negated
                    or element.atom.arity != 2
                    or not all(isinstance(t, Var) for t in element.atom.terms)):
                return None
            atoms.append(element.atom)
        shared = set(atoms[0].terms) & set(atoms[1].terms)
        if len(shared) != 1 or shared & set(head):
            return None
        parts = []
        for atom in atoms:
            (variable,) = set(atom.terms) & set(head) or (None,)
            if variable is None or len(set(atom.terms)) != 2:
                return None
            parts.append((atom.relation, atom.terms.index(variable), head.index(variable),
                          atom.terms.index(next(iter(shared)))))
        if parts[0][2] == parts[1][2]:
            return None
        return cls(rule.head.relation, parts[0], parts[1])


@dataclass(frozen=True)
class StepRules:
    """The rules of one stratum's deletion step: ``instances`` (its rules' InstanceRules),
    ``consequences`` (the delta variants of a recursive stratum's rules), ``saturation``
    (those reading the proved facts that the evaluator runs), ``pairs`` (the others: their
    ``pair_saturation.PairRule``s, run natively), ``copies`` (``_copies``), ``two_steps`` (the
    ``TwoStepRule``s of the rules ``unfolding`` gives, proved natively) and ``unfolded`` (the
    others:
    InstanceRules of the rules ``unfolding`` gives, their lower literals that the rest binds
    probed), their constant atoms over the relations
    ``selected`` accepts reading the ``selections`` (``selections.selecting``), the
    relations ``proved_read`` that the saturation reads as ``@proved:``, the RuleReads of
    every rule (``reads``) and the HeadReach of the saturation rules that have one
    (``heads``). Made once per stratum (``of``) and kept by the engine: a one-fact
    delete on RDFS over LUBM(1) rewrote them for about 0.4 ms of its 1.0."""

    relations: tuple[str, ...]
    instances: tuple[InstanceRule, ...]
    consequences: tuple[Rule, ...]
    saturation: tuple[Rule, ...]
    proved_read: frozenset[str]
    selections: tuple[Selection, ...]
    reads: Mapping[int, RuleReads]  # by the identity of each rule above
    copies: Mapping[str, tuple[str, tuple[int, ...]]]
    unfolded: tuple[InstanceRule, ...]
    pairs: tuple[PairRule, ...] = ()
    two_steps: tuple[TwoStepRule, ...] = ()
    heads: Mapping[int, HeadReach] = field(  # by the identity of the rule
        default_factory=lambda: MappingProxyType({}))

    @classmethod
    def of(cls, stratum: Stratum, selected: Callable[[str], bool]) -> StepRules:
        """The step rules of ``stratum``, reading the constant selections of the relations
        ``selected`` accepts (the same in every state the step reads). O(rules · body
        length squared)."""
        relations = tuple(stratum.relations)
        instances = tuple(instance_rule(rule, number, relations)
                          for number, rule in enumerate(stratum.rules))
        copies = _copies(instances, relations)
        unfoldings = [(r, TwoStepRule.of(r)) for r in (unfolding(rule, relations, copies)
                                                        for rule in stratum.rules)
                      if r is not None]
        two_steps = tuple(two_step for _, two_step in unfoldings if two_step is not None)
        unfolded = tuple(
            instance_rule(rule, len(instances) + number, relations, lower_probed=True)
            for number, rule in enumerate(r for r, two_step in unfoldings if two_step is None))
        consequences = (tuple(v for rule in stratum.rules
                              for v in delta_variants(rule, relations))
                        if stratum.recursive else ())
        shapes = [PairRule.of(v, relations) for v in consequences]
        pairs = tuple(pair for pair in shapes if pair is not None)
        saturation = tuple(reading_proved(v, relations)
                           for v, pair in zip(consequences, shapes, strict=True) if pair is None)
        proved_read = frozenset(literal.atom.relation for rule in saturation
                                for literal, _ in rule_literals(rule))
        rules, selections = selecting(
            [i.rule for i in (*instances, *unfolded)] + [*saturation, *consequences], selected)
        count, saturated = len(instances) + len(unfolded), len(saturation)
        instances, unfolded = (
            tuple(replace(i, rule=rule) for i, rule in zip(made, taken, strict=True))
            for made, taken in ((instances, rules[:len(instances)]),
                                (unfolded, rules[len(instances):count])))
        saturation = rules[count:count + saturated]
        consequences = rules[count + saturated:]
        return cls(relations, instances, consequences, saturation, proved_read, selections,
                   MappingProxyType({id(rule): RuleReads.of(rule) for rule in rules}),
                   MappingProxyType(copies), unfolded, pairs, two_steps,
                   MappingProxyType({id(rule): reach for rule in saturation
                                     if (reach := HeadReach.of(rule, relations))}))


def _copies(instances: Sequence[InstanceRule], relations: Sequence[str]
            ) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Per relation of the stratum with a rule copying a lower relation (its head distinct
    variables, its body one positive literal over a lower relation whose terms are the head's
    variables, as ``tc(x, y) :- e(x, y)``): that relation, and which column of a fact of the
    stratum each of its columns holds. A fact is then proved outright when the lower relation
    holds its copy. O(rules)."""
    return {i.head: copy for i in instances
            if (copy := copy_of(i, relations)) is not None}


def copy_of(instance: InstanceRule, relations: Sequence[str]
            ) -> tuple[str, tuple[int, ...]] | None:
    """The lower relation and columns (as ``_copies``) that ``instance`` copies when its rule
    is a copy rule, else None. O(head arity)."""
    if (not instance.atoms and len(instance.probed) == 1 and len(instance.rule.body) == 1
            and instance.probed[0][0] not in relations and _distinct_variables(instance.rule)):
        return instance.probed[0]
    return None


def unfolding(rule: Rule, relations: Sequence[str],
              copies: Mapping[str, tuple[str, tuple[int, ...]]]) -> Rule | None:
    """``rule`` with each positive literal over a relation of the stratum (``relations``)
    reading the lower relation it copies instead (``copies``; its terms in the copy's
    order), when it has such literals and each has a copy; else None. Its derivations are
    proofs of two steps from lower facts: ``tc(x, z) :- e(x, y), e(y, z)`` for
    ``tc(x, z) :- tc(x, y), e(y, z)``. O(body length)."""
    body, unfolded = [], False
    for element in rule.body:
        if (isinstance(element, Literal) and not element.negated
                and element.atom.relation in relations):
            copy = copies.get(element.atom.relation)
            if copy is None:
                return None
            lower, order = copy
            terms = element.atom.terms
            element = Literal(Atom(lower, tuple(terms[k] for k in order),
                                   element.atom.location))
            unfolded = True
        body.append(element)
    return with_body(rule, tuple(body)) if unfolded else None
