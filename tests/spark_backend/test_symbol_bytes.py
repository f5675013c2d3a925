"""Symbols that are not UTF-8 keep their bytes through the Spark backend, both ways in: Spark
reading the files itself, and a Database whose symbols came from the local reader."""

from __future__ import annotations

import io as text_io

import herbrand
from herbrand.framework import io

PROGRAM = """
.decl e(x: symbol, y: symbol)
.decl p(x: symbol, y: symbol)
.decl n(x: number, y: symbol)
.input e
.input n(delimiter="::")
.output p
.output n
p(x, y) :- e(x, y).
p(y, x) :- e(x, y).
"""
# Both writers sort symbols by their bytes, so a byte that is not UTF-8 sorts among non-ASCII
# characters as itself: '\x80' before 'é' (C3 A9) before '\xff'.
E_FACTS = (b"a\xff\tb\n\xfe\x00\tc\xc3\nz\t\xed\xa0\x80q\r\n\x80\t\n"
           b"\xc3\xa9\t\x80\nm\t\xc3\xa9\n")
N_FACTS = b"1::\xc3\xa9\xff\n2::\xe2\x82:\n"


def _facts(tmp_path):
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "e.facts").write_bytes(E_FACTS)
    (facts / "n.facts").write_bytes(N_FACTS)
    return facts


def test_files_in_and_out_keep_the_bytes_as_the_local_backend_does(spark_backend, tmp_path):
    program = herbrand.parse(PROGRAM)
    facts = _facts(tmp_path)
    spark_backend.materialize_files(program, facts, tmp_path / "spark", stdout=text_io.StringIO())
    local = herbrand.materialize(program, facts_dir=facts)
    io.write_outputs(program, local, tmp_path / "local", stdout=text_io.StringIO())
    for name in ("p.csv", "n.csv"):
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    written = (tmp_path / "spark" / "p.csv").read_bytes()
    assert b"a\xff\tb\n" in written and b"\xfe\x00\tc\xc3\n" in written
    assert (tmp_path / "spark" / "n.csv").read_bytes() == b"1\t\xc3\xa9\xff\n2\t\xe2\x82:\n"


def test_a_database_in_and_out_keeps_the_bytes(spark_backend, tmp_path):
    program = herbrand.parse(PROGRAM)
    local = herbrand.materialize(program, facts_dir=_facts(tmp_path))
    result, _ = spark_backend.materialize(program, local)
    for name in ("p", "n"):
        assert set(result.decoded_rows(name)) == set(local.decoded_rows(name))
    assert ("a\udcff", "b") in set(result.decoded_rows("p"))


def test_stdout_keeps_the_bytes_as_the_local_backend_does(spark_backend, tmp_path):
    """Lines collected to the driver as bytes, decoded as the local writer decodes them (no
    U+FFFD for a byte that is not UTF-8)."""
    program = herbrand.parse(PROGRAM.replace(".output p\n", ".output p(IO=stdout)\n"))
    facts = _facts(tmp_path)
    spark_stdout, local_stdout = text_io.StringIO(), text_io.StringIO()
    spark_backend.materialize_files(program, facts, tmp_path / "spark", stdout=spark_stdout)
    io.write_outputs(program, herbrand.materialize(program, facts_dir=facts), tmp_path / "local",
                     stdout=local_stdout)
    assert spark_stdout.getvalue() == local_stdout.getvalue()
    assert "a\udcff\tb\n" in spark_stdout.getvalue()
