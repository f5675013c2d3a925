"""RelationSet: a Relation with a hash table of its row positions; RelationSets: kept by name."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.relation_sets import (
    RelationSet,
    RelationSets,
    hashed_changes,
)
from herbrand.framework.storage import Relation


def test_positions_and_contains():
    kept = RelationSet(Relation.from_rows([(1, 2), (3, 4), (5, 6)]))
    rows = np.array([[3, 1, 9], [4, 2, 9]])
    assert kept.positions(rows).tolist() == [1, 0, -1]
    assert kept.contains(rows).tolist() == [True, True, False]


def test_insert_appends_the_new_rows_once_and_keeps_old_positions():
    kept = RelationSet(Relation.from_rows([(1, 2)]))
    grown, new = kept.insert(np.array([[1, 7, 7, 8], [2, 7, 7, 8]]))
    assert new.tolist() == [[7, 8], [7, 8]]
    assert grown.relation.to_rows() == [(1, 2), (7, 7), (8, 8)]
    assert grown.positions(np.array([[1, 7, 8], [2, 7, 8]])).tolist() == [0, 1, 2]


def test_insert_grows_the_table_past_its_load():
    kept = RelationSet(Relation.empty(1))
    for start in range(0, 100, 7):
        kept, _ = kept.insert(np.arange(start, start + 7)[None, :])
    assert len(kept.relation) == 105
    assert kept.contains(np.arange(110)[None, :]).tolist() == [True] * 105 + [False] * 5
    assert kept.nbytes == 256 * 8  # one int64 a slot, the least power of two >= 2 * 105


def test_insert_of_known_rows_changes_nothing():
    kept = RelationSet(Relation.from_rows([(1,), (2,)]))
    same, new = kept.insert(np.array([[2, 1]]))
    assert same is kept and new.shape == (1, 0)


def test_arity_zero():
    kept = RelationSet(Relation.empty(0))
    assert kept.contains(np.zeros((0, 2), dtype=np.int64)).tolist() == [False, False]
    grown, new = kept.insert(np.zeros((0, 3), dtype=np.int64))
    assert len(grown.relation) == 1 and new.shape == (0, 1)
    assert grown.contains(np.zeros((0, 1), dtype=np.int64)).tolist() == [True]


def test_take_reuses_only_the_same_relation_object_and_drops_the_entry():
    sets = RelationSets()
    relation = Relation.from_rows([(1,), (2,)])
    first = sets.take("r", relation)
    sets.put("r", first)
    assert sets.take("r", relation) is first
    assert sets.take("r", relation) is not first  # taken: the entry was dropped
    sets.put("r", first)
    equal = Relation.from_rows([(1,), (2,)])
    assert sets.take("r", equal).relation is equal  # equal rows, another object: rebuilt
    assert sets.nbytes == 0


def test_remove_moves_the_last_rows_into_the_holes_and_keeps_them_findable():
    rows = np.array([[i % 7 for i in range(40)], list(range(40))])
    kept = RelationSet(Relation(rows, unique=True))
    # (9, 99) is absent; (4, 39), the last row, is removed too, so (3, 38) fills a hole
    shrunk, removed = kept.remove(np.array([[3, 0, 9, 4], [3, 0, 99, 39]]))
    assert sorted(map(tuple, removed.T.tolist())) == [(0, 0), (3, 3), (4, 39)]
    left = list(map(tuple, rows[:, :37].T.tolist()))
    left[0], left[3] = (2, 37), (3, 38)  # the last kept rows, into the holes in order
    assert shrunk.relation.to_rows() == left
    probe = np.array([[i % 7 for i in range(40)], list(range(40))])
    expected = [left.index(row) if row in left else -1 for row in map(tuple, probe.T.tolist())]
    assert shrunk.positions(probe).tolist() == expected


def test_removing_the_last_rows_keeps_the_others_in_place_without_a_copy():
    rows = [(i, i % 3) for i in range(10)]
    kept = RelationSet(Relation.from_rows(rows))
    before = kept.relation
    shrunk, gone = kept.remove(np.array([[9, 7, 8, 42], [0, 1, 2, 0]]))  # (42, 0) is absent
    assert sorted(map(tuple, gone.T.tolist())) == [(7, 1), (8, 2), (9, 0)]
    assert shrunk.relation.to_rows() == rows[:7] and before.to_rows() == rows
    assert np.shares_memory(shrunk.relation.columns, before.columns)  # a prefix, no copy
    probe = np.array([[0, 6, 7], [0, 0, 1]])
    assert shrunk.positions(probe).tolist() == [0, 6, -1]
    grown, new = shrunk.insert(np.array([[7, 20], [1, 2]]))  # the old rows stay as they were
    assert grown.relation.to_rows() == [*rows[:7], (7, 1), (20, 2)] and before.to_rows() == rows
    assert grown.positions(np.array([[7, 20, 9], [1, 2, 0]])).tolist() == [7, 8, -1]


def test_remove_and_insert_agree_with_set_algebra_on_colliding_rows():
    rng = np.random.default_rng(3)
    kept = RelationSet(Relation.empty(2))
    truth: set[tuple[int, int]] = set()
    for _ in range(30):
        batch = rng.integers(0, 12, size=(2, 15))
        if rng.random() < 0.5:
            kept, _ = kept.insert(batch)
            truth |= set(map(tuple, batch.T.tolist()))
        else:
            kept, _ = kept.remove(batch)
            truth -= set(map(tuple, batch.T.tolist()))
        assert kept.relation.to_set() == truth
        every = np.array([[a for a in range(12) for _ in range(12)],
                          [b for _ in range(12) for b in range(12)]])
        hits = {row for row, hit in zip(map(tuple, every.T.tolist()), kept.contains(every),
                                         strict=True) if hit}
        assert hits == truth
        found = kept.positions(kept.relation.columns)
        assert found.tolist() == list(range(len(kept.relation)))


def test_hashed_changes_are_both_differences_in_order():
    old = Relation.from_rows([(1, 2), (3, 4), (5, 6), (7, 8)])
    new = Relation.from_rows([(9, 9), (3, 4), (0, 1), (7, 8)])
    added, removed = hashed_changes(old, new)
    assert added.to_rows() == [(9, 9), (0, 1)] and removed.to_rows() == [(1, 2), (5, 6)]
    assert hashed_changes(old, Relation.empty(2))[1] is old
    assert [len(r) for r in hashed_changes(old, old)] == [0, 0]
    nothing, everything = Relation.from_rows([()]), Relation.from_rows([()])
    assert [len(r) for r in hashed_changes(nothing, everything)] == [0, 0]


def test_removing_most_rows_builds_a_new_table_of_the_kept_ones_in_order():
    rows = np.array([list(range(10)), [i * i for i in range(10)]])
    kept = RelationSet(Relation(rows, unique=True))
    shrunk, removed = kept.remove(rows[:, [0, 2, 3, 5, 7, 9, 9]])  # 6 distinct of 10 leave
    assert sorted(removed[0].tolist()) == [0, 2, 3, 5, 7, 9]
    assert shrunk.relation.to_rows() == [(1, 1), (4, 16), (6, 36), (8, 64)]
    assert shrunk.positions(rows).tolist() == [-1, 0, -1, -1, 1, -1, 2, -1, 3, -1]


# values of each row set's kind: rows whose tags pack them (arities 1 to 3, the edges of int64
# and of a layout's bits included) and rows hashed (ranges past the bits left, and arity 4)
_NARROW = {1: [np.iinfo(np.int64).min + 1, -1, 0, 5, 2**62 - 1],
           2: [-2**30, -1, 0, 7, 2**30 - 1], 3: [-2**18, -1, 0, 3, 2**18 - 1]}
_WIDE = {1: [np.iinfo(np.int64).min, np.iinfo(np.int64).max], 2: [2**30, -2**30 - 1, 2**40],
         3: [2**20, -2**20 - 1]}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_exact_and_hashed_keys_agree_with_set_algebra(data):
    """Inserts, removals and lookups against a Python set, for rows whose keys pack them
    (exact: no row read), rows that need hashes, and a set that switches from packed keys to
    hashes when a wider row arrives; probes that fit no packed key find nothing."""
    arity = data.draw(st.integers(1, 4), label="arity")
    narrow = _NARROW.get(arity, [-1, 0, 1, 2**40])
    values = st.sampled_from(narrow + data.draw(st.sampled_from([[], _WIDE.get(arity, [])])))
    batches = st.lists(st.tuples(*[values] * arity), max_size=12)
    kept = RelationSet(Relation.empty(arity))
    truth: set[tuple[int, ...]] = set()
    for _ in range(data.draw(st.integers(1, 8), label="steps")):
        rows = data.draw(batches, label="rows")
        batch = np.array(rows, dtype=np.int64).reshape(len(rows), arity).T
        if data.draw(st.booleans(), label="insert"):
            kept, new = kept.insert(batch)
            assert set(map(tuple, new.T.tolist())) == set(rows) - truth
            truth |= set(rows)
        else:
            kept, gone = kept.remove(batch)
            assert set(map(tuple, gone.T.tolist())) == set(rows) & truth
            truth -= set(rows)
        assert kept.relation.to_set() == truth
        assert kept.positions(kept.relation.columns).tolist() == list(range(len(truth)))
        probe = np.array([*rows, *[tuple(v for _ in range(arity)) for v in narrow + _WIDE.get(
            arity, [])]], dtype=np.int64).reshape(-1, arity).T
        assert kept.contains(probe).tolist() == [row in truth
                                                 for row in map(tuple, probe.T.tolist())]


def test_a_row_past_the_ranges_lays_the_table_out_again_and_keeps_its_positions():
    kept = RelationSet(Relation.from_rows([(1, 2), (-3, 4)]))
    # both columns in the range of all values (-3 .. 4, span 7), one bit of room each
    assert kept._layout.exact and kept._layout.bits == 8
    same, _ = kept.insert(np.array([[3, -4], [5, 1]]))  # within the room above and below
    assert same._layout is kept._layout
    grown, new = same.insert(np.array([[-2**40, 1], [5, 2]]))  # past it: a new exact layout
    assert grown._layout.exact and new.tolist() == [[-2**40], [5]]
    probe = np.array([[1, -3, 3, -4, -2**40, -2**40, 2**41], [2, 4, 5, 1, 5, 6, 2]])
    assert grown.positions(probe).tolist() == [0, 1, 2, 3, 4, -1, -1]
    hashed, new = grown.insert(np.array([[2**62], [2**62]]))  # 2 * 64 bits: hashes
    assert not hashed._layout.exact and new.tolist() == [[2**62], [2**62]]
    probe = np.array([[1, -3, 3, -4, -2**40, 2**62, 2**62], [2, 4, 5, 1, 5, 2**62, 0]])
    assert hashed.positions(probe).tolist() == [0, 1, 2, 3, 4, 5, -1]


def test_a_fresh_value_in_a_column_of_few_fits_the_range_of_every_column():
    # the second column holds one value (a predicate, a class): a row bringing another one
    # that the first column's values span keeps the layout (its own range would not)
    kept = RelationSet(Relation.from_rows([(0, 7), (1000, 7)]))
    same, new = kept.insert(np.array([[5], [900]]))
    assert same._layout is kept._layout and new.tolist() == [[5], [900]]
    assert same.positions(np.array([[0, 1000, 5, 5], [7, 7, 900, 7]])).tolist() == [0, 1, 2, -1]
    # columns too wide together for one shared range take their own
    wide = RelationSet(Relation.from_rows([(0, 2**40), (1, 2**40 + 3)]))
    assert wide._layout.exact and wide._layout.bits == 5  # spans 1 and 3, one bit of room each
    assert wide.positions(np.array([[0, 1, 0], [2**40, 2**40 + 3, 2**40 + 3]])).tolist() == [
        0, 1, -1]


def test_an_exact_set_finds_no_row_outside_its_ranges():
    # a row whose offset from the least values, cut to the layout's bits, is a held row's
    packed = RelationSet(Relation.from_rows([(1, 2), (2, 3)]))
    probe = np.array([[1 + 2**31, 1 - 2**31, 1, 0], [2, 2, 2 + 2**62, 2]])
    assert packed.positions(probe).tolist() == [-1, -1, -1, -1]


def test_the_position_bits_of_a_doubled_table_leave_a_full_layout_hashed():
    # three columns of 20 bits and 3 position bits (16 slots) fill the 63 bits of a slot
    rows = [(0, 0, 0), (2**20 - 1, 2**20 - 1, 2**20 - 1), (-1, -1, -1)]
    kept = RelationSet(Relation.from_rows(rows[:2]))
    assert kept._layout.exact and kept._layout.bits == 60 and kept.nbytes == 16 * 8
    grown, _ = kept.insert(np.array(rows[2:]).T)  # 3 * 21 bits and 3 of positions: hashes
    assert not grown._layout.exact
    full = RelationSet(Relation.from_rows([(i, i, i) for i in range(7)] + rows[1:2]))
    assert full._layout.exact and full._layout.bits == 60  # 8 rows: 16 slots again
    more = np.array([(i, 2**20 - 1, i) for i in range(9)]).T
    grown, _ = full.insert(more)  # 17 rows: 64 slots, whose 5 position bits leave 58
    assert not grown._layout.exact and grown.nbytes == 64 * 8
    every = np.concatenate([full.relation.columns, more, np.array([[5], [5], [6]])], axis=1)
    assert grown.positions(every).tolist() == [*range(17), -1]
