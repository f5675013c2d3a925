import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from herbrand.framework.encoding import encode_rows
from herbrand.framework.errors import ArityError
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation, attribute_names, row_keys
from herbrand.framework.symbols import SymbolTable

rows_of = lambda arity: st.lists(  # noqa: E731
    st.tuples(*[st.integers(-(2**40), 2**40)] * arity), max_size=30
)


def test_from_rows_dedups_and_keeps_first_occurrence_order():
    relation = Relation.from_rows([(3, 4), (1, 2), (3, 4), (0, 0)])
    assert relation.to_rows() == [(3, 4), (1, 2), (0, 0)]
    assert len(relation) == 3 and relation.arity == 2


def test_columns_are_column_wise_and_read_only():
    relation = Relation.from_rows([(1, 2), (3, 4)])
    assert relation.columns.shape == (2, 2)
    assert relation.column(1).tolist() == [2, 4]
    with pytest.raises(ValueError):
        relation.columns[0, 0] = 9


def test_union_keeps_left_as_prefix():
    left = Relation.from_rows([(1,), (2,)])
    joined = left.union(Relation.from_rows([(3,), (2,), (0,)]))
    assert joined.to_rows() == [(1,), (2,), (3,), (0,)]


def test_difference_intersection_membership():
    a = Relation.from_rows([(1, 1), (2, 2), (3, 3)])
    b = Relation.from_rows([(2, 2), (4, 4)])
    assert a.difference(b).to_rows() == [(1, 1), (3, 3)]
    assert a.intersection(b).to_rows() == [(2, 2)]
    assert (2, 2) in a and (4, 4) not in a and "x" not in a
    assert a.contains(np.array([[2, 9], [2, 9]])).tolist() == [True, False]


def test_nullary_relation_holds_at_most_the_empty_tuple():
    assert len(Relation.from_rows([(), ()])) == 1
    assert Relation.from_rows([(), ()]).to_rows() == [()]
    assert len(Relation.empty(0)) == 0
    assert Relation.empty(0).union(Relation.from_rows([()])).to_rows() == [()]


def test_wide_and_large_values_use_the_general_key_path():
    rows = [(2**40, -(2**40), 1), (2**40, -(2**40), 1), (1, 2, 3)]
    assert Relation.from_rows(rows).to_rows() == [(2**40, -(2**40), 1), (1, 2, 3)]


def test_arity_mismatch_is_an_error():
    with pytest.raises(ArityError):
        Relation.from_rows([(1, 2), (3,)])
    with pytest.raises(ArityError):
        Relation.from_rows([(1, 2)]).union(Relation.from_rows([(1,)]))


def test_row_keys_equal_exactly_for_equal_rows():
    a = np.array([[1, 1, 2], [5, 5, 5], [7, 8, 7]])
    b = np.array([[2], [5], [7]])
    ka, kb = row_keys(a, b)
    assert ka[0] != ka[1] and ka[2] == kb[0]


_VALUES = st.one_of(st.integers(-3, 3), st.integers(-(2**63), 2**63 - 1))


@given(st.integers(3, 4).flatmap(
    lambda arity: st.lists(st.tuples(*[_VALUES] * arity), min_size=1, max_size=12)),
    st.integers(0, 11))
def test_row_keys_of_wide_rows_are_equal_and_ordered_as_the_rows(rows, split):
    # small values take the mixed-radix keys, values up to 64 bits the dense ranks
    columns = np.array(rows, dtype=np.int64).T
    keys = np.concatenate(row_keys(columns[:, :split], columns[:, split:]))
    for i, row in enumerate(rows):
        for j, other in enumerate(rows):
            assert (keys[i] == keys[j]) == (row == other)
            assert (keys[i] < keys[j]) == (row < other)


@given(rows_of(2), rows_of(2))
def test_set_algebra_matches_python_sets(xs, ys):
    a, b = Relation.from_rows(xs, 2), Relation.from_rows(ys, 2)
    assert a.to_set() == set(xs)
    assert a.union(b).to_set() == set(xs) | set(ys)
    assert a.difference(b).to_set() == set(xs) - set(ys)
    assert a.intersection(b).to_set() == set(xs) & set(ys)
    assert (a == b) == (set(xs) == set(ys))


@given(rows_of(3))
def test_sorted_is_lexicographic(xs):
    assert Relation.from_rows(xs, 3).sorted().to_rows() == sorted(set(xs))


def test_database_decodes_symbols():
    symbols = SymbolTable()
    relation = encode_rows("p", [("x", 1), ("y", 2)], ("symbol", "number"), symbols)
    database = Database({"p": relation}, symbols, {"p": ("symbol", "number")})
    assert database.decoded_rows("p") == [("x", 1), ("y", 2)]
    assert database.sizes() == {"p": 2}
    assert database.to_pandas("p").values.tolist() == [["x", 1], ["y", 2]]
    grown = database.with_relations({"q": Relation.from_rows([(1,)])})
    assert set(grown) == {"p", "q"} and set(database) == {"p"}


def test_to_pandas_names_columns_as_declared_or_by_position():
    symbols = SymbolTable()
    relation = encode_rows("p", [("x", 1)], ("symbol", "number"), symbols)
    database = Database({"p": relation, "q": Relation.from_rows([(1, 2)])}, symbols,
                        {"p": ("symbol", "number")}, {"p": ("name", "age")})
    assert list(database.to_pandas("p").columns) == ["name", "age"]
    assert database.column_names("q") == ("c0", "c1")
    assert list(database.to_pandas("q").columns) == ["c0", "c1"]


def test_column_names_are_kept_by_with_relations_and_added_by_with_attributes():
    program = parse(".decl e(src: number, dst: number)\n.decl f(x: number)")
    assert attribute_names(program) == {"e": ("src", "dst"), "f": ("x",)}
    database = Database({"e": Relation.from_rows([(1, 2)])}).with_attributes(
        attribute_names(program))
    assert database.column_names("e") == ("src", "dst")
    grown = database.with_relations({"f": Relation.from_rows([(1,)])})
    assert grown.column_names("f") == ("x",) and grown.column_names("e") == ("src", "dst")
    assert grown.with_attributes(attribute_names(program)) is grown
