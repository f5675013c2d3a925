"""The ``local`` backend: the fixpoint runs in this process on one thread."""

from __future__ import annotations

from herbrand.framework.contracts import (
    Backend,
    BackendTags,
    FixpointEvaluator,
    ProgressObserver,
    RuleEvaluator,
    StratumStats,
)
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Program


class LocalBackend(Backend):
    """Runs ``fixpoint(evaluator)`` in the calling thread; costs are the evaluator's."""

    tags = BackendTags(parallel=False, distributed=False)

    def materialize(
        self,
        program: Program,
        database: Database,
        *,
        evaluator: RuleEvaluator,
        fixpoint: type[FixpointEvaluator],
        observer: ProgressObserver | None = None,
    ) -> tuple[Database, list[StratumStats]]:
        runner = fixpoint(evaluator)
        result = runner.materialize(program, database, observer=observer)
        return result, list(runner.stats)
