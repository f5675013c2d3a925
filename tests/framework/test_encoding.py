"""herbrand.framework.encoding: every value a user gives is stored exactly or the batch is
rejected with one HerbrandError naming the relation (row, column)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from herbrand.framework.encoding import check_rows, encode_rows, rows_by_relation
from herbrand.framework.errors import ArityError, HerbrandTypeError, UsageError
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable

NUMBERS = ("number", "number")
PERSON = ("symbol", "number")
INT64_MAX = 2**63 - 1


def _rejected(error: type[Exception], rows, types=NUMBERS, symbols=None, relation="e") -> str:
    """The one-line message of the error ``encode_rows`` raises for ``rows``; also checks that
    nothing was interned."""
    symbols = symbols if symbols is not None else SymbolTable(["a", "b"])
    size = len(symbols)
    with pytest.raises(error) as raised:
        encode_rows(relation, rows, types, symbols)
    message = str(raised.value)
    assert "\n" not in message and f"relation {relation}" in message
    assert len(symbols) == size
    return message


# -- accepted, stored exactly --------------------------------------------------------------------


def test_tuples_intern_symbols_and_keep_numbers():
    symbols = SymbolTable()
    relation = encode_rows("person", [("ada", 36), ["bob", np.int32(7)]], PERSON, symbols)
    assert relation.to_rows() == [(0, 36), (1, 7)]
    assert encode_rows("person", (("ada", 1),), PERSON, symbols).to_rows() == [(0, 1)]
    assert encode_rows("e", iter([(1, 2)]), NUMBERS, symbols).to_rows() == [(1, 2)]
    assert encode_rows("e", {(1, 2)}, NUMBERS, symbols).to_rows() == [(1, 2)]
    assert encode_rows("e", [], NUMBERS, symbols).to_rows() == []


def test_extreme_int64_values_are_kept():
    rows = [(-(2**63), INT64_MAX)]
    assert encode_rows("e", rows, NUMBERS, SymbolTable()).to_rows() == rows
    array = np.array([[INT64_MAX, 0]], dtype=np.uint64)
    assert encode_rows("e", array, NUMBERS, SymbolTable()).to_rows() == [(INT64_MAX, 0)]


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint32, np.uint64])
def test_integer_arrays_of_every_width(dtype):
    array = np.array([[1, 2], [3, 4]], dtype=dtype)
    assert encode_rows("e", array, NUMBERS, SymbolTable()).to_rows() == [(1, 2), (3, 4)]


def test_str_arrays_are_symbols_and_integer_ids_must_be_in_the_table():
    symbols = SymbolTable(["ada"])
    relation = encode_rows("person", np.array([["bob", "x"]])[:, :1], ("symbol",), symbols)
    assert relation.to_rows() == [(1,)] and symbols.symbol(1) == "bob"
    ids = np.array([[0, 5], [1, 6]])
    assert encode_rows("person", ids, PERSON, symbols).to_rows() == [(0, 5), (1, 6)]


def test_object_arrays_are_checked_value_by_value():
    array = np.array([["ada", 3], ["bob", np.int64(4)]], dtype=object)
    symbols = SymbolTable()
    assert encode_rows("person", array, PERSON, symbols).to_rows() == [(0, 3), (1, 4)]


def test_nullary_relations_take_n_by_0_arrays_and_empty_tuples():
    assert len(encode_rows("flag", np.zeros((3, 0), dtype=np.int64), (), SymbolTable())) == 1
    assert len(encode_rows("flag", [(), ()], (), SymbolTable())) == 1
    assert len(encode_rows("flag", [], (), SymbolTable())) == 0


def test_dataframes_column_by_column():
    frame = pd.DataFrame({
        "name": pd.array(["ada", "bob"], dtype="string"),
        "age": pd.array([36, 7], dtype="Int64"),
    })
    symbols = SymbolTable()
    assert encode_rows("person", frame, PERSON, symbols).to_rows() == [(0, 36), (1, 7)]
    unsigned = pd.DataFrame({"a": np.array([1], dtype=np.uint64), "b": [2]})
    assert encode_rows("e", unsigned, NUMBERS, symbols).to_rows() == [(1, 2)]
    categories = pd.DataFrame({"name": pd.Categorical(["ada", "ada"]), "age": [1, 2]})
    assert encode_rows("person", categories, PERSON, symbols).to_rows() == [(0, 1), (0, 2)]


def test_arrow_tables_and_record_batches():
    symbols = SymbolTable()
    table = pa.table({"name": ["ada", "bob"], "age": pa.array([36, 7], pa.int32())})
    assert encode_rows("person", table, PERSON, symbols).to_rows() == [(0, 36), (1, 7)]
    chunked = pa.Table.from_batches([table.to_batches()[0]] * 2)
    assert encode_rows("person", chunked, PERSON, symbols).to_rows() == [(0, 36), (1, 7)]
    batch = pa.record_batch({"name": pa.array(["bob"]).dictionary_encode(), "age": [1]})
    assert encode_rows("person", batch, PERSON, symbols).to_rows() == [(1, 1)]


def test_a_relation_is_taken_as_encoded_with_its_ids_checked():
    relation = Relation.from_rows([(0, 1)])
    assert encode_rows("person", relation, PERSON, SymbolTable(["ada"])) is not None
    message = _rejected(HerbrandTypeError, Relation.from_rows([(3, 1)]), PERSON)
    assert "row 1 column 1" in message and "SymbolTable" in message
    assert "arity 1" in _rejected(ArityError, Relation.from_rows([(1,)]))


# -- rejected: arrays ----------------------------------------------------------------------------


@pytest.mark.parametrize("array", [
    np.array([[1.5, 2.9]]),
    np.array([[1.0, 2.0]]),  # integral floats are floats, as Python's are
    np.array([[np.nan, 1.0]]),
    np.array([[np.inf, 1.0]]),
    np.array([[1e19, 1.0]]),
    np.array([[True, False]]),
    np.array([["1", "2"]]),
    np.array([[b"1", b"2"]]),
    np.array([[1 + 2j, 1]]),
    np.array([["2024-01-01", "2024-01-02"]], dtype="datetime64[D]"),
    np.empty((0, 2)),
], ids=lambda a: str(a.dtype))
def test_arrays_of_other_dtypes_are_rejected_naming_the_column(array):
    message = _rejected(HerbrandTypeError, array)
    assert "column 1 expects a number" in message


def test_uint64_beyond_int64_is_rejected_at_its_row():
    array = np.array([[1, 2], [3, 2**64 - 1]], dtype=np.uint64)
    message = _rejected(HerbrandTypeError, array)
    assert "row 2 column 2" in message and str(2**64 - 1) in message


@pytest.mark.parametrize(("array", "arity"), [
    (np.array([1, 2, 3, 4]), 2), (np.array([1, 2]), 1), (np.array([]), 0),
    (np.array(5), 1), (np.zeros((2, 2, 2), dtype=np.int64), 2),
    (np.zeros((2, 3), dtype=np.int64), 2), (np.zeros((2, 1), dtype=np.int64), 0),
])
def test_arrays_of_another_shape_are_arity_errors(array, arity):
    message = _rejected(ArityError, array, ("number",) * arity)
    assert f"{arity}" in message


def test_a_1d_array_is_never_reshaped_and_the_message_says_how():
    assert "reshape(-1, 2)" in _rejected(ArityError, np.array([1, 2, 3, 4]))


def test_symbol_ids_outside_the_table_are_rejected():
    for bad in (2, -1):
        message = _rejected(HerbrandTypeError, np.array([[0, 1], [bad, 1]]), PERSON)
        assert "row 2 column 1" in message and "2 symbols" in message


def test_str_array_for_a_number_column_names_the_column():
    assert "column 2 expects a number" in _rejected(HerbrandTypeError, np.array([["a", "b"]]),
                                                    PERSON)


def test_object_arrays_reject_floats_bools_and_big_ints_at_their_row():
    for bad in (1.0, True, None, 2**63, "x"):
        array = np.array([[1, 2], [3, bad]], dtype=object)
        assert "row 2 column 2" in _rejected(HerbrandTypeError, array)
    assert "row 1 column 1 expects a symbol" in _rejected(
        HerbrandTypeError, np.array([[0, 1]], dtype=object), PERSON)


# -- rejected: tuples and containers -------------------------------------------------------------


@pytest.mark.parametrize(("rows", "where"), [
    ([(1, 2.0)], "row 1 column 2"), ([(1, 2), (True, 2)], "row 2 column 1"),
    ([(1, 2**63)], "row 1 column 2"), ([(1, -(2**63) - 1)], "row 1 column 2"),
    ([(1, "2")], "row 1 column 2"), ([(1, None)], "row 1 column 2"),
    ([(1, 2), 3], "row 2"), ([(1, 2), None], "row 2"), ([[1, 2], "ab"], "row 2"),
    ([(1, 2), np.array([1, 2])], "row 2"),
])
def test_bad_rows_are_type_errors_naming_row_and_column(rows, where):
    assert where in _rejected(HerbrandTypeError, rows)


def test_rows_of_another_length_are_arity_errors():
    assert "row 2" in _rejected(ArityError, [(1, 2), (1, 2, 3)])


def test_a_str_is_not_a_row_of_a_unary_symbol_relation():
    assert "row 1" in _rejected(HerbrandTypeError, ["ab"], ("symbol",))


@pytest.mark.parametrize("rows", [None, "ab", b"ab", {"a": 1}, 5, 1.5])
def test_containers_that_are_not_collections_of_rows_are_rejected(rows):
    message = _rejected(HerbrandTypeError, rows, ("symbol",))
    assert "rows must be" in message


def test_a_bare_row_must_be_wrapped():
    assert "[(1, 2)]" in _rejected(HerbrandTypeError, (1, 2))


def test_a_value_is_shown_on_one_line_and_shortened():
    message = _rejected(HerbrandTypeError, [(1, "x\n" * 100)])
    assert "\\n" in message and len(message) < 200


# -- rejected: frames ----------------------------------------------------------------------------


@pytest.mark.parametrize(("frame", "where"), [
    (pd.DataFrame({"a": [1.0, 2.0], "b": [1, 2]}), "column 1 expects a number"),
    (pd.DataFrame({"a": [1, 2], "b": [1, None]}), "row 2 column 2 is a missing value"),
    (pd.DataFrame({"a": pd.array([1, None], dtype="Int64"), "b": [1, 2]}), "row 2 column 1"),
    (pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}), "column 2 expects a number"),
    (pd.DataFrame({"a": [True], "b": [1]}), "column 1 expects a number"),
    (pd.DataFrame({"a": pd.to_datetime(["2024-01-01"]), "b": [1]}), "column 1"),
])
def test_dataframe_columns_are_checked(frame, where):
    assert where in _rejected(HerbrandTypeError, frame)


def test_dataframe_symbol_columns_reject_missing_and_non_str_values():
    frame = pd.DataFrame({"name": ["ada", None], "age": [1, 2]})
    assert "row 2 column 1 is a missing value" in _rejected(HerbrandTypeError, frame, PERSON)
    frame = pd.DataFrame({"name": ["ada", 3], "age": [1, 2]})
    assert "row 2 column 1 expects a symbol" in _rejected(HerbrandTypeError, frame, PERSON)


def test_a_frame_with_another_number_of_columns_is_an_arity_error():
    assert "3 columns" in _rejected(ArityError, pd.DataFrame({"a": [1], "b": [1], "c": [1]}))
    assert "1 columns" in _rejected(ArityError, pa.table({"a": [1]}))


@pytest.mark.parametrize(("table", "where"), [
    (pa.table({"a": [1], "b": [1.5]}), "column 2 expects a number"),
    (pa.table({"a": [1, None], "b": [1, 2]}), "row 2 column 1 is a missing value"),
    (pa.table({"a": [1], "b": [True]}), "column 2 expects a number"),
    (pa.table({"a": [1], "b": [b"x"]}), "row 1 column 2 expects a number"),
    (pa.table({"a": pa.array([2**64 - 1], pa.uint64()), "b": [1]}), "row 1 column 1"),
])
def test_arrow_columns_are_checked(table, where):
    assert where in _rejected(HerbrandTypeError, table)


# -- checking before interning -------------------------------------------------------------------


def test_nothing_is_interned_when_a_later_column_fails():
    symbols = SymbolTable()
    with pytest.raises(HerbrandTypeError):
        encode_rows("person", [("new", 1), ("newer", "x")], PERSON, symbols)
    assert len(symbols) == 0
    checked = check_rows("person", [("new", 1)], PERSON, symbols)
    assert len(symbols) == 0
    assert checked.encode(symbols).to_rows() == [(0, 1)] and symbols.symbol(0) == "new"


def test_rows_by_relation_takes_a_mapping_of_names():
    assert rows_by_relation("facts", None) == {}
    assert rows_by_relation("facts", {"e": []}) == {"e": []}
    for bad, shown in (([("e", [])], "got list"), ((1, 2), "got tuple"), ({1: []}, "got 1")):
        with pytest.raises(UsageError, match=shown) as raised:
            rows_by_relation("facts", bad)
        assert str(raised.value).startswith("facts")


# -- properties ----------------------------------------------------------------------------------


int64_arrays = st.integers(0, 3).flatmap(lambda k: hnp.arrays(
    np.int64, st.tuples(st.integers(0, 20), st.just(k))))


@given(int64_arrays)
def test_any_int64_array_of_rows_round_trips_exactly(array):
    relation = encode_rows("r", array, ("number",) * array.shape[1], SymbolTable())
    assert relation.to_set() == set(map(tuple, array.tolist()))


@given(hnp.arrays(hnp.floating_dtypes(), st.tuples(st.integers(0, 5), st.integers(1, 3))))
def test_any_float_array_is_rejected(array):
    with pytest.raises(HerbrandTypeError, match="column 1 expects a number"):
        encode_rows("r", array, ("number",) * array.shape[1], SymbolTable())


@given(st.lists(st.tuples(st.integers(-(2**70), 2**70), st.text(max_size=3)), max_size=10))
def test_python_rows_round_trip_or_are_rejected_by_range(rows):
    symbols = SymbolTable()
    fits = all(-(2**63) <= n <= INT64_MAX for n, _ in rows)
    try:
        relation = encode_rows("r", rows, ("number", "symbol"), symbols)
    except HerbrandTypeError as error:
        assert not fits and "column 1" in str(error)
    else:
        assert fits
        decoded = {(n, symbols.symbol(s)) for n, s in relation.to_rows()}
        assert decoded == set(rows)
