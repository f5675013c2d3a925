"""Semi-join reductions: the reduced rules derive the same bags over the reduced instance, only
relations read once, positively and without constants (with them too when asked), large and
reducible, are reduced, a rule with an empty reduction is left out, and membership is
``member_kernels.matching``'s."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.incremental.counting_semijoins import Semijoins, reduction_name
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation

_PROGRAM = parse(".decl t(a: number, b: number)\n.decl d(a: number, b: number)\n"
                 ".decl s(a: number, b: number)\n"
                 "t(x, z) :- d(x, y), t(y, z), s(z, w), !s(x, x).\n"
                 "t(x, z) :- d(x, z), t(x, 3).")

_rows = st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=40)
_seeds = st.sets(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=3)


def _bags(derived):
    """Head -> its sorted bag; heads without derivations left out (a rule left out derives
    none)."""
    return {name: sorted(map(tuple, rows.T.tolist())) for name, rows in derived.items()
            if rows.shape[1]}


def _instance(t_rows, d_rows, s_rows) -> Database:
    return Database({"t": Relation.from_rows(t_rows, 2), "d": Relation.from_rows(d_rows, 2),
                     "s": Relation.from_rows(s_rows, 2)})


def _derived(evaluator, reduced):
    rules, instance = reduced
    return _bags(evaluator.derive(rules, instance))


@settings(max_examples=150, deadline=None)
@given(_rows, _seeds, _rows)
def test_reduced_groups_derive_the_same_bags(t_rows, d_rows, s_rows):
    instance = _instance(t_rows, d_rows, s_rows)
    evaluator = RelationalEvaluator()
    reduced = Semijoins(ratio=2).reduced(_PROGRAM.rules, instance, {"t", "s"})
    assert _derived(evaluator, reduced) == _bags(evaluator.derive(_PROGRAM.rules, instance))


def test_only_large_reducible_constant_free_positive_literals_read_once_are_reduced():
    instance = _instance([(i, i + 1) for i in range(40)], [(5, 6)],
                         [(i, 0) for i in range(40)])
    semijoins = Semijoins(ratio=16)
    (reading, second), reduced = semijoins.reduced(_PROGRAM.rules, instance, {"t", "s"})
    assert second is _PROGRAM.rules[1]  # t(x, 3): a constant, not reduced
    name = reduction_name("t", "d", ((0, 1),))  # t's x joins d's y
    assert str(reading) == str(_PROGRAM.rules[0]).replace("t(y, z)", f"{name}(y, z)")
    assert reduced[name].to_rows() == [(6, 7)]  # t rows joining d's y = 6
    assert reduced["s"] is instance["s"]  # read twice (once negated): kept whole
    again, _ = semijoins.reduced(_PROGRAM.rules, instance, {"t", "s"})
    assert again[0] is reading  # rewritten once: the evaluator plans it once


def test_a_rule_with_an_empty_reduction_is_left_out():
    instance = _instance([(i, i + 1) for i in range(40)], [(50, 60)], [(i, 0) for i in range(40)])
    rules, reduced = Semijoins(ratio=16).reduced(_PROGRAM.rules, instance, {"t", "s"})
    assert rules == [_PROGRAM.rules[1]]  # no t row joins d's y = 60: the first derives nothing


def test_a_relation_under_ratio_times_the_seed_is_not_reduced():
    instance = _instance([(i, i + 1) for i in range(10)], [(5, 6)], [])
    rules, reduced = Semijoins(ratio=16).reduced(_PROGRAM.rules, instance, {"t"})
    assert rules == list(_PROGRAM.rules) and reduced is instance


@settings(max_examples=150, deadline=None)
@given(_rows, _seeds, _rows)
def test_reduced_groups_with_constants_derive_the_same_bags(t_rows, d_rows, s_rows):
    instance = _instance(t_rows, d_rows, s_rows)
    evaluator = RelationalEvaluator()
    reduced = Semijoins(ratio=2, constants=True).reduced(_PROGRAM.rules, instance, {"t", "s"})
    assert _derived(evaluator, reduced) == _bags(evaluator.derive(_PROGRAM.rules, instance))


def test_with_constants_a_literal_with_a_constant_is_reduced_too():
    instance = _instance([(i, 3 * (i % 2)) for i in range(40)], [(5, 6)], [])
    rules, reduced = Semijoins(ratio=16, constants=True).reduced(_PROGRAM.rules[1:], instance,
                                                                 {"t"})
    name = reduction_name("t", "d", ((0, 0),))
    assert [str(rule) for rule in rules] == [str(_PROGRAM.rules[1]).replace("t(x, 3)",
                                                                             f"{name}(x, 3)")]
    assert reduced[name].to_rows() == [(5, 3)]  # t rows with d's x = 5; the rule selects 3


def _assert_alike(reduced, expected):
    """Two ``Semijoins.reduced`` results read alike: the same rules, the same relations."""
    assert [str(rule) for rule in reduced[0]] == [str(rule) for rule in expected[0]]
    for name in expected[1]:
        assert reduced[1][name].to_rows() == expected[1][name].to_rows(), name


def _ordered(rows) -> Relation:
    """A Relation of ``rows`` in lexicographic order, as the counting engine's deltas are."""
    return Relation(np.unique(np.array(sorted(rows), dtype=np.int64).reshape(-1, 2),
                              axis=0).T, unique=True)


