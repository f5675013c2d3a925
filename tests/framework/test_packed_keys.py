"""Rows as packed int64 keys: distinct rows and key groups."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.framework import packed_keys
from herbrand.framework.storage import Relation


def _drawn_columns(data, arity: int, count: int, bound: int) -> np.ndarray:
    """An (arity, count) int64 array of values in [-bound, bound), drawn by hypothesis."""
    values = data.draw(st.lists(st.integers(-bound, bound - 1), min_size=arity * count,
                                max_size=arity * count))
    return np.array(values, dtype=np.int64).reshape(arity, count)


BOUNDS = st.sampled_from([3, 100, 2**40, 2**63])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 4), st.integers(0, 60), BOUNDS, st.data())
def test_distinct_rows_is_relations_own_dedup(arity, count, bound, data):
    columns = _drawn_columns(data, arity, count, bound)
    expected = Relation(columns.copy())
    got = packed_keys.distinct_rows(columns.copy())
    assert got.columns.tolist() == expected.columns.tolist()
    assert got.columns.flags.c_contiguous


def test_distinct_rows_in_blocks(monkeypatch):
    monkeypatch.setattr(packed_keys, "_BLOCK_ROWS", 7)
    rng = np.random.default_rng(5)
    for duplicates in (0.0, 0.3, 0.9):
        columns = rng.integers(0, 1000, size=(3, 500))
        repeat = rng.random(500) < duplicates
        columns[:, repeat] = columns[:, :1]
        assert (packed_keys.distinct_rows(columns.copy()).columns.tolist()
                == Relation(columns).columns.tolist())


@pytest.mark.parametrize("bound", [10**6, 2**40])
def test_distinct_rows_of_wide_columns_with_duplicates(bound):
    """Value ranges times rows past 63 bits: the rows sorted by a few packed keys."""
    rng = np.random.default_rng(bound)
    columns = rng.integers(-bound, bound, size=(3, 800))
    columns[:, rng.random(800) < 0.5] = columns[:, 3:4]
    columns[:, 0] = columns[:, 7]
    expected = Relation(columns.copy()).columns.tolist()
    assert packed_keys.distinct_rows(columns.copy()).columns.tolist() == expected
    assert len(expected[0]) < 500


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 3), st.integers(1, 40), st.sampled_from([3, 2**40, 2**63]),
       st.integers(1, 9), st.data())
def test_sorted_blocks_are_the_sorted_rows_cut_in_order(arity, count, bound, rows, data):
    values = data.draw(st.lists(st.integers(-bound, bound - 1), min_size=arity * count,
                                max_size=arity * count))
    relation = Relation(np.array(values, dtype=np.int64).reshape(arity, count))
    columns = list(relation.columns)
    blocks = packed_keys.sorted_blocks(columns, [packed_keys.value_range(c) for c in columns],
                                       rows)
    assert len(blocks) == -(-len(relation) // rows)
    assert all(len(blocks[i][0]) == rows for i in range(len(blocks) - 1))
    got = [tuple(row) for i in reversed(range(len(blocks)))
           for row in reversed(np.vstack(blocks[i]).T.tolist())][::-1]
    assert got == sorted(map(tuple, relation.columns.T.tolist()))
    with pytest.raises(IndexError):
        blocks[len(blocks)]


def test_key_groups():
    assert packed_keys.key_groups([(0, 10), (0, 10), (0, 10)]) == [[0, 1, 2]]
    assert packed_keys.key_groups([(0, 2**40), (0, 2**40), (0, 2**20)]) == [[0], [1, 2]]
    assert packed_keys.key_groups([(0, 2**64), (0, 1), (0, 2**64)]) == [[0], [1], [2]]


@pytest.mark.parametrize("workers", [2, 3])
def test_keys_packed_in_parts_on_threads_are_the_keys_packed_here(monkeypatch, workers):
    from concurrent.futures import ThreadPoolExecutor

    from herbrand.framework.spread import Spread

    monkeypatch.setattr(Spread, "MIN_LENGTH", 1)
    rng = np.random.default_rng(9)
    values = [rng.integers(-5, 5, 100), rng.integers(-(2**40), 2**40, 100),
              rng.integers(0, 3, 100)]
    ranges = [packed_keys.value_range(column) for column in values]
    with ThreadPoolExecutor(workers) as pool:
        spread = Spread(pool, workers)
        assert (packed_keys.packed_key(values, ranges, [0, 1, 2], spread)
                == packed_keys.packed_key(values, ranges, [0, 1, 2])).all()
        blocks = packed_keys.sorted_blocks(values, ranges, 7, spread)
    rows = sorted(zip(*(column.tolist() for column in values), strict=True))
    assert [row for i in range(len(blocks))
            for row in zip(*(c.tolist() for c in blocks[i]), strict=True)] == rows


def test_distinct_rows_of_unpackable_columns_are_c_ordered():
    """Spans past 2**63 take Relation's own dedup, whose result is C-ordered too (found by
    the property above on CI: ``columns[:, i]`` is Fortran-ordered)."""
    columns = np.zeros((2, 14), dtype=np.int64)
    columns[1, -1] = 2**63 - 1
    got = packed_keys.distinct_rows(columns)
    assert got.columns.tolist() == [[0, 0], [0, 2**63 - 1]]
    assert got.columns.flags.c_contiguous


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5), st.integers(1, 60), BOUNDS, st.data())
def test_sorted_distinct_is_pythons_sorted_set(arity, count, bound, data):
    """One packed key, several (spans past 63 bits), or a column spanning all of int64."""
    columns = _drawn_columns(data, arity, count, bound)
    given_rows = columns.copy()
    got = packed_keys.sorted_distinct(columns)
    assert [tuple(row) for row in got.T.tolist()] == sorted(set(map(tuple, given_rows.T.tolist())))
    assert got.flags.c_contiguous
    assert np.array_equal(columns, given_rows)  # the input is not changed
