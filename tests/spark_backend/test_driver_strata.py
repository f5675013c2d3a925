"""Small strata on the driver (``driver_strata``): where each stratum runs, an attempt over its
budget abandoned for Spark, strata on the driver and on Spark reading each other, small files
read and outputs written by the local reader and writer; every result the local backend's."""

from __future__ import annotations

import io as text_io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import herbrand
from herbrand.cli import main
from herbrand.framework import io
from herbrand.framework.errors import FactsError, UsageError
from herbrand.framework.evaluator_checks import compare_with_oracle
from herbrand.framework.symbols import SymbolTable
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.driver_strata import BYTES_PER_ROW, DRIVER, SPARK, STARTING, Driver
from tests.conformance.test_souffle_cases import assert_outputs_match
from tests.spark_backend.edge_files import NUMBER_EDGES, SYMBOL_EDGES, plain_bytes, tc_files
from tests.spark_backend.test_conformance import _OnSpark, _spark_case_params
from tests.strategies import programs_with_facts

MIXED = """
.decl s(x: number)
.decl e(x: number, y: symbol)
.decl small(x: number)
.decl big(x: number, y: symbol)
.decl after(y: symbol)
.decl last(x: number, y: symbol)
small(x + 1) :- s(x).
big(x, y) :- e(x, y), small(x).
after(y) :- big(_, y), !s(3).
last(x, y) :- e(x, y), after(y).
"""
MIXED_FACTS = {"s": [(0,), (1,), (2,)],
               "e": [(i % 10, f"v{i % 7}") for i in range(20)]}
"""``small`` (3 rows read) on the driver with ``driver_rows=10``; ``big`` reads ``e`` (20)
on Spark; ``after`` reads ``big`` (a frame, collected) and ``s`` on the driver; ``last``
reads ``e`` and the driver's ``after`` (a frame made for it) on Spark."""
TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""
CHAIN = {"e": [(i, i + 1) for i in range(30)]}


@pytest.fixture
def _on_spark() -> None:
    """Unlike the other tests here (tests/spark_backend/conftest.py), these run with the
    driver's default ``driver_rows``."""


def _stats(spark, program, facts, **options):
    backend = SparkBackend(session=spark, **options)
    database, stats = herbrand.materialize_with_stats(program, facts=facts, backend=backend)
    local = herbrand.materialize(program, facts=facts)
    for name in herbrand.parse(program).declaration_of:
        assert sorted(database.decoded_rows(name)) == sorted(local.decoded_rows(name)), name
    return stats


def test_small_strata_run_on_the_driver(spark):
    stats = _stats(spark, MIXED, MIXED_FACTS, driver_rows=100)
    assert [s.where for s in stats] == [DRIVER] * 4


def test_strata_on_the_driver_and_on_spark_read_each_other(spark):
    stats = _stats(spark, MIXED, MIXED_FACTS, driver_rows=10)
    assert [(s.relations, s.where) for s in stats] == [
        (("small",), DRIVER), (("big",), SPARK), (("after",), DRIVER), (("last",), SPARK)]


def test_an_attempt_over_its_budget_runs_on_spark(spark):
    [over] = _stats(spark, TC, CHAIN, derived_budget=100)
    [within] = _stats(spark, TC, CHAIN, derived_budget=465)
    assert (over.where, within.where) == (SPARK, DRIVER)
    assert over.derived == within.derived == 465  # 30 * 31 / 2
    assert within.iterations == 30  # the native engine's, as the local backend counts them


def test_driver_rows_zero_runs_every_stratum_on_spark(spark):
    stats = _stats(spark, MIXED, MIXED_FACTS, driver_rows=0)
    assert [s.where for s in stats] == [SPARK] * 4
    with pytest.raises(UsageError, match="driver_rows must be 0"):
        SparkBackend(driver_rows=-1)


