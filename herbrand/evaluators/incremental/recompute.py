"""``recompute``: the baseline engine, re-materializing from scratch after every update.

Keeps the input relations as given and the materialization; an update applies the deletes and
inserts to the inputs, runs the semi-naive fixpoint with the default (native) executor over the
whole program again, as ``herbrand.materialize`` does, and diffs the two materializations. Cost per update: one full materialization
plus O(n log n) to diff each relation. State beyond the materialization: none (the inputs are
part of it).
"""

from __future__ import annotations

from collections.abc import Mapping

from herbrand.evaluators.fixpoint import SemiNaiveFixpoint
from herbrand.evaluators.incremental.changes import apply_update, database_changes
from herbrand.evaluators.incremental.engine_base import StoredEngine
from herbrand.evaluators.native.evaluator import NativeEvaluator
from herbrand.framework.contracts import Batch, BatchChanges
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Program


class RecomputeEngine(StoredEngine):
    """Re-materialize after every update. ``index``: None for the native executor's own hash
    indexes (the fastest materialization, so the fair reference of every other engine), or an
    index backing, as ``NativeEvaluator(index=...)`` takes it."""

    def __init__(self, index: str | None = None):
        self.index = index
        self._fixpoint = SemiNaiveFixpoint(NativeEvaluator(index=index))
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
