"""Executors must run the driver's herbrand: the digest of its sources is checked in every
worker of a decomposed stratum, and a mismatch stops the run with one line."""

from __future__ import annotations

import numpy as np
import pytest

import herbrand
from herbrand.spark_backend import decomposed
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.executor_code import (
    MISMATCH,
    ExecutorCodeError,
    check_same_code,
    code_failure,
    source_digest,
)
from tests.herbrand_zip import herbrand_zip, run_from_zip


def test_the_digest_is_of_the_sources_wherever_they_are_imported_from(tmp_path):
    archive = herbrand_zip(tmp_path / "herbrand.zip")
    run = run_from_zip(archive, "import herbrand; from herbrand.spark_backend.executor_code "
                       f"import source_digest; assert herbrand.__file__.startswith("
                       f"{str(archive)!r}), herbrand.__file__; print(source_digest())")
    assert run.returncode == 0, run.stderr[-1000:]
    zipped_digest = run.stdout.strip()
    assert len(source_digest()) == 16
    assert zipped_digest == source_digest()


def test_a_worker_with_other_sources_stops_with_one_line():
    check_same_code(source_digest())
    with pytest.raises(ExecutorCodeError) as raised:
        check_same_code("0" * 16)
    message = str(raised.value)
    assert MISMATCH in message and "0" * 16 in message and source_digest() in message
    assert "\n" not in message


def test_the_line_is_found_in_a_failed_job_s_text():
    text = ("py4j.protocol.Py4JJavaError: An error occurred while calling o90.collect.\n"
            "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
            '  File "decomposed.py", line 104, in __call__\n'
            f"herbrand.spark_backend.executor_code.ExecutorCodeError: backend 'spark': {MISMATCH}"
            " (sources 1234, the driver's 5678): ship the driver's herbrand to them\n"
            "\tat org.apache.spark.api.python.BasePythonRunner")
    failure = code_failure(text)
    assert str(failure) == (f"backend 'spark': {MISMATCH} (sources 1234, the driver's 5678): "
                            "ship the driver's herbrand to them")
    assert code_failure("java.lang.IllegalStateException: something else") is None


def test_a_decomposed_run_on_executors_with_other_code_fails_loudly(spark, monkeypatch):
    """The driver's digest is made another's: the workers (this machine's Python, the real
    sources) refuse the task, and the run ends with the one line, not with a result."""
    monkeypatch.setattr(decomposed, "source_digest", lambda: "0" * 16)
    program = herbrand.parse(".decl e(x: number, y: number)\n.decl tc(x: number, y: number)\n"
                             "tc(x, y) :- e(x, y).\ntc(x, z) :- tc(x, y), e(y, z).\n"
                             ".input e\n.output tc\n")
    edges = np.array([[1, 2], [2, 3], [3, 4]], dtype=np.int64)
    with pytest.raises(ExecutorCodeError) as raised:
        herbrand.materialize(program, facts={"e": edges}, backend=SparkBackend(session=spark))
    assert MISMATCH in str(raised.value) and "0" * 16 in str(raised.value)
