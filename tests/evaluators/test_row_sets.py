import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.row_sets import RowSet

VALUES = st.sampled_from([0, 1, -1, 7, 2**31, -(2**40), 2**63 - 1, -(2**63)])


def _batch(rows, arity):
    return np.array(rows, dtype=np.int64).reshape(len(rows), arity).T.copy()


@settings(max_examples=80, deadline=None)
@given(arity=st.integers(0, 3), data=st.data())
def test_insert_keeps_first_occurrences_of_unknown_rows(arity, data):
    rows = st.lists(st.tuples(*[VALUES] * arity), max_size=30)
    initial, *batches = data.draw(st.lists(rows, min_size=1, max_size=5))
    known = set(initial)
    row_set = RowSet(_batch(initial, arity))
    assert len(row_set) == len(known)
    for batch in batches:
        expected = list(dict.fromkeys(r for r in batch if r not in known))
        unseen = row_set.unseen(_batch(batch, arity))
        assert row_set.contains(_batch(batch, arity)).tolist() == [r in known for r in batch]
        stored = [tuple(r) for r in row_set.rows().T.tolist()]
        assert row_set.positions(_batch(batch, arity)).tolist() == [
            stored.index(r) if r in known else -1 for r in batch]
        # repeats may be kept (all of them for arity > 0; rows of arity 0 are one row)
        assert {tuple(r) for r in unseen.T.tolist()} == {r for r in batch if r not in known}
        new = row_set.insert(_batch(batch, arity))
        assert [tuple(r) for r in new.T.tolist()] == expected
        known.update(batch)
        assert len(row_set) == len(known)
        assert {tuple(r) for r in row_set.rows().T.tolist()} == known


def test_growth_keeps_every_row():
    row_set = RowSet(np.zeros((2, 0), dtype=np.int64))
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(20):
        batch = rng.integers(0, 300, size=(2, 500))
        new = row_set.insert(batch)
        fresh = {tuple(r) for r in batch.T.tolist()} - seen
        assert {tuple(r) for r in new.T.tolist()} == fresh
        seen |= fresh
    assert len(row_set) == len(seen)
    assert not row_set.unseen(np.array(sorted(seen)).T).shape[1]


@settings(max_examples=80, deadline=None)
@given(arity=st.integers(0, 3), data=st.data())
def test_intern_adds_a_batch_and_gives_every_row_s_position(arity, data):
    rows = st.lists(st.tuples(*[VALUES] * arity), max_size=40)
    row_set = RowSet(np.zeros((arity, 0), dtype=np.int64))
    stored: list[tuple] = []
    for batch in data.draw(st.lists(rows, max_size=5)):
        stored.extend(dict.fromkeys(r for r in batch if r not in stored))
        positions = row_set.intern(_batch(batch, arity))
        assert positions.tolist() == [stored.index(r) for r in batch]
        assert [tuple(r) for r in row_set.rows().T.tolist()] == stored


def test_intern_across_chunks_and_growth(monkeypatch):
    monkeypatch.setattr("herbrand.evaluators.row_sets.CHUNK", 7)
    row_set = RowSet(np.zeros((1, 0), dtype=np.int64))
    batch = np.array([[5, 3, 5, 9, 1, 2, 3, 4, 8, 6, 7, 0, 11, 12, 13, 9, 10, 5, 14, 15]])
    positions = row_set.intern(batch)
    assert row_set.rows()[0, positions].tolist() == batch[0].tolist()
    assert len(row_set) == 16
    assert row_set.insert(np.array([[16, 5, 16]])).tolist() == [[16]]
