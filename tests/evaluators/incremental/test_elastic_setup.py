"""SetUpEvaluator: the first build of an index since a Bootstrap is exempt from the budget."""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.evaluators.incremental.elastic_budget import Abandoned, SwitchBudget
from herbrand.evaluators.incremental.elastic_setup import SetUpEvaluator
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.storage import Relation


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slow_builds(monkeypatch):
    """A fake clock on which every index lookup of the relational evaluator takes 1 s."""
    clock = _Clock()
    lookup = RelationalEvaluator.relation_index

    def slow(self, name, relation, key):
        clock.now += 1.0
        return lookup(self, name, relation, key)

    monkeypatch.setattr(RelationalEvaluator, "relation_index", slow)
    return clock


def _relation(n: int) -> Relation:
    return Relation(np.stack([np.arange(n), np.arange(n)[::-1]]).astype(np.int64), unique=True)


def test_first_builds_are_exempt_until_a_reset(slow_builds):
    evaluator = SetUpEvaluator()
    budget = SwitchBudget(slow_builds, 0.1, 1.0)  # 0.1 s of counted work
    with evaluator.deferring(budget):
        index = evaluator.relation_index("r", _relation(5), (1,))
        evaluator.relation_index("r", _relation(6), (0,))  # another key: built first too
        budget.check()
    assert budget.exempted == 2.0 and budget.counted() == 0.0
    positions, _ = index.join(np.asarray([[3]], dtype=np.int64), (0,))
    assert len(positions) == 1
    with evaluator.deferring(budget):
        evaluator.relation_index("r", _relation(7), (1,))  # a rebuild is the Update's work
        with pytest.raises(Abandoned):
            budget.check()
    evaluator.reset()  # a Bootstrap: the next build is set-up again
    fresh = SwitchBudget(slow_builds, 0.1, 1.0)
    with evaluator.deferring(fresh):
        evaluator.relation_index("r", _relation(8), (1,))
        fresh.check()
    assert fresh.exempted == 1.0


def test_builds_outside_an_update_are_not_set_up_for_the_next(slow_builds):
    evaluator = SetUpEvaluator()
    evaluator.relation_index("r", _relation(5), (0,))  # a relational Bootstrap built it
    budget = SwitchBudget(slow_builds, 0.1, 1.0)
    with evaluator.deferring(budget):
        evaluator.relation_index("r", _relation(5), (0,))
    assert budget.exempted == 0.0 and budget.counted() == 1.0


def test_an_index_in_the_row_order_given_sorts_nothing(monkeypatch):
    from herbrand.indexes import runs

    sorts = []
    sort_unique = runs.sort_unique
    monkeypatch.setattr(runs, "sort_unique", lambda data: sorts.append(1) or sort_unique(data))
    relation = Relation(np.array([[3, 1, 2], [0, 5, 4], [0, 1, 2]], dtype=np.int64), unique=True)
    evaluator = SetUpEvaluator()
    asked = []

    def order(columns):
        asked.append(columns is relation.columns)
        return np.array([1, 2, 0])

    with evaluator.deferring(SwitchBudget.unlimited()):
        evaluator.sorted_rows("u", order)
        evaluator.relation_index("u", relation, (0, 1))  # the rows' own order: given
        assert asked == [True] and not sorts
        evaluator.relation_index("u", relation, (1,))  # another order: sorted
        assert asked == [True] and sorts == [1]
    positions, rows = evaluator.relation_index("u", relation, (0, 1)).join(
        np.array([[2], [4]], dtype=np.int64), (0, 1))
    assert positions.tolist() == [0] and rows[:, 0].tolist() == [2, 4, 2]
    with evaluator.deferring(SwitchBudget.unlimited()):  # orders last one block
        evaluator.relation_index("u", relation, (0,))
    assert asked == [True] and sorts == [1, 1]
