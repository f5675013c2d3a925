"""The derivations of one stratum's probe variants over its universes, with the first
iteration of each body element in the previous epoch (``old``) and in this one (``new``).

``StratumDerivations`` runs a ``ProbeRule`` variant (``elastic_rules``) with a
RelationalEvaluator over the ``Universe``s of one Bootstrap or Update (``elastic_stratum``) and
reads, for every derivation, its body elements' iterations: a positive atom's from its
universe by the row position the variant reports, a negated atom's from its ``NegatedInput``
(an element of iteration 0 when its instance is absent from the negated relation in that epoch,
NEVER otherwise). ``seeded`` yields the derivations with a body element in a seed set, each
once, that the step's terms want, with their signs; a large seed is joined in two parts under a
limited budget (``_derivations``). The iterations are read and compared by the numba passes of
``elastic_kernels``, one pass per body element and one per batch.

A positive atom with integer constants over a universe, such as ``@U:m(x, 0, y, @pos0)``,
reads a selection of the universe (``counting_selections.GrowingSelections``: the rows holding
those values, taken once per run and extended by the rows the run appends), not a scan of the
whole universe filtered per join: RDFS's rules have a constant in almost every atom.

Cost: the evaluator's joins, plus O(elements x derivations) to read the iterations, in native
passes; nothing loops per tuple in Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.batch_joins import columns_at, empty_batch
from herbrand.evaluators.incremental.counting_selections import (
    Constants,
    GrowingSelections,
    holding,
)
from herbrand.evaluators.incremental.elastic_budget import SwitchBudget
from herbrand.evaluators.incremental.elastic_kept import Kept, KeptDerivations, KeptProofs
from herbrand.evaluators.incremental.elastic_kernels import (
    REDISCOVERY,
    fold,
    members,
    terms,
)
from herbrand.evaluators.incremental.elastic_rules import (
    NegatedSlot,
    ProbeRule,
    head_seed_name,
    seed_name,
    universe_name,
)
from herbrand.evaluators.incremental.elastic_state import NEVER
from herbrand.evaluators.incremental.elastic_universe import Universe
from herbrand.evaluators.incremental.row_index import ABSENT, RowIndex
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable


@dataclass(frozen=True)
class NegatedInput:
    """A negated atom's instances (its non-wildcard columns) in both epochs: ``keep`` holds
    those present in both, ``inserted`` / ``deleted`` those present only in the new / old."""

    keep: Relation
    inserted: np.ndarray
    deleted: np.ndarray

    @classmethod
    def of(cls, slot: NegatedSlot, old: Relation, new: Relation) -> NegatedInput:
        old_instances = Relation(old.columns[list(slot.columns)])
        if new is old:
            none = empty_batch(len(slot.columns))
            return cls(old_instances, none, none)
        new_instances = Relation(new.columns[list(slot.columns)])
        return cls(old_instances.intersection(new_instances),
                   new_instances.difference(old_instances).columns,
                   old_instances.difference(new_instances).columns)

    @property
    def changed(self) -> Relation:
        return Relation(np.concatenate([self.inserted, self.deleted], axis=1))

    def iterations(self, instances: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(old, new) iteration of each negated instance: 0 when absent, NEVER when present."""
        old = np.zeros(instances.shape[1], dtype=np.int64)
        new = np.zeros(instances.shape[1], dtype=np.int64)
        if self.inserted.shape[1]:
            new[RowIndex(self.inserted).find(instances) != ABSENT] = NEVER
        if self.deleted.shape[1]:
            old[RowIndex(self.deleted).find(instances) != ABSENT] = NEVER
        return old, new


@dataclass(frozen=True)
class Step:
    """One iteration h of a run: its seed set and its terms (``kind``: ``elastic_kernels``'s
    GROWTH for a Bootstrap, CHANGE for an Update)."""

    kind: int
    h: int


MORSEL_ROWS = 1024  # a large join's first part, in seed rows (``StratumDerivations._derivations``)


