"""Fixpoint strategies over any RuleEvaluator: ``NaiveFixpoint`` and ``SemiNaiveFixpoint``.

Both run the strata of ``analyse(program)`` in order over a Database that starts from the caller's
facts plus the program's inline facts. Naive applies all of a stratum's rules to the whole
instance until nothing new appears. Semi-naive is a program rewrite plus a loop: each rule of a
recursive stratum becomes its ``delta_variants``, which read the tuples new in the previous
iteration from the relation ``delta_name(r)``; the rule evaluator sees those as ordinary
relations of the instance, so any RuleEvaluator works unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from herbrand.evaluators.arithmetic import evaluate_ground_term
from herbrand.evaluators.morsels import in_morsels
from herbrand.framework.analysis import Stratum, analyse
from herbrand.framework.contracts import (
    FixpointEvaluator,
    Progress,
    ProgressObserver,
    RuleEvaluator,
    StratumStats,
)
from herbrand.framework.errors import ArityError
from herbrand.framework.storage import Database, Relation, attribute_names
from herbrand.framework.syntax import Atom, Literal, Program, Rule

if TYPE_CHECKING:
    from herbrand.evaluators.row_sets import RowSet

DELTA_PREFIX = "@delta:"


def delta_name(relation: str) -> str:
    """The name of the relation holding ``relation``'s tuples new in the last iteration ('@'
    cannot occur in a user relation name)."""
    return DELTA_PREFIX + relation


def delta_variants(rule: Rule, recursive_relations: Collection[str]) -> tuple[Rule, ...]:
    """The semi-naive rewrite of one rule: one variant per positive body atom over a relation of
    ``recursive_relations``, in body order, where that atom reads the delta relation and the
    others the full relations. The delta atom moves to the front of the body, so that an
    evaluator joining in body order starts from the (small) delta. A rule with no such atom has
    no variants (after the first iteration it derives nothing new). Negated atoms and aggregate
    bodies are left alone (they refer to lower strata). Pure; O(k * body length) for k variants.

    >>> from herbrand.framework.parser import parse
    >>> rule = parse("path(x, z) :- path(x, y), edge(y, z), path(z, w).").rules[0]
    >>> for variant in delta_variants(rule, {"path"}):
    ...     print(variant)
    path(x, z) :- @delta:path(x, y), edge(y, z), path(z, w).
    path(x, z) :- @delta:path(z, w), path(x, y), edge(y, z).
    """
    variants = []
    for position in delta_positions(rule, recursive_relations):
        atom = rule.body[position].atom
        delta = Literal(Atom(delta_name(atom.relation), atom.terms, atom.location))
        body = (delta,) + rule.body[:position] + rule.body[position + 1:]
        variants.append(Rule(rule.head, body, rule.location))
    return tuple(variants)


def delta_positions(rule: Rule, recursive_relations: Collection[str]) -> tuple[int, ...]:
    """The body positions of ``rule``'s semi-naive variants, in ``delta_variants``' order: its
    positive atoms over ``recursive_relations``. O(body length)."""
    return tuple(position for position, element in enumerate(rule.body)
                 if isinstance(element, Literal) and not element.negated
                 and element.atom.relation in recursive_relations)


def inline_facts(program: Program, database: Database) -> dict[str, Relation]:
    """The program's inline facts, encoded with ``database.symbols``, by relation. A fact whose
    arithmetic fails (division by zero) is dropped, as any failed derivation. O(facts)."""
    rows: dict[str, list[tuple[int, ...]]] = {}
    for fact in program.facts:
        values = tuple(evaluate_ground_term(t, database.symbols) for t in fact.head.terms)
        if None not in values:
            rows.setdefault(fact.head.relation, []).append(values)
    return {name: Relation.from_rows(r, len(r[0])) for name, r in rows.items()}


def base_instance(program: Program, database: Database) -> Database:
    """The instance a fixpoint starts from: ``database`` plus the program's inline facts, with
    every declared relation present (empty when not given) and typed and named as declared.
    Raises ArityError for given rows of another arity than declared. O(facts)."""
    types = {**database.types, **{d.name: d.types for d in program.declarations}}
    relations = dict(database)
    for declaration in program.declarations:
        given = relations.get(declaration.name)
        if given is None:
            relations[declaration.name] = Relation.empty(declaration.arity)
        elif given.arity != declaration.arity:
            raise ArityError(
                f"relation {declaration.name}: given rows have arity {given.arity}, "
                f"declared arity {declaration.arity}"
            )
    for name, facts in inline_facts(program, database).items():
        relations[name] = relations[name].union(facts) if name in relations else facts
    return Database(relations, database.symbols, types,
                    {**database.attributes, **attribute_names(program)})


Step = Callable[[Sequence[Rule], Database, Mapping[str, "RowSet"]], dict[str, np.ndarray]]
"""How one iteration derives: ``step(rules, reads, known)`` -> for each head relation, an
(arity, m) batch holding every row that ``rules`` derive from ``reads`` and that is not in
``known[relation]`` (it may also hold repeats and known rows: the fixpoint inserts the batch
into ``known`` and keeps what was new)."""


def serial_step(rule_evaluator: RuleEvaluator) -> Step:
    """The step of the local backend: the rules run one after another in this thread."""

    def step(rules: Sequence[Rule], reads: Database,
             known: Mapping[str, RowSet]) -> dict[str, np.ndarray]:
        return rule_evaluator.derive(rules, reads)

    return step


@dataclass(frozen=True)
class Threads:
    """Threads a fixpoint may run an iteration's work on: ``workers`` of ``pool``, for
    iterations with at least ``min_rows`` delta rows (smaller ones cost more in threads than
    they save). An evaluator that runs whole strata itself (``runs_strata``) reads it."""

    pool: Executor
    workers: int
    min_rows: int


class _Run:
    """One ``materialize`` call's iterations: applies rules, counts tuples, reports progress."""

    def __init__(self, step: Step, strata: int, observer: ProgressObserver | None,
                 threads: Threads | None = None):
        self.step = step
        self.strata = strata
        self.observer = observer
        self.threads = threads
        self.total = 0
        self.iterations = 0
        self.known: dict[str, RowSet] = {}

    def begin(self, stratum: Stratum, instance: Database) -> None:
        """Start a stratum (its known rows are gathered by the first ``apply``)."""
        self.iterations = 0
        self.known = {}

    def apply(
        self, stratum: Stratum, rules: tuple[Rule, ...], instance: Database, reads: Database
    ) -> tuple[Database, dict[str, Relation]]:
        """One iteration: evaluate ``rules`` over ``reads``, add what is new to ``instance``.

        Returns the grown instance and the new tuples (the deltas) of the stratum's relations.
        Cost: the step's (the rule evaluator's), O(m) expected to insert its m rows into the
        known rows' hash table, and an O(n) copy to append the new rows to the relation.
        """
        if not self.known:  # the rows the stratum's relations already hold: O(n) expected
            from herbrand.evaluators.row_sets import RowSet  # the kernels, loaded only when used

            self.known = {name: RowSet(instance[name].columns) for name in stratum.relations}
        derived = self.step(rules, reads, self.known) if rules else {}
        deltas = {}
        for name in stratum.relations:
            rows = derived.get(name)
            new = self.known[name].insert(rows) if rows is not None else None
            deltas[name] = (Relation(new, unique=True) if new is not None
                            else Relation.empty(instance[name].arity))
        grown = instance.with_relations(
            {name: instance[name].extend(new) for name, new in deltas.items() if len(new)}
        )
        delta = sum(map(len, deltas.values()))
        self.iterations += 1
        self.total += delta
        if self.observer is not None:
            self.observer(Progress(stratum=stratum.index, strata=self.strata,
                                   iteration=self.iterations, delta=delta, total=self.total))
        return grown, deltas


