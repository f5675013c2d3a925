"""Lifted operators on Z-sets: a rule's incremental join, and streams over iterations.

A rule body is a product of factors, one per literal: the indicator of a positive atom's
relation, or of the absence of a negated atom's instance. The derivation Z-set of a rule is
therefore multilinear in its factors, and its change when factors change by deltas is exact:

    Π(a1 + Δ1, ..., an + Δn) - Π(a1, ..., an) = Σ over non-empty S ⊆ {1..n} of
        Π(Δj for j in S, aj for j not in S)

For n = 2 these are the three terms ΔA⋈B + A⋈ΔB + ΔA⋈ΔB of DBSP's incremental join, with A
and B the values before the change. The same operator serves both time dimensions: along
epochs (old values, and the changes an update brings) and along fixpoint iterations (the value
at the iteration before last, and the last iteration's new tuples), which is how the circuit
makes semi-naive evaluation and incremental maintenance one computation.

Each term is one rule evaluated by the relational evaluator: a delta factor reads a relation
named with ``DELTA_PREFIX`` (so joins start from it) whose rows carry their weight as an extra
column, bound to a fresh variable ``@w<j>`` that the head reports; the term's derivation weights
are the products of those columns (vectorised). A negated factor's delta holds the instances
(non-wildcard columns) whose absence changed: +1 when an instance disappeared, -1 when it
appeared. Cost per term: the evaluator's join from the (small) delta relations.

A stream over iterations is a list of Z-sets, one per iteration; a bootstrap integrates its
growing dX stream on lookup (``accumulated``), a trace keeps it integrated per row
(``counts.Counts``), and an update computes its changes differentiated along the iterations
itself (``circuit``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from types import MappingProxyType

import numpy as np

from herbrand.evaluators.incremental.counting_selections import Constants, GrowingSelections
from herbrand.evaluators.incremental.counting_semijoins import SEMIJOIN_PREFIX, Semijoins
from herbrand.evaluators.incremental.dbsp.zset import ZSet
from herbrand.evaluators.incremental.instance_rules import RuleReads
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Atom, Literal, Rule, Var, Wildcard
from herbrand.translators.join_ordering import DELTA_PREFIX

HEAD = "@dbsp"


def old_name(relation: str) -> str:
    """The relation holding ``relation``'s value before the change."""
    return "@old:" + relation


def delta_name(relation: str) -> str:
    """The relation holding ``relation``'s change, one weight column appended."""
    return DELTA_PREFIX + "z:" + relation


@dataclass(frozen=True)
class Factor:
    """One literal of a rule body: its relation, polarity and (for a negated one) the columns
    that are not wildcards."""

    relation: str
    negated: bool
    columns: tuple[int, ...]

    @property
    def delta(self) -> str:
        if not self.negated:
            return delta_name(self.relation)
        return delta_name(f"not:{self.relation}:{','.join(map(str, self.columns))}")


@dataclass(frozen=True)
class LiftedRule:
    """A rule compiled into the terms of its incremental join (see the module docstring)."""

    rule: Rule
    head: str
    head_arity: int
    factors: tuple[Factor, ...]
    plain: Rule  # every factor reads its old value
    terms: tuple[tuple[tuple[int, ...], Rule], ...]  # (factors read as deltas, rule)
    # factors read as deltas -> their delta names (derived from the above: not compared)
    deltas: Mapping[tuple[int, ...], frozenset[str]] = field(compare=False)

    @classmethod
    def of(cls, rule: Rule) -> LiftedRule:
        factors, slots = [], []
        for position, element in enumerate(rule.body):
            if isinstance(element, Literal):
                columns = tuple(i for i, t in enumerate(element.atom.terms)
                                if not isinstance(t, Wildcard))
                factors.append(Factor(element.atom.relation, element.negated, columns))
                slots.append(position)
        old_body = tuple(
            Literal(Atom(old_name(e.atom.relation), e.atom.terms), e.negated)
            if isinstance(e, Literal) else e for e in rule.body)
        terms = []
        for size in range(1, len(factors) + 1):
            for chosen in combinations(range(len(factors)), size):
                body = list(old_body)
                for j in chosen:
                    atom = rule.body[slots[j]].atom
                    kept = tuple(atom.terms[c] for c in factors[j].columns)
                    terms_j = (atom.terms if not factors[j].negated else kept) + (Var(f"@w{j}"),)
                    body[slots[j]] = Literal(Atom(factors[j].delta, terms_j))
                head = Atom(HEAD, rule.head.terms + tuple(Var(f"@w{j}") for j in chosen))
                terms.append((chosen, Rule(head, tuple(body), rule.location)))
        plain = Rule(Atom(HEAD, rule.head.terms), old_body, rule.location)
        deltas = MappingProxyType({chosen: frozenset(factors[j].delta for j in chosen)
                                   for chosen, _ in terms})
        return cls(rule, rule.head.relation, rule.head.arity, tuple(factors), plain,
                   tuple(terms), deltas)


