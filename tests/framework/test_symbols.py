import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from herbrand.framework.symbols import SymbolTable


def test_interning_is_dense_and_stable():
    table = SymbolTable(["a", "b"])
    assert table.intern("a") == 0 and table.intern("c") == 2 and len(table) == 3
    assert table.lookup("zzz") is None and "zzz" not in table
    assert table.symbol(1) == "b"


def test_bulk_interning_and_decoding():
    table = SymbolTable()
    ids = table.intern_many(["x", "y", "x", ""])
    assert ids.tolist() == [0, 1, 0, 2]
    assert table.decode_many(np.array([2, 0])).tolist() == ["", "x"]
    table.intern("z")
    assert table.decode_many(np.array([3])).tolist() == ["z"]


@given(st.lists(st.sampled_from("abcdef"), max_size=5, unique=True),
       st.lists(st.sampled_from("abcdefgh"), max_size=30), st.booleans())
def test_bulk_interning_is_interning_each_in_order(known, values, as_generator):
    bulk, one_by_one = SymbolTable(known), SymbolTable(known)
    ids = bulk.intern_many(iter(values) if as_generator else values)
    assert ids.dtype == np.int64
    assert ids.tolist() == [one_by_one.intern(value) for value in values]
    assert bulk.decode_many(np.arange(len(bulk))).tolist() == \
        one_by_one.decode_many(np.arange(len(one_by_one))).tolist()
    assert [bulk.lookup(value) for value in "abcdefgh"] == \
        [one_by_one.lookup(value) for value in "abcdefgh"]


def test_unknown_ids_raise():
    with pytest.raises(IndexError):
        SymbolTable(["a"]).symbol(5)
    with pytest.raises(IndexError):
        SymbolTable(["a"]).symbol(-1)


def test_copy_is_independent():
    table = SymbolTable(["a"])
    clone = table.copy()
    clone.intern("b")
    assert len(table) == 1 and len(clone) == 2
