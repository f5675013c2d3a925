"""The Spark backend's tests share the run's SparkSession (``spark``, in tests/conftest.py).

Every test here runs its strata, reads, writes and decomposed strata's seeds on Spark
(``strata_on_spark``, tests/conftest.py) unless it gives ``driver_rows`` and
``derived_budget`` itself, as test_driver_strata.py does.

Tests that need Java are skipped, with the reason, only where no Java is installed (CI has
Java 17, so they run there); ``requires_java`` marks those that start Spark themselves.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="the Spark backend's tests need pyspark (extra 'spark')")

from herbrand.spark_backend.backend import SparkBackend  # noqa: E402
from herbrand.spark_backend.session import java_executable  # noqa: E402

requires_java = pytest.mark.skipif(java_executable() is None,
                                   reason="no Java installed: Spark cannot start a JVM")


@pytest.fixture(autouse=True)
def _on_spark(strata_on_spark) -> None:
    """Spark's own paths, tested on small data (see the module doc)."""


@pytest.fixture(scope="session")
def spark_backend(spark) -> SparkBackend:
    return SparkBackend(session=spark)


def recorded_writes(monkeypatch) -> list[int]:
    """The ``parts`` of every ``outputs._write_single_file`` call from now on, in order (0: the
    frame is written as it is, already sorted), each call still writing its file."""
    from herbrand.spark_backend import outputs

    written: list[int] = []
    write = outputs._write_single_file

    def recorded(session, frame, delimiter, parts, path):
        written.append(parts)
        write(session, frame, delimiter, parts, path)

    monkeypatch.setattr(outputs, "_write_single_file", recorded)
    return written
