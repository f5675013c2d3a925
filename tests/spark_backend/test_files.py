"""Spark reads .input files and writes .output relations itself, in Soufflé's layouts."""

from __future__ import annotations

import io as text_io

import pyarrow.parquet as pq
import pytest

import herbrand
from herbrand import cli
from herbrand.framework import io
from herbrand.framework.errors import FactsError

PROGRAM = """
.decl edge(x: number, y: symbol)
.decl path(x: number, y: symbol)
.decl flag()
.input edge(delimiter=",")
.output path
.output flag
.printsize path
flag() :- edge(_, _).
path(x, y) :- edge(x, y).
path(x, "end") :- edge(x, _).
"""
FACTS = "2,b c\n10,a\n2,b c\n0x10,tab\tin\n"


def _facts_dir(tmp_path, text: str = FACTS):
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "edge.facts").write_text(text)
    return facts


def test_csv_outputs_equal_the_local_backend_s(spark_backend, tmp_path):
    program = herbrand.parse(PROGRAM)
    facts = _facts_dir(tmp_path)
    stdout = text_io.StringIO()
    spark_backend.materialize_files(program, facts, tmp_path / "spark", stdout=stdout)
    local = herbrand.materialize(program, facts_dir=facts)
    local_stdout = text_io.StringIO()
    io.write_outputs(program, local, tmp_path / "local", stdout=local_stdout)
    for name in ("path.csv", "flag.csv"):
        assert (tmp_path / "spark" / name).read_text() == (tmp_path / "local" / name).read_text()
    assert stdout.getvalue() == local_stdout.getvalue() == "path\t6\n"
    assert sorted(p.name for p in (tmp_path / "spark").iterdir()) == ["flag.csv", "path.csv"]


def test_parquet_outputs_are_typed_columns(spark_backend, tmp_path):
    program = herbrand.parse(PROGRAM)
    spark_backend.materialize_files(program, _facts_dir(tmp_path), tmp_path / "out",
                                    output_format="parquet", stdout=text_io.StringIO())
    table = pq.read_table(tmp_path / "out" / "path.parquet")
    rows = set(zip(table.column("c0").to_pylist(), table.column("c1").to_pylist(), strict=True))
    assert rows == {(2, "b c"), (10, "a"), (16, "tab\tin"), (2, "end"), (10, "end"),
                    (16, "end")}


def test_a_malformed_line_names_file_relation_and_line(spark_backend, tmp_path):
    program = herbrand.parse(PROGRAM)
    facts = _facts_dir(tmp_path, "1,a\nseven,b\n")
    with pytest.raises(FactsError, match=r"edge\.facts: relation edge: malformed line 'seven,b'"):
        spark_backend.materialize_files(program, facts, tmp_path / "out")


def test_a_missing_file_is_a_facts_error(spark_backend, tmp_path):
    with pytest.raises(FactsError, match="cannot open facts file of relation edge"):
        spark_backend.materialize_files(herbrand.parse(PROGRAM), tmp_path, tmp_path / "out")


def test_cli_runs_on_spark(spark, tmp_path, capsys):
    program = tmp_path / "p.dl"
    program.write_text(PROGRAM)
    facts = _facts_dir(tmp_path)
    status = cli.main(["run", str(program), "-F", str(facts), "-D", str(tmp_path / "out"),
                       "--backend", "spark", "--spark-conf", "spark.sql.shuffle.partitions=4",
                       "--stats", "--no-progress"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.out == "path\t6\n"
    assert "total\t" in captured.err
    assert len((tmp_path / "out" / "path.csv").read_text().splitlines()) == 6


def test_cli_rejects_spark_flags_for_the_local_backend(tmp_path, capsys):
    program = tmp_path / "p.dl"
    program.write_text(PROGRAM)
    status = cli.main(["run", str(program), "--master", "local[1]", "--no-progress"])
    assert status == 1
    assert "does not take --master" in capsys.readouterr().err
