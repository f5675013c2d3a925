"""Starting Spark: without Java, one clear BackendUnavailableError (also from the CLI)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from herbrand import cli
from herbrand.framework.errors import BackendMemoryError, BackendUnavailableError
from herbrand.spark_backend.session import (
    heap_settings,
    java_executable,
    run_settings,
    start_session,
)
from tests.spark_backend.test_failures import HEAP_TRACE


def test_without_java_start_session_says_so(monkeypatch, tmp_path):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    assert java_executable() is None
    with pytest.raises(BackendUnavailableError, match="needs Java"):
        start_session("local[1]", {})


def test_without_java_the_cli_prints_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-java"))
    program = tmp_path / "p.dl"
    program.write_text(".decl e(x: number)\n.output e\ne(1).\n")
    status = cli.main(["run", str(program), "-F", str(tmp_path), "-D", str(tmp_path),
                       "--backend", "spark", "--no-progress"])
    error = capsys.readouterr().err
    assert status == 1
    assert error.count("\n") == 1 and "needs Java" in error, error


def test_run_settings_are_restored(spark):
    spark.conf.set("spark.sql.ansi.enabled", "true")
    with run_settings(spark):
        assert spark.conf.get("spark.sql.ansi.enabled") == "false"
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"


def test_a_memory_failure_in_a_run_names_the_sessions_driver_heap(spark):
    expected = spark.sparkContext.getConf().get("spark.driver.memory", "Spark's default, 1g")
    with pytest.raises(BackendMemoryError, match=f"spark.driver.memory is {expected}:"), \
            run_settings(spark):
        raise RuntimeError(HEAP_TRACE)


def test_runs_read_the_heap_settings_once_per_session(spark, monkeypatch):
    """Each pass of a fixpoint runs under run_settings: reading the configuration there would
    cost JVM calls per pass."""
    context = spark.sparkContext
    reads = []
    read = context.getConf
    monkeypatch.setattr(context, "getConf", lambda: reads.append(1) or read())
    heap_settings.cache_clear()
    for _ in range(3):
        with run_settings(spark):
            pass
    assert len(reads) == 1


def test_a_run_of_the_cli_starts_spark_with_herbrands_defaults_under_the_users_settings(
        tmp_path):
    """A session herbrand starts has no console progress bar (it would redraw over herbrand's
    progress line) and shuffle partitions sized from the master's cores; --spark-conf wins.
    (--driver-rows 0: on the driver, this run would start no session.)"""
    pytest.importorskip("pyspark", reason="needs pyspark (extra 'spark')")
    if java_executable() is None:
        pytest.skip("no Java installed: Spark cannot start a JVM")
    program = tmp_path / "p.dl"
    program.write_text(".decl e(x: number)\n.output e\ne(1).\n")
    script = (
        "import sys\n"
        "from pyspark.sql import SparkSession\n"
        "from herbrand import cli\n"
        "status = cli.main(sys.argv[1:])\n"
        "conf = SparkSession.getActiveSession().sparkContext.getConf()\n"
        "print(conf.get('spark.ui.showConsoleProgress'), conf.get('spark.sql.shuffle.partitions'),"
        " conf.get('spark.sql.adaptive.enabled'))\n"
        "sys.exit(status)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, "run", str(program), "-D", str(tmp_path / "out"),
         "--backend", "spark", "--master", "local[1]", "--no-progress", "--driver-rows", "0",
         "--spark-conf", "spark.sql.adaptive.enabled=false"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["false", "2", "false"]
