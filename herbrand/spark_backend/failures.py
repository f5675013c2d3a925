"""Spark's memory failures as one line naming the setting to raise (and executors running
another herbrand than the driver's as one line too: ``executor_code``).

A JVM that runs out of heap reports it as a Java stack trace inside a Py4J or PySpark
exception (``java.lang.OutOfMemoryError``), as a lost executor, or, when the JVM died of it,
as a broken gateway connection; a driver heap below Spark's floor fails at start-up
(``System memory ... must be at least ...``). ``memory_failure`` reads an exception's text
(and its causes') for these and returns the ``BackendMemoryError`` to raise instead, or None
for every other failure, which then propagates unchanged. In ``local`` mode the tasks run in
the driver, so the driver's heap is the one to raise; on a cluster master it is the
executors' unless the trace shows the driver failed (collecting, broadcasting).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from herbrand.framework.errors import BackendMemoryError, HerbrandError
from herbrand.spark_backend.executor_code import code_failure

_HEAP = re.compile(r"java\.lang\.OutOfMemoryError: ?([^\n\r]*)")
_FLOOR = re.compile(r"System memory \d+ must be at least \d+")
_EXECUTOR = re.compile(r"ExecutorLostFailure|executor \S+ exited|Container killed", re.I)
# signs that the JVM died or shut its SparkContext down mid-run (an OutOfMemoryError in one
# of its own threads does that; the trace is then only in the JVM's log)
_JVM_GONE = ("Answer from Java side is empty", "Error while receiving", "Connection refused",
             "Py4JNetworkError", "SparkContext was shut down", "SparkContext has been shutdown")


def _message(error: BaseException) -> str:
    """``str(error)``; a Py4J error's message is fetched from the JVM, and when that JVM is
    gone, saying so is the message."""
    try:
        return str(error)
    except Exception:
        return "Py4JNetworkError: the JVM holding the message does not answer"


def _texts(error: BaseException) -> str:
    """The messages of ``error`` and its causes, joined (O(their length))."""
    parts, seen = [], set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        parts.append(f"{type(error).__name__}: {_message(error)}")
        error = error.__cause__ or error.__context__
    return "\n".join(parts)


def memory_setting(master: str, text: str) -> str:
    """The setting whose heap ran out: ``spark.driver.memory`` on a local master or when the
    driver failed, else ``spark.executor.memory``."""
    local = master == "local" or master.startswith("local[")
    return "spark.driver.memory" if local or not _EXECUTOR.search(text) else \
        "spark.executor.memory"


def memory_failure(error: BaseException, master: str,
                   settings: Mapping[str, str]) -> BackendMemoryError | None:
    """The one-line error for ``error`` when it is a JVM memory failure on ``master`` (with
    the session's ``settings``, key -> value), else None."""
    text = _texts(error)
    if (floor := _FLOOR.search(text)) is not None:
        summary = f"has too little memory to start on {master} ({floor.group(0)})"
    elif (heap := _HEAP.search(text)) is not None:
        summary = (f"ran out of memory on {master} (java.lang.OutOfMemoryError: "
                   f"{heap.group(1).strip()})")
    elif any(sign in text for sign in _JVM_GONE):
        summary = (f"stopped on {master}: its JVM died mid-run, most likely out of memory (see "
                   f"the Java log above)")
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
        if failure is None:
            raise
        raise failure from error
