"""Kept constant selections: rules rewritten to read them derive what they derived before,
and a selection follows its relation as it grows, or is taken again when it does not."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental import counting_selections
from herbrand.evaluators.incremental.counting_selections import (
    GrowingSelections,
    held,
    holding,
)
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework import growing
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation

_PROGRAM = parse(".decl m(s: number, p: number, o: number)\n"
                 ".decl d(s: number, p: number, o: number)\n"
                 "m(z, 4, y) :- d(x, 0, y), m(z, 4, x).\n"
                 "m(x, 0, z) :- d(x, 0, y), m(y, 0, z), !m(z, 4, x).")


def _instance(m_rows, d_rows) -> Database:
    return Database({"m": Relation.from_rows(m_rows), "d": Relation.from_rows(d_rows)})


def _bags(derived):
    return {name: sorted(map(tuple, rows.T.tolist())) for name, rows in derived.items()}


def test_only_positive_constant_atoms_over_large_relations_read_selections():
    rules, instance = GrowingSelections({"m"}).applied(
        _PROGRAM.rules, _instance([(1, 4, 2), (2, 0, 3)], [(2, 0, 5)]))
    first, second = rules
    assert [lit.atom.relation for lit in first.body] == ["d", "@selected:m:1=4"]
    assert [lit.atom.relation for lit in second.body][:2] == ["d", "@selected:m:1=0"]
    assert second.body[2].atom.relation == "m"  # negated: kept
    assert instance["@selected:m:1=4"].to_rows() == [(1, 2)]


def test_selections_derive_the_same_bags_as_the_relation_as_it_grows_or_changes():
    rng = np.random.default_rng(3)
    selections, evaluator = GrowingSelections({"m"}), RelationalEvaluator()
    m_rows = {tuple(r) for r in rng.integers(0, 6, size=(60, 3)).tolist()}
    m = Relation.from_rows(sorted(m_rows))
    d = Relation.from_rows([tuple(r) for r in rng.integers(0, 6, size=(30, 3)).tolist()])
    grown = [m]
    for _ in range(3):  # appended rows: each selection grows by their selected rows
        more = {tuple(r) for r in rng.integers(0, 8, size=(20, 3)).tolist()} - m_rows
        m_rows |= more
        grown.append(grown[-1].extend(Relation.from_rows(sorted(more))))
    replaced = Relation.from_rows(sorted(m_rows)[::2])  # not an extension: taken again
    for relation in [*grown, replaced]:
        instance = Database({"m": relation, "d": d})
        rules, selected = selections.applied(_PROGRAM.rules, instance)
        assert _bags(evaluator.derive(rules, selected)) == _bags(
            evaluator.derive(_PROGRAM.rules, instance))
        fresh = [r for r in relation.to_rows() if r[1] == 4]
        assert sorted(selected["@selected:m:1=4"].to_rows()) == sorted((s, o) for s, _, o in fresh)


def test_release_forgets_the_kept_selections_and_their_rows():
    selections = GrowingSelections({"m"})
    selections.applied(_PROGRAM.rules, _instance([(1, 4, 2)], [(2, 0, 5)]))
    assert selections.nbytes > 0
    selections.release()
    assert selections.nbytes == 0
    _, selected = selections.applied(_PROGRAM.rules, _instance([(7, 4, 8)], [(2, 0, 5)]))
    assert selected["@selected:m:1=4"].to_rows() == [(7, 8)]


def test_a_selection_of_a_growing_relation_grows_in_place(monkeypatch):
    start = np.array([[*range(8), 2], [4] * 8 + [0], [*range(10, 18), 3]], dtype=np.int64)
    rows = growing.GrowingColumns(start, 64)
    selections, d = GrowingSelections({"m"}), Relation.from_rows([(2, 0, 5)])
    _, first = selections.applied(_PROGRAM.rules, Database({"m": Relation(rows.columns), "d": d}))
    monkeypatch.setattr(growing.np, "array_equal", None)  # views of one buffer: not compared
    rows.append(np.array([[7, 8], [4, 4], [9, 6]], dtype=np.int64))
    _, second = selections.applied(_PROGRAM.rules,
                                   Database({"m": Relation(rows.columns, unique=True), "d": d}))
    before, after = first["@selected:m:1=4"].columns, second["@selected:m:1=4"].columns
    assert after.tolist() == [[*range(8), 7, 8], [*range(10, 18), 9, 6]]
    assert np.shares_memory(before, after)  # the selected rows appended, none copied


def test_selections_of_one_column_share_one_pass_and_equal_each_taken_alone(monkeypatch):
    """Of a C-contiguous block and of a view of a growing buffer's rows (gathered a row at a
    time: over 64 rows selected), the rows holding the constants without their columns."""
    rng = np.random.default_rng(5)
    buffer = rng.integers(0, 5, (3, 1000))
    wanted = [((1, 0),), ((1, 4),), ((1, 7),), ((0, 2), (1, 4)), ((2, 3),)]
    passes = []
    matching = counting_selections.matching
    monkeypatch.setattr(counting_selections, "matching",
                        lambda values, seed: passes.append(len(values)) or matching(values, seed))
    for columns in (np.ascontiguousarray(buffer[:, :900]), buffer[:, :900]):
        passes.clear()
        selected = counting_selections._selected(columns, wanted)
        assert passes == [900]  # the three of column 1 together; column 2's alone, a scan
        for constants in wanted:
            alone = counting_selections.selected_rows(columns, constants)
            held_rows = holding(columns, constants)
            others = [c for c in range(3) if c not in dict(constants)]
            expected = columns[others][:, held_rows]
            assert alone.flags.c_contiguous and alone.tolist() == expected.tolist(), constants
            assert selected[constants].tolist() == expected.tolist(), constants


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 3)] * 3), max_size=8),
       st.lists(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 4)), min_size=1,
                         max_size=2, unique_by=lambda pair: pair[0]).map(tuple), max_size=6),
       st.sampled_from([0, 5, counting_selections.SMALL_BATCH]))
def test_held_tells_whether_a_row_holds_each_key_s_constants_as_holding_does(rows, keys, small):
    # small: the batches below it are looked up in a set, the others searched when sorted
    batch = np.array(rows, dtype=np.int64).reshape(len(rows), 3).T
    batches = {"d": batch, "e": batch[:, ::-1]}
    asked = {(relation, constants) for constants in keys for relation in ("d", "e")}
    with mock.patch.object(counting_selections, "SMALL_BATCH", small):
        answers = held(batches, asked)
    assert answers == {
        (relation, constants): bool(holding(batches[relation], constants).any())
        for relation, constants in asked}
