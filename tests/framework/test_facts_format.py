"""The exact reader of ``.facts`` files (``herbrand.framework.facts_format``); the format's
cases against pyarrow's path are in test_arrow_io.py and test_reader_cases.py."""

import gzip

import pytest

from herbrand.framework import facts_format, io
from herbrand.framework.errors import FactsError
from herbrand.framework.symbols import SymbolTable


def test_distinct_rows_in_file_order_and_symbols_column_by_column(tmp_path):
    path = tmp_path / "r.facts.gz"
    path.write_bytes(gzip.compress(b"b\t2\ta\r\na\t1\tc\nb\t2\ta\n"))
    symbols = SymbolTable(["c"])
    relation = facts_format.read_facts_exact(path, ("symbol", "number", "symbol"), symbols,
                                             "\t", "r")
    assert relation.to_rows() == [(1, 2, 2), (2, 1, 0)]
    assert [symbols.symbol(i) for i in range(len(symbols))] == ["c", "b", "a"]


@pytest.mark.parametrize(("text", "message"), [
    (b"1\t2\n3\n", "r.facts:2: relation r: expected 2 fields separated by '\\t', found 1"),
    (b"1\t2\n3\t+x\n", "r.facts:2: relation r: column 2 expects a number, got '+x'"),
    (b"1\t99999999999999999999\n", "column 2 expects a number, got '99999999999999999999', "
                                  "out of the 64-bit range"),
])
def test_the_first_bad_line_is_named_and_nothing_is_interned(tmp_path, text, message):
    path = tmp_path / "r.facts"
    path.write_bytes(text)
    symbols = SymbolTable()
    with pytest.raises(FactsError) as raised:
        facts_format.read_facts_exact(path, ("symbol", "number"), symbols, "\t", "r")
    assert str(raised.value).endswith(message)
    assert len(symbols) == 0


def test_io_re_exports_the_shared_pieces():
    for name in ("parse_number", "read_bytes", "NUMBER_SYNTAX", "field_count_error",
                 "number_error", "missing_file_error", "unreadable_file_error",
                 "check_delimiter", "IS_A_DIRECTORY", "INVALID_GZIP"):
        assert getattr(io, name) is getattr(facts_format, name)
