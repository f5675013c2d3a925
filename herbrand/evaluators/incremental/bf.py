"""``bf``: the backward/forward algorithm (Motik, Nenov, Piro, Horrocks, AAAI 2015), the one
behind RDFox's incremental maintenance, with semi-naive insertion.

Per stratum, in evaluation order, given the changes of the relations below it:

1. Deletion (``backward_forward``): the facts that lost a derivation (heads of the old rule
   instances using a removed fact of a positive literal, an added fact of a negated literal, or
   a changed aggregate: the same change variants as ``dred``'s overdeletion) are checked for
   another proof, backwards from them and forwards from what is proved, before anything is
   deleted; only the facts left without a proof are deleted, and the heads of the instances
   using them are checked in turn. Where DRed overdeletes everything that depends on a removed
   fact and rederives most of it, B/F touches only the facts it checks.
2. Insertion, as ``dred``'s: the heads of the rule instances using an added fact of a positive
   literal, a removed fact of a negated literal, or a changed aggregate, over the new state,
   then semi-naive iteration to the fixpoint.

The stratum's changes are ``inserted - deleted`` and ``deleted - inserted``. Negation and
aggregates need no fallback: they read lower strata only, and the check reads their new facts.

Cost per update: the deletion step's rounds (see ``backward_forward``) plus the insertion
step's semi-naive work. State beyond the materialization: the base facts of derived relations
(``@base:`` relations) and the kept hash tables of the relations, as ``dred``. Atomic as
``dred``: every step reads immutable Relations and the new state is committed at the end.
"""

from __future__ import annotations

from collections.abc import Sequence

from herbrand.evaluators.incremental.backward_forward import BackwardForward
from herbrand.evaluators.incremental.dred import DRedEngine
from herbrand.evaluators.incremental.instance_rules import StepRules
from herbrand.framework.analysis import Stratum
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Program, Rule


class BFEngine(DRedEngine):
    """Backward/forward deletion, semi-naive insertion. ``index``: the relational evaluator's
    index backing (``spine`` by default, as ``dred``)."""

    STRATEGY = "bf"

    def __init__(self, index: str = "spine", prepare: bool = True):
        super().__init__(index, prepare)
        self._steps: dict[int, tuple[Stratum, StepRules]] = {}  # by the stratum's identity

    def bootstrap(self, program: Program, database: Database) -> None:
        self._steps = {}  # the program's strata are new
        super().bootstrap(program, database)

    def _prepare_deletion(self, stratum: Stratum, state: Database,
                          deletion_rules: Sequence[Rule]) -> None:
        """Prepare ``_delete``'s rules over ``state``: the seeds' (the deletion variants) and
        the backward/forward step's (``BackwardForward.prepare``)."""
        self._prepare_rules(deletion_rules, state)
        BackwardForward(self._evaluator, self._step_rules(stratum, state), state,
                        self._selections, self._sets).prepare()

    def _delete(self, stratum: Stratum, old: Database, new: Database,
                deletion_rules: Sequence[Rule]) -> tuple[dict[str, Relation],
                                                         dict[str, Relation], dict]:
        """The facts without a proof after the change (no seeds: what is proved stays)."""
        seeds = self._derive(deletion_rules, old, True) if deletion_rules else {}
        gone = BackwardForward(self._evaluator, self._step_rules(stratum, new), new,
                               self._selections, self._sets).deleted(seeds)
        return gone, {name: self._without(name, old[name], gone[name])
                      for name in stratum.relations}, {}

    def _step_rules(self, stratum: Stratum, state: Database) -> StepRules:
        """The deletion step's rules of ``stratum``, made at its first step (reading the
        kept selections of ``state``'s relations, which every later state holds too) and
        kept. O(1), or O(rules) once."""
        kept = self._steps.get(id(stratum))
        if kept is None or kept[0] is not stratum:
            rules = StepRules.of(stratum, lambda name: name in state
                                 and self._selections.keeps(name))
            kept = self._steps[id(stratum)] = (stratum, rules)
        return kept[1]
