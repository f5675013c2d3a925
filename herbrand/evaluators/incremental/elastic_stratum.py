"""Bootstrap (Algorithm 2) and Update (Algorithm 3) of the elastic paper for one stratum.

Both iterate k = 1, 2, ... over ``Universe``s (one per relation the stratum reads or derives)
and evaluate the stratum's ``ProbeRule`` variants with a RelationalEvaluator; every derivation
comes back with the first iteration of each body element in the previous epoch (``old``) and in
this one (``new``; NEVER when not derived yet), so each term of the paper is a vectorised
filter over those two (elements, m) arrays. With h = k - 1, and Mo, Mn the largest old and new
iteration of a derivation's body:

- Bootstrap: N_k = heads not in I_h of the derivations with Mn = h, seeded by N_h (each
  derivation counted once: seeded at its first body element in N_h).
- Update, for heads not in I_h (line 9 of Algorithm 3), seeded by the changed elements
  C_h = I^-_h ∪ I^+_h (first such element only):
  * deletion term: derivations with Mo = h < Mn, for heads not in I^o_h, count -1;
  * insertion term: derivations with Mn = h < Mo, count +1;
  * re-discovery term: for heads in I^-_h (deleted earlier in this epoch), the derivations with
    Mo <= h and Mn = h, found from the heads (provenance), count +1;
  * plus the previous epoch's proof count of the tuples with old iteration k.
  Sparsification (line 10) is the restriction to heads not in I_h: a tuple keeps only its
  earliest iteration. I^-_h and I^+_h (lines 11, 12) are read off the two iteration arrays.

A negated atom is an element of iteration 0 when its instance is absent from the negated
relation in that epoch and NEVER otherwise (its relation is an input of the stratum), so
negation needs no separate terms. Comparisons and arithmetic are filters of the rules.

A positive atom with integer constants over a universe, such as ``@U:m(x, 0, y, @pos0)``,
reads a selection of the universe (``counting_selections.GrowingSelections``: the rows holding
those values, taken once per run and extended by the rows the run appends), not a scan of the
whole universe filtered per join: RDFS's rules have a constant in almost every atom.

Cost of an Update: per iteration, the joins seeded by the changes so far (a variant seeded
again by the same rows reuses its last batch: ``elastic_kept``) and by the deleted heads, plus
vectorised bookkeeping over the positions that moved (``Universe.moved``), and O(n) once per
run (copies, the count of tuples per old iteration); nothing loops per tuple.
``budget`` (checked after every join and every iteration, ``elastic_budget``) lets the caller
abandon a long Update as soon as it runs out of time; the previous epoch's proof counts an
Update computes and the row indexes it builds first (both deferred by the native Bootstrap) are
exempt from it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from herbrand.evaluators.incremental.counting_selections import GrowingSelections
from herbrand.evaluators.incremental.elastic_budget import SwitchBudget
from herbrand.evaluators.incremental.elastic_kept import KeptDerivations
from herbrand.evaluators.incremental.elastic_rules import (
    NegatedSlot,
    ProbeRule,
    head_seed_name,
    seed_name,
    universe_name,
)
from herbrand.evaluators.incremental.elastic_state import NEVER, UNKNOWN, Universe
from herbrand.evaluators.incremental.row_index import ABSENT, RowIndex, weighted_groups
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
            return cls(old_instances, _empty(len(slot.columns)), _empty(len(slot.columns)))
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


def _latest(iterations: np.ndarray) -> np.ndarray:
    """The largest iteration of each derivation's body (0 for an empty body): an (elements, m)
    array reduced row by row, faster than a reduction along axis 0."""
    latest = np.zeros(iterations.shape[1], dtype=np.int64)
    for row in iterations:
        np.maximum(latest, row, out=latest)
    return latest


def _empty(arity: int) -> np.ndarray:
    return np.zeros((arity, 0), dtype=np.int64)


MORSEL_ROWS = 1024  # a large join's first part, in seed rows (``StratumRun._derivations``)


class StratumRun:
    """One Bootstrap or Update of one stratum over its universes (mutable working state)."""

    def __init__(self, probes: Sequence[ProbeRule], universes: Mapping[str, Universe],
                 negated: Mapping[NegatedSlot, NegatedInput], evaluator: RelationalEvaluator,
                 symbols: SymbolTable, aggregate_inputs: Mapping[str, Relation],
                 budget: SwitchBudget | None = None):
        """``budget``: checked after every join of the run (it may raise to abandon it)."""
        self.budget = budget if budget is not None else SwitchBudget.unlimited()
        self.probes = probes
        self.universes = universes
        self.negated = negated
        self.evaluator = evaluator
        self.symbols = symbols
        self.aggregate_inputs = aggregate_inputs  # real relations that aggregates read
        self.heads = tuple(dict.fromkeys(p.head for p in probes))
        # constant atoms over the universes read selections of them, taken once per run and
        # extended by the rows the run appends, instead of a scan of the universe per join
        self.selections = GrowingSelections({universe_name(r) for r in universes})

    # -- derivations -----------------------------------------------------------------------------

    def _instance(self, seeds: Mapping[str, Relation]) -> Database:
        relations = dict(self.aggregate_inputs)
        relations.update({universe_name(r): u.relation() for r, u in self.universes.items()})
        relations.update({slot.keep_name: n.keep for slot, n in self.negated.items()})
        relations.update(seeds)
        return Database(relations, self.symbols)

    def derive(self, probe: ProbeRule, rule, seeds: Mapping[str, Relation]):
        """(heads, old, new) of the derivations of one variant: head rows and the (elements, m)
        old and new iterations of their body elements."""
        return self._described(probe, self._derivations(rule, seeds))

    def _described(self, probe: ProbeRule, batch: np.ndarray | None):
        """(heads, old, new) of a derivation batch of ``probe`` (None: none), the iterations
        read from the universes as they are now."""
        m = 0 if batch is None else batch.shape[1]
        old = np.zeros((probe.elements, m), dtype=np.int64)
        new = np.zeros((probe.elements, m), dtype=np.int64)
        if not m:
            return np.zeros((probe.head_arity, 0), dtype=np.int64), old, new
        column = probe.head_arity
        for j, relation in enumerate(probe.positives):
            universe, positions = self.universes[relation], batch[column]
            old[j], new[j] = universe.old_iteration[positions], universe.new_iteration[positions]
            column += 1
        for j, slot in enumerate(probe.negatives, start=len(probe.positives)):
            width = len(slot.columns)
            old[j], new[j] = self.negated[slot].iterations(batch[column:column + width])
            column += width
        return batch[:probe.head_arity], old, new

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

    def seeded(self, probe: ProbeRule, member: Callable[[np.ndarray, np.ndarray], np.ndarray],
               seeds: dict, floor: int, kept: KeptDerivations | None = None):
        """Yield (heads, old, new) of the derivations with a body element in a seed set (given
        by ``member(old, new) -> mask`` over a universe's or negated input's iterations), each
        derivation once: from the variant seeding its first element in the set, and only
        those whose body's latest old and latest new iterations are at least ``floor`` and one
        of them equal to it (the only ones Bootstrap and Update want at h = ``floor``: the
        smaller of the two is h in each of their terms). ``seeds``
        caches the seeds of one iteration by name ([positions, relation or None until built];
        None: empty). ``kept``: the batches of earlier iterations' seeds, reused for the same
        seed (``elastic_kept``: an Update's seed sets only)."""
        for element, rule in enumerate(probe.seeded):
            name = self._seed(probe, element, member, seeds)
            if seeds[name] is None:
                continue
            selection = seeds[name][0]
            sizes = tuple(len(self.universes[r]) for r in probe.positives[element + 1:])
            batch = None if kept is None else kept.batch((id(probe), element), selection, sizes)
            if batch is None:
                if seeds[name][1] is None:
                    seeds[name][1] = self._seed_relation(probe, element, selection)
                batch = self._derivations(rule, {name: seeds[name][1]})
                if batch is None:
                    batch = np.zeros((rule.head.arity, 0), dtype=np.int64)
            if not batch.shape[1]:
                if kept is not None:
                    kept.keep((id(probe), element), selection, sizes, batch)
                continue
            heads, old, new = self._described(probe, batch)
            # the smaller latest iteration: fixed for the old one, final for a new one below h
            least = np.minimum(_latest(old), _latest(new))
            if kept is not None:
                later = least >= floor  # wanted now or by a later iteration
                kept.keep((id(probe), element), selection, sizes,
                          batch if later.all() else batch[:, later])
            wanted = (least == floor) & ~member(old[:element], new[:element]).any(axis=0)
            yield heads[:, wanted], old[:, wanted], new[:, wanted]

    def _seed(self, probe: ProbeRule, element: int,
              member: Callable[[np.ndarray, np.ndarray], np.ndarray], seeds: dict) -> str:
        """The seed name of ``probe``'s body ``element``, its seed in ``seeds`` (the positions
        of its universe's rows, or of its negated input's changed instances, in the set)."""
        if element < len(probe.positives):
            name = seed_name(probe.positives[element])
            if name not in seeds:
                universe = self.universes[probe.positives[element]]
                moved = universe.moved()
                selection = moved[member(universe.old_iteration[moved],
                                         universe.new_iteration[moved])]
                seeds[name] = [selection, None] if len(selection) else None
        else:
            slot = probe.negatives[element - len(probe.positives)]
            name = slot.seed_name
            if name not in seeds:
                negated = self.negated[slot]
                selection = np.flatnonzero(member(*negated.iterations(negated.changed.columns)))
                seeds[name] = [selection, None] if len(selection) else None
        return name

    def _seed_relation(self, probe: ProbeRule, element: int, selection: np.ndarray) -> Relation:
        if element < len(probe.positives):
            return self.universes[probe.positives[element]].rows_at(selection)
        slot = probe.negatives[element - len(probe.positives)]
        return Relation(self.negated[slot].changed.columns[:, selection], unique=True)

    # -- Bootstrap ---------------------------------------------------------------------------

    def bootstrap(self, recursive: bool) -> None:
        """Algorithm 2: grow the universes' new iterations and counts to the fixpoint."""
        found = {head: [] for head in self.heads}
        for probe in self.probes:
            heads, _, _ = self.derive(probe, probe.full, {})
            found[probe.head].append(heads)
        k = 1
        while self._settle(k, found):
            if not recursive:
                return
            h, k = k, k + 1
            found, seeds = {head: [] for head in self.heads}, {}
            for probe in self.probes:
                if not any(r in self.heads for r in probe.positives):
                    continue
                for heads, _, new in self.seeded(probe, lambda o, n, h=h: n == h, seeds, h):
                    found[probe.head].append(heads[:, _latest(new) == h])

    # -- Update ------------------------------------------------------------------------------

    def update(self) -> None:
        """Algorithm 3 from the previous epoch's iterations to this epoch's (see the module
        docstring), until an iteration derives nothing."""
        k, kept = 1, KeptDerivations()
        while True:
            h = k - 1

            def changed(o, n, h=h):
                return ((o <= h) & (n > h)) | ((n <= h) & (o > h))

            found = {head: [] for head in self.heads}
            weights = {head: [] for head in self.heads}
            seeds, deleted_heads = {}, {}
            for probe in self.probes:
                for heads, old, new in self.seeded(probe, changed, seeds, h, kept):
                    rows, signs = self._deleted_and_inserted(probe.head, heads, old, new, h)
                    found[probe.head].append(rows)
                    weights[probe.head].append(signs)
                rediscovered = self._rediscovered(probe, h, deleted_heads)
                found[probe.head].append(rediscovered)
                weights[probe.head].append(np.ones(rediscovered.shape[1], dtype=np.int64))
            if not self._settle(k, found, weights):
                for head in self.heads:
                    self.universes[head].drop_beyond(k)
                return
            self.budget.check()
            k += 1

    def _deleted_and_inserted(self, head: str, heads: np.ndarray, old: np.ndarray,
                              new: np.ndarray, h: int) -> tuple[np.ndarray, np.ndarray]:
        """The deletion term (-1: Mo = h < Mn, for heads not in I^o_h) and the insertion term
        (+1: Mn = h < Mo) of derivations seeded by changed elements: (head rows, signs)."""
        most_old, most_new = _latest(old), _latest(new)
        deleted = heads[:, (most_old == h) & (most_new > h)]
        inserted = heads[:, (most_new == h) & (most_old > h)]
        if deleted.shape[1]:
            universe = self.universes[head]
            positions = self._find(universe, deleted)
            existed = positions != ABSENT
            before = np.zeros(len(positions), dtype=bool)
            before[existed] = universe.old_iteration[positions[existed]] <= h
            deleted = deleted[:, ~before]
        return (np.concatenate([deleted, inserted], axis=1),
                np.concatenate([np.full(deleted.shape[1], -1, dtype=np.int64),
                                np.ones(inserted.shape[1], dtype=np.int64)]))

    def _rediscovered(self, probe: ProbeRule, h: int, deleted_heads: dict) -> np.ndarray:
        """Heads of ``probe`` deleted before iteration h + 1 in this epoch, once per derivation
        of theirs with Mo <= h and Mn = h (the re-discovery term). ``deleted_heads`` caches
        the seed relations of one iteration by head relation (None: empty)."""
        if probe.head not in deleted_heads:
            universe = self.universes[probe.head]
            moved = universe.moved()
            deleted = moved[(universe.old_iteration[moved] <= h)
                            & (universe.new_iteration[moved] > h)]
            deleted_heads[probe.head] = (Relation(universe.rows[:, deleted], unique=True)
                                         if len(deleted) else None)
        if deleted_heads[probe.head] is None:
            return np.zeros((probe.head_arity, 0), dtype=np.int64)
        seeds = {head_seed_name(probe.head): deleted_heads[probe.head]}
        heads, old, new = self.derive(probe, probe.head_seeded, seeds)
        keep = (_latest(old) <= h) & (_latest(new) == h)
        return heads[:, keep]

    # -- shared ------------------------------------------------------------------------------

    def _settle(self, k: int, found, weights=None) -> bool:
        """Give iteration k to every head not in I_{k-1} whose count is positive: the weights
        of its derivations (+1 each when ``weights`` is None: a Bootstrap), plus in an Update
        its previous epoch's proof count when it had iteration k then (computed first where
        it is UNKNOWN and the weights would lower it). A head of old iteration k without
        weights keeps it (``Universe``): the work is O(found heads). Returns whether some
        tuple has iteration k."""
        progressed = False
        for head in self.heads:
            universe = self.universes[head]
            batches = found[head]
            rows = (np.concatenate(batches, axis=1) if batches
                    else np.zeros((universe.rows.shape[0], 0), dtype=np.int64))
            w = (np.concatenate(weights[head]) if weights is not None and weights[head]
                 else np.ones(rows.shape[1], dtype=np.int64))
            rows, w = weighted_groups(rows, w)
            positions = self._find(universe, rows)
            present = positions != ABSENT
            undecided = present.copy()
            undecided[present] = universe.new_iteration[positions[present]] >= k
            at, total = positions[undecided], w[undecided]
            was_k = universe.old_iteration[at] == k
            unknown = np.zeros(len(at), dtype=bool)
            if weights is not None:
                lowered = at[(total < 0) & was_k]
                self.budget.exempt(partial(self._resolve_counts, head, k, lowered))
                total = total + np.where(was_k, universe.old_count[at], 0)
                unknown = was_k & (universe.old_count[at] == UNKNOWN)
            gets_k = total > 0
            changed = gets_k | was_k
            universe.settle(at[changed], np.where(gets_k, k, NEVER)[changed],
                            np.where(unknown, UNKNOWN, total)[changed])
            new_rows = ~present & (w > 0)
            if new_rows.any():
                universe.append(rows[:, new_rows], k, w[new_rows])
            progressed |= bool(gets_k.any() or new_rows.any()
                               or (weights is not None and universe.kept_at(k) > 0))
        return progressed

    def _find(self, universe: Universe, rows: np.ndarray) -> np.ndarray:
        """``universe.find(rows)``; the first search of a universe without its row index
        builds it (a Bootstrap does not sort the rows it numbers): that is the Bootstrap's
        deferred work, exempt from the budget as the proof counts are."""
        if universe.indexed:
            return universe.find(rows)
        return self.budget.exempt(partial(universe.find, rows))

    def _resolve_counts(self, head: str, k: int, positions: np.ndarray) -> None:
        """Compute the previous epoch's proof counts that are UNKNOWN among the rows of
        ``head`` at ``positions`` (of old iteration k, not settled in this epoch yet): their
        derivations whose body elements all had an old iteration below k (provenance queries
        seeded by those rows). O(their derivations) plus O(n) once per run."""
        universe = self.universes[head]
        positions = positions[universe.old_count[positions] == UNKNOWN]
        if not len(positions):
            return
        seeds = {head_seed_name(head): Relation(universe.rows[:, positions], unique=True)}
        proofs = []
        for probe in self.probes:
            if probe.head == head:
                heads, old, _ = self.derive(probe, probe.head_seeded, seeds)
                proofs.append(heads[:, _latest(old) < k])
        rows, counts = weighted_groups(np.concatenate(proofs, axis=1),
                                       np.ones(sum(p.shape[1] for p in proofs), dtype=np.int64))
        by_position = np.zeros(len(universe), dtype=np.int64)
        by_position[universe.find(rows)] = counts
        universe.record_old_counts(positions, by_position[positions])
