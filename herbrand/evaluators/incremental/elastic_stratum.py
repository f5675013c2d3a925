"""Bootstrap (Algorithm 2) and Update (Algorithm 3) of the elastic paper for one stratum.

Both iterate k = 1, 2, ... over ``Universe``s (one per relation the stratum reads or derives)
and evaluate the stratum's ``ProbeRule`` variants with a RelationalEvaluator; each term of the
paper is a filter of the derivations by the first iteration of their body elements in the
previous epoch (``old``) and in this one (``new``; NEVER when not derived yet), which
``elastic_derivations`` applies in native passes (``elastic_kernels``) and hands back as head
rows with signs. With h = k - 1, and Mo, Mn the largest old and new iteration of a
derivation's body:

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

The derivations come from ``elastic_derivations`` (negated atoms are body elements there, so
negation needs no separate terms; comparisons and arithmetic are filters of the rules).

Cost of an Update: per iteration, the joins seeded by the changes so far (a variant seeded
again by the same rows reuses its last batch: ``elastic_kept``) and by the deleted heads (each
head joined once per run, its derivations kept: ``elastic_kept.KeptProofs``), plus
vectorised bookkeeping over the positions that moved (``Universe.moved``), and O(n) once per
run (copies, the count of tuples per old iteration); nothing loops per tuple.
``budget`` (checked after every join and every iteration, ``elastic_budget``) lets the caller
abandon a long Update as soon as it runs out of time; the previous epoch's proof counts an
Update computes and the row indexes it builds first (both deferred by the native Bootstrap) are
exempt from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np

from herbrand.evaluators.batch_joins import columns_at
from herbrand.evaluators.incremental.counting_selections import GrowingSelections
from herbrand.evaluators.incremental.elastic_budget import SwitchBudget
from herbrand.evaluators.incremental.elastic_derivations import (
    NegatedInput,
    Step,
    StratumDerivations,
)
from herbrand.evaluators.incremental.elastic_kept import KeptDerivations, KeptProofs
from herbrand.evaluators.incremental.elastic_kernels import CHANGE, GROWTH
from herbrand.evaluators.incremental.elastic_rules import NegatedSlot, ProbeRule
from herbrand.evaluators.incremental.elastic_state import NEVER, UNKNOWN
from herbrand.evaluators.incremental.elastic_universe import Universe
from herbrand.evaluators.incremental.row_index import ABSENT, weighted_groups
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable


class StratumRun:
    """One Bootstrap or Update of one stratum over its universes (mutable working state)."""

    def __init__(self, probes: Sequence[ProbeRule], universes: Mapping[str, Universe],
                 negated: Mapping[NegatedSlot, NegatedInput], evaluator: RelationalEvaluator,
                 symbols: SymbolTable, aggregate_inputs: Mapping[str, Relation],
                 budget: SwitchBudget | None = None,
                 selections: GrowingSelections | None = None):
        """``budget``: checked after every join of the run (it may raise to abandon it);
        ``selections``: the universes' constant selections kept from the last run."""
        self.budget = budget if budget is not None else SwitchBudget.unlimited()
        self.probes = probes
        self.universes = universes
        self.heads = tuple(dict.fromkeys(p.head for p in probes))
        self.derivations = StratumDerivations(universes, negated, evaluator, symbols,
                                              aggregate_inputs, self.budget, selections,
                                              derived=frozenset(self.heads))
        # the provenance queries' derivations of the heads queried so far (an Update's)
        self.proofs = KeptProofs()

    # -- Bootstrap ---------------------------------------------------------------------------

    def bootstrap(self, recursive: bool) -> None:
        """Algorithm 2: grow the universes' new iterations and counts to the fixpoint."""
        found = {head: [] for head in self.heads}
        for probe in self.probes:
            found[probe.head].append(self.derivations.derive(probe, probe.full, {}))
        k = 1
        while self._settle(k, found):
            if not recursive:
                return
            h, k = k, k + 1
            found, seeds, step = {head: [] for head in self.heads}, {}, Step(GROWTH, h)
            for probe in self.probes:
                if not any(r in self.heads for r in probe.positives):
                    continue
                for heads, _ in self.derivations.seeded(probe, step, seeds):
                    found[probe.head].append(heads)

    # -- Update ------------------------------------------------------------------------------

    def update(self) -> None:
        """Algorithm 3 from the previous epoch's iterations to this epoch's (see the module
        docstring), until an iteration derives nothing."""
        k, kept = 1, KeptDerivations()
        while True:
            h = k - 1
            step = Step(CHANGE, h)
            kept.new_step()
            found = {head: [] for head in self.heads}
            weights = {head: [] for head in self.heads}
            located = {head: [] for head in self.heads}
            seeds, deleted_heads = {}, {}
            for probe in self.probes:
                for heads, signs in self.derivations.seeded(probe, step, seeds, kept):
                    rows, signs, at = self._deleted_and_inserted(probe.head, heads, signs, h)
                    found[probe.head].append(rows)
                    weights[probe.head].append(signs)
                    located[probe.head].append(at)
                rows, at = self._rediscovered(probe, h, deleted_heads)
                found[probe.head].append(rows)
                weights[probe.head].append(np.ones(rows.shape[1], dtype=np.int64))
                located[probe.head].append(at)
            if not self._settle(k, found, weights, located):
                break
            self.budget.check()
            if self._settled_for_good(k, kept):
                # the later iterations only keep tuples: the run ends at the first keeping none
                k += 1
                while any(self.universes[head].kept_at(k) for head in self.heads):
                    k += 1
                break
            k += 1
        for head in self.heads:
            self.universes[head].drop_beyond(k)

    def _settled_for_good(self, k: int, kept: KeptDerivations) -> bool:
        """Whether no iteration after k (its terms settled) derives or loses a tuple: each of
        them would then find nothing and only keep the tuples of its old iteration
        (``_settle``), so the run may end as at the first iteration that keeps none. With
        h = k - 1, it holds when (1) no batch kept at step h holds a derivation with
        min(Mo, Mn) >= h (``kept_any``: a batch kept whole with its Mo holds one while some
        Mo >= h) and (2) no derivation of a head deleted so far (old <= k < new) has Mo <= Mn
        and k <= Mn < NEVER.

        Proof. Every tuple moved so far has min(old, new) <= h: settling at j gives j, or
        NEVER to a tuple of old iteration j; an input's rows are at 0 or NEVER; and at k, the
        rows found come from the seeded terms, which by (1) found none (a wanted derivation
        has Mo = h or Mn = h, so it is kept), or re-discover deleted heads, of old iteration
        <= h (and are in the universe: nothing is appended). By induction over h' = k, k + 1,
        ... (nothing changed before h', so the iterations are today's): a seed at h' (old <=
        h' < new or new <= h' < old, with min(old, new) <= h) was one at h, so a seed set at
        h' is a subset of h's and its derivations are some of h's. The deletion and insertion
        terms at h' want Mo = h' < Mn and Mn = h' < Mo, both min(Mo, Mn) >= h' > h: a
        derivation kept at h has none by (1), and one dropped there had min(Mo, Mn) < h,
        which settling cannot raise (Mo is fixed; Mn < h means every element is decided). A
        head deleted at h' (old <= h' < new, min(old, new) <= h) has old <= h < k < new, so
        the re-discovery term at h' (Mo <= h' = Mn < NEVER) finds nothing by (2). So no term
        finds a row at h', which only keeps its tuples. Cost: O(1) when (1) fails, else the
        moved tuples' and the deleted heads' kept derivations (their queries joined
        already, but for heads deleted at k).
        """
        if kept.kept_any:
            return False
        for probe in self.probes:
            universe = self.universes[probe.head]
            moved = universe.moved()
            deleted = moved[(universe.old_iteration[moved] <= k)
                            & (universe.new_iteration[moved] > k)]
            if len(deleted) and self.derivations.rediscoverable(
                    probe, universe.rows_at(deleted), k, self.proofs):
                return False
        return True

    def _deleted_and_inserted(self, head: str, heads: np.ndarray, signs: np.ndarray, h: int
                              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The deletion term (-1: Mo = h < Mn, for heads not in I^o_h) and the insertion term
        (+1: Mn = h < Mo) of derivations seeded by changed elements, given as head rows and
        signs (``StratumDerivations.seeded``): those of the deletion term whose head is in
        I^o_h dropped; with the position of each head kept (ABSENT where the universe does
        not hold it), which ``_settle`` reads instead of searching them again. One search
        per head."""
        universe = self.universes[head]
        positions = self._find(universe, heads)
        deleted = np.flatnonzero(signs < 0)
        if not len(deleted):
            return heads, signs, positions
        at = positions[deleted]
        existed = at != ABSENT
        before = np.zeros(len(at), dtype=bool)
        before[existed] = universe.old_iteration[at[existed]] <= h
        if not before.any():
            return heads, signs, positions
        keep = np.ones(len(signs), dtype=bool)
        keep[deleted[before]] = False
        return columns_at(heads, keep), signs[keep], positions[keep]

    def _rediscovered(self, probe: ProbeRule, h: int, deleted_heads: dict
                      ) -> tuple[np.ndarray, np.ndarray]:
        """(head rows, their positions) of ``probe``'s heads deleted before iteration h + 1 in
        this epoch, once per derivation of theirs with Mo <= h and Mn = h (the re-discovery
        term). ``deleted_heads`` caches the seed relations of one iteration by head relation
        (None: empty)."""
        if probe.head not in deleted_heads:
            universe = self.universes[probe.head]
            moved = universe.moved()
            deleted = moved[(universe.old_iteration[moved] <= h)
                            & (universe.new_iteration[moved] > h)]
            deleted_heads[probe.head] = universe.rows_at(deleted) if len(deleted) else None
        if deleted_heads[probe.head] is None:
            return (np.zeros((probe.head_arity, 0), dtype=np.int64),
                    np.zeros(0, dtype=np.int64))
        return self.derivations.rediscovered(probe, deleted_heads[probe.head], h,
                                             self.proofs)

    # -- shared ------------------------------------------------------------------------------

    def _settle(self, k: int, found, weights=None, located=None) -> bool:
        """Give iteration k to every head not in I_{k-1} whose count is positive: the weights
        of its derivations (+1 each when ``weights`` is None: a Bootstrap), plus in an Update
        its previous epoch's proof count when it had iteration k then (computed first where
        it is UNKNOWN and the weights would lower it). A head of old iteration k without
        weights keeps it (``Universe``). ``located``: the found heads' positions, batch for
        batch (ABSENT where not held; None: searched here). The work is a search per found
        head not located (the universe's row index) and a sum of the weights of the undecided
        ones by position in one pass (``Universe.undecided_sums``: the decided ones are only
        skipped), plus a sort of the heads it does not hold yet. Returns whether some tuple
        has iteration k."""
        progressed = False
        for head in self.heads:
            universe = self.universes[head]
            batches = [batch for batch in found[head] if batch.shape[1]]
            if not batches:  # nothing found: only the tuples kept at k can progress
                progressed |= weights is not None and universe.kept_at(k) > 0
                continue
            rows = np.concatenate(batches, axis=1)
            w = (np.concatenate(weights[head]) if weights is not None
                 else np.ones(rows.shape[1], dtype=np.int64))
            # the found rows the universe holds summed by position, the others by row
            positions = (self._find(universe, rows) if located is None
                         else np.concatenate(located[head]))
            absent = positions == ABSENT
            fresh, fresh_w = (weighted_groups(columns_at(rows, absent), w[absent])
                              if absent.any() else (rows[:, :0], w[:0]))
            at, total = universe.undecided_sums(positions, w, k)
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
            new_rows = fresh_w > 0
            if new_rows.any():
                universe.append(columns_at(fresh, new_rows), k, fresh_w[new_rows])
            progressed |= bool(gets_k.any() or new_rows.any()
                               or (weights is not None and universe.kept_at(k) > 0))
        return progressed

    def _find(self, universe: Universe, rows: np.ndarray) -> np.ndarray:
        """``universe.find(rows)``; the first search of a universe without its row index
        builds it (a Bootstrap does not index the rows it numbers): that is the Bootstrap's
        deferred work, exempt from the budget as the proof counts are."""
        if universe.indexed:
            return universe.find(rows)
        return self.budget.exempt(partial(universe.find, rows))

    def _resolve_counts(self, head: str, k: int, positions: np.ndarray) -> None:
        """Compute the previous epoch's proof counts that are UNKNOWN among the rows of
        ``head`` at ``positions`` (of old iteration k, not settled in this epoch yet): their
        derivations whose body elements all had an old iteration below k (provenance queries
        seeded by those rows, each derivation giving its head's position: counted by a
        bincount, no search). O(their derivations + n)."""
        universe = self.universes[head]
        positions = positions[universe.old_count[positions] == UNKNOWN]
        if not len(positions):
            return
        heads = universe.rows_at(positions)
        proved = []
        for probe in self.probes:
            if probe.head == head:
                at, most_old = self.derivations.head_proofs(probe, heads, self.proofs)
                proved.append(at[most_old < k])
        counts = np.bincount(np.concatenate(proved), minlength=len(universe))
        universe.record_old_counts(positions, counts[positions])
