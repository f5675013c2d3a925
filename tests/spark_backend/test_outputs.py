"""Spark writes .output relations itself, in Soufflé's layouts: one sorted file, written by
one task or by several in parallel and concatenated, or as it is when in order already; each
gzipped when its name ends in ``.gz``; the bytes are the local backend's."""

from __future__ import annotations

import io as text_io
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import herbrand
from herbrand.cli import main
from herbrand.framework import io
from herbrand.framework.analysis import analyse
from herbrand.spark_backend import outputs
from herbrand.spark_backend.backend import SparkBackend
from tests.spark_backend.conftest import recorded_writes
from tests.spark_backend.edge_files import (
    FACTS,
    NUMBER_EDGES,
    PROGRAM,
    SYMBOL_EDGES,
    facts_dir,
    plain_bytes,
    tc_files,
)


def test_write_parts_follow_the_rows_within_the_cores():
    assert outputs.write_parts(None, 4) == 1
    assert outputs.write_parts(outputs.ROWS_PER_WRITE_TASK, 4) == 1
    assert outputs.write_parts(outputs.ROWS_PER_WRITE_TASK + 1, 4) == 2
    assert outputs.write_parts(10**9, 4) == 4
    assert outputs.write_parts(10**9, 0) == 1


def test_csv_outputs_equal_the_local_backend_s(spark_backend, tmp_path):
    program = herbrand.parse(PROGRAM)
    facts = facts_dir(tmp_path)
    stdout = text_io.StringIO()
    spark_backend.materialize_files(program, facts, tmp_path / "spark", stdout=stdout)
    local = herbrand.materialize(program, facts_dir=facts)
    local_stdout = text_io.StringIO()
    io.write_outputs(program, local, tmp_path / "local", stdout=local_stdout)
    for name in ("path.csv", "flag.csv"):
        assert (tmp_path / "spark" / name).read_text() == (tmp_path / "local" / name).read_text()
    assert stdout.getvalue() == local_stdout.getvalue() == "path\t6\n"
    assert sorted(p.name for p in (tmp_path / "spark").iterdir()) == ["flag.csv", "path.csv"]


@pytest.mark.parametrize("delimiter", [r'"\t"', '", "', '"1"', '"-"', r'"\""'])
def test_number_relations_are_written_as_the_local_backend_writes_them(spark_backend, tmp_path,
                                                                      delimiter):
    # numbers only: Spark's CSV writer, unless the delimiter holds a character it would quote
    program = herbrand.parse(".decl e(x: number, y: number)\n.input e\n"
                             f".output e(delimiter={delimiter})\n")
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "e.facts").write_text("10\t-3\n2\t7\n-5\t0\n2\t-8\n")
    spark_backend.materialize_files(program, facts, tmp_path / "spark", stdout=text_io.StringIO())
    io.write_outputs(program, herbrand.materialize(program, facts_dir=facts), tmp_path / "local")
    written = (tmp_path / "spark" / "e.csv").read_bytes()
    assert written == (tmp_path / "local" / "e.csv").read_bytes()
    assert written.count(b"\n") == 4


def test_parquet_outputs_are_typed_columns(spark_backend, tmp_path):
    program = herbrand.parse(PROGRAM)
    spark_backend.materialize_files(program, facts_dir(tmp_path), tmp_path / "out",
                                    output_format="parquet", stdout=text_io.StringIO())
    table = pq.read_table(tmp_path / "out" / "path.parquet")
    rows = set(zip(table.column("c0").to_pylist(), table.column("c1").to_pylist(), strict=True))
    assert rows == {(2, "b c"), (10, "a"), (16, "tab\tin"), (2, "end"), (10, "end"),
                    (16, "end")}


@pytest.mark.parametrize("types", ["x: number, y: number", "x: number, y: symbol"])
def test_a_large_output_is_written_in_ranges_and_concatenated(spark_backend, tmp_path,
                                                              monkeypatch, types):
    """Over ROWS_PER_WRITE_TASK rows: range-partitioned, each range sorted and written by its own
    task, the part files concatenated in order; the file is the local backend's, byte for byte
    (numbers by the CSV writer, symbols by the text writer)."""
    monkeypatch.setattr(outputs, "ROWS_PER_WRITE_TASK", 7)
    written = recorded_writes(monkeypatch)
    program = herbrand.parse(f".decl e({types})\n.input e\n.output e\n")
    facts = tmp_path / "facts"
    facts.mkdir()
    lines = [f"{(i * 37) % 101 - 50}\t{(i * 11) % 13}" for i in range(60)]
    (facts / "e.facts").write_text("\n".join(lines) + "\n")
    spark_backend.materialize_files(program, facts, tmp_path / "spark", stdout=text_io.StringIO())
    io.write_outputs(program, herbrand.materialize(program, facts_dir=facts), tmp_path / "local")
    assert written == [4]  # the test session's 4 shuffle partitions
    spark_bytes = (tmp_path / "spark" / "e.csv").read_bytes()
    assert spark_bytes == (tmp_path / "local" / "e.csv").read_bytes()
    assert spark_bytes.count(b"\n") == 60
    assert sorted(p.name for p in (tmp_path / "spark").iterdir()) == ["e.csv"]