@pytest.mark.parametrize(("kind", "edges", "params"), [
    ("number", NUMBER_EDGES, ""), ("symbol", SYMBOL_EDGES, '(filename="sub/tc.csv.gz")'),
    ("number", NUMBER_EDGES, "(IO=stdout)")])
def test_files_on_the_driver_are_the_local_backend_s(spark, tmp_path, kind, edges, params):
    program, facts = tc_files(tmp_path, kind, params, edges, "\n.printsize e\n")
    stdout = text_io.StringIO()
    run = SparkBackend(session=spark).materialize_files(
        herbrand.parse(program), facts, tmp_path / "spark", stdout=stdout)
    assert [s.where for s in run.stats] == [DRIVER]
    local_stdout = text_io.StringIO()
    parsed = herbrand.parse(program)
    io.write_outputs(parsed, herbrand.materialize(parsed, facts_dir=facts), tmp_path / "local",
                     stdout=local_stdout)
    assert stdout.getvalue() == local_stdout.getvalue()
    written = sorted(p.relative_to(tmp_path / "local") for p in (tmp_path / "local").rglob("*")
                     if p.is_file())
    for name in written:
        assert (tmp_path / "spark" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert written == sorted(p.relative_to(tmp_path / "spark")
                             for p in (tmp_path / "spark").rglob("*") if p.is_file())
    if "gz" in params:
        assert plain_bytes(tmp_path / "spark" / "sub/tc.csv.gz")


def test_parquet_outputs_of_driver_strata_are_written_by_spark(spark, tmp_path):
    program, facts = tc_files(tmp_path, "number", "", NUMBER_EDGES)
    backend = SparkBackend(session=spark)
    backend.materialize_files(herbrand.parse(program), facts, tmp_path / "out",
                              output_format="parquet")
    rows = spark.read.parquet(str(tmp_path / "out" / "tc.parquet")).collect()
    local = herbrand.materialize(herbrand.parse(program), facts_dir=facts)
    assert sorted(tuple(row) for row in rows) == sorted(local.decoded_rows("tc"))


def test_a_bad_file_read_on_the_driver_is_reported_as_locally(spark, tmp_path):
    program, facts = tc_files(tmp_path, "number", "", b"1\t2\n3\tx\n")
    with pytest.raises(FactsError) as spark_error:
        SparkBackend(session=spark).materialize_files(herbrand.parse(program), facts,
                                                      tmp_path / "out")
    with pytest.raises(FactsError) as local_error:
        herbrand.materialize(herbrand.parse(program), facts_dir=facts)
    assert str(spark_error.value) == str(local_error.value)
    assert ":2: relation e: column 2 expects a number" in str(spark_error.value)


def test_large_or_remote_files_are_read_by_spark(tmp_path):
    declarations = herbrand.parse(TC).declaration_of
    path = tmp_path / "e.facts"
    path.write_bytes(b"1\t2\n" * (10 * BYTES_PER_ROW // 4 + 1))
    assert Driver(None, declarations, SymbolTable(), rows=11).reads(str(path))
    assert not Driver(None, declarations, SymbolTable(), rows=10).reads(str(path))
    assert not Driver(None, declarations, SymbolTable(), rows=0).reads(str(path))
    assert not Driver(None, declarations, SymbolTable()).reads(f"file://{path}")
    assert Driver(None, declarations, SymbolTable()).reads(str(tmp_path / "missing.facts"))


def test_stats_and_progress_say_where_each_stratum_ran(spark, tmp_path, capsys):
    program, facts = tc_files(tmp_path, "number", "", NUMBER_EDGES)
    argv = ["run", str(program), "-F", str(facts), "-D", str(tmp_path / "out"), "--backend",
            "spark", "--stats", "--no-progress"]
    assert main(argv) == 0
    assert main([*argv, "--driver-rows", "0"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().err.splitlines()
             if line.startswith(("stratum", "0\t"))]
    assert [line[-1] for line in lines] == ["where", DRIVER, "where", SPARK]
    assert Path(tmp_path / "out" / "tc.csv").stat().st_size > 0


@pytest.mark.parametrize("case", _spark_case_params())
def test_golden_cases_on_the_driver(case, spark, tmp_path):
    # every stratum on the driver: these take no Spark job; test_conformance.py runs them all
    # on Spark
    program = herbrand.parse(case.program)
    facts_dir = case.facts_dir if case.facts_dir.is_dir() else case.directory
    stdout = text_io.StringIO()
    SparkBackend(session=spark).materialize_files(program, facts_dir, tmp_path, stdout=stdout)
    assert_outputs_match(case, tmp_path, stdout.getvalue())


@pytest.mark.parametrize("case", _spark_case_params()[::8])
def test_golden_cases_placed_both_ways(case, spark, tmp_path):
    # few rows allowed on the driver, fewer derived: strata in both places reading each other
    # and attempts abandoned
    program = herbrand.parse(case.program)
    facts_dir = case.facts_dir if case.facts_dir.is_dir() else case.directory
    stdout = text_io.StringIO()
    SparkBackend(session=spark, driver_rows=20, derived_budget=30).materialize_files(
        program, facts_dir, tmp_path, stdout=stdout)
    assert_outputs_match(case, tmp_path, stdout.getvalue())


@pytest.mark.parametrize("driver_rows", [6, 0], ids=["strata", "seeds only"])
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=programs_with_facts(atom_expressions=True))
def test_random_programs_placed_both_ways_match_the_oracle(case, spark, driver_rows):
    # 0: every stratum on Spark, but the seeds of decomposed ones made on the driver when
    # what they read (collected from Spark) and derive is within the budget
    program, facts = case
    backend = SparkBackend(session=spark, driver_rows=driver_rows, derived_budget=10)
    compare_with_oracle(program, facts, lambda: None,
                        lambda evaluator: _OnSpark(evaluator, backend))


def test_a_run_on_the_driver_alone_starts_no_session(tmp_path, capsys, monkeypatch):
    from herbrand.spark_backend import backend

    def refused(*args):
        raise AssertionError("a Spark session was started")

    monkeypatch.setattr(backend, "start_session", refused)
    program, facts = tc_files(tmp_path, "number", "", NUMBER_EDGES, "\n.printsize e\n")
    assert main(["run", str(program), "-F", str(facts), "-D", str(tmp_path / "out"),
                 "--backend", "spark", "--stats", "--no-progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert f"herbrand: note: {backend.NO_SESSION}" in err
    assert [line.split("\t")[-1] for line in err if line.startswith("total")] == [
        backend.NO_SESSION_WHERE]
    phases = next(line for line in err if line.startswith("phases")).split("\t")
    assert phases[phases.index("session") + 1] == "0.000"
    local = herbrand.materialize(herbrand.parse(program.read_text()), facts_dir=facts)
    written = (tmp_path / "out" / "tc.csv").read_text().splitlines()
    assert sorted(tuple(map(int, line.split("\t"))) for line in written) == sorted(
        local.decoded_rows("tc"))


def test_a_run_that_needs_spark_after_the_driver_starts_the_session_then(spark, tmp_path):
    program, facts = tc_files(tmp_path, "number", "", NUMBER_EDGES)
    backend = SparkBackend(master="local[1]", derived_budget=2)  # TC is abandoned for Spark
    events = []
    run = backend.materialize_files(herbrand.parse(program.read_text()), facts,
                                    tmp_path / "out", observer=events.append)
    assert backend.session is spark  # started (the process's active session) by the run
    assert [e.where for e in events][:2] == [STARTING, SPARK]
    assert [s.where for s in run.stats] == [SPARK] and run.where is None
    assert run.notes == ()
    local = herbrand.materialize(herbrand.parse(program.read_text()), facts_dir=facts)
    written = (tmp_path / "out" / "tc.csv").read_text().splitlines()
    assert len(written) == len(local["tc"])
