"""The recompute baseline: re-materializes and diffs."""

from __future__ import annotations

from herbrand.evaluators.incremental.recompute import RecomputeEngine
from herbrand.evaluators.native.evaluator import NativeEvaluator
from herbrand.framework.testing import IncrementalSession
from tests.evaluators.incremental.engine_helpers import TC


def test_recompute_reports_its_strategy_and_keeps_no_state():
    session = IncrementalSession(RecomputeEngine, TC, {"e": [(1, 2), (2, 3)]})
    assert session.engine.last_strategy == "bootstrap"
    changes = session.update(delete={"e": [(1, 2)]})
    assert session.engine.last_strategy == "recompute"
    assert session.engine.state_size() == (0, 0)
    assert {name for name, (a, r) in changes.items() if a.shape[1] or r.shape[1]} == {"e", "tc"}


def test_recompute_takes_the_index_hyperparameter():
    engine = RecomputeEngine(index="hash")
    assert repr(engine) == "RecomputeEngine(index='hash')"
    session = IncrementalSession(lambda: engine, TC, {"e": [(1, 2)]})
    session.update(insert={"e": [(2, 1)]})


def test_recompute_materializes_with_the_native_executor_by_default():
    """The reference line of every incremental report is the fastest materialization."""
    engine = RecomputeEngine()
    assert isinstance(engine._fixpoint.rule_evaluator, NativeEvaluator)
    assert engine._fixpoint.rule_evaluator.index is None
    session = IncrementalSession(lambda: engine, TC, {"e": [(1, 2), (2, 3)]})
    session.update(insert={"e": [(3, 4)]})