class StratifiedFixpoint(FixpointEvaluator):
    """The shared frame: set up the instance, run each stratum, keep the stats.

    ``step`` (default: ``serial_step(rule_evaluator)`` over bounded morsels of each
    iteration's deltas, ``morsels.in_morsels``) is how each iteration's rules run; the parallel
    backend passes one that runs them on several threads, and ``threads`` for an evaluator that
    runs whole strata itself.
    """

    def __init__(self, rule_evaluator: RuleEvaluator, step: Step | None = None,
                 threads: Threads | None = None):
        super().__init__(rule_evaluator)
        self.step = step if step is not None else in_morsels(serial_step(rule_evaluator))
        self.threads = threads

    def materialize(
        self, program: Program, database: Database, observer: ProgressObserver | None = None
    ) -> Database:
        """A new Database with ``database``'s relations plus every declared relation of
        ``program`` at fixpoint, typed by the declarations, sharing ``database.symbols``.

        Raises the analysis errors of ``analyse(program)``, ArityError when a given relation's
        arity differs from its declaration, and the rule evaluator's errors.
        """
        strata = analyse(program)
        instance = base_instance(program, database)
        self.stats = []
        run = _Run(self.step, len(strata), observer, self.threads)
        for stratum in strata:
            start, before = time.perf_counter(), run.total
            run.begin(stratum, instance)
            instance = self.run_stratum(stratum, instance, run)
            self.stats.append(StratumStats(
                stratum=stratum.index, relations=stratum.relations, iterations=run.iterations,
                derived=run.total - before, seconds=time.perf_counter() - start,
            ))
        return instance

    def run_stratum(self, stratum: Stratum, instance: Database, run: _Run) -> Database:
        """``instance`` with ``stratum``'s relations at fixpoint, iterating through ``run``."""
        raise NotImplementedError


