"""Starting (or reusing) the SparkSession a run uses, and the SQL settings a run needs.

``start_session`` checks for Java first, so that a machine without it gets one
``BackendUnavailableError`` line instead of a gateway traceback. A ``local-cluster[n,c,m]``
master launches executor JVMs through ``$SPARK_HOME/bin``; with a pip-installed pyspark that
folder is the pyspark package itself, which ``start_session`` uses when SPARK_HOME is unset.
On masters on this machine, Python workers run the driver's interpreter (``PYSPARK_PYTHON``,
unless set): a decomposed stratum runs herbrand in them.

A run gets its session through a ``RunSession``, which starts it when the run first needs
it: a run whose strata all run on the driver, reading and writing local files there
(``driver_strata``), starts no JVM at all.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

import pyspark
from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from herbrand.framework.errors import BackendMemoryError, BackendUnavailableError
from herbrand.spark_backend.failures import failures_reported
from herbrand.spark_backend.jvm_startup import JAVA_OPTIONS, driver_startup, record_at_exit
from herbrand.spark_backend.masters import on_this_machine, session_defaults

SUBMITTED = "PYSPARK_GATEWAY_PORT"
"""Set when spark-submit started the JVM before Python (the session is then spark-submit's)."""
APP_NAME = "herbrand"
_STDERR = 2  # the file descriptor the driver JVM's standard output goes to (``_launch_driver``)

RUN_SETTINGS: dict[str, str] = {
    # int64 arithmetic wraps and division by zero is NULL (a failed derivation), as locally
    "spark.sql.ansi.enabled": "false",
    # the optimizer's constraint propagation fails ("key not found") on the unions of rule
    # frames of RDFS over LUBM, and costs planning time on every pass
    "spark.sql.constraintPropagation.enabled": "false",
}
"""Session SQL settings every run needs; set for the run and restored afterwards."""

HEAP_SETTINGS = ("spark.driver.memory", "spark.executor.memory")
"""The settings a memory failure's line names (``failures.memory_setting``)."""


def java_executable() -> str | None:
    """The ``java`` Spark would start: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = Path(home) / "bin" / "java"
        return str(candidate) if candidate.is_file() else None
    return shutil.which("java")


def start_session(master: str, conf: Mapping[str, str]) -> SparkSession:
    """The active SparkSession, or a new one on ``master`` with ``masters.session_defaults``,
    the driver JVM's start-up options (``jvm_startup``: errors-only logging, a class archive)
    and ``conf`` (key -> value; it wins over a default); under spark-submit, on spark-submit's
    master and its settings.

    Raises BackendUnavailableError when no Java is found or the JVM does not start,
    BackendMemoryError (naming the setting) when the driver heap is below Spark's floor. Cost: a
    JVM start-up (seconds) the first time in a process; O(1) afterwards.
    """
    java = java_executable()
    if java is None:
        raise BackendUnavailableError(
            "backend 'spark' needs Java 17 or later: none found (set JAVA_HOME or put java on "
            "PATH)")
    if master.startswith("local-cluster") and "SPARK_HOME" not in os.environ:
        os.environ["SPARK_HOME"] = str(Path(pyspark.__file__).parent)
    if on_this_machine(master) and "PYSPARK_PYTHON" not in os.environ:
        # Python workers on this machine run this interpreter, which has herbrand and numpy
        # (a decomposed stratum runs herbrand's engine in them); pyspark reads only this
        os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = SparkSession.builder.appName(APP_NAME)
    if SUBMITTED not in os.environ:  # under spark-submit, the master is spark-submit's
        builder = builder.master(master)
    # start-up options for a JVM this call starts, unless the user gives the driver's own
    starting = SUBMITTED not in os.environ and SparkContext._gateway is None
    startup = driver_startup(java) if starting and JAVA_OPTIONS not in conf else None
    settings = dict(conf) if SUBMITTED in os.environ else \
        {**session_defaults(master), **(startup.settings if startup else {}), **conf}
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        with failures_reported(master, settings):
            if starting:
                _launch_driver(master, settings)
            session = builder.getOrCreate()
    except BackendMemoryError:
        raise
    except Exception as error:  # the gateway reports a failed JVM start in several ways
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BackendUnavailableError(f"backend 'spark': cannot start Spark on {master}: "
                                      f"{first}") from error
    if startup is not None and startup.recording is not None:
        pid = session.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
        record_at_exit(java, pid, startup.recording)
    return session


def _launch_driver(master: str, settings: Mapping[str, str]) -> None:
    """Start the driver JVM (pyspark's gateway, which the session is then made on) for
    ``master`` with ``settings``, as the session's builder would, but with the JVM's standard
    output on this process's standard error: the JVM prints lines of its own there (a class
    archive's dump at exit: "Dynamic dump to file ..."), which would end up among the outputs
    a run prints to stdout (``-D -``). Cost: the JVM's start."""
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    conf.setMaster(master).setAppName(APP_NAME)
    SparkContext._ensure_initialized(
        gateway=launch_gateway(conf, popen_kwargs={"stdout": _STDERR}))


@contextmanager
def sql_settings(session: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """Set the SQL ``settings`` on ``session`` for the duration, then restore them. Cost: two
    calls to the JVM per setting (none for no settings)."""
    previous = {key: session.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        session.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in previous.items():
            if value is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, value)


@contextmanager
def run_settings(session: SparkSession, settings: Mapping[str, str] = RUN_SETTINGS
                 ) -> Iterator[None]:
    """``sql_settings`` for a run: a JVM memory failure inside is raised as one
    BackendMemoryError line naming the setting to raise, an executor running another herbrand
    as one ExecutorCodeError line (``failures``)."""
    context = session.sparkContext
    # outside the restoring: after a JVM died of memory, restoring fails too, and that failure
    # (with the first as its context) is reported as the memory failure it is
    with failures_reported(context.master, heap_settings(context)), \
            sql_settings(session, settings):
        yield


@lru_cache(maxsize=4)
def heap_settings(context: SparkContext) -> Mapping[str, str]:
    """The ``HEAP_SETTINGS`` set on ``context`` (key -> value), read while its JVM is alive so
    that a memory failure can name them after it died. Cost: a few JVM calls, once per
    context (a heap is fixed when its JVM starts), not the whole configuration per run."""
    conf = context.getConf()
    return MappingProxyType({key: value for key in HEAP_SETTINGS
                             if (value := conf.get(key)) is not None})


class RunSession:
    """The SparkSession of one run, started when the run first needs it (``get``): ``start``
    gives it (``SparkBackend.spark``), then ``run_settings`` hold on it until ``stack`` (the
    run's) closes. ``started_at`` and ``seconds``: when (``time.perf_counter``) and how long
    the start took (None and 0 while not started)."""

    def __init__(self, start: Callable[[], SparkSession], stack: ExitStack):
        self._start = start
        self._stack = stack
        self._session: SparkSession | None = None
        self.started_at: float | None = None
        self.seconds = 0.0

    @property
    def started(self) -> bool:
        return self._session is not None

    def get(self) -> SparkSession:
        """The run's session, started now if it is not yet (the errors of
        ``start_session``). Cost: the start the first time (a JVM's, seconds, unless one
        runs already), O(1) after."""
        if self._session is None:
            self.started_at = time.perf_counter()
            session = self._start()
            self._stack.enter_context(run_settings(session))
            self._session = session
            self.seconds = time.perf_counter() - self.started_at
        return self._session
