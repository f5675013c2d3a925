"""One stratum's deletion step of the backward/forward engine (``bf``), in batches.

Motik, Nenov, Piro and Horrocks (AAAI 2015) pop the facts that lost a derivation one at a
time and call ``checkProvability(F)``: if F is checked already (in C), stop; else put it in C,
and look backwards for a rule instance deriving F whose body facts are not deleted,
recursively checking the instance's body facts of the same stratum; a fact shown derivable goes
into P (proved) and ``saturate`` chains forwards from P to every checked fact it derives. After
the check, every checked fact not proved is deleted, and the heads of the rule instances using
it are queued. Each fact is checked at most once per update (C), so the backward search is
bounded by the materialization.

``BackwardForward.deleted`` does the same in rounds over numpy batches:

- A *batch* is the set of queued facts not yet in C (all facts that lost a derivation through
  the lower strata's changes first, then the consequences of the last batch's deletions).
- A *round* checks a frontier of facts at once: one call of the rule evaluator runs every rule
  head-restricted to the frontier (``@focus:``) over the old facts of the stratum and the new
  facts of the lower strata, and returns each rule instance as a row (its head, the head's
  position in C, which the focus carries, then its body atoms of this stratum: the
  ``@instance:`` rules of ``instance_rules``). A stratum atom without constants whose
  variables the focus and the literals that stay joined (over lower relations, or with a
  constant) all bind is left out of the rule and probed in the old relation's hash set instead
  (``InstanceRule.members``, the engine's kept ``RelationSets``): the same instances, a hash
  probe per row where a join would probe, and first build, an index of the whole relation on
  all its columns (on TC, ``tc(x, y)`` in ``tc(x, z) :- tc(x, y), e(y, z)``: the 372k instance
  rows of a 1% delete of graph10000 in 30 ms instead of 60). An atom with a constant that the
  rest binds is probed right after the join instead of joined (``InstanceRule.probed``). Each
  instance row is probed in C once for each stratum atom, and what the round asks of it
  (proved? checked? whose instance?) is read at those positions and its head's (``expansion``,
  which also chooses the rows to expand). Only the rows that are expanded
  are probed: a row whose atoms are all proved, or all checked, is held without a probe (C holds
  old facts only), so the rows of facts proved in the round are never probed, and a lazy round
  probes the one row it chooses per fact (again when that row is no instance: on TC over
  graph10000, a 1% delete's first lazy round probes 2k rows instead of 174k, the whole delete
  105k instead of 374k). Instances
  whose stratum atoms are all in P prove their heads; ``saturate`` then runs the semi-naive
  delta variants of the stratum's rules over P (``@proved:``), keeping only checked heads
  (their lower literals cut first to the rows that can derive one: ``near_heads``); those
  joining one stratum atom with one lower atom, as TC's, in one native call each to their
  fixpoint (``pair_saturation``). The unproved facts of the frontier are expanded: their
  instances' stratum atoms not yet in C form the next frontier.
- Before a round of a lazy frontier, or of a batch's own frontier of ``BATCH_OUTRIGHT_FIRST``
  facts or more (the facts that lost a derivation; each pass below only while its last run on such
  a frontier proved a fact), enumerates every instance of its frontier, it runs only the rules
  whose body has no atom of the stratum: such an instance proves its head outright, and
  ``saturate`` chains forwards from those facts (a copy rule, as ``tc(x, y) :- e(x, y)``, without
  the evaluator: the side with fewer rows probed in the other, ``copy_proofs``). Only the frontier
  facts still unproved then have all their instances enumerated (on TC over graph10000, a 1%
  delete: 0.37M instance rows instead of 1.64M). Then, for the facts still unproved, the
  *unfolded* rules (a rule whose stratum atoms all have a copy rule, each read as the lower
  relation it copies, as ``tc(x, z) :- e(x, y), e(y, z)``: ``instance_rules.unfolding``) prove
  their heads through proofs of two steps from lower facts, the atoms' own proofs left unchecked:
  a fact with a proof is in P, whether its proof's atoms are or not (TC's natively:
  ``two_step_proofs``). On TC over graph10000, a 1% delete, the 9,386 facts left after the first
  saturation: 2,672 instances found in one call prove 7,298 facts with their saturation, where the
  lazy round enumerated 174k instance rows to check 2,016 atoms; 58,182 facts checked -> 46,488,
  saturation derivations 527k -> 269k. Proofs do not depend on the order they are found in, so
  this changes no result.
- The depth-first search of the paper stops at the first instance that proves a fact. Rounds
  approximate that: a fact is first expanded *lazily*, through one instance only (none while
  some instance's atoms are all checked already: it waits for them; first choice, and even
  while it waits, an instance whose atoms not in C are copies of lower facts, proved outright
  once checked: ``expansion``); when no frontier is left,
  every lazily expanded fact still unproved is expanded *fully*, through all its instances.
  So each fact's instances are computed at most twice, and at the end of a batch every checked
  fact that is not proved has had all its instances' atoms checked. A frontier of fewer than
  ``SMALL_FRONTIER`` facts is expanded fully at once (its outright instances found in
  the same call, but in a batch's own of ``BATCH_OUTRIGHT_FIRST`` facts or more): there a
  round's fixed cost is what counts, and fewer rounds reach the proofs.

That last property is the paper's invariant, so the correctness argument carries over: a
checked fact not proved at the end of a batch has no proof from the facts not deleted (if it had
one, the lowest unproved checked fact in it has all its stratum atoms proved, and ``saturate``
or the round that checked it would have proved it); P only ever holds facts with a proof.
Checked facts that are not proved are deleted; their consequences start the next batch. A cycle
that only supports itself (``reach(a) :- reach(b)`` and back) is checked, never proved, and
deleted.

The instances are enumerated over the old facts of the stratum, not old minus deleted: a
superset of the instances the paper enumerates, which may check more facts but proves nothing
more (proofs only use P), and keeps the evaluator's indexes of the old relations across rounds.

Negation and aggregates read only lower strata, whose new facts the rounds read, so they need
no special handling: a fact whose negated literal's relation gained a row, or whose aggregate's
input changed, is queued (the lower-change variants, as in ``dred``) and checked against the new
state like any other.

A rule application that cannot derive (a batch it is driven by holds no row with its
constants, or a relation it reads is empty, ``RuleReads``) is not run.

Cost per update: per checked fact, its instances are computed at most twice (one evaluator call
per round for the whole frontier) plus ``saturate``'s forward derivations from the proved facts;
O(1) expected per row for the sets C and P (one hash probe: ``CheckedFacts``). Reads only
immutable Relations.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from herbrand.evaluators.fixpoint import delta_name
from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.copy_proofs import CopyProofs
from herbrand.evaluators.incremental.expansion import Expansion, concat_batches
from herbrand.evaluators.incremental.forward_saturation import ForwardSaturation
from herbrand.evaluators.incremental.instance_rules import InstanceRule, StepRules, copy_of
from herbrand.evaluators.incremental.programs import with_empty_reads
from herbrand.evaluators.incremental.relation_sets import RelationSets
from herbrand.evaluators.incremental.selections import KeptSelections
from herbrand.evaluators.incremental.step_reads import NO_POSITIONS, StepReads
from herbrand.evaluators.incremental.two_step_proofs import TwoStepProofs
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.storage import Database, Relation


class BackwardForward:
    """The deletion step of one stratum: ``deleted(seeds)``. ``new`` holds the new lower
    strata and the stratum's old facts; ``selections``: the engine's kept constant selections
    of them, if it keeps any; ``kept``: the engine's hash sets of its relations, if it keeps
    them (read, never changed; a set missing there is built when first probed). The step
    reads through ``step_reads`` and chains forwards through ``forward_saturation``.

    Every rule here reads ``new``, the consequences of the deleted facts too: an old instance
    using a deleted fact and a lower fact that is gone is a seed's (its head was checked
    already), so reading the new lower facts checks no fewer facts that may have lost their
    proof (the heads that are no old facts, through a lower fact the update added, are
    dropped), and the rounds and the consequences probe the same indexes of the lower
    relations (reading the old ones as well rebuilt an index of a changed lower relation each
    time one read the other's)."""

    # A frontier of fewer facts is expanded fully at once, every rule's instances in one call:
    # an evaluator call costs about a millisecond however small its frontier, and a full
    # expansion reaches the shortest proofs in the fewest rounds. Measured (1% delete, CPU):
    # Andersen over 1,000 variables, whose checks follow chains of one fact per round, 1.18 s
    # at 0 (308 rounds), 0.48 s at 4096; TC over graph10000 103 -> 86 ms; above 8192 TC's
    # lazy rounds are lost (every instance of 9,386 facts: 100 ms; all full: 270 ms).
    SMALL_FRONTIER = 4096
    # A frontier not small, and a batch's own frontier of at least this many facts (the facts
    # that lost a derivation: often they have another, outright or of two lower facts), has
    # its outright instances (rules without stratum atoms, and the unfolded rules) found
    # first, in calls of their own, and every other instance only of the facts they leave
    # unproved: where many facts of a frontier have an outright proof, far fewer instances for
    # a few more calls. The frontiers a batch's expansion reaches have their outright
    # instances found with the others: their facts are body atoms of instances that proved
    # nothing, and rarely have an outright proof (Andersen over 1,000 variables, a 1% delete:
    # 1-7% of the facts of its frontiers of 564-1,230 facts, one of 30%), so the extra calls
    # and saturations cost more than they save. On a batch's own small frontier, a pass runs
    # only while its last run there in the step proved a fact (``_paying``): a 1% delete of
    # CRDT checks 1,662 batches, 523 of them of 64 facts or more, whose passes prove nearly
    # nothing (without this, two calls each for none: 430 -> 480 ms of checks). Below this
    # size a batch's own frontier is fully expanded at once, its outright instances with the
    # others: its expansion costs about one call (a one-fact delete of RDFS over LUBM(1):
    # 0.63-0.68 ms at 64, 0.70-0.83 at 1, the passes' calls for one fact in each step).
    # Measured (1% delete, CPU, in process): RDFS over LUBM(1), whose two batches' own
    # frontiers (1,009 and 765 facts) have 8% and 83% of their facts proved by the passes,
    # the second through the unfolded rules: 8.3-9.5 -> 6.7-7.4 ms (passes on frontiers of
    # 2,048 facts or more before); Andersen over 1,000 variables, CRDT and TC unchanged;
    # Andersen with passes on every frontier of 512 facts or more instead: 94-97 -> 118-121.
    BATCH_OUTRIGHT_FIRST = 64

    def __init__(self, evaluator: RelationalEvaluator, rules: StepRules, new: Database,
                 selections: KeptSelections | None = None, kept: RelationSets | None = None):
        self._evaluator, self._rules = evaluator, rules
        self._relations = rules.relations
        self._instances = rules.instances
        self._consequences = rules.consequences
        self._empty = {n: new[n].columns[:, :0] for n in rules.relations}
        self._facts = {n: CheckedFacts(new[n].arity) for n in rules.relations}
        self._reads = StepReads(evaluator, rules, new, self._facts, selections, kept)
        self._forward = ForwardSaturation(rules, self._reads, self._facts)
        self._two_steps = TwoStepProofs(rules.two_steps, new)
        self._copy_proofs = CopyProofs(rules.copies, new, self._reads.member_set)
        # the outright instance rules but those ``CopyProofs`` proves through (found once)
        self._uncopied = tuple(
            i for i in self._instances if not i.atoms
            and ((copy := copy_of(i, self._relations)) is None or copy != rules.copies.get(i.head)))
        self._expansion = Expansion(self._facts, self._reads.member_set, self._empty,
                                    rules.copies)
        # per pass (outright rules, two-step proofs, unfolded rules): whether its last run on
        # a batch's own small frontier proved a fact (``_outright_first``)
        self._paying = [True, True, True]

    def deleted(self, seeds: Mapping[str, np.ndarray]) -> dict[str, Relation]:
        """The old facts of the stratum that no longer have a proof, given ``seeds``: the
        heads (a bag, old facts) of the old instances that used a changed lower fact."""
        parts: dict[str, list[np.ndarray]] = {n: [] for n in self._relations}
        if any(rows.shape[1] for rows in seeds.values()):
            self._reads.add_selections()
        queue = seeds
        while True:
            fresh = {n: self._facts[n].check(rows) for n, rows in queue.items()}
            if not any(len(positions) for positions in fresh.values()):
                break
            gone = self._check(fresh)
            for name, rows in gone.items():
                parts[name].append(rows)
            if not self._consequences or not any(rows.shape[1] for rows in gone.values()):
                break
            reads = self._reads.new.with_relations(
                {delta_name(n): Relation(gone.get(n, self._empty[n]), unique=True)
                 for n in self._relations})
            derived = self._reads.derive(self._consequences, reads,
                                         {delta_name(n): gone.get(n, self._empty[n])
                                          for n in self._relations})
            # an instance with a lower fact the update added may have a head that is no old fact
            queue = {n: rows[:, self._reads.member_set(n).contains(rows)]
                     for n, rows in derived.items()}
        return {n: Relation(concat_batches(parts[n], self._empty[n]), unique=True)
                for n in self._relations}

    def prepare(self) -> None:
        """Make what ``deleted``'s rounds would make before their first probe (an engine's
        Bootstrap does this once): the plans of the instance, saturation and consequence
        rules with their constant selections, the evaluator's indexes they probe, and the
        hash sets their left-out atoms are probed in. Cost: O(n) per selection and set, and
        O(n log n) per index, not kept yet."""
        self._reads.add_selections()
        rules = [i.rule for i in (*self._instances, *self._rules.unfolded)] + [
            *self._rules.saturation, *self._consequences, *self._forward.near_heads().cut_rules]
        self._evaluator.prepare(rules, with_empty_reads(rules, self._reads.new))
        for instance in (*self._instances, *self._rules.unfolded):
            for position in instance.members:
                self._reads.member_set(instance.atoms[position][0])
            for relation, _ in instance.probed:
                self._reads.member_set(relation)

    @property
    def _outright(self) -> tuple[InstanceRule, ...]:
        """The instance rules without stratum atoms: an instance proves its head outright."""
        return tuple(i for i in self._instances if not i.atoms)

    @property
    def _inferred(self) -> tuple[InstanceRule, ...]:
        """The instance rules with stratum atoms."""
        return tuple(i for i in self._instances if i.atoms)

    # -- one batch -------------------------------------------------------------------------------

    def _check(self, fresh: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Check a batch of facts (just put in C: ``fresh``, their positions there, so the
        batch's checked facts are C's rows from there on); the checked facts left
        unproved."""
        start = {n: facts.checked_count - (len(fresh[n]) if n in fresh else 0)
                 for n, facts in self._facts.items()}
        lazy: dict[str, list[np.ndarray]] = {n: [] for n in self._relations}
        frontier, full, batch = fresh, False, True
        while True:
            if not any(len(positions) for positions in frontier.values()):
                frontier = {n: self._facts[n].unproved(np.concatenate(parts)) if parts
                            else NO_POSITIONS for n, parts in lazy.items()}
                lazy = {n: [] for n in self._relations}
                if not any(len(positions) for positions in frontier.values()):
                    break
                full = True
            size = sum(len(positions) for positions in frontier.values())
            small = size < self.SMALL_FRONTIER
            outright = (not full and bool(self._outright)
                        and (not small or (batch and size >= self.BATCH_OUTRIGHT_FIRST)))
            batch = False
            if outright:
                frontier, outright = self._outright_first(frontier, small)
            # a fact left has no outright instance (a fully expanded one was in a lazy
            # frontier before, whose outright instances were found): only the other rules can
            # have instances of it
            instances = self._reads.instances_of(
                frontier, self._inferred if outright or not small else self._instances)
            self._forward.saturate(self._expansion.proving(instances))
            expansion, partial = self._expansion.next_atoms(instances, full or small)
            for name, parts in partial.items():
                lazy[name].extend(parts)
            frontier = {n: self._facts[n].check(rows) for n, rows in expansion.items()}
            full = False
        return {n: facts.unproved_since(start[n]) for n, facts in self._facts.items()}

    def _outright_first(self, frontier: dict[str, np.ndarray], small: bool
                        ) -> tuple[dict[str, np.ndarray], bool]:
        """The passes before a frontier's round: its facts proved outright (the outright
        rules, the two-step proofs, the unfolded rules in turn), each pass saturated from and
        its frontier cut to the facts left unproved (see the module doc); on a batch's own
        small frontier, a pass only while its last such run proved a fact (``_paying``).
        Returns the frontier left and whether the outright rules' pass ran."""
        ran = False
        for number, rules in enumerate((self._outright, self._two_steps, self._rules.unfolded)):
            size = sum(len(positions) for positions in frontier.values())
            if not rules or not size or (small and not self._paying[number]):
                continue
            self._forward.saturate(self._proved_by(number, frontier))
            frontier = {n: self._facts[n].unproved(positions)
                        for n, positions in frontier.items()}
            ran |= number == 0
            if small:
                self._paying[number] = sum(len(p) for p in frontier.values()) < size
        return frontier, ran

    def _proved_by(self, number: int, frontier: dict[str, np.ndarray]
                   ) -> dict[str, list[np.ndarray]]:
        """The facts of ``frontier`` that pass ``number`` of ``_outright_first`` proves (a
        bag by relation): the outright rules (the copy rules through ``CopyProofs``), the
        two-step proofs, the unfolded rules."""
        if number == 1:
            return self._two_steps.proved(self._facts, frontier)
        if number == 2:
            return self._expansion.proving(self._reads.instances_of(frontier,
                                                                    self._rules.unfolded))
        proved = self._copy_proofs.proved(self._facts, frontier)
        uncopied = self._uncopied
        if uncopied:
            for name, parts in self._expansion.proving(
                    self._reads.instances_of(frontier, uncopied)).items():
                proved.setdefault(name, []).extend(parts)
        return proved