class NaiveFixpoint(StratifiedFixpoint):
    """Naive evaluation: every iteration applies all the stratum's rules to the whole instance,
    until an iteration derives nothing new. Cost per stratum: (iterations) x (one evaluation of
    all its rules over the full instance); the last iteration only confirms the fixpoint.
    """

    def run_stratum(self, stratum: Stratum, instance: Database, run: _Run) -> Database:
        while True:
            instance, deltas = run.apply(stratum, stratum.rules, instance, instance)
            if not any(map(len, deltas.values())):
                return instance


class SemiNaiveFixpoint(StratifiedFixpoint):
    """Semi-naive evaluation: a non-recursive stratum takes one pass; a recursive one evaluates
    its rules once over the full instance, then only the ``delta_variants`` of its rules, each
    reading the tuples new in the previous iteration, until no tuple is new. A derivation is
    found in the iteration after its last premise appears (once per premise new then), and not
    again in every later iteration as in naive evaluation. Cost per iteration: the rule
    evaluator's on the variants, whose delta atoms hold only the last iteration's new tuples.
    """

    def run_stratum(self, stratum: Stratum, instance: Database, run: _Run) -> Database:
        if self.rule_evaluator.tags.runs_strata:
            return self.rule_evaluator.run_stratum(stratum, instance, run)
        return seminaive_stratum(stratum, instance, run)


def seminaive_stratum(stratum: Stratum, instance: Database, run: _Run) -> Database:
    """``instance`` with ``stratum``'s relations at fixpoint by semi-naive iterations, each
    through ``run`` (its step: the rule evaluator's ``derive``, in morsels or on threads)."""
    instance, deltas = run.apply(stratum, stratum.rules, instance, instance)
    if not stratum.recursive:
        return instance
    recursive = set(stratum.relations)
    variants = tuple(v for rule in stratum.rules for v in delta_variants(rule, recursive))
    while any(map(len, deltas.values())):
        reads = instance.with_relations(
            {delta_name(name): delta for name, delta in deltas.items()}
        )
        instance, deltas = run.apply(stratum, variants, instance, reads)
    return instance
