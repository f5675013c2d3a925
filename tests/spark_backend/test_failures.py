"""Spark's memory failures become one BackendMemoryError line naming the setting to raise;
every other failure passes unchanged."""

from __future__ import annotations

import subprocess
import sys

import pytest

from herbrand.framework.errors import BackendMemoryError
from herbrand.spark_backend.failures import failures_reported, memory_failure
from tests.spark_backend.conftest import requires_java

HEAP_TRACE = ("An error occurred while calling o175.getResult.\n"
              ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in "
              "stage 8.0 failed 1 times, most recent failure: Lost task 0.0: "
              "java.lang.OutOfMemoryError: Java heap space\n\tat java.base/...")


class _JvmGoneError(Exception):
    """A Py4J error whose message lives in a JVM that no longer answers."""

    def __str__(self):
        raise ConnectionRefusedError(111, "Connection refused")


def test_a_heap_failure_on_a_local_master_names_the_driver_memory():
    failure = memory_failure(RuntimeError(HEAP_TRACE), "local[2]",
                             {"spark.driver.memory": "512m"})
    assert str(failure) == (
        "backend 'spark' ran out of memory on local[2] (java.lang.OutOfMemoryError: Java heap "
        "space); spark.driver.memory is 512m: raise it with --spark-conf "
        "spark.driver.memory=<size>, e.g. 8g")


def test_a_lost_executor_on_a_cluster_names_the_executor_memory():
    trace = "ExecutorLostFailure (executor 1 exited caused by one of the running tasks)\n" + \
        HEAP_TRACE
    failure = memory_failure(RuntimeError(trace), "local-cluster[2,1,1024]", {})
    assert "spark.executor.memory is Spark's default, 1g" in str(failure)


def test_the_cause_chain_is_read_even_when_a_message_cannot_be():
    try:
        try:
            raise RuntimeError("SparkContext was shut down")
        except RuntimeError as first:
            raise _JvmGoneError() from first
    except _JvmGoneError as error:
        failure = memory_failure(error, "local[1]", {})
    assert "its JVM died mid-run, most likely out of memory" in str(failure)
    assert "\n" not in str(failure)


class _Gateway:
    """pyspark's gateway as ``driver_exit_code`` reads it: its JVM process (``proc``) exited
    with ``code`` (None: it still runs)."""

    def __init__(self, code):
        self.proc = self
        self.code = code

    def wait(self, timeout):
        if self.code is None:
            raise subprocess.TimeoutExpired("java", timeout)
        return self.code


@pytest.mark.parametrize(("code", "said"), [
    (52, "ran out of memory on local[1] (its JVM exited with code 52, Spark's for "
         "java.lang.OutOfMemoryError); spark.driver.memory is 512m"),
    (-9, "stopped on local[1]: its JVM died mid-run (exit code -9), most likely out of memory"),
])
def test_a_broken_connection_to_a_jvm_that_exited_names_its_exit(monkeypatch, code, said):
    """The texts Python sees of a dying JVM depend on when it stops answering: a reset socket
    says nothing of memory, but the JVM's exit code does."""
    from pyspark import SparkContext

    monkeypatch.setattr(SparkContext, "_gateway", _Gateway(code))
    with pytest.raises(BackendMemoryError) as raised, \
            failures_reported("local[1]", {"spark.driver.memory": "512m"}):
        raise ConnectionResetError(104, "Connection reset by peer")
    assert said in str(raised.value)
    assert isinstance(raised.value.__cause__, ConnectionResetError)


def test_a_failure_with_a_running_or_no_jvm_passes_unchanged(monkeypatch):
    from pyspark import SparkContext

    for gateway in (_Gateway(None), None):
        monkeypatch.setattr(SparkContext, "_gateway", gateway)
        with pytest.raises(ConnectionResetError), failures_reported("local[1]", {}):
            raise ConnectionResetError(104, "Connection reset by peer")
    monkeypatch.setattr(SparkContext, "_gateway", _Gateway(52))
    with pytest.raises(ValueError), failures_reported("local[1]", {}):
        raise ValueError("a failure that broke no connection")


def test_a_driver_below_sparks_floor_is_named():
    text = "java.lang.IllegalArgumentException: System memory 209715200 must be at least 471859200"
    failure = memory_failure(RuntimeError(text), "local[*]", {"spark.driver.memory": "200m"})
    assert str(failure).startswith("backend 'spark' has too little memory to start on local[*] "
                                   "(System memory 209715200 must be at least 471859200); "
                                   "spark.driver.memory is 200m")


def test_other_failures_pass_unchanged():
    assert memory_failure(ValueError("AnalysisException: cannot resolve column"), "local", {}) \
        is None
    with pytest.raises(ValueError, match="cannot resolve"), \
            failures_reported("local", {}):
        raise ValueError("cannot resolve")
    with pytest.raises(BackendMemoryError) as raised, failures_reported("local", {}):
        raise RuntimeError(HEAP_TRACE)
    assert isinstance(raised.value.__cause__, RuntimeError)


@requires_java
def test_the_cli_says_in_one_line_that_the_driver_memory_is_too_small(tmp_path):
    program = tmp_path / "p.dl"
    program.write_text(".decl e(x: number)\n.output e\ne(1).\n")
    result = subprocess.run(
        [sys.executable, "-m", "herbrand.cli", "run", str(program), "-D", str(tmp_path),
         "--backend", "spark", "--master", "local[1]", "--no-progress", "--driver-rows", "0",
         "--spark-conf", "spark.driver.memory=200m"],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("herbrand: error: backend 'spark' has too little memory to start"), \
        result.stderr
    assert "--spark-conf spark.driver.memory=<size>" in last


@requires_java
def test_a_run_that_exhausts_the_driver_heap_says_which_setting_to_raise(tmp_path):
    """A real heap exhaustion: 17.6M triples collected into a 512 MB driver."""
    script = (
        "import numpy as np, herbrand\n"
        "from herbrand.spark_backend.backend import SparkBackend\n"
        "from herbrand.framework.errors import BackendMemoryError\n"
        "program = herbrand.parse('.decl e(x: number)\\n.decl p(x: number, y: number, "
        "z: number)\\n.output p\\np(x, y, z) :- e(x), e(y), e(z).\\n')\n"
        "backend = SparkBackend(master='local[1]', conf={'spark.driver.memory': '512m'})\n"
        "try:\n"
        "    herbrand.materialize(program, {'e': np.arange(260).reshape(-1, 1)}, "
        "backend=backend)\n"
        "except BackendMemoryError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=600)
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1, f"exit {result.returncode}\n{result.stdout}{result.stderr[-4000:]}"
    assert "spark.driver.memory is 512m: raise it with --spark-conf spark.driver.memory" \
        in lines[0]
