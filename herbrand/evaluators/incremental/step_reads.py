"""What one deletion step of the backward/forward engine (``bf``, ``backward_forward``) reads:
the new lower strata and the stratum's old facts with the constant selections its rules read,
the hash sets of those relations, and the evaluator's instances and derivations over them.

Every rule of the step reads ``new``, the consequences of the deleted facts too (see
``BackwardForward``). Reads only immutable Relations; the hash sets are built once per step,
or taken from the engine's kept ``RelationSets`` and put back (only read here).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.expansion import InstanceRows
from herbrand.evaluators.incremental.instance_rules import FOCUS, InstanceRule, RuleReads, StepRules
from herbrand.evaluators.incremental.relation_sets import RelationSet, RelationSets
from herbrand.evaluators.incremental.selections import KeptSelections, with_selections
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Rule

NO_POSITIONS = np.zeros(0, dtype=np.int64)


class StepReads:
    """The reads of one deletion step: ``new`` (the new lower strata and the stratum's old
    facts, with the rules' constant selections once ``add_selections`` ran), ``facts`` (C and
    P per relation of the stratum), ``selections``: the engine's kept constant selections,
    if it keeps any; ``kept``: the engine's hash sets of its relations, if it keeps them."""

    def __init__(self, evaluator: RelationalEvaluator, rules: StepRules, new: Database,
                 facts: Mapping[str, CheckedFacts], selections: KeptSelections | None = None,
                 kept: RelationSets | None = None):
        self.new = new
        self._evaluator, self._rules, self._facts = evaluator, rules, facts
        self._selections, self._kept = selections, kept
        self._members: dict[str, RelationSet] = {}

    def add_selections(self) -> None:
        """Add the constant selections the rules read to ``new`` (the relations the rounds
        never change): the kept selections (``selections``), or one O(n) scan per distinct
        selection for the whole step, instead of one per rule application."""
        self.new = with_selections(self.new, self._rules.selections, self._selections)

    def instances_of(self, frontier: Mapping[str, np.ndarray],
                     rules: Sequence[InstanceRule]) -> list[InstanceRows]:
        """Every instance of ``rules`` (over the old stratum and the new lower strata) of a
        frontier fact (``frontier``: their positions in C), with its positions in C."""
        if not rules:
            return []
        focus = {FOCUS + n: self._focus(n, frontier.get(n, NO_POSITIONS))
                 for n in self._rules.relations}
        reads = self.new.with_relations(
            {name: Relation(rows, unique=True) for name, rows in focus.items()})
        seen: dict[tuple, bool] = {}
        active = [i for i in rules if self._reads(i.rule).may_derive(focus, reads, seen)]
        if not active:
            return []
        derived = self._evaluator.derive([i.rule for i in active], reads)
        return [InstanceRows.found(i, self._held(i, derived[i.rule.head.relation]),
                                   self._facts) for i in active]

    def derive(self, rules: Sequence[Rule], reads: Database, batches: Mapping[str, np.ndarray],
               useful: Callable[[Rule], bool] | None = None) -> dict[str, np.ndarray]:
        """The evaluator's derivations of the ``rules`` that may derive a row from ``batches``
        and ``reads`` (``RuleReads.may_derive``) and, if given, that ``useful`` accepts (asked
        only of those)."""
        seen: dict[tuple, bool] = {}
        active = [rule for rule in rules if self._reads(rule).may_derive(batches, reads, seen)
                  and (useful is None or useful(rule))]
        return self._evaluator.derive(active, reads) if active else {}

    def member_set(self, name: str) -> RelationSet:
        """The hash set of relation ``name`` as the instances read it (old in the stratum, new
        below): the engine's kept one (taken and put back: only read here), else built. O(1),
        or O(n) once."""
        members = self._members.get(name)
        if members is None:
            relation = self.new[name]
            members = self._members[name] = (RelationSet(relation) if self._kept is None
                                             else self._kept.take(name, relation))
            if self._kept is not None:
                self._kept.put(name, members)
        return members

    def _focus(self, name: str, positions: np.ndarray) -> np.ndarray:
        """The focus rows of relation ``name``: the facts at ``positions`` in C, each followed
        by its position (``instance_rules.AT``). O(rows)."""
        rows = self._facts[name].rows_at(positions)
        focus = np.empty((rows.shape[0] + 1, rows.shape[1]), dtype=np.int64)
        focus[:-1] = rows
        focus[-1] = positions
        return focus

    def _reads(self, rule: Rule) -> RuleReads:
        """``rule``'s RuleReads (the step runs the rule objects of ``StepRules``, which holds
        them by identity; a rule of its own, a cut one, gets them made). O(1), or O(body
        length)."""
        reads = self._rules.reads.get(id(rule))
        return RuleReads.of(rule) if reads is None else reads

    def _held(self, instance: InstanceRule, rows: np.ndarray) -> np.ndarray:
        """The ``rows`` whose ``probed`` atoms their relations hold (the new lower ones, the
        old ones of the stratum). O(rows) expected."""
        if not instance.probed or not rows.shape[1]:
            return rows
        mask = np.ones(rows.shape[1], dtype=bool)
        for relation, columns in instance.probed:
            mask &= self.member_set(relation).contains(rows[list(columns)])
        return rows[:, mask]
