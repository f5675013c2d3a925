"""One SparkSession for the Spark backend's tests: local[2], 4 shuffle partitions, no UI.

Tests that need Java are skipped, with the reason, only where no Java is installed (CI has
Java 17, so they run there). ``requires_java`` marks them; the session fixture starts the JVM
once per test run.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the Spark backend's tests need pyspark (extra 'spark')")

from herbrand.spark_backend.backend import SparkBackend  # noqa: E402
from herbrand.spark_backend.session import java_executable, start_session  # noqa: E402

TEST_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
}

requires_java = pytest.mark.skipif(java_executable() is None,
                                   reason="no Java installed: Spark cannot start a JVM")


@pytest.fixture(scope="session")
def spark():
    if java_executable() is None:
        pytest.skip("no Java installed: Spark cannot start a JVM")
    session = start_session("local[2]", TEST_CONF)
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_backend(spark) -> SparkBackend:
    return SparkBackend(session=spark)
