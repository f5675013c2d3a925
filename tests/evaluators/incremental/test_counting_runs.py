"""Set operations on the counting engine's runs, in either encoding, against Python sets."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental import weighted
from herbrand.evaluators.incremental.counting_runs import (
    run_minus,
    run_union,
    summed_run,
    without_runs,
)
from herbrand.evaluators.incremental.row_index import identity_codec
from herbrand.indexes.runs import SortedRun


def _run(*rows):
    return SortedRun.from_batch(identity_codec(2), np.array(rows, dtype=np.int64).T.reshape(2, -1))


_pairs = st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(_pairs, _pairs, st.booleans())
def test_run_minus_is_the_set_difference_either_way_round_and_in_either_encoding(
        mine, theirs, wide):
    if wide:  # a value too wide for 32-bit fields: both runs in columns, not packed
        mine, theirs = [*mine, (0, 1 << 40)], [*theirs, (1, 1 << 40)]
    left = run_minus(_run(*mine), _run(*theirs))
    assert left.packed == (not wide)
    assert sorted(map(tuple, left.rows().T.tolist())) == sorted(set(mine) - set(theirs))


@settings(max_examples=150, deadline=None)
@given(_pairs, _pairs, st.booleans())
def test_run_union_is_the_set_union_in_either_encoding(mine, theirs, wide):
    if wide:
        mine, theirs = [*mine, (0, 1 << 40)], [*theirs, (1, 1 << 40)]
    both = run_union(_run(*mine), _run(*theirs))
    assert both.packed == (not wide)
    assert both.rows().T.tolist() == [list(r) for r in sorted(set(mine) | set(theirs))]


def test_without_runs_removes_the_rows_of_every_run():
    left = without_runs(_run((1, 2), (3, 4), (5, 6)), [_run((1, 2)), _run((5, 6), (7, 8))])
    assert left.rows().T.tolist() == [[3, 4]]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-4, 4), st.integers(-4, 4), st.sampled_from([-1, 1])),
                max_size=30), st.booleans())
def test_summed_run_is_the_consolidated_sum_as_a_run_in_either_encoding(entries, wide):
    if wide:  # a value too wide for 32-bit fields: the lexsort path, a run of columns
        entries = [*entries, (0, 1 << 40, 1)]
    rows = np.array([(a, b) for a, b, _ in entries], dtype=np.int64).reshape(-1, 2).T
    signs = np.array([w for _, _, w in entries], dtype=np.int64)
    run, weights = summed_run(identity_codec(2), (rows[:, signs > 0], signs[signs > 0]),
                              (rows[:, signs < 0], signs[signs < 0]))
    rows, expected = weighted.combine(2, (rows, signs))
    assert run.packed == (not wide) and run.rows().tolist() == rows.tolist()
    assert weights.tolist() == expected.tolist()
