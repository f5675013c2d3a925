"""``recompute``: the baseline engine, re-materializing from scratch after every update.

Keeps the input relations as given and the materialization; an update applies the deletes and
inserts to the inputs, runs the semi-naive fixpoint with the relational evaluator over the whole
program again and diffs the two materializations. Cost per update: one full materialization
plus O(n log n) to diff each relation. State beyond the materialization: none (the inputs are
part of it).
"""

from __future__ import annotations

from collections.abc import Mapping

from herbrand.evaluators.fixpoint import SemiNaiveFixpoint
from herbrand.evaluators.incremental.changes import apply_update, database_changes
from herbrand.evaluators.incremental.engine_base import StoredEngine
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.contracts import Batch, BatchChanges
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Program


class RecomputeEngine(StoredEngine):
    """Re-materialize after every update. ``index``: the relational evaluator's index backing."""

    def __init__(self, index: str = "sorted_vector"):
        self.index = index
        self._fixpoint = SemiNaiveFixpoint(RelationalEvaluator(index=index))
        self._program: Program | None = None
        self._inputs: Database | None = None
        super().__init__()

    def bootstrap(self, program: Program, database: Database) -> None:
        """Materialize ``program`` over ``database``. Cost: one materialization."""
        materialized = self._fixpoint.materialize(program, database)
        self._program, self._inputs, self._database = program, database, materialized
        self._strategy = "bootstrap"

    def update(self, insert: Mapping[str, Batch], delete: Mapping[str, Batch]) -> BatchChanges:
        """Apply the update to the inputs and materialize again. Cost: one materialization plus
        the diff of every relation."""
        inputs = self._inputs.with_relations({
            name: apply_update(self._database[name], delete.get(name), insert.get(name))[0]
            for name in insert.keys() | delete.keys()
        })
        materialized = self._fixpoint.materialize(self._program, inputs)
        changes = database_changes(self._database, materialized, list(materialized))
        self._inputs, self._database, self._strategy = inputs, materialized, "recompute"
        return changes

    def state_size(self) -> tuple[int, int]:
        """No state beyond the materialization: (0, 0)."""
        return 0, 0
