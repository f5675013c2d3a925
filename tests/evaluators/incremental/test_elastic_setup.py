"""SetUpEvaluator: the first build of an index since a Bootstrap is exempt from the budget."""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.evaluators.incremental.elastic_budget import Abandoned, SwitchBudget
from herbrand.evaluators.incremental.elastic_setup import SetUpEvaluator
from herbrand.evaluators.incremental.elastic_universe import Universe
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.storage import Relation
from herbrand.indexes.sorted_vector import SortedVectorIndex


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


def _universe(rows: list[tuple[int, int]]) -> Universe:
    """A universe of distinct two-column rows, all of iteration 1, its row index built."""
    columns = np.array(rows, dtype=np.int64).T
    ones = np.ones(len(rows), dtype=np.int64)
    universe = Universe(columns, ones, ones, ones, None)
    universe.find(columns[:, :1])
    return universe


def _sorts(monkeypatch) -> list[int]:
    from herbrand.indexes import runs

    sorts = []
    sort_unique = runs.sort_unique
    monkeypatch.setattr(runs, "sort_unique", lambda *args: sorts.append(1) or sort_unique(*args))
    return sorts


def test_a_whole_row_join_of_a_universe_reads_its_row_index(monkeypatch):
    sorts = _sorts(monkeypatch)
    universe = _universe([(3, 0), (1, 5), (2, 4)])
    universe.append(np.array([[7], [7]], dtype=np.int64), 2, np.ones(1, dtype=np.int64))
    relation = universe.relation()
    probe = np.array([[9, 4, 1, 7, 0], [0, 2, 5, 7, 3]], dtype=np.int64)  # rows (x, y) upside down
    expected = RelationalEvaluator().relation_index("u", relation, (0, 1)).join(probe, (1, 0))
    evaluator = SetUpEvaluator()
    with evaluator.deferring(SwitchBudget.unlimited()):
        evaluator.universes({"u": universe})
        found = evaluator.relation_index("u", relation, (0, 1))
        positions, rows = found.join(probe, (1, 0))
        stale = evaluator.relation_index("u", _relation(3), (0, 1))  # not its relation now
    assert positions.tolist() == expected[0].tolist() == [1, 3, 4]
    assert rows.tolist() == expected[1].tolist() == [[2, 7, 3], [4, 7, 0], [2, 3, 0]]
    assert sorts == [1]  # the plain index's: the universe's rows were found, not sorted
    assert isinstance(stale, SortedVectorIndex) and len(stale) == 3
