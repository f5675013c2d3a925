"""CheckedFacts against two Python sets (C and P) over random checks and proofs."""

from __future__ import annotations

import doctest

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental import checked_facts
from herbrand.evaluators.incremental.checked_facts import CheckedFacts

ROWS = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=40)


def _batch(rows) -> np.ndarray:
    return np.array(rows, dtype=np.int64).reshape(len(rows), 2).T.copy()


def _rows(batch: np.ndarray) -> list[tuple[int, int]]:
    return [tuple(r) for r in batch.T.tolist()]


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(st.tuples(st.booleans(), ROWS), max_size=12))
def test_matches_two_sets(steps):
    facts, checked, proved, order = CheckedFacts(2), set(), set(), []
    for is_check, rows in steps:
        batch = _batch(rows)
        if is_check:
            expected = list(dict.fromkeys(r for r in rows if r not in checked))
            fresh = facts.check(batch)
            assert fresh.tolist() == list(range(len(checked), len(checked) + len(expected)))
            assert _rows(facts.rows_at(fresh)) == expected
            checked.update(rows)
        else:
            expected = list(dict.fromkeys(r for r in rows if r in checked and r not in proved))
            assert sorted(_rows(facts.prove(batch))) == sorted(expected)
            proved.update(expected)
            order.extend(r for r in _rows(facts.proved_rows())[len(order):])
        positions = facts.positions(batch)
        assert (positions >= 0).tolist() == [r in checked for r in rows]
        assert facts.proved_at(positions).tolist() == [r in proved for r in rows]
        assert facts.unproved(positions[positions >= 0]).tolist() == [
            p for p, r in zip(positions.tolist(), rows, strict=True)
            if r in checked and r not in proved]
        assert set(_rows(facts.checked_rows())) == checked
        assert facts.checked_count == len(checked) and facts.proved_count == len(proved)
        # the proved rows only grow at the end: earlier ones keep their places
        assert _rows(facts.proved_rows()) == order


def test_doctests():
    assert doctest.testmod(checked_facts).failed == 0
