"""RelationState: tombstones, compaction, its table and live rows built when first read."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.elastic_state import NEVER, RelationState
from herbrand.framework.storage import Relation


def test_tombstones_outnumbering_live_rows_are_compacted():
    n = 200
    iteration = np.where(np.arange(n) < 150, NEVER, 1)
    state = RelationState.of(np.arange(n, dtype=np.int64)[None, :], iteration, np.ones(n))
    assert len(state.iteration) == len(state.relation) == 50
    assert state.rows.tolist() == [list(range(150, 200))]  # positions renumbered


def test_the_universe_with_positions_is_built_when_first_read():
    state = RelationState.of(np.array([[4, 5, 6]]), np.array([1, NEVER, 2]), np.array([1, 0, 1]))
    assert state.built_table is None  # a switched epoch's state never needs it
    size = state.nbytes
    assert state.table.columns.tolist() == [[4, 5, 6], [0, 1, 2]]
    assert state.built_table is state.table and state.nbytes == size
    assert sorted(state.relation.to_rows()) == [(4,), (6,)]
    rows = np.array([[4, 5]], dtype=np.int64)
    live = RelationState.of(rows, np.array([1, 2]), np.array([1, 1]))
    assert np.shares_memory(live.relation.columns, rows)  # every row live: not copied


def test_a_state_with_tombstones_copies_its_live_rows_when_first_read():
    rows = np.array([[4, 5, 6, 7], [1, 2, 3, 4]], dtype=np.int64)
    state = RelationState.of(rows, np.array([1, NEVER, 2, 1]), np.array([1, 0, 1, 1]))
    relation = state.relation
    assert len(relation) == 3 and isinstance(relation, Relation)
    size = state.nbytes
    assert relation._rows is rows  # len and the state's bytes read no row
    assert sorted(relation.to_rows()) == [(4, 1), (6, 3), (7, 4)]
    assert relation.columns.base is not rows and not relation.columns.flags.writeable
    assert relation == Relation(np.array([[4, 6, 7], [1, 3, 4]])) and state.nbytes == size
    rows[0, 0] = 9  # the rows a state holds are never written: the copy is its own
    assert (4, 1) in relation


def test_a_state_given_its_tuples_per_iteration_counts_its_live_rows_by_them():
    compared = []

    class Iterations(np.ndarray):
        def __lt__(self, other):
            compared.append(other)
            return np.asarray(self) < other

    rows = np.array([[4, 5, 6, 7]], dtype=np.int64)
    iteration = np.array([1, NEVER, 2, 1]).view(Iterations)
    state = RelationState.of(rows, iteration, np.array([1, 0, 1, 1]),
                             per_iteration=np.array([0, 2, 1]))
    assert len(state.relation) == 3 and compared == []  # no O(n) mask of the live rows yet
    assert state.relation.columns.tolist() == [[4, 6, 7]] and compared == [NEVER]
