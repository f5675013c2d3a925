"""The Spark facts reader (``files.read_inputs``) on the shared reader cases: the same rows,
symbol bytes for symbol bytes, or the same FactsError message as the local reader."""

from __future__ import annotations

from contextlib import ExitStack

import pytest
from pyspark.sql import functions as F

from herbrand.framework.syntax import SYMBOL
from herbrand.spark_backend import files
from herbrand.spark_backend.session import RunSession
from tests.conformance.reader_cases import ReaderCase, case_params, local_outcome, outcome


def spark_outcome(spark, case: ReaderCase, directory) -> object:
    """The case read by ``files.read_inputs`` from ``directory``, symbols collected as their
    bytes (``cast("binary")`` is a raw copy); the count the reader gives is checked against
    the rows."""
    path = case.write(directory)

    def read() -> frozenset:
        with ExitStack() as stack:
            relation = files.read_inputs(RunSession(lambda: spark, stack), case.program(),
                                         str(directory))["r"]
        try:
            frame = relation.rows
            columns = [F.col(name).cast("binary") if type_ == SYMBOL else F.col(name)
                       for name, type_ in zip(frame.columns, case.types, strict=True)]
            rows = [tuple(bytes(v) if isinstance(v, bytearray) else v for v in row)
                    for row in frame.select(*columns).collect()]
        finally:
            relation.release()
        assert relation.count == len(rows)
        return frozenset(rows)

    return outcome(read, path)


@pytest.mark.parametrize("case", case_params())
def test_spark_reader_agrees_with_the_local_reader(spark, case, tmp_path):
    local = local_outcome(case, tmp_path / "local")
    assert spark_outcome(spark, case, tmp_path / "spark") == local == case.expected_outcome()
