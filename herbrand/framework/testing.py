"""Conformance suites and the oracle they compare with.

``oracle_materialize`` is a deliberately naive model computation over Python sets of decoded
values (ints and strings), written independently of every evaluator: for each stratum of
``analyse(program)``, apply every rule by brute force (each positive atom scans its whole
relation) until nothing new appears. ``check_model`` checks a result against the program by
brute force: every rule satisfied, every tuple supported, the inputs kept.

``check_evaluator(evaluator_factory, fixpoint_factory)`` runs the named checks of
``evaluator_checks()`` (small programs covering one feature each) and compares each result with
the oracle, in the manner of scikit-learn's ``check_estimator``. Known failures are declared as
data (``expected_failures={"check_name": "reason"}``) and are strict: a declared failure that
passes is an error. ``evaluator_check_params()`` offers the same checks as a pytest
parametrisation with readable ids::

    @pytest.mark.parametrize("check", evaluator_check_params())
    def test_mine(check):
        check(MyEvaluator, SemiNaiveFixpoint)

``check_incremental(engine_factory)`` runs the named checks of ``incremental_checks()`` on an
IncrementalEvaluator (update sequences compared with the oracle after every update, deletes deep
in recursion, no-op updates, negation and aggregates flipping, insert-then-delete, split batches,
atomicity under injected faults); ``incremental_check_params()`` is its parametrisation and
``IncrementalSession`` the harness for one's own update sequences.

Helpers for other suites: ``encode_facts(program, facts)`` (decoded facts -> Database) and
``compare_with_oracle(program, facts, evaluator_factory, fixpoint_factory)``. This module imports
no evaluator: implementations arrive as factories, and the default fixpoint is looked up in the
registry when a check runs.
"""

from herbrand.framework.evaluator_checks import (
    check_evaluator,
    compare_with_oracle,
    encode_facts,
    evaluator_check_params,
    evaluator_checks,
)
from herbrand.framework.incremental_checks import (
    IncrementalSession,
    check_incremental,
    incremental_check_params,
    incremental_checks,
)
from herbrand.framework.index_checks import (
    IndexCheckError,
    check_index,
    index_check_params,
    index_checks,
)
from herbrand.framework.oracle import check_model, oracle_materialize

__all__ = [
    "IndexCheckError",
    "IncrementalSession",
    "check_evaluator",
    "check_incremental",
    "check_index",
    "check_model",
    "compare_with_oracle",
    "encode_facts",
    "evaluator_check_params",
    "evaluator_checks",
    "incremental_check_params",
    "incremental_checks",
    "index_check_params",
    "index_checks",
    "oracle_materialize",
]
