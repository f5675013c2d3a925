"""The elastic engine's relational evaluator: the join indexes and plans a Bootstrap left
unbuilt are built outside an Update's budget.

The relational evaluator keeps a join index per (relation name, key) and extends it when the
relation grows (``RelationalEvaluator.relation_index``). The native Bootstrap builds none, and
its relations are new, so the first Update after it builds every index it probes from
scratch: on RDFS over LUBM(1) eight sorts, about 45 ms against an Update's own 15 ms. That is
the Bootstrap's deferred set-up, like the proof counts and row indexes (``elastic_budget``):
``SetUpEvaluator`` runs the first build of each (name, key) since the last ``reset`` (a
Bootstrap) inside ``budget.exempt`` while an Update runs (``deferring``), and forces it there
(a lazy index such as sorted_vector sorts on its first probe). A later rebuild of the same
(name, key), when its relation changed other than by growing, is the Update's own work and
counts. So is the translation of a rule the evaluator has no plan of yet (the native
Bootstrap plans none of the Update's rules, and plans are kept across Bootstraps): the first
Update after the first Bootstrap translates each rule it runs (on RDFS over LUBM(1), 13 rules
in about 2 ms, against a budget of about 18 ms).

Not safe for concurrent use (as ``RelationalEvaluator``). Cost: a set lookup per index probe.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import numpy as np

from herbrand.evaluators.incremental.elastic_budget import SwitchBudget
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.contracts import IndexBacking
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Rule
from herbrand.translators import ir


class SetUpEvaluator(RelationalEvaluator):
    """A RelationalEvaluator whose first build of each index since ``reset`` is exempt from
    the budget of the Update under way (see the module doc)."""

    def __init__(self, index: str = "sorted_vector"):
        super().__init__(index=index)
        self._budget = SwitchBudget.unlimited()
        self._held: set[tuple[str, tuple[int, ...]]] = set()  # built since the last reset

    def reset(self) -> None:
        """A Bootstrap starts: every index built from now on is new set-up. O(1)."""
        self._held = set()

    @contextmanager
    def deferring(self, budget: SwitchBudget) -> Iterator[None]:
        """First builds of indexes inside the block are exempt from ``budget``."""
        self._budget = budget
        try:
            yield
        finally:
            self._budget = SwitchBudget.unlimited()

    def relation_index(self, name: str, relation: Relation, key: tuple[int, ...]) -> IndexBacking:
        if (name, key) in self._held:
            return super().relation_index(name, relation, key)
        self._held.add((name, key))
        return self._budget.exempt(partial(self._built, name, relation, key))

    def _translated(self, rule: Rule, instance: Database) -> ir.Plan:
        return self._budget.exempt(partial(super()._translated, rule, instance))

    def _built(self, name: str, relation: Relation, key: tuple[int, ...]) -> IndexBacking:
        """The index, built now: an empty probe makes a lazy index sort its rows."""
        index = super().relation_index(name, relation, key)
        index.join(np.zeros((len(key), 0), dtype=np.int64), tuple(range(len(key))))
        return index
