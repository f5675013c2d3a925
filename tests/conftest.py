"""Shared fixtures: the native kernels built before any test, the workloads folder, and one
SparkSession for every test that needs Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from herbrand.workloads.shared import workloads_root

SPARK_TEST_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
}


@pytest.fixture(scope="session", autouse=True)
def native_kernels():
    """The native kernels, built (once per version of their sources) before any test runs, so
    that no test's own process prints the build's message or spends its minute."""
    from herbrand.evaluators.native.compiled import kernels

    return kernels()


@pytest.fixture(scope="session")
def workloads_dir() -> Path:
    """The shared workloads: $HERBRAND_WORKLOADS, else ../shared/workloads beside the checkout."""
    return workloads_root()


@pytest.fixture(scope="session")
def spark():
    """The SparkSession of the test run (local[2], 4 shuffle partitions, no UI), started once;
    skipped, saying why, where pyspark or Java is missing (CI has both, so it runs there)."""
    pytest.importorskip("pyspark", reason="Spark tests need pyspark (extra 'spark')")
    from herbrand.spark_backend.session import java_executable, start_session

    if java_executable() is None:
        pytest.skip("no Java installed: Spark cannot start a JVM")
    session = start_session("local[2]", SPARK_TEST_CONF)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def strata_on_spark(monkeypatch):
    """Every SparkBackend made without ``driver_rows`` runs every stratum, reads every file and
    writes every output on Spark (``driver_strata.DRIVER_ROWS`` 0), and one made without
    ``derived_budget`` makes every decomposed stratum's seeds there (``DERIVED_BUDGET`` 0), so
    that tests of Spark's own paths keep testing them on small data."""
    pytest.importorskip("pyspark", reason="Spark tests need pyspark (extra 'spark')")
    from herbrand.spark_backend import driver_strata

    monkeypatch.setattr(driver_strata, "DRIVER_ROWS", 0)
    monkeypatch.setattr(driver_strata, "DERIVED_BUDGET", 0)
