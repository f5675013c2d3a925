"""The updates file of ``herbrand run --updates``."""

from __future__ import annotations

import pytest

from herbrand.framework.errors import FactsError
from herbrand.framework.parser import parse
from herbrand.updates import read_updates

PROGRAM = parse("""
.decl edge(x: number, y: symbol)
.decl flag()
.decl path(x: number, y: symbol)
path(x, y) :- edge(x, y).
""")


def test_epochs_are_separated_by_commit_and_a_trailing_epoch_counts(tmp_path):
    path = tmp_path / "u.txt"
    path.write_text("+edge\t1\ta\n-edge\t2\tb\ncommit\n\n+flag\n+edge\t16\tc d\n")
    first, second = read_updates(path, PROGRAM)
    assert first.insert == {"edge": [(1, "a")]} and first.delete == {"edge": [(2, "b")]}
    assert first.line == 3 and first.size == 2
    assert second.insert == {"flag": [()], "edge": [(16, "c d")]} and second.line == 6


def test_an_empty_file_has_no_epochs(tmp_path):
    (tmp_path / "u.txt").write_text("commit\n")
    assert [e.size for e in read_updates(tmp_path / "u.txt", PROGRAM)] == [0]


@pytest.mark.parametrize(("line", "message"), [
    ("edge\t1\ta", "expected '\\+relation'"),
    ("+nope\t1", "'nope' is not declared"),
    ("+path\t1\ta", "path is derived"),
    ("-edge\t1", "has 2 columns, the line has 1 values"),
    ("+edge\tx\ta", "column 1: 'x' is not a number"),
    ("+edge\t0x10\ta", "column 1: '0x10' is not a number"),
    ("+edge\t1_000\ta", "column 1: '1_000' is not a number"),
    ("+edge\t9223372036854775808\ta", "column 1: '9223372036854775808' is not a number"),
])
def test_malformed_lines_name_file_and_line(tmp_path, line, message):
    path = tmp_path / "u.txt"
    path.write_text(f"+edge\t1\ta\ncommit\n{line}\n")
    with pytest.raises(FactsError, match=f"u.txt:3: .*{message}"):
        read_updates(path, PROGRAM)


def test_a_missing_file_is_a_facts_error(tmp_path):
    with pytest.raises(FactsError, match="cannot read updates file"):
        read_updates(tmp_path / "none.txt", PROGRAM)


def test_symbols_keep_bytes_that_are_not_utf8_and_lines_end_only_at_newline(tmp_path):
    path = tmp_path / "u.txt"
    path.write_bytes(b"+edge\t1\ta\xffb\r\n+edge\t2\tform\x0cfeed\xc2\x85\n")
    (epoch,) = read_updates(path, PROGRAM)
    (first, second) = epoch.insert["edge"]
    assert first[1].encode("utf-8", "surrogateescape") == b"a\xffb"
    assert second[1] == "form\x0cfeed\x85"


def test_a_directory_is_one_line_naming_it(tmp_path):
    with pytest.raises(FactsError, match="cannot read updates file: is a directory$"):
        read_updates(tmp_path, PROGRAM)