@pytest.mark.parametrize("directives, expected", [
    (".output tc", {"tc"}),
    (".output tc\n.printsize tc", set()),  # read twice
    (".output tc\n.output tc(filename=\"again.csv\")", set()),
    (".output tc(IO=stdout)", set()),  # collected to the driver, not written by tasks
    (".output tc\n.decl far(x: number)\n.output far\nfar(y) :- tc(_, y).", {"far"}),
    (".output e", set()),  # no stratum computes e: nothing to defer
    (".decl odd(x: number, y: number)\nodd(x, y) :- e(x, y).\nodd(x, z) :- tc(x, y), "
     "odd(y, z).\n.output odd", {"odd"}),  # tc, read only in odd's stratum, is not written
])
def test_written_once_names_the_one_use_of_a_stratum(directives, expected):
    program = herbrand.parse(".decl e(x: number, y: number)\n.decl tc(x: number, y: number)\n"
                             "tc(x, y) :- e(x, y).\ntc(x, z) :- tc(x, y), e(y, z).\n"
                             + directives)
    strata = analyse(program)
    assert outputs.written_once(program, strata, "out") == expected
    assert outputs.written_once(program, strata, "-") == set()  # every output to stdout


@pytest.mark.parametrize("directives, expected", [
    (".output a", {"a"}), (".output a\n.output b", set())])
def test_a_stratum_of_two_relations_is_written_once_when_one_is_written(directives, expected):
    program = herbrand.parse(".decl e(x: number, y: number)\n.decl a(x: number, y: number)\n"
                             ".decl b(x: number, y: number)\na(x, y) :- e(x, y).\n"
                             "b(x, z) :- a(x, y), e(y, z).\na(x, z) :- b(x, y), e(y, z).\n"
                             + directives)
    assert outputs.written_once(program, analyse(program), "out") == expected


EXTREMES = (b"-9223372036854775808\t9223372036854775807\n9223372036854775807\t0\n"
            b"0\t-9223372036854775808\n")
SPARK_WRITES = {  # how Spark's writers take the file: (decompose, rows per task, directives)
    "one-task": (False, outputs.ROWS_PER_WRITE_TASK, "", [1]),
    "ranges": (False, 2, "", [4]),  # the test session's 4 shuffle partitions
    "in-order": (True, outputs.ROWS_PER_WRITE_TASK, "\n.printsize tc", [0]),
}


@pytest.mark.parametrize("how", SPARK_WRITES)
@pytest.mark.parametrize("kind, params, edges, file", [
    ("number", '(filename="tc.csv.gz")', NUMBER_EDGES, "tc.csv.gz"),  # Spark's CSV writer
    ("symbol", '(filename="sub/tc.gz", delimiter="\\"")', SYMBOL_EDGES, "sub/tc.gz"),  # text
    ("number", '(filename="tc.csv.gz")', b"", "tc.csv.gz"),  # an empty gzip file
    ("number", '(delimiter="é")', EXTREMES, "tc.csv"),
], ids=["gzip-numbers", "gzip-bytes", "gzip-empty", "extremes"])
def test_spark_s_writers_write_the_local_backend_s_bytes(spark, tmp_path, monkeypatch, how,
                                                         kind, params, edges, file):
    """Each way Spark's writers take a file (one task; ranges joined; a frame in order
    already), gzipped or not: the bytes of ``herbrand run`` on the local backend (gunzipped
    for a ``.gz`` name, which must hold gzip)."""
    decompose, rows_per_task, more, parts = SPARK_WRITES[how]
    monkeypatch.setattr(outputs, "ROWS_PER_WRITE_TASK", rows_per_task)
    written = recorded_writes(monkeypatch)
    program, facts = tc_files(tmp_path, kind, params, edges, more)
    SparkBackend(session=spark, decompose=decompose).materialize_files(
        herbrand.parse(program.read_text()), facts, tmp_path / "spark", stdout=text_io.StringIO())
    assert main(["run", str(program), "-F", str(facts), "-D", str(tmp_path / "local"),
                 "--no-progress"]) == 0
    assert written == (parts if edges or how == "in-order" else [1])
    assert plain_bytes(tmp_path / "spark" / file) == plain_bytes(tmp_path / "local" / file)
    assert [p.name for p in (tmp_path / "spark" / file).parent.iterdir()] == [Path(file).name]


@pytest.mark.parametrize("facts_text", [FACTS, ""], ids=["true", "false"])
def test_a_gzipped_nullary_output_is_the_local_backend_s(spark_backend, tmp_path, facts_text):
    program = herbrand.parse(PROGRAM.replace(".output flag", '.output flag(filename="f.gz")'))
    facts = facts_dir(tmp_path, facts_text)
    spark_backend.materialize_files(program, facts, tmp_path / "spark", stdout=text_io.StringIO())
    io.write_outputs(program, herbrand.materialize(program, facts_dir=facts), tmp_path / "local",
                     stdout=text_io.StringIO())
    expected = b"()\n" if facts_text else b""
    assert plain_bytes(tmp_path / "spark" / "f.gz") == plain_bytes(tmp_path / "local" / "f.gz")
    assert plain_bytes(tmp_path / "spark" / "f.gz") == expected
