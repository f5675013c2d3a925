"""Universe: lookups, appends, settling, inputs and changes, from and to a RelationState."""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.evaluators.incremental.elastic_state import NEVER, RelationState
from herbrand.evaluators.incremental.elastic_universe import InputNumbers, Universe
from herbrand.evaluators.incremental.row_index import ABSENT
from herbrand.framework.storage import Relation


def _rows(*values) -> np.ndarray:
    return np.array(values, dtype=np.int64).reshape(-1, 1).T


def test_an_update_appends_keeps_tombstones_and_reports_changes():
    state = RelationState.of(_rows(1, 2, 3), np.array([1, 1, 2]), np.array([1, 2, 1]))
    universe = Universe.of_state(state)
    assert universe.find(_rows(3, 9)).tolist() == [2, ABSENT]
    universe.settle(np.array([1]), np.array([NEVER]), np.array([0]))  # row 2 is not derived
    universe.append(_rows(7), 2, np.array([3]))
    assert universe.find(_rows(7)).tolist() == [3]
    assert universe.relation().columns[:, 3].tolist() == [7, 3]  # row, then its position
    added, removed = universe.changes()
    assert added.tolist() == [[7]] and removed.tolist() == [[2]]
    new = universe.state()
    assert sorted(new.relation.to_rows()) == [(1,), (3,), (7,)]
    assert new.iteration.tolist() == [1, NEVER, 2, 2]  # the tombstone stays
    assert new.rows.tolist() == [[1, 2, 3, 7]]  # 7 appended at position 3
    assert [a.tolist() for a in state.changes_to(new)] == [[[7]], [[2]]]


def test_appends_and_the_next_update_grow_the_table_in_place():
    state = RelationState.of(_rows(1, 2, 3), np.array([1, 1, 2]), np.array([1, 1, 1]))
    universe = Universe.of_state(state)
    before = universe.relation().columns
    for k, value in enumerate((7, 8, 9), start=2):
        universe.append(_rows(value), k, np.array([1]))
        after = universe.relation().columns
        assert np.shares_memory(after, before) and after[:, :3].tolist() == before.tolist()
    assert universe.new_iteration.tolist() == [1, 1, 2, 2, 3, 4]
    assert universe.old_iteration.tolist() == [1, 1, 2, NEVER, NEVER, NEVER]
    new = universe.state()
    assert np.shares_memory(new.relation.columns, before)  # no copy of the rows
    again = Universe.of_state(new)
    again.append(_rows(10), 1, np.array([1]))
    assert np.shares_memory(again.relation().columns, before)
    assert Universe.of_state(new).relation().columns.shape[1] == 6  # the state as committed
    other = Universe.of_state(new)  # a second run from the same state: moves, then appends
    other.append(_rows(11), 1, np.array([1]))
    assert not np.shares_memory(other.relation().columns, before)
    assert other.relation().columns[0].tolist() == [1, 2, 3, 7, 8, 9, 11]
    assert again.relation().columns[0].tolist() == [1, 2, 3, 7, 8, 9, 10]


def test_an_unchanged_input_is_indexed_only_when_searched():
    universe = Universe.of_current(Relation.from_rows([(4,), (5,)]))
    assert not universe.indexed
    assert universe.find(_rows(5, 6)).tolist() == [1, ABSENT]
    assert universe.indexed


def test_a_bootstrapped_state_is_indexed_by_its_first_search():
    state = RelationState.of(_rows(1, 2), np.array([1, 1]), np.array([1, 1]))
    assert state.indexes == ()
    universe = Universe.of_state(state)
    assert not universe.indexed
    universe.find(_rows(2))
    assert universe.indexed and Universe.of_state(universe.state()).indexed


def test_an_indexed_state_gives_an_indexed_universe_and_a_set_up_one_its_table():
    state = RelationState.of(_rows(1, 2), np.array([1, 1]), np.array([1, 1]))
    assert not state.is_set_up
    state.set_up()
    state.index()
    assert state.is_set_up and len(state.indexes) == 1
    universe = Universe.of_state(state)
    assert universe.indexed and universe.find(_rows(2, 3)).tolist() == [1, ABSENT]


def test_an_input_universe_marks_removed_and_added_rows():
    universe = Universe.of_input(Relation.from_rows([(1,), (2,)]), _rows(3), _rows(2))
    assert universe.old_iteration.tolist() == [0, 0, NEVER]
    assert universe.new_iteration.tolist() == [0, NEVER, 0]


