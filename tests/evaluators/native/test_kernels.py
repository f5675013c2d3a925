"""The native kernels: arithmetic as the reference defines it (their numba source, run by the
JIT here), the hash index against a dict, insertion with dedup and growth."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.arithmetic import OPERATORS
from herbrand.evaluators.native import layout as L
from herbrand.evaluators.native import operators, runs
from herbrand.evaluators.native.store import NativeStore
from herbrand.framework.storage import Relation

INT64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from(
    [0, 1, -1, 2, -2, 63, 64, 65, -(2**63), 2**63 - 1, 7, -7]))
BINARY = [op for op in OPERATORS if op not in ("neg", "bnot", "lnot", "abs", "min", "max")]


def _native(op: str, *values: int) -> int | None:
    stack = np.array(values + (0,) * (L.MAX_STACK - len(values)), dtype=np.int64)
    top, ok = operators._apply(L.OPERATOR_CODES[op], stack, len(values), len(values))
    return int(stack[top - 1]) if ok else None


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(BINARY), INT64, INT64)
def test_binary_operators_match_the_reference(op, a, b):
    if op == "^":
        b = b % 70 - 5  # exponents the reference computes quickly, negatives included
    assert _native(op, a, b) == OPERATORS[op](a, b)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["neg", "bnot", "lnot", "abs"]), INT64)
def test_unary_operators_match_the_reference(op, a):
    assert _native(op, a) == OPERATORS[op](a)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["min", "max"]), st.lists(INT64, min_size=1, max_size=5))
def test_min_and_max_take_any_number_of_arguments(op, values):
    assert _native(op, *values) == OPERATORS[op](*values)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(-5, 5)), max_size=200),
       st.lists(st.integers(0, 20), max_size=30))
def test_a_probe_index_finds_the_rows_a_dict_finds(rows, probes):
    store = NativeStore()
    rel = store.add("r", Relation.from_rows(rows[: len(rows) // 2], 2))
    index = store.index(rel, (0,))
    store.catch_up(index)  # indexes the first half
    store.insert(rel, np.array(rows[len(rows) // 2:], dtype=np.int64).reshape(-1, 2).T)
    store.catch_up(index)  # and then the rows appended since
    stored = store.relation(rel).to_rows()
    assert sorted(stored) == sorted(set(rows))
    for key in probes:
        found = _chain(store, index, key)
        assert sorted(stored[row] for row in found) == sorted(r for r in set(rows) if r[0] == key)


def _chain(store: NativeStore, index: int, key: int) -> list[int]:
    """The rows a probe of ``index`` with ``key`` yields: its chain, then its run."""
    values = np.array([key], dtype=np.int64)
    cursor, stop = runs._open_probe(store.ix_meta, index, store.rel_meta, store.ix_cols, values,
                                    1)
    state = [np.array([x], dtype=np.int64) for x in (cursor, stop, L.PROBE_CHAIN)]
    rows = []
    while (row := runs._probe_next(store.ix_meta, index, 0, *state, 0, 0, 0)[0]) >= 0:
        rows.append(int(row))
    return rows


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 9), st.integers(-3, 3)),
                         max_size=900), min_size=1, max_size=5),
       st.integers(0, 2))
def test_a_probe_reads_its_chains_and_runs_newest_first(batches, column):
    """Rows appended in batches (runs compacted as they double) are found by a probe on any
    column, newest first, with the non-key columns its runs copy, and a ranged probe stops at
    its delta."""
    store = NativeStore()
    rel = store.empty("r", 3)
    index = store.index(rel, (column,))
    for batch in batches:
        store.insert(rel, np.array(batch, dtype=np.int64).reshape(-1, 3).T)
        store.catch_up(index)
    stored = store.relation(rel).to_rows()
    low, high = store.size(rel) // 3, 2 * store.size(rel) // 3
    for key in {row[column] for row in stored} | {99}:
        values = np.array([key], dtype=np.int64)
        found = []
        for ranged in (0, 1):
            cursor, stop = runs._open_probe(store.ix_meta, index, store.rel_meta,
                                            store.ix_cols, values, 1)
            state = [np.array([x], dtype=np.int64) for x in (cursor, stop, L.PROBE_CHAIN)]
            rows = []
            while True:
                row, position = runs._probe_next(store.ix_meta, index, 0, *state, ranged, low,
                                                 high)
                if row < 0:
                    break
                rows.append(int(row))
                for c in range(3):
                    if c != column and position >= 0:
                        assert runs._run_value(store.ix_meta, index, store.ix_cols, c,
                                               position) == stored[row][c]
            found.append(rows)
        every = [i for i, row in enumerate(stored) if row[column] == key]
        assert found[0] == every[::-1]
        assert found[1] == [i for i in every[::-1] if low <= i < high]
    assert store.ix_meta[index, L.IX_COMPACTED] > 0 or store.size(rel) < L.COMPACT_MIN_ROWS


def test_inserting_grows_the_buffer_and_drops_duplicates():
    store = NativeStore()
    rel = store.empty("r", 3)
    block = np.arange(3000, dtype=np.int64).reshape(3, 1000)
    assert store.insert(rel, block) == 1000
    assert store.insert(rel, np.concatenate([block, block + 5000], axis=1)) == 1000
    assert store.size(rel) == 2000 and len(store.relation(rel)) == 2000
    assert set(store.relation(rel).to_rows()) == set(map(tuple, block.T.tolist())) | set(
        map(tuple, (block + 5000).T.tolist()))


def test_a_nullary_relation_holds_at_most_one_row():
    store = NativeStore()
    rel = store.empty("flag", 0)
    assert store.insert(rel, np.zeros((0, 3), dtype=np.int64)) == 1
    assert store.size(rel) == 1 and store.relation(rel).to_rows() == [()]


def test_a_table_rehashed_in_parts_at_once_holds_each_entry_where_a_probe_finds_it():
    from concurrent.futures import ThreadPoolExecutor

    from herbrand.evaluators.native.compiled import kernels

    rng = np.random.default_rng(3)
    fingerprints = rng.integers(0, 2**32, size=3000, dtype=np.uint64) << np.uint64(32)
    fingerprints[:100] = np.uint64(0xFFFFFFFF) << np.uint64(32)  # a run that wraps around
    entries = (fingerprints | np.arange(3000, dtype=np.uint64)).astype(np.int64)
    old = np.full(1 << 13, L.EMPTY, dtype=np.int64)
    kernels().rehash(entries, old)
    slots = np.full(1 << 14, L.EMPTY, dtype=np.int64)
    bounds = [0, 1000, 5000, len(old)]
    with ThreadPoolExecutor(3) as pool:
        for task in [pool.submit(kernels().rehash_part, old, slots, start, stop)
                     for start, stop in itertools.pairwise(bounds)]:
            task.result()
    assert sorted(slots[slots != L.EMPTY].tolist()) == sorted(entries.tolist())
    mask = len(slots) - 1
    for position in np.flatnonzero(slots != L.EMPTY).tolist():  # no gap from home to slot
        s = int((np.uint64(slots[position]) & np.uint64(L.FINGERPRINT)) >> np.uint64(64 - 14))
        while s != position:
            assert slots[s] != L.EMPTY
            s = (s + 1) & mask
