import numpy as np
import pytest

import herbrand
from herbrand.evaluators.fixpoint import DELTA_PREFIX
from herbrand.evaluators.parallel import ParallelBackend, split_work
from herbrand.framework.contracts import FixpointEvaluator
from herbrand.framework.errors import EvaluationError, UsageError
from herbrand.framework.registry import BACKENDS
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.workloads import gnp

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""


def _reads(delta_rows: int) -> Database:
    columns = np.arange(2 * delta_rows, dtype=np.int64).reshape(2, delta_rows)
    return Database({"e": Relation(columns), DELTA_PREFIX + "tc": Relation(columns)},
                    SymbolTable(), {})


def test_large_deltas_are_cut_into_one_slice_per_worker():
    rules = herbrand.parse(TC).rules
    tasks = split_work(rules, _reads(10), parts=3, min_rows=5)
    assert len(tasks) == 3
    slices = [reads[DELTA_PREFIX + "tc"] for _, reads in tasks]
    assert sum(map(len, slices)) == 10
    assert Relation(np.concatenate([s.columns for s in slices], axis=1)) == \
        tasks[0][1]["e"]  # the slices partition the delta; the full relations are shared
    assert all(task_rules == rules for task_rules, _ in tasks)


def test_small_deltas_deal_the_rules_round_robin():
    rules = herbrand.parse(TC).rules
    tasks = split_work(rules, _reads(10), parts=3, min_rows=100)
    assert [len(task_rules) for task_rules, _ in tasks] == [1, 1]
    assert {r for task_rules, _ in tasks for r in task_rules} == set(rules)


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_parallel_equals_local_on_a_random_graph(workers):
    edges = gnp(300, 0.01, seed=3)
    local = herbrand.materialize(TC, facts={"e": edges}, evaluator="relational")
    parallel = herbrand.materialize(TC, facts={"e": edges}, evaluator="relational",
                                    backend=ParallelBackend(workers=workers, min_rows=0))
    assert parallel["tc"] == local["tc"]


def test_registered_with_its_tags():
    assert BACKENDS.get("parallel").tags.parallel
    assert repr(ParallelBackend(workers=2)) == "ParallelBackend(workers=2, min_rows=20000)"


def test_bad_workers_and_foreign_fixpoints_are_clear_errors():
    with pytest.raises(UsageError, match="workers must be >= 1, got 0"):
        ParallelBackend(workers=0)

    class Foreign(FixpointEvaluator):
        def materialize(self, program, database, observer=None):
            return database

    with pytest.raises(EvaluationError, match="Foreign"):
        ParallelBackend(workers=2).materialize(
            herbrand.parse(TC), Database({}, SymbolTable(), {}),
            evaluator=None, fixpoint=Foreign)