def test_an_input_universe_finds_the_removed_positions():
    universe = Universe.of_input(Relation.from_rows([(1,), (2,), (5,)]), _rows(3), _rows(5, 1))
    assert universe.new_iteration.tolist() == [NEVER, 0, NEVER, 0]
    assert sorted(universe.moved().tolist()) == [0, 2, 3]


def test_untouched_tuples_keep_their_iteration_and_only_settled_ones_move():
    state = RelationState.of(_rows(1, 2, 3, 4), np.array([1, 1, 2, 3]), np.array([1, 1, 1, 2]))
    universe = Universe.of_state(state)
    assert universe.moved().tolist() == [] and universe.kept_at(1) == 2
    universe.settle(np.array([0, 2]), np.array([NEVER, 1]), np.array([0, 4]))
    assert universe.moved().tolist() == [0, 2]
    assert [universe.kept_at(k) for k in (1, 2, 3, 4)] == [1, 0, 1, 0]
    universe.settle(np.array([2]), np.array([2]), np.array([1]))  # back where it was
    assert universe.kept_at(2) == 1
    universe.drop_beyond(2)  # the run ended at iteration 2: row 4 (iteration 3) is gone
    assert universe.new_iteration.tolist() == [NEVER, 1, 2, NEVER]
    assert universe.new_count.tolist() == [0, 1, 1, 2]


def test_rows_appended_before_the_first_search_leave_the_first_rows_findable():
    rows = np.array([[5, 1, 3], [0, 2, 9]], dtype=np.int64)
    ones = np.ones(3, dtype=np.int64)
    universe = Universe(rows, ones, ones, ones, None)
    universe.append(np.array([[4], [4]], dtype=np.int64), 2, np.ones(1, dtype=np.int64))
    assert not universe.indexed
    assert universe.find(np.array([[1, 4, 6], [2, 4, 6]], dtype=np.int64)).tolist() == [1, 3, -1]
    assert universe.indexed and len(universe.state().indexes) == 2


def test_a_universe_without_its_table_makes_it_when_its_relation_is_first_read():
    universe = Universe.of_input(Relation.from_rows([(1, 5), (2, 6)]), _rows(3, 7).reshape(2, 1),
                                 _rows(2, 6).reshape(2, 1))
    relation = universe.relation()
    assert len(relation) == 3 and relation.arity == 3 and universe._table is None
    assert universe.holds(relation) and not universe.holds(Relation(relation.columns))
    assert relation.columns.tolist() == [[1, 2, 3], [5, 6, 7], [0, 1, 2]]  # rows, positions
    assert universe._table is not None and universe.relation() is relation


def test_a_universe_given_its_own_new_numbers_writes_them_in_place_until_it_grows():
    new_iteration, new_count = np.array([1, NEVER]), np.zeros(2, dtype=np.int64)
    universe = Universe(_rows(1, 2), np.array([1, 1]), np.ones(2, dtype=np.int64), new_iteration,
                        None, new_count=new_count)
    assert universe.new_iteration is new_iteration and universe.new_count is new_count
    universe.settle(np.array([1]), np.array([2]), np.array([3]))
    assert new_iteration.tolist() == [1, 2] and new_count.tolist() == [0, 3]
    universe.append(_rows(5), 2, np.array([1]))  # grows a copy of them
    assert universe.new_iteration.tolist() == [1, 2, 2] and new_iteration.tolist() == [1, 2]
    state = universe.state()
    assert state.iteration.tolist() == [1, 2, 2] and state.count.tolist() == [0, 3, 1]


def test_input_numbers_are_read_only_runs_of_zeros_then_nevers_of_one_buffer():
    numbers = InputNumbers()
    assert numbers.runs(3, 2).tolist() == [0, 0, 0, NEVER, NEVER]
    size = numbers.nbytes
    assert numbers.runs(2, 1).tolist() == [0, 0, NEVER] and numbers.runs(0).tolist() == []
    assert numbers.nbytes == size  # held already: a view
    assert numbers.runs(100).tolist() == [0] * 100 and numbers.nbytes > size
    assert numbers.runs(1, 3).tolist() == [0, NEVER, NEVER, NEVER]
    with pytest.raises(ValueError):
        numbers.runs(2)[0] = 1
