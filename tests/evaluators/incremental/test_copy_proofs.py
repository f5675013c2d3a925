"""Outright proofs through copy rules: the frontier facts whose copy the lower relation holds,
probed from either side."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.copy_proofs import CopyProofs
from herbrand.evaluators.incremental.relation_sets import RelationSet
from herbrand.framework.storage import Database, Relation

PAIRS = st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=30)


@settings(max_examples=60, deadline=None)
@given(checked=PAIRS, lower=PAIRS, frontier=st.data(), swapped=st.booleans())
def test_the_frontier_facts_with_a_copy_are_proved_from_either_side(
        checked, lower, frontier, swapped):
    # r(x, y) :- f(x, y), or r(x, y) :- f(y, x) (``swapped``): f's columns hold r's columns
    # 1, 0; the lower rows are probed in C when fewer than the frontier, else the reverse
    order = (1, 0) if swapped else (0, 1)
    facts = CheckedFacts(2)
    rows = sorted(checked)
    facts.check(np.array(rows, dtype=np.int64).reshape(-1, 2).T)
    positions = np.array(sorted(frontier.draw(st.sets(st.integers(0, len(rows) - 1))))
                         if rows else [], dtype=np.int64)
    relation = Relation(np.array(sorted(lower), dtype=np.int64).reshape(-1, 2).T)
    proofs = CopyProofs({"r": ("f", order)}, Database({"f": relation}),
                        lambda name: RelationSet(relation))
    proved = proofs.proved({"r": facts}, {"r": positions})
    found = set() if not len(positions) else {
        tuple(row) for part in proved["r"] for row in part.T.tolist()}
    expected = {rows[p] for p in positions.tolist()
                if (rows[p][::-1] if swapped else rows[p]) in lower}
    assert found == expected


def test_a_copy_with_a_repeated_column_is_probed_from_the_frontier():
    # r(x, y) :- f(x, y, x): f's rows are no facts of r reordered, so the frontier is probed
    # in f's hash set however few f's rows are
    facts = CheckedFacts(2)
    facts.check(np.array([[1, 2, 3], [5, 6, 7]]))
    relation = Relation(np.array([[1, 2], [5, 6], [1, 9]]))
    proofs = CopyProofs({"r": ("f", (0, 1, 0))}, Database({"f": relation}),
                        lambda name: RelationSet(relation))
    proved = proofs.proved({"r": facts}, {"r": np.arange(3)})
    assert [row for part in proved["r"] for row in part.T.tolist()] == [[1, 5]]
