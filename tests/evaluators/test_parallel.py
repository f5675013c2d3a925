import pytest

import herbrand
from herbrand.evaluators.parallel import ParallelBackend
from herbrand.framework.contracts import FixpointEvaluator
from herbrand.framework.errors import EvaluationError, UsageError
from herbrand.framework.registry import BACKENDS
from herbrand.framework.storage import Database
from herbrand.framework.symbols import SymbolTable
from herbrand.workloads import gnp

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""


@pytest.mark.parametrize("workers", [1, 2, 4])
def test_parallel_equals_local_on_a_random_graph(workers):
    edges = gnp(300, 0.01, seed=3)
    local = herbrand.materialize(TC, facts={"e": edges}, evaluator="relational")
    parallel = herbrand.materialize(TC, facts={"e": edges}, evaluator="relational",
                                    backend=ParallelBackend(workers=workers, min_rows=0))
    assert parallel["tc"] == local["tc"]


def test_registered_with_its_tags():
    assert BACKENDS.get("parallel").tags.parallel
    assert repr(ParallelBackend(workers=2)) == "ParallelBackend(workers=2, min_rows=None)"


def test_its_workers_are_the_threads_a_run_formats_outputs_on():
    assert ParallelBackend(workers=3).threads == 3
    assert BACKENDS.get("local")().threads == 1


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