def _product(factors: np.ndarray) -> np.ndarray:
    """The product of each column of a (k, m) block, row by row (faster than along axis 0)."""
    product = factors[0].copy()
    for row in factors[1:]:
        product *= row
    return product


def weighted_relation(delta: ZSet) -> Relation:
    """A Z-set as a relation whose last column is the weight."""
    return Relation(np.concatenate([delta.rows, delta.weights[None, :]]), unique=True)


def negation_delta(factor: Factor, old: Relation, new: Relation) -> ZSet:
    """The change of a negated factor's indicator: +1 for instances (its non-wildcard columns)
    that disappeared from the relation, -1 for those that appeared. O(n log n)."""
    columns = list(factor.columns)
    before, after = Relation(old.columns[columns]), Relation(new.columns[columns])
    return ZSet.change(before.difference(after).columns, after.difference(before).columns)


class LiftedEvaluation:
    """Evaluates lifted rules over old values and deltas with one RelationalEvaluator."""

    def __init__(self, evaluator: RelationalEvaluator, symbols: SymbolTable,
                 old: Mapping[str, Relation], deltas: Mapping[str, ZSet],
                 selections: GrowingSelections | None = None,
                 semijoins: Semijoins | None = None, reducible: frozenset[str] = frozenset(),
                 selected: Mapping[str, Callable[[Constants], Relation]] | None = None,
                 reads: dict[int, tuple] | None = None):
        """``old``: relation -> value before the change (also the relations aggregates read);
        ``deltas``: factor delta name -> its change (missing or empty: unchanged);
        ``selections``: the constant selections of the old values, kept by the caller across
        the evaluations of one run of the circuit (``counting_selections``), or None;
        ``semijoins``: reduces the ``reducible`` relations (the old values that change along
        the iterations) by each term's smallest literal (``counting_semijoins``), or None;
        the evaluator reads them and their reductions as transient (no index of them is built
        for a join from a much smaller side: the join comes in their order, which keeps a
        slice's derivations nearly sorted for ``ZSet.of``);
        ``selected``: old name -> its constant selections, for the old values whose
        selections the caller keeps (``GrowingSelections.applied``'s ``given``);
        ``reads``: the terms' ``RuleReads`` and ``copied_columns`` by rule identity, kept by
        the caller across evaluations (each rule's literals are then analysed once), or
        None."""
        self.evaluator = evaluator
        self.selections = selections
        self.semijoins, self.reducible = semijoins, reducible
        self.selected = selected
        relations = dict(old)
        relations.update({old_name(name): value for name, value in old.items()})
        weighted = {name: weighted_relation(d) for name, d in deltas.items() if len(d)}
        relations.update(weighted)
        self.instance = Database(relations, symbols)
        self.changed = frozenset(weighted)
        self._batches = {name: relation.columns for name, relation in weighted.items()}
        self._driving: dict[tuple, bool] = {}  # ``may_derive``'s answers over these deltas
        self._reads = {} if reads is None else reads

    def _analysed(self, rule: Rule) -> tuple[Rule, RuleReads, tuple[int, ...] | None]:
        """``rule``, its RuleReads and its ``copied_columns``, made once per rule object.
        O(1) after the first."""
        kept = self._reads.get(id(rule))
        if kept is None or kept[0] is not rule:
            kept = self._reads[id(rule)] = rule, RuleReads.of(rule), copied_columns(rule)
        return kept

    def _derivations(self, rule: Rule) -> np.ndarray | None:
        """The bag of head rows of ``rule`` over the instance (None: no derivation); a term
        that copies columns of a changed delta (``copied_columns``) takes them from its batch,
        with no plan nor join (the input relations' terms of TC's and RDFS's copy rules)."""
        copied = self._analysed(rule)[2]
        if copied is not None:
            batch = self._batches.get(rule.body[0].atom.relation)
            if batch is not None:
                return batch[list(copied)]
        rules, instance, transient = [rule], self.instance, self.reducible
        if self.semijoins is not None:
            rules, instance = self.semijoins.reduced(rules, instance, self.reducible)
            if instance is not self.instance:  # its reductions are read once too
                transient = transient | {e.atom.relation for r in rules for e in r.body
                                         if isinstance(e, Literal)
                                         and e.atom.relation.startswith(SEMIJOIN_PREFIX)}
        if self.selections is not None:
            rules, instance = self.selections.applied(rules, instance, self.selected)
        return self.evaluator.derivations(rules, instance, transient).get(HEAD)

    def full(self, lifted: LiftedRule) -> ZSet:
        """The rule's derivations over the old values (each with weight 1, summed)."""
        rows = self._derivations(lifted.plain)
        if rows is None:
            return ZSet.empty(lifted.head_arity)
        return ZSet.of(rows, np.ones(rows.shape[1], dtype=np.int64))

    def change(self, lifted: LiftedRule,
               terms: Sequence[tuple[tuple[int, ...], Rule]] | None = None) -> ZSet:
        """The change of the rule's derivation Z-set (the sum of the incremental join's
        terms; of ``terms`` alone when given: some of ``lifted.terms``, possibly reading other
        relations). Terms with an unchanged delta factor are skipped, and so are terms with a
        delta literal whose integer constants no row of its delta holds (``RuleReads``: on
        RDFS, where most rules read one predicate, most terms of a small change)."""
        found = self.bag(lifted, terms)
        return ZSet.empty(lifted.head_arity) if found is None else ZSet.of(*found)

    def bag(self, lifted: LiftedRule,
            terms: Sequence[tuple[tuple[int, ...], Rule]] | None = None, tags: int = 0
            ) -> tuple[np.ndarray, np.ndarray] | None:
        """``change`` before its consolidation: the derivations' head rows (with the first
        ``tags`` columns of terms whose heads carry that many more in front) and their
        weights, in the order derived; None when there is none. O(the terms' joins)."""
        width = lifted.head_arity + tags
        parts, weights = [], []
        for chosen, rule in lifted.terms if terms is None else terms:
            if (not lifted.deltas[chosen] <= self.changed
                    or not self._analysed(rule)[1].may_derive(self._batches, {},
                                                             self._driving)):
                continue
            batch = self._derivations(rule)
            if batch is None or not batch.shape[1]:
                continue
            parts.append(batch[:width])
            weights.append(_product(batch[width:]))
        if len(parts) <= 1:
            return (parts[0], weights[0]) if parts else None
        return np.concatenate(parts, axis=1), np.concatenate(weights)


def copied_columns(rule: Rule) -> tuple[int, ...] | None:
    """The columns of ``rule``'s one body literal that its head reads, in head order, when
    the body is one positive atom of distinct variables and the head only variables (its
    derivations are then those columns of the atom's rows, one per row); else None."""
    if len(rule.body) != 1 or not isinstance(rule.body[0], Literal) or rule.body[0].negated:
        return None
    terms = rule.body[0].atom.terms
    if (not all(isinstance(t, Var) for t in terms) or len(set(terms)) != len(terms)
            or not set(rule.head.terms) <= set(terms)):
        return None
    return tuple(terms.index(t) for t in rule.head.terms)


def accumulated(stream: Sequence[ZSet], at: ZSet, upto: int) -> np.ndarray:
    """The weights of the rows of ``at`` in the integral of ``stream`` at index ``upto``, by
    summing lookups in each element (no integral is built; ``ZSet.weights_at``).
    O(upto · m log(n / m) + m) on packed rows."""
    total = np.zeros(len(at), dtype=np.int64)
    for value in stream[:upto + 1]:
        total += value.weights_at(at)
    return total

