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

A universe given by ``universes`` (a derived relation's rows of both epochs with their
positions, ``Universe``) is searched by its own row index (``Universe.find``) where it can be:
a join whose key is every column but the position (a provenance query of the re-discovery
term or of the proof counts probes whole rows) gets the rows ``find`` finds: no index is
built (``_FoundRows``). On TC over graph10000 the first 1% delete after a Bootstrap built the
key (0, 1) index of the closure's 262,144 rows in 9 ms, a second copy of its rows.

Not safe for concurrent use (as ``RelationalEvaluator``). Cost: a set lookup per index probe.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import partial

import numpy as np

from herbrand.evaluators.incremental.elastic_budget import SwitchBudget
from herbrand.evaluators.incremental.elastic_universe import Universe
from herbrand.evaluators.incremental.row_index import ABSENT
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
        self._universes: dict[str, Universe] = {}  # relation name -> its universe (``universes``)

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
            self._universes = {}

    def universes(self, universes: Mapping[str, Universe]) -> None:
        """Until the ``deferring`` block ends, the relation named by each key holds the rows
        of its universe with their positions (``Universe.relation``, while it is that
        relation): its whole-row joins read the universe's row index (see the module doc).
        O(len(universes))."""
        self._universes.update(universes)

    def relation_index(self, name: str, relation: Relation, key: tuple[int, ...]) -> IndexBacking:
        universe = self._universes.get(name)
        if (universe is not None and key == tuple(range(relation.arity - 1))
                and universe.holds(relation)):
            return _FoundRows(universe, self._budget)
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


class _FoundRows:
    """The whole-row join of a universe's relation (its rows with their positions), answered
    by the universe's row index: what ``RelationalEvaluator._index_join`` asks of an index.
    The first search of a universe without its row index builds it: the Bootstrap's
    deferred work, exempt from ``budget``. O(m) expected per join of m probe rows."""

    def __init__(self, universe: Universe, budget: SwitchBudget):
        self._universe, self._budget = universe, budget

    def join(self, probe: np.ndarray, probe_key: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(positions of the probe rows found, the stored rows they match, with their
        positions: taken from the universe's rows, so that its relation's are never read)."""
        rows = probe[list(probe_key)]
        find = partial(self._universe.find, rows)
        at = find() if self._universe.indexed else self._budget.exempt(find)
        found = np.flatnonzero(at != ABSENT)
        return found, self._universe.rows_at(at[found]).columns
