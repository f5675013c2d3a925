"""Spark reads .input files itself, in Soufflé's layout (and writes the outputs: the reading
sides of runs that do both)."""

from __future__ import annotations

import gzip
import io as text_io

import pytest

import herbrand
from herbrand import cli
from herbrand.framework import io
from herbrand.framework.csv_writer import EMPTY_GZIP
from herbrand.framework.errors import FactsError
from herbrand.spark_backend import files
from herbrand.spark_backend.session import run_settings
from tests.spark_backend.edge_files import PROGRAM, facts_dir


def test_a_malformed_line_names_file_relation_and_line(spark_backend, tmp_path):
    program = herbrand.parse(PROGRAM)
    facts = facts_dir(tmp_path, "1,a\nseven,b\n")
    with pytest.raises(FactsError) as error:
        spark_backend.materialize_files(program, facts, tmp_path / "out")
    assert str(error.value) == (f"{facts / 'edge.facts'}:2: relation edge: column 1 expects a "
                                f"number, got 'seven'")


def test_the_line_number_counts_lines_across_partitions(spark, tmp_path):
    lines = [f"{i}\t{i}" for i in range(3000)]
    lines[1700], lines[2500] = "1700\tx", "2500"
    path = tmp_path / "r.facts"
    path.write_text("\n".join(lines) + "\n")
    small_splits = {"spark.sql.files.maxPartitionBytes": "1024"}
    with run_settings(spark, small_splits):
        assert spark.read.text(str(path)).rdd.getNumPartitions() > 10
        with pytest.raises(FactsError) as error:
            files.read_relation(spark, str(path), "r", ("number", "number"), "\t")
    assert str(error.value) == f"{path}:1701: relation r: column 2 expects a number, got 'x'"


def _last_job(spark) -> int:
    """The id of the session's latest job (-1 before any); ids grow by one per job."""
    return max(spark.sparkContext.statusTracker().getJobIdsForGroup(None), default=-1)


def _stored_blocks(spark) -> int:
    """How many RDDs the session keeps in storage."""
    return len(spark.sparkContext._jsc.getPersistentRDDs())


def test_reading_a_well_formed_file_is_one_job_and_keeps_its_rows(spark, tmp_path):
    """The malformed-line check, the distinct and the count are one job, which also stores the
    rows: reading them again does not read the file."""
    path = tmp_path / "r.facts"
    path.write_text("1\ta\n2\tb\n1\ta\n")
    before = _last_job(spark)
    relation = files.read_relation(spark, str(path), "r", ("number", "symbol"), "\t")
    try:
        assert _last_job(spark) - before == 1
        assert relation.count == 2
        path.unlink()  # the rows are read from storage, not from the file
        assert sorted(relation.rows.collect()) == [(1, "a"), (2, "b")]
    finally:
        relation.release()


def test_gzip_files_joined_are_read_as_one(spark, tmp_path):
    """A gzipped output the Spark backend wrote in parts (gzip members, an empty one among
    them) reads back as the local reader reads it."""
    path = tmp_path / "r.csv.gz"
    path.write_bytes(gzip.compress(b"1\ta\n") + EMPTY_GZIP + gzip.compress(b"2\tb\n"))
    relation = files.read_relation(spark, str(path), "r", ("number", "symbol"), "\t")
    try:
        assert sorted(relation.rows.collect()) == [(1, "a"), (2, "b")]
    finally:
        relation.release()


def test_a_malformed_file_leaves_nothing_stored(spark, tmp_path):
    path = tmp_path / "r.facts"
    path.write_text("1\ta\n2\n")
    before = _stored_blocks(spark)
    with pytest.raises(FactsError, match="r.facts:2: relation r: "):
        files.read_relation(spark, str(path), "r", ("number", "symbol"), "\t")
    assert _stored_blocks(spark) == before


ARITIES = """
.decl zero()
.decl one(x: symbol)
.decl two(x: number, y: symbol)
.decl six(a: number, b: symbol, c: number, d: symbol, e: symbol, f: number)
.input zero
.input one
.input two
.input six
.output zero
.output one
.output two
.output six
"""


def test_relations_of_arity_0_1_2_and_6_are_read_as_locally(spark_backend, tmp_path):
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "zero.facts").write_text("\n")
    (facts / "one.facts").write_text("b\n\na c\nb\n")
    (facts / "two.facts").write_text("2\tx\n-1\t\n2\tx\n")
    (facts / "six.facts").write_text("1\ta\t2\tb\tc\t3\n-4\t\t5\t \t\t+6\n")
    program = herbrand.parse(ARITIES)
    spark_backend.materialize_files(program, facts, tmp_path / "spark", stdout=text_io.StringIO())
    local = herbrand.materialize(program, facts_dir=facts)
    io.write_outputs(program, local, tmp_path / "local", stdout=text_io.StringIO())
    for name in ("zero", "one", "two", "six"):
        spark_bytes = (tmp_path / "spark" / f"{name}.csv").read_bytes()
        assert spark_bytes == (tmp_path / "local" / f"{name}.csv").read_bytes(), name
    assert (tmp_path / "spark" / "one.csv").read_bytes() == b"\na c\nb\n"
    assert (tmp_path / "spark" / "six.csv").read_bytes() == b"-4\t\t5\t \t\t6\n1\ta\t2\tb\tc\t3\n"


def test_a_missing_file_is_a_facts_error(spark_backend, tmp_path):
    with pytest.raises(FactsError, match="cannot open facts file of relation edge"):
        spark_backend.materialize_files(herbrand.parse(PROGRAM), tmp_path, tmp_path / "out")


def test_cli_runs_on_spark(spark, tmp_path, capsys):
    program = tmp_path / "p.dl"
    program.write_text(PROGRAM)
    facts = facts_dir(tmp_path)
    status = cli.main(["run", str(program), "-F", str(facts), "-D", str(tmp_path / "out"),
                       "--backend", "spark", "--spark-conf", "spark.sql.shuffle.partitions=4",
                       "--stats", "--no-progress"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.out == "path\t6\n"
    assert "total\t" in captured.err
    phases = captured.err.splitlines()[-1].split("\t")
    assert [phases[0], *phases[1::2]] == ["phases", "start-up", "session", "read and set-up",
                                          "strata", "write"]
    assert all(float(seconds) >= 0 for seconds in phases[2::2])
    assert len((tmp_path / "out" / "path.csv").read_text().splitlines()) == 6


def test_cli_rejects_spark_flags_for_the_local_backend(tmp_path, capsys):
    program = tmp_path / "p.dl"
    program.write_text(PROGRAM)
    status = cli.main(["run", str(program), "--master", "local[1]", "--no-progress"])
    assert status == 1
    assert "does not take --master" in capsys.readouterr().err


def test_a_true_nullary_relation_of_several_partitions_is_written(spark_backend, tmp_path):
    # an inline nullary fact is a frame of two partitions, the first one empty: the line "()"
    # must not be lost to the empty part file
    program = herbrand.parse(".decl flag()\n.output flag\nflag().\n")
    spark_backend.materialize_files(program, tmp_path, tmp_path / "out",
                                    stdout=text_io.StringIO())
    assert (tmp_path / "out" / "flag.csv").read_bytes() == b"()\n"