@settings(max_examples=150, deadline=None)
@given(_rows, _seeds, _rows, st.booleans())
def test_ordered_reductions_search_the_first_column_and_reduce_alike(t_rows, d_rows, s_rows,
                                                                      constants):
    # also of relations that are slices of a wider block (not C-contiguous), as the counting
    # engine's deltas are slices of the relation stored iteration by iteration
    instance = Database({"t": _ordered(t_rows), "d": _ordered(d_rows), "s": _ordered(s_rows)})
    sliced = Database({"t": _sliced(instance["t"]), "d": instance["d"],
                       "s": _sliced(instance["s"])})
    assert not sliced["t"].columns.flags.c_contiguous or not len(t_rows)
    evaluator = RelationalEvaluator()
    scanned = Semijoins(ratio=2, constants=constants).reduced(_PROGRAM.rules, instance,
                                                              {"t", "s"})
    searched = Semijoins(ratio=2, constants=constants, ordered=True).reduced(
        _PROGRAM.rules, instance, {"t", "s"})
    _assert_alike(searched, scanned)
    assert _derived(evaluator, searched) == _bags(evaluator.derive(_PROGRAM.rules, instance))
    for ordered in (False, True):
        _assert_alike(Semijoins(ratio=2, constants=constants, ordered=ordered).reduced(
            _PROGRAM.rules, sliced, {"t", "s"}), scanned)


def test_an_ordered_reduction_by_a_first_column_searches_it(monkeypatch):
    import herbrand.evaluators.incremental.member_kernels as member_kernels

    scanned = []
    matching = member_kernels.matching
    monkeypatch.setattr(member_kernels, "matching",
                        lambda values, seed: scanned.append(len(values)) or matching(values, seed))
    instance = Database({"t": _ordered([(i, i + 1) for i in range(64)]),
                         "d": _ordered([(5, 6)]), "s": _ordered([(7, 0), (8, 0)])})
    rules, reduced = Semijoins(ordered=True).reduced(_PROGRAM.rules[:1], instance, {"t"})
    assert reduced[reduction_name("t", "d", ((0, 1),))].to_rows() == [(6, 7)]
    assert not scanned  # t's 64 rows searched for d's y = 6, none scanned


def _sliced(relation: Relation) -> Relation:
    """``relation``'s rows as a slice of a wider block (not C-contiguous)."""
    columns = relation.columns
    wide = np.zeros((columns.shape[0], columns.shape[1] + 5), dtype=np.int64)
    wide[:, 2:2 + columns.shape[1]] = columns
    return Relation(wide[:, 2:2 + columns.shape[1]], unique=True)


