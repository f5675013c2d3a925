"""The stratum circuit: an update's traces equal a bootstrap's on the updated input; traces
stay sorted when rows move between iterations."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.dbsp.engine import DbspEngine
from herbrand.evaluators.incremental.dbsp.trace import Trace
from herbrand.framework.testing import IncrementalSession, encode_facts
from tests.strategies import programs_with_updates


def _traces(engine: DbspEngine) -> dict:
    """Per derived relation: rows by first iteration, and dX as {(row, iteration): weight}."""
    return {
        name: (dict(zip(trace.relation.to_rows(), trace.iterations().tolist(), strict=True)),
               trace.counts.differences())
        for name, trace in engine._snapshot.traces.items()
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=programs_with_updates())
def test_update_traces_equal_bootstrap_traces(case):
    """Integrated over epochs, the nested streams dR and dX after each update are those of a
    bootstrap from the updated facts (the circuit's state is a function of its input)."""
    program, facts, updates = case
    session = IncrementalSession(DbspEngine, program, facts)
    for number, (insert, delete) in enumerate(updates, start=1):
        session.update(insert, delete, label=f"update {number}")
        fresh = DbspEngine()
        fresh.bootstrap(program, encode_facts(program, session.facts))
        assert _traces(session.engine) == _traces(fresh), f"update {number}"


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.tuples(st.integers(0, 5), st.integers(-2, 5)), st.integers(0, 3),
                       max_size=15),
       st.dictionaries(st.tuples(st.integers(0, 5), st.integers(-2, 5)), st.integers(0, 4),
                       max_size=6), st.booleans())
def test_moving_rows_keeps_the_trace_sorted(start, joins, big):
    offset = 2**40 if big else 0  # values that do not pack take the lexicographic path
    start = {(a + offset, b): i for (a, b), i in start.items()}
    joins = {(a + offset, b): i for (a, b), i in joins.items()}
    trace = Trace.of(_columns(start), np.array(list(start.values()), dtype=np.int64), ())
    left = {row: i for row, i in start.items() if row in joins or row[1] < 0}
    moved = trace.moved(*by_iteration(left), *by_iteration(joins), ())
    expected = {row: i for row, i in start.items() if row not in left} | joins
    rows = list(map(tuple, moved.relation.columns.T.tolist()))
    assert dict(zip(rows, moved.iterations().tolist(), strict=True)) == expected
    assert rows == sorted(rows, key=lambda r: (expected[r], r))  # by iteration, then row


def by_iteration(first: dict, arity: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``first`` (row -> iteration) sorted by iteration, then row, as columns,
    and their iterations: as an update hands them to ``Trace.moved``."""
    rows = sorted(first, key=lambda row: (first[row], row))
    return (np.array(rows, dtype=np.int64).reshape(-1, arity).T,
            np.array([first[row] for row in rows], dtype=np.int64))


def _columns(rows) -> np.ndarray:
    return np.array(list(rows), dtype=np.int64).reshape(-1, 2).T
