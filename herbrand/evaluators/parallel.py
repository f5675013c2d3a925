"""The ``parallel`` backend: each fixpoint iteration's work runs on several threads.

One iteration of a stratum applies its rules (after the first, their semi-naive delta variants)
and keeps the derived rows that are new. The parallel step cuts that work into one task per
worker thread and runs the tasks at once:

- when the reads hold delta relations (``@delta:r``) with at least ``min_rows`` rows in all,
  each delta is cut into ``workers`` contiguous slices and task i runs every rule over slice i of
  every delta (a delta variant reads exactly one delta atom, so the tasks' results together are
  the whole iteration's);
- otherwise (a stratum's first pass, a non-recursive stratum) the rules are dealt round-robin
  to the tasks.

Each task derives its rows with its own copy of the rule evaluator (a new instance with the same
hyperparameters, so no index cache is shared between threads) and drops those already known
(``RowSet.unseen``, a read-only hash probe); the calling thread then inserts what remains into
the known rows. The heavy kernels (numpy sort, searchsorted, take, the numba ``nogil`` kernels
of ``herbrand.indexes`` and ``row_sets``) release the GIL, so threads run on
separate cores without copying the relations to other processes (processes with shared memory
were the alternative; threads measured faster because nothing is serialised).

Same results as ``local`` for every evaluator; the cost is the local cost divided among the
workers, plus the serial insertion of the tasks' unseen rows (O(m) expected) per iteration.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from herbrand.evaluators.fixpoint import (
    Step,
    StratifiedFixpoint,
    Threads,
    serial_step,
)
from herbrand.evaluators.morsels import in_morsels, split_work
from herbrand.framework.contracts import (
    Backend,
    BackendTags,
    FixpointEvaluator,
    ProgressObserver,
    RuleEvaluator,
    StratumStats,
)
from herbrand.framework.errors import EvaluationError, UsageError
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Program, Rule

if TYPE_CHECKING:  # numba: loaded only by the batch executor's known-row sets
    from herbrand.evaluators.row_sets import RowSet


def parallel_step(pool: Executor, evaluators: Sequence[RuleEvaluator], min_rows: int) -> Step:
    """A fixpoint step running ``split_work``'s tasks on ``pool``, task i on ``evaluators[i]``."""
    alone = in_morsels(serial_step(evaluators[0]))  # one task: the fixpoint drops known rows
    steps = [in_morsels(serial_step(evaluator), drop_known=True) for evaluator in evaluators]

    def step(rules: Sequence[Rule], reads: Database,
             known: Mapping[str, RowSet]) -> dict[str, np.ndarray]:
        tasks = split_work(rules, reads, len(steps), min_rows)
        if len(tasks) == 1:
            return alone(*tasks[0], known)
        futures = [pool.submit(steps[i], task_rules, task_reads, known)
                   for i, (task_rules, task_reads) in enumerate(tasks)]
        results = [future.result() for future in futures]
        names = {name for result in results for name in result}
        return {name: np.concatenate([r[name] for r in results if name in r], axis=1)
                for name in names}

    return step


class ParallelBackend(Backend):
    """Runs the fixpoint with each iteration split among ``workers`` threads (default: the
    machine's cores). Iterations whose deltas hold fewer than ``min_rows`` rows run on one
    thread (threads would cost more than they save); by default, the evaluator's own threshold
    (``RuleEvaluator.parallel_min_rows``: the native executor's tasks cost far less to start
    than a batch executor's). ``threads`` is ``workers``: ``herbrand run``
    formats the outputs on as many."""

    tags = BackendTags(parallel=True, distributed=False, scale="workers")

    @classmethod
    def scale_setting(cls, text: str) -> int:
        if not text.isdigit() or int(text) < 1:
            raise UsageError(f"workers must be a whole number >= 1, got {text!r}")
        return int(text)

    @classmethod
    def cores(cls, setting: object | None) -> int:
        return setting or os.cpu_count() or 1

    def __init__(self, workers: int | None = None, min_rows: int | None = None):
        if workers is not None and workers < 1:
            raise UsageError(f"parallel backend: workers must be >= 1, got {workers}")
        self.workers = workers if workers is not None else (os.cpu_count() or 1)
        self.min_rows = min_rows

    @property
    def threads(self) -> int:
        return self.workers

    def materialize(
        self,
        program: Program,
        database: Database,
        *,
        evaluator: RuleEvaluator,
        fixpoint: type[FixpointEvaluator],
        observer: ProgressObserver | None = None,
    ) -> tuple[Database, list[StratumStats]]:
        if not issubclass(fixpoint, StratifiedFixpoint):
            raise EvaluationError(
                f"parallel backend: fixpoint {fixpoint.__name__} does not take a step; "
                "use naive or seminaive"
            )
        evaluators = [evaluator] + [type(evaluator)(**evaluator.hyperparameters())
                                    for _ in range(self.workers - 1)]
        min_rows = self.min_rows if self.min_rows is not None else evaluator.parallel_min_rows
        with ThreadPoolExecutor(self.workers, thread_name_prefix="herbrand") as pool:
            runner = fixpoint(evaluator, step=parallel_step(pool, evaluators, min_rows),
                              threads=Threads(pool, self.workers, min_rows))
            result = runner.materialize(program, database, observer=observer)
        return result, list(runner.stats)
