"""Spark's memory failures as one line naming the setting to raise (and executors running
another herbrand than the driver's as one line too: ``executor_code``).

A JVM that runs out of heap reports it as a Java stack trace inside a Py4J or PySpark
exception (``java.lang.OutOfMemoryError``), as a lost executor, or, when the JVM died of it,
as a broken gateway connection; a driver heap below Spark's floor fails at start-up
(``System memory ... must be at least ...``). ``memory_failure`` reads an exception's text
(and its causes') for these and returns the ``BackendMemoryError`` to raise instead, or None
for every other failure, which then propagates unchanged. Which of those texts Python sees
depends on when the dying JVM stops answering, so a failure whose texts say nothing is also
checked against the driver JVM's process: one this process launched that has exited
(``driver_exit_code``) died mid-run, and exit code 52 is Spark's for an OutOfMemoryError.
In ``local`` mode the tasks run in the driver, so the driver's heap is the one to raise; on a
cluster master it is the executors' unless the trace shows the driver failed (collecting,
broadcasting).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from pyspark import SparkContext

from herbrand.framework.errors import BackendMemoryError, HerbrandError
from herbrand.spark_backend.executor_code import code_failure

_HEAP = re.compile(r"java\.lang\.OutOfMemoryError: ?([^\n\r]*)")
_FLOOR = re.compile(r"System memory \d+ must be at least \d+")
_EXECUTOR = re.compile(r"ExecutorLostFailure|executor \S+ exited|Container killed", re.I)
# signs that the JVM died or shut its SparkContext down mid-run (an OutOfMemoryError in one
# of its own threads does that; the trace is then only in the JVM's log)
_JVM_GONE = ("Answer from Java side is empty", "Error while receiving", "Connection refused",
             "Py4JNetworkError", "SparkContext was shut down", "SparkContext has been shutdown")
SPARK_OOM_EXIT = 52
"""The code Spark's uncaught-exception handler exits a JVM with on an OutOfMemoryError."""
EXIT_WAIT = 2.0
"""Seconds a failure that broke the connection to the JVM waits for that JVM to exit."""


def _message(error: BaseException) -> str:
    """``str(error)``; a Py4J error's message is fetched from the JVM, and when that JVM is
    gone, saying so is the message."""
    try:
        return str(error)
    except Exception:
        return "Py4JNetworkError: the JVM holding the message does not answer"


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and its causes (or contexts), each once."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = error.__cause__ or error.__context__


def _texts(error: BaseException) -> str:
    """The messages of ``error`` and its causes, joined (O(their length))."""
    return "\n".join(f"{type(link).__name__}: {_message(link)}" for link in _chain(error))


def memory_setting(master: str, text: str) -> str:
    """The setting whose heap ran out: ``spark.driver.memory`` on a local master or when the
    driver failed, else ``spark.executor.memory``."""
    local = master == "local" or master.startswith("local[")
    return "spark.driver.memory" if local or not _EXECUTOR.search(text) else \
        "spark.executor.memory"


def memory_failure(error: BaseException, master: str, settings: Mapping[str, str],
                   exit_code: int | None = None) -> BackendMemoryError | None:
    """The one-line error for ``error`` when it is a JVM memory failure on ``master`` (with
    the session's ``settings``, key -> value; ``exit_code``: the driver JVM's, when it has
    exited), else None."""
    text = _texts(error)
    if (floor := _FLOOR.search(text)) is not None:
        summary = f"has too little memory to start on {master} ({floor.group(0)})"
    elif (heap := _HEAP.search(text)) is not None:
        summary = (f"ran out of memory on {master} (java.lang.OutOfMemoryError: "
                   f"{heap.group(1).strip()})")
    elif exit_code == SPARK_OOM_EXIT:
        summary = (f"ran out of memory on {master} (its JVM exited with code {exit_code}, "
                   f"Spark's for java.lang.OutOfMemoryError)")
    elif exit_code is not None or any(sign in text for sign in _JVM_GONE):
        code = "" if exit_code is None else f" (exit code {exit_code})"
        summary = (f"stopped on {master}: its JVM died mid-run{code}, most likely out of memory "
                   f"(see the Java log above)")
    else:
        return None
    setting = memory_setting(master, text)
    current = settings.get(setting, "Spark's default, 1g")
    return BackendMemoryError(f"backend 'spark' {summary}; {setting} is {current}: raise it "
                              f"with --spark-conf {setting}=<size>, e.g. 8g")


@contextmanager
def failures_reported(master: str, settings: Mapping[str, str]) -> Iterator[None]:
    """Run the body; a JVM memory failure in it is raised as ``memory_failure``'s one line,
    an executor's other herbrand as ``executor_code.code_failure``'s (chained to the
    original), every other exception unchanged."""
    try:
        yield
    except HerbrandError:
        raise
    except Exception as error:
        failure = memory_failure(error, master, settings) or code_failure(_texts(error))
        if failure is None and _broke_connection(error):
            failure = memory_failure(error, master, settings, driver_exit_code(EXIT_WAIT))
        if failure is None:
            raise
        raise failure from error


def driver_exit_code(wait: float) -> int | None:
    """The exit code of the driver JVM this process launched (pyspark's gateway process) once
    it has exited, waiting up to ``wait`` seconds for it; None while it runs, or when this
    process launched none (under spark-submit, or a gateway given to pyspark)."""
    gateway = SparkContext._gateway
    process = getattr(gateway, "proc", None)  # pyspark's launch_gateway sets it; others do not
    if process is None:
        return None
    try:
        return process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        return None


def _broke_connection(error: BaseException) -> bool:
    """Whether ``error`` or one of its causes is a broken connection (an OSError, an EOF or a
    Py4J error): what a JVM that died leaves in Python. O(the chain)."""
    return any(isinstance(link, (OSError, EOFError)) or type(link).__name__.startswith("Py4J")
               for link in _chain(error))