@settings(max_examples=100, deadline=None)
@given(_rows, _seeds, _rows, st.integers(0, 3), st.integers(0, 3))
def test_bounds_holding_a_relation_reduce_alike_and_outside_the_seed_empty(t_rows, d_rows,
                                                                          s_rows, below, above):
    # bounds that hold t's values (widened by below / above) reduce as no bounds do; bounds
    # of a range no seed value is in give an empty reduction (its rule left out)
    instance = _instance(t_rows, d_rows, s_rows)
    columns = instance["t"].columns
    held = (np.array([[columns[0].min() - below, columns[1].min() - below],
                      [columns[0].max() + above, columns[1].max() + above]])
            if len(t_rows) else np.array([[5, 5], [1, 1]]))
    evaluator = RelationalEvaluator()
    plain = Semijoins(ratio=2).reduced(_PROGRAM.rules, instance, {"t", "s"})
    bounded = Semijoins(ratio=2).reduced(_PROGRAM.rules, instance, {"t", "s"},
                                         lambda name: held if name == "t" else None)
    _assert_alike(bounded, plain)
    assert _derived(evaluator, bounded) == _bags(evaluator.derive(_PROGRAM.rules, instance))
    outside = np.array([[100, 100], [200, 200]])
    rules, reduced = Semijoins(ratio=2).reduced(_PROGRAM.rules, instance, {"t", "s"},
                                                lambda name: outside if name == "t" else None)
    emptied = [name for name in reduced if name.startswith("@semijoin:") and name.endswith(":t")]
    assert all(not len(reduced[name]) for name in emptied)
    assert not any(name in str(rule) for rule in rules for name in emptied)  # left out


def test_rules_analysed_ahead_reduce_alike_without_another_analysis(monkeypatch):
    import herbrand.evaluators.incremental.counting_semijoins as counting_semijoins

    instance = _instance([(i, i + 1) for i in range(40)], [(5, 6)],
                         [(i, 0) for i in range(40)])
    expected = Semijoins(ratio=16).reduced(_PROGRAM.rules, instance, {"t", "s"})
    semijoins = Semijoins(ratio=16)
    semijoins.analyse(_PROGRAM.rules)
    monkeypatch.setattr(counting_semijoins, "rule_literals", lambda rule: 1 / 0)
    rules, reduced = semijoins.reduced(_PROGRAM.rules, instance, {"t", "s"})
    assert list(map(str, rules)) == list(map(str, expected[0]))
    assert {name: reduced[name].to_rows() for name in reduced} == {
        name: expected[1][name].to_rows() for name in expected[1]}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=20),
       st.tuples(st.integers(0, 7), st.integers(0, 7), st.integers(0, 7), st.integers(0, 7)),
       st.sampled_from([((0, 0),), ((1, 1),), ((0, 1), (1, 0)), ((1, 0), (0, 0))]))
def test_outside_tells_whether_a_shared_column_has_no_seed_value_within_bounds(
        seed_rows, ends, shared):
    # seeds of up to FEW_SEED_ROWS rows take the Python comparison, larger ones the numpy one;
    # values on a bound are inside
    from herbrand.evaluators.incremental.counting_semijoins import _outside

    seed = Relation.from_rows(seed_rows, 2).columns if seed_rows else np.zeros((2, 0), np.int64)
    bounds = np.array([[ends[0], ends[1]], [ends[2], ends[3]]], dtype=np.int64)
    expected = any(not any(bounds[0, column] <= value <= bounds[1, column]
                           for value in seed[seed_column].tolist())
                   for column, seed_column in shared)
    assert _outside(bounds, seed, shared) == expected


def test_outside_counts_a_seed_value_on_a_bound_inside_for_small_and_large_seeds():
    from herbrand.evaluators.incremental.counting_semijoins import FEW_SEED_ROWS, _outside

    bounds = np.array([[10], [20]], dtype=np.int64)
    for rows in (1, FEW_SEED_ROWS + 4):
        for bound in (10, 20):
            seed = np.array([[(0, 30)[i % 2] for i in range(rows)]], dtype=np.int64)
            seed[0, -1] = bound
            assert not _outside(bounds, seed, ((0, 0),))
            seed[0, -1] = bound - 1 if bound == 10 else bound + 1
            assert _outside(bounds, seed, ((0, 0),))
