"""The least model with the height of every tuple: the iteration that first derived it.

``record_heights(program, database)`` materializes ``program`` by semi-naive evaluation with
the batch executor (``RelationalEvaluator``) and counts iterations globally, across strata: the
tuples new in the k-th iteration of the whole run get height k; input facts and inline facts
have height 0. So a tuple of height h > 0 has a derivation whose positive premises all have
heights below h (semi-naive reads the instance as it was before the iteration), and a premise
from a lower stratum always has a smaller height than any tuple of a higher one.

This is ``explain``'s cost alone: ``materialize`` never records heights. The native executor
is not used here because it runs a stratum's iterations inside one kernel, with tuples of an
iteration visible to the same iteration: its iterations are not semi-naive ones.

Heights are recorded without a loop per tuple: a fixpoint appends each iteration's new tuples
to its relations (``Relation.extend``), so a relation's rows are its base rows followed by its
deltas in order, and its heights are one ``np.repeat`` of the iteration numbers over the delta
sizes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from herbrand.evaluators.fixpoint import SemiNaiveFixpoint
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.analysis import Stratum
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Program


@dataclass(frozen=True)
class HeightedModel:
    """A least model (``database``, every declared relation present) and, for each of its
    relations, an int64 array of the heights of its rows, aligned with ``Relation.columns``."""

    database: Database
    heights: Mapping[str, np.ndarray] = field(repr=False)


def record_heights(program: Program, database: Database) -> HeightedModel:
    """The least model of ``program`` over ``database`` with the height of each tuple (see the
    module doc). Raises the analysis and evaluation errors of ``materialize``. Cost: one
    semi-naive materialization with the batch executor, plus O(n) for the height arrays."""
    fixpoint = _HeightRecordingFixpoint(RelationalEvaluator())
    model = fixpoint.materialize(program, database)
    heights = {}
    for name, relation in model.items():
        counts = fixpoint.delta_sizes.get(name, {})
        base = len(relation) - sum(counts.values())
        heights[name] = np.repeat(np.array([0, *counts], dtype=np.int64),
                                  [base, *counts.values()])
    return HeightedModel(model, heights)


class _HeightRecordingFixpoint(SemiNaiveFixpoint):
    """Semi-naive evaluation that notes, for each relation, how many new tuples each global
    iteration gave it (``delta_sizes[relation][iteration]``)."""

    def __init__(self, rule_evaluator: RelationalEvaluator):
        super().__init__(rule_evaluator)
        self.iteration = 0
        self.delta_sizes: dict[str, dict[int, int]] = {}

    def run_stratum(self, stratum: Stratum, instance: Database, run) -> Database:
        return super().run_stratum(stratum, instance, _CountingRun(run, self))


class _CountingRun:
    """Stands for the fixpoint's run object in ``SemiNaiveFixpoint.run_stratum`` (whose only
    use of it, for an evaluator that does not run strata itself, is ``apply``): each
    iteration goes to ``run`` and its delta sizes are noted in ``recorder``."""

    def __init__(self, run, recorder: _HeightRecordingFixpoint):
        self.run = run
        self.recorder = recorder

    def apply(self, stratum: Stratum, rules, instance: Database, reads: Database
              ) -> tuple[Database, dict[str, Relation]]:
        grown, deltas = self.run.apply(stratum, rules, instance, reads)
        recorder = self.recorder
        recorder.iteration += 1
        for name, delta in deltas.items():
            if len(delta):
                recorder.delta_sizes.setdefault(name, {})[recorder.iteration] = len(delta)
        return grown, deltas