class StratumDerivations:
    """The derivations of one stratum's probe variants over one run's universes (see the
    module doc); the universes are the run's, read as they are at each call."""

    def __init__(self, universes: Mapping[str, Universe],
                 negated: Mapping[NegatedSlot, NegatedInput], evaluator: RelationalEvaluator,
                 symbols: SymbolTable, aggregate_inputs: Mapping[str, Relation],
                 budget: SwitchBudget, selections: GrowingSelections | None = None, *,
                 derived: frozenset[str]):
        """``budget``: checked after every join (it may raise to abandon the run);
        ``selections``: the constant selections of the universes, kept from the stratum's
        last run (None: none kept); ``derived``: the relations whose universes the run
        writes (the stratum's heads; the others' iterations are fixed for the run)."""
        self.budget = budget
        self.derived = derived
        self.universes = universes
        self.negated = negated
        self.evaluator = evaluator
        self.symbols = symbols
        self.aggregate_inputs = aggregate_inputs  # real relations that aggregates read
        # constant atoms over the universes read selections of them, taken once per run and
        # extended by the rows the run appends, instead of a scan of the universe per join
        self.selections = (GrowingSelections({universe_name(r) for r in universes})
                           if selections is None else selections)

    def _instance(self, seeds: Mapping[str, Relation]) -> Database:
        relations = dict(self.aggregate_inputs)
        relations.update({universe_name(r): u.relation() for r, u in self.universes.items()})
        relations.update({slot.keep_name: n.keep for slot, n in self.negated.items()})
        relations.update(seeds)
        return Database(relations, self.symbols)

    def derive(self, probe: ProbeRule, rule, seeds: Mapping[str, Relation]) -> np.ndarray:
        """The head rows of the derivations of one variant of ``probe``."""
        batch = self._derivations(rule, seeds)
        return (np.zeros((probe.head_arity, 0), dtype=np.int64) if batch is None
                else batch[:probe.head_arity])

    def rediscovered(self, probe: ProbeRule, heads: Relation, h: int,
                     kept: KeptProofs | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(head rows, head positions) of the derivations of ``probe``'s ``head_seeded``
        variant seeded by ``heads`` (rows of its head's universe with their positions) whose
        body has Mo <= h and Mn = h, once per derivation: the re-discovery term's provenance
        query. ``kept``: the derivations of heads queried before in the run
        (``elastic_kept``)."""
        batch = self._head_seeded(probe, heads, kept)
        if batch is None:
            return np.zeros((probe.head_arity, 0), dtype=np.int64), np.zeros(0, dtype=np.int64)
        most_old, most_new, earlier = self._maxima(probe, batch, Step(REDISCOVERY, h))
        wanted, _, _ = terms(most_old, most_new, earlier, h, REDISCOVERY)
        return columns_at(batch[:probe.head_arity], wanted), batch[-1, wanted]

    def rediscoverable(self, probe: ProbeRule, heads: Relation, k: int, kept: KeptProofs
                       ) -> bool:
        """Whether a derivation of ``probe``'s ``head_seeded`` variant seeded by ``heads``
        could re-discover its head after iteration k with the universes as they are now: one
        with Mo <= Mn and k <= Mn < NEVER (the re-discovery term of a later iteration h' = Mn).
        ``kept``: the run's provenance queries (``rediscovered``). O(the heads' derivations)."""
        batch = self._head_seeded(probe, heads, kept)
        if batch is None:
            return False
        most_old, most_new, _ = self._maxima(probe, batch, Step(REDISCOVERY, k))
        return bool(np.any((most_old <= most_new) & (most_new >= k) & (most_new < NEVER)))

    def _head_seeded(self, probe: ProbeRule, heads: Relation,
                     kept: KeptProofs | None = None) -> np.ndarray | None:
        """The derivations of ``probe``'s ``head_seeded`` variant seeded by those of ``heads``
        that hold its head's constants (none joined when none does); with ``kept``, only the
        heads it has not queried before are joined."""
        if kept is not None:
            return kept.batch(id(probe), heads, lambda fresh: self._head_seeded(probe, fresh))
        heads = holding_constants(heads, probe.head_constants)
        return (None if heads is None
                else self._derivations(probe.head_seeded, {head_seed_name(probe.head): heads}))

    def head_proofs(self, probe: ProbeRule, heads: Relation, kept: KeptProofs | None = None
                    ) -> tuple[np.ndarray, np.ndarray]:
        """(head position, latest old iteration of the body) of each derivation of ``probe``'s
        ``head_seeded`` variant, seeded by ``heads`` (rows of its head's universe with their
        positions): the proof counts' provenance query. Reads no new iteration. ``kept`` as
        for ``rediscovered``."""
        batch = self._head_seeded(probe, heads, kept)
        if batch is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        most_old, _, _ = self._maxima(probe, batch, Step(REDISCOVERY, 0))
        return batch[-1], most_old

    def _maxima(self, probe: ProbeRule, batch: np.ndarray, step: Step, seed: int = 0
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Mo, Mn, earlier) of each derivation of a batch of ``probe``: the largest old and
        new iteration of its body (0 for an empty body), read from the universes as they are
        now, and whether one of its body elements before element ``seed`` is in ``step``'s
        seed set. One ``elastic_kernels.fold`` pass per body element."""
        m = batch.shape[1]
        most_old = np.zeros(m, dtype=np.int64)
        most_new = np.zeros(m, dtype=np.int64)
        earlier = np.zeros(m, dtype=np.bool_)
        column = probe.head_arity
        for j, relation in enumerate(probe.positives):
            universe = self.universes[relation]
            fold(batch[column], universe.old_iteration, universe.new_iteration,
                 most_old, most_new, earlier, step.h, step.kind, j < seed)
            column += 1
        for j, slot in enumerate(probe.negatives, start=len(probe.positives)):
            width = len(slot.columns)
            old, new = self.negated[slot].iterations(batch[column:column + width])
            fold(np.arange(m), old, new, most_old, most_new, earlier, step.h, step.kind,
                 j < seed)
            column += width
        return most_old, most_new, earlier

    def _derivations(self, rule, seeds: Mapping[str, Relation]) -> np.ndarray | None:
        """The evaluator's derivations of ``rule`` (None: none), the budget checked after it.
        Under a limited budget, a join of one seed of more than ``MORSEL_ROWS`` rows runs in two
        parts, the first ``MORSEL_ROWS`` rows or an eighth of the seed, whichever is more,
        and the budget checked between them with the work the rest is expected to take at
        the first part's pace (linear in its rows): an Update that one large join would take
        far past its budget is abandoned after that first part, not at the join's end
        (Andersen 4000, a 2-fact insert: one join of 7,072 seed rows ran 2.7 s against a
        budget of 0.45 s). One more evaluator call per large join; derivations unchanged."""
        rules, instance = self.selections.applied([rule], self._instance(seeds))
        if (len(seeds) != 1 or len(next(iter(seeds.values()))) <= MORSEL_ROWS
                or not self.budget.limited):
            batch = self.evaluator.derivations(rules, instance).get("@probe")
            self.budget.check()
            return batch
        [(name, seed)] = seeds.items()
        first, counted = max(MORSEL_ROWS, len(seed) // 8), self.budget.counted()
        batches = []
        for part in (seed.columns[:, :first], seed.columns[:, first:]):
            if batches:
                pace = (self.budget.counted() - counted) / first
                self.budget.check(pace * part.shape[1])
            batch = self.evaluator.derivations(
                rules, instance.with_relations({name: Relation(part, unique=True)}))
            batches.append(batch.get("@probe", np.zeros((rule.head.arity, 0), dtype=np.int64)))
        self.budget.check()
        return np.concatenate(batches, axis=1)

    def seeded(self, probe: ProbeRule, step: Step, seeds: dict,
               kept: KeptDerivations | None = None):
        """Yield (head rows, signs) of the derivations with a body element in ``step``'s seed
        set that its terms want (``elastic_kernels``), each derivation once: from the variant
        seeding its first element in the set. ``seeds`` caches the seeds of one iteration by
        name ([positions, relation or None until built]; None: empty). ``kept``: the batches
        of earlier iterations' seeds, reused for the same seed (``elastic_kept``: an Update's
        seed sets only); a batch is kept without the derivations no later iteration wants
        (both their latest old and new iterations below h), or, when its seed rows are an
        input's deleted ones, whole with their Mo, of which a step reads those with Mo = h."""
        for element, rule in enumerate(probe.seeded):
            name = self._seed(probe, element, step, seeds)
            if seeds[name] is None:
                continue
            variant, selection = (id(probe), element), seeds[name][0]
            sizes = tuple(len(self.universes[r]) for r in probe.positives[element + 1:])
            found, lasting = None if kept is None else kept.batch(variant, selection, sizes), False
            if found is None:
                seed = self._holding(probe, element, name, seeds)
                batch = None if seed is None else self._derivations(rule, {name: seed})
                if batch is None:
                    batch = np.zeros((rule.head.arity, 0), dtype=np.int64)
                found = Kept(selection, sizes, batch)
                lasting = kept is not None and self._gone_for_good(probe, element, selection)
            batch = (found.batch if found.most_old is None
                     else columns_at(found.batch, found.bucket(step.h)))
            if not batch.shape[1]:
                if kept is not None:
                    kept.keep(variant, found, step.h)
                continue
            most_old, most_new, earlier = self._maxima(probe, batch, step, element)
            wanted, signs, later = terms(most_old, most_new, earlier, step.h, step.kind)
            if kept is not None:
                if lasting:
                    found = Kept.whole(selection, sizes, batch, most_old)
                elif found.most_old is None and len(later) < batch.shape[1]:
                    found = Kept(selection, sizes, columns_at(batch, later))
                kept.keep(variant, found, step.h)
            if len(wanted):
                yield columns_at(batch[:probe.head_arity], wanted), signs

    def _gone_for_good(self, probe: ProbeRule, element: int, selection: np.ndarray) -> bool:
        """Whether the seed rows at ``selection`` of ``probe``'s body ``element`` have new
        iteration NEVER for the whole run: rows absent from this epoch of a universe the run
        does not write (an input's deleted rows), so that each derivation of theirs has Mn
        NEVER for good. O(seed)."""
        if element >= len(probe.positives) or probe.positives[element] in self.derived:
            return False
        return bool(np.all(self.universes[probe.positives[element]].new_iteration[selection]
                           == NEVER))

    def _seed(self, probe: ProbeRule, element: int, step: Step, seeds: dict) -> str:
        """The seed name of ``probe``'s body ``element``, its seed in ``seeds`` (the positions
        of its universe's rows, or of its negated input's changed instances, in ``step``'s
        seed set)."""
        if element < len(probe.positives):
            name = seed_name(probe.positives[element])
            if name not in seeds:
                universe = self.universes[probe.positives[element]]
                selection = members(universe.moved(), universe.old_iteration,
                                    universe.new_iteration, step.h, step.kind)
                seeds[name] = [selection, None] if len(selection) else None
        else:
            slot = probe.negatives[element - len(probe.positives)]
            name = slot.seed_name
            if name not in seeds:
                old, new = self.negated[slot].iterations(self.negated[slot].changed.columns)
                selection = members(np.arange(len(old)), old, new, step.h, step.kind)
                seeds[name] = [selection, None] if len(selection) else None
        return name

    def _holding(self, probe: ProbeRule, element: int, name: str, seeds: dict
                 ) -> Relation | None:
        """The rows of seed ``name`` of ``probe``'s ``element`` that hold its atom's constants
        (None: none does, and the variant derives nothing: on RDFS over LUBM(1) two of three
        seeded joins of an update), made once per iteration for each name and constants
        (cached in ``seeds``). O(seed)."""
        if seeds[name][1] is None:
            seeds[name][1] = self._seed_relation(probe, element, seeds[name][0])
        constants = probe.seed_constants[element]
        if (name, constants) not in seeds:
            seeds[name, constants] = holding_constants(seeds[name][1], constants)
        return seeds[name, constants]

    def _seed_relation(self, probe: ProbeRule, element: int, selection: np.ndarray) -> Relation:
        if element < len(probe.positives):
            return self.universes[probe.positives[element]].rows_at(selection)
        slot = probe.negatives[element - len(probe.positives)]
        return Relation(columns_at(self.negated[slot].changed.columns, selection), unique=True)


def holding_constants(rows: Relation, constants: Constants) -> Relation | None:
    """The rows of ``rows`` holding ``constants`` ((column, value) pairs), or None when none
    does. O(n) when there are constants, O(1) otherwise."""
    if not constants:
        return rows if len(rows) else None
    mask = holding(rows.columns, constants)
    if mask.all():
        return rows
    return Relation(columns_at(rows.columns, mask), unique=True) if mask.any() else None
