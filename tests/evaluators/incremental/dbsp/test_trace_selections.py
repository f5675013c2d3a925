"""A trace's constant selections: each prefix is the selection of R_i, also after an update
moved rows (the selections carried, not taken again), and an update of a program whose
recursive rules read constants scans no trace for them (the bootstrap takes them)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.counting_selections import selected_rows
from herbrand.evaluators.incremental.dbsp import trace_selections
from herbrand.evaluators.incremental.dbsp.engine import DbspEngine
from herbrand.evaluators.incremental.dbsp.trace import Trace
from herbrand.framework.testing import IncrementalSession
from tests.evaluators.incremental.dbsp.test_circuit import by_iteration
from tests.evaluators.incremental.dbsp.test_engine import _check_against_oracle
from tests.evaluators.incremental.engine_helpers import CONSTANT_ATOMS

ROWS = st.dictionaries(st.tuples(st.integers(0, 4), st.integers(0, 2), st.integers(0, 4)),
                       st.integers(0, 3), max_size=20)
CONSTANTS = [((1, 1),), ((0, 2),), ((0, 0), (2, 1))]


def _columns(rows) -> np.ndarray:
    return np.array(list(rows), dtype=np.int64).reshape(-1, 3).T


def _assert_selections(trace: Trace) -> None:
    for constants in CONSTANTS:
        for i in range(-1, len(trace.offsets) + 1):
            got = trace.selected(constants, i).columns
            expected = selected_rows(trace.value(i).columns, constants)
            assert np.array_equal(got, expected), (constants, i)


@settings(max_examples=50, deadline=None)
@given(ROWS, ROWS, st.sets(st.integers(0, 19), max_size=8))
def test_selections_are_the_prefixes_of_r_i_before_and_after_a_move(start, joins, leaving):
    trace = Trace.of(_columns(start), np.array(list(start.values()), dtype=np.int64), ())
    _assert_selections(trace)  # kept now: the move carries them
    rows = list(start)
    left = {rows[k]: start[rows[k]] for k in leaving if k < len(rows)}
    left |= {row: start[row] for row in joins if row in start}
    moved = trace.moved(*by_iteration(left, 3), *by_iteration(joins, 3), ())
    _assert_selections(moved)


def test_taken_selections_are_carried_once_read():
    """``take`` finds the positions only: a move carries a taken selection once a prefix of it
    was read, and drops one never read (the bootstrap takes what updates may read)."""
    rows = {(0, 1, 2): 0, (1, 1, 3): 0, (2, 0, 4): 1}
    trace = Trace.of(_columns(rows), np.array(list(rows.values()), dtype=np.int64), ())
    trace.selections.take(trace.relation.columns, CONSTANTS[:2])
    assert np.array_equal(trace.selected(CONSTANTS[0], 1).columns, [[0, 1], [2, 3]])
    moved = trace.moved(*by_iteration({(2, 0, 4): 1}, 3), *by_iteration({(3, 1, 5): 1}, 3), ())
    assert set(moved.selections._entries) == {CONSTANTS[0]}
    _assert_selections(moved)


def test_the_bootstrap_takes_the_selections_that_updates_find_without_a_scan(monkeypatch):
    """The bootstrap scans its trace once per selection its recursive rules read, and the
    first update finds them there. An update drops the selections it did not read, and the
    next one that reads them scans once; after that, they are carried to the moved traces
    (the scans are of the moved rows only). Each state is the oracle's."""
    facts = {"t": [(i, 0, i + 1) for i in range(30)] + [(100 + i, 4, i) for i in range(30)]}
    scanned = []
    holding = trace_selections.holding

    def counted(columns, constants):
        scanned.append(columns.shape[1])
        return holding(columns, constants)

    monkeypatch.setattr(trace_selections, "holding", counted)
    session = IncrementalSession(DbspEngine, CONSTANT_ATOMS, facts)
    trace_rows = len(session.engine._snapshot.traces["m"].relation)
    assert sorted(scanned) == [trace_rows] * 2  # m(_, 0, _) and m(_, 4, _)
    for update, fact in enumerate([(200, 4, 3), (299, 0, 5), (300, 0, 5), (301, 0, 5)]):
        scanned.clear()
        session.update(insert={"t": [fact]})
        session.update(delete={"t": [fact]})
        assert scanned and (max(scanned) < 30) == (update != 1), update
        _check_against_oracle(session, CONSTANT_ATOMS)
