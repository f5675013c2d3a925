"""A program prepared for incremental maintenance, and the rule rewrites the engines share.

``IncrementalProgram.prepare(program, database)`` splits the relations into inputs (no rule
derives them: the only ones an update may change) and derived ones, and gives every derived
relation that also has base facts (inline facts, or rows given in the database) a base rule
``p(x0, ..., xn) :- @base:p(x0, ..., xn).`` over a reserved relation holding those facts. After
that, a derived relation's rows are exactly what its rules derive, which is what
delete-rederive and derivation counting need (a base fact is one more derivation, never deleted
by an update).

The rewrites build variants of a rule whose body reads delta or previous-state relations under
reserved names (starting with '@'); the relational evaluator sees those as ordinary relations of
the instance. All rewrites are pure and O(body length) per variant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from herbrand.evaluators.fixpoint import inline_facts
from herbrand.framework.analysis import Stratum, analyse, rule_literals
from herbrand.framework.errors import ArityError
from herbrand.framework.storage import Database, Relation, attribute_names
from herbrand.framework.syntax import Atom, Literal, Program, Rule, Var

BASE_PREFIX = "@base:"


def base_name(relation: str) -> str:
    """The reserved relation holding the base facts of the derived relation ``relation``."""
    return BASE_PREFIX + relation


def base_rule(relation: str, arity: int) -> Rule:
    """``relation(x0, ..., xn) :- @base:relation(x0, ..., xn).``"""
    terms = tuple(Var(f"x{i}") for i in range(arity))
    return Rule(Atom(relation, terms), (Literal(Atom(base_name(relation), terms)),))


@dataclass(frozen=True)
class IncrementalProgram:
    """A program's strata (with base rules added) and its input and derived relations."""

    program: Program
    strata: tuple[Stratum, ...]
    inputs: frozenset[str]
    derived: frozenset[str]

    @classmethod
    def prepare(cls, program: Program, database: Database) -> tuple[IncrementalProgram, Database]:
        """The prepared program and its starting instance: every input relation (given rows
        plus inline facts; declared ones empty when not given), the ``@base:`` relation of each
        derived relation with base facts, and every derived relation empty.

        Raises the analysis errors of ``analyse(program)`` and ArityError for given rows whose
        arity differs from the declaration. O(program + facts · log).
        """
        strata = analyse(program)
        derived = frozenset(name for stratum in strata for name in stratum.relations)
        arities = {d.name: d.arity for d in program.declarations}
        given = dict(database)
        for name, facts in inline_facts(program, database).items():
            given[name] = given[name].union(facts) if name in given else facts
        relations: dict[str, Relation] = {}
        for name, arity in arities.items():
            rows = given.get(name, Relation.empty(arity))
            if rows.arity != arity:
                raise ArityError(f"relation {name}: given rows have arity {rows.arity}, "
                                 f"declared arity {arity}")
            if name in derived:
                relations[name] = Relation.empty(arity)
                if len(rows):
                    relations[base_name(name)] = rows
            else:
                relations[name] = rows
        relations.update({n: r for n, r in given.items() if n not in arities})
        strata = tuple(
            replace(stratum, rules=stratum.rules + tuple(
                base_rule(name, arities[name]) for name in stratum.relations
                if base_name(name) in relations))
            for stratum in strata
        )
        inputs = frozenset(relations) - derived - {n for n in relations if n.startswith("@")}
        types = {**database.types, **{d.name: d.types for d in program.declarations}}
        return (cls(program, strata, inputs, derived),
                Database(relations, database.symbols, types,
                         {**database.attributes, **attribute_names(program)}))


def aggregated_relations(rule: Rule) -> frozenset[str]:
    """The relations read inside the rule's aggregates."""
    return frozenset(lit.atom.relation for lit, inside in rule_literals(rule) if inside)


def renamed(literal: Literal, relation: str, negated: bool | None = None) -> Literal:
    """``literal`` reading ``relation`` instead (and negated as given, else as before)."""
    atom = Atom(relation, literal.atom.terms, literal.atom.location)
    return Literal(atom, literal.negated if negated is None else negated)


def with_body(rule: Rule, body: tuple) -> Rule:
    return Rule(rule.head, body, rule.location)


def change_variants(
    rule: Rule, positive: Mapping[str, str], negative: Mapping[str, str]
) -> tuple[Rule, ...]:
    """Variants of ``rule`` that find every instance using a changed fact of a lower relation.

    ``positive``: relation -> the delta relation whose rows a positive literal over it may
    match (the variant reads the delta in that literal's place, first in the body).
    ``negative``: relation -> the delta relation whose rows make a negated literal over it flip
    (the variant prepends a positive literal over the delta with the negated atom's terms and
    keeps the negated literal). When a relation read inside an aggregate has a delta of either
    kind, the variant is the whole rule (its aggregate is recomputed). The other body elements
    read whatever the instance holds under their names.
    """
    changed = positive.keys() | negative.keys()
    if aggregated_relations(rule) & changed:
        return (rule,)
    variants = []
    for position, element in enumerate(rule.body):
        if not isinstance(element, Literal):
            continue
        name = element.atom.relation
        if not element.negated and name in positive:
            rest = rule.body[:position] + rule.body[position + 1:]
            variants.append(with_body(rule, (renamed(element, positive[name]),) + rest))
        elif element.negated and name in negative:
            delta = renamed(element, negative[name], negated=False)
            variants.append(with_body(rule, (delta,) + rule.body))
    return tuple(variants)


def head_restricted(rule: Rule, relation: str) -> Rule:
    """``rule`` with ``relation(head terms)`` prepended: only derivations of heads in
    ``relation`` (the rederivation step of delete-rederive)."""
    return with_body(rule, (Literal(Atom(relation, rule.head.terms)),) + rule.body)


def with_empty_reads(rules: Sequence[Rule], instance: Database) -> Database:
    """``instance`` with an empty relation for each relation ``rules`` read that it lacks
    (the changes, deltas and checked sets an update would bring): an instance to prepare the
    rules' plans over (``RelationalEvaluator.prepare``), which orders an empty relation as it
    orders a small one. O(body length) per rule."""
    missing = {literal.atom.relation: literal.atom.arity for rule in rules
               for literal, _ in rule_literals(rule) if literal.atom.relation not in instance}
    return instance.with_relations({name: Relation.empty(arity)
                                    for name, arity in missing.items()}) if missing else instance
