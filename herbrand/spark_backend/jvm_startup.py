"""The driver JVM's start-up options: Spark's log kept to errors, the classes a run loads kept
in a class-data archive (Java's AppCDS), so that later JVMs map them instead of loading them,
and its just-in-time compiler kept to its first tier.

Starting a session on a 2-core machine took 5.3-6.8 s, and its first job 2.5-3.2 s more, most
of it loading, verifying and linking Spark's classes from its jars; with an archive of the
classes one run loaded, 3.5-4.3 s and 1.4-2.0 s.

``driver_startup`` gives the ``spark.driver.defaultJavaOptions`` of a session herbrand starts.
Spark puts the user's ``spark.driver.extraJavaOptions`` after them, so the user's own ``-D`` and
``-XX`` options win; a ``spark.driver.defaultJavaOptions`` of the user's replaces them all.

- ``-Dlog4j2.configurationFile``: a configuration (written into herbrand's cache directory) that
  prints Spark's errors, to stderr, and not its warnings (a loopback host name, no native Hadoop
  library, a locally checkpointed RDD unpersisted), which interleave with herbrand's progress
  line and ask nothing of the user. A failed run still says why in one line (``failures``).
- The archive of this Java and this pyspark, when there is one: ``-XX:SharedArchiveFile`` with
  ``-Xshare:auto`` (a JVM that cannot use it, say with another class path, runs without it) and
  CDS's own log lines off.
- ``JIT_OPTIONS``: ``-XX:TieredStopAtLevel=1``, the C1 compiler only. A run's JVM compiles
  Spark's code once and runs it briefly; C2's optimising compilations of it took more CPU
  than they saved: the driver JVM of TC over Gnutella08 on ``local[2]`` used 6.6 s of CPU
  (2.5 s in C2's threads, 1.0 s in C1's) and 3.0 s with C1 only; over R-MAT 2,048 without
  decomposition (51 semi-naive passes, 36-39 s of strata in the JVM) the run's CPU was the
  same (35.5 and 36.7 s) and its wall time lower (62.4 and 49.8 s). A user's
  ``spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=4`` restores C2.
- Else, in the one process that holds the archive's lock, ``-XX:+RecordDynamicDumpInfo``:
  ``record_at_exit`` then has ``jcmd PID VM.cds dynamic_dump`` write the classes the JVM loaded
  when the process exits, to a temporary file moved into place once complete. Once per Java
  and pyspark: about 6 s at the end of that process, announced in one line. A dump that fails
  leaves a ``.failed`` file saying why, and is not tried again.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pyspark

from herbrand.evaluators.native.compiled import cache_directory

JAVA_OPTIONS = "spark.driver.defaultJavaOptions"
DUMP_TIMEOUT = 300  # seconds; a dump of about 100 MB takes about 6 s on 2 cores
JIT_OPTIONS = ("-XX:TieredStopAtLevel=1",)
"""The driver JVM's compiler options (module doc)."""
LOG_CONFIGURATION = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
# the level of pyspark's gateway, a shell to Spark, which otherwise sets it to WARN, saying so
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
"""


@dataclass(frozen=True)
class DriverStartup:
    """What ``driver_startup`` decided: ``settings`` for the session, and the archive this
    process records at its exit (None: it records none)."""

    settings: dict[str, str]
    recording: Path | None


_held_locks: list[IO[str]] = []  # a recording process holds its archive's lock until it exits


def spark_directory() -> Path:
    """Where herbrand keeps its Spark start-up files (in herbrand's cache directory)."""
    return cache_directory() / "spark"


def archive_path(java: str, directory: Path | None = None) -> Path:
    """The class archive of ``java`` (an executable) and this pyspark: named by a digest of the
    JVM's resolved path, size and time, pyspark's version and the names of its jars. O(jars)."""
    digest = hashlib.sha256()
    executable = Path(java).resolve()
    status = executable.stat()
    digest.update(f"{executable}\0{status.st_size}\0{status.st_mtime_ns}\0".encode())
    digest.update(pyspark.__version__.encode())
    jars = Path(pyspark.__file__).parent / "jars"
    for jar in sorted(jars.glob("*.jar")) if jars.is_dir() else ():
        digest.update(jar.name.encode())
    return (directory or spark_directory()) / f"classes-{digest.hexdigest()[:16]}.jsa"


def log_configuration(directory: Path) -> Path:
    """The errors-only log4j2 configuration, written into ``directory`` when missing."""
    path = directory / "log4j2.properties"
    if not path.is_file() or path.read_text() != LOG_CONFIGURATION:
        partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        partial.write_text(LOG_CONFIGURATION)
        os.replace(partial, path)
    return path


def driver_startup(java: str, directory: Path | None = None) -> DriverStartup:
    """The driver JVM options for a session herbrand starts with ``java`` (module docstring),
    with the files in ``directory`` (default ``spark_directory()``). No options at all when the
    directory cannot be written. O(jars) plus a file lock."""
    directory = directory or spark_directory()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        options = [f"-Dlog4j2.configurationFile=file:{log_configuration(directory)}"]
    except OSError:
        return DriverStartup({}, None)
    archive = archive_path(java, directory)
    recording = None
    options += [*JIT_OPTIONS, "-Xlog:cds=off", "-Xlog:cds+dynamic=off"]
    if archive.is_file():
        options += [f"-XX:SharedArchiveFile={archive}", "-Xshare:auto"]
    elif _jcmd(java) is not None and not _failed(archive).exists() and _lock(archive):
        options.append("-XX:+RecordDynamicDumpInfo")
        recording = archive
    return DriverStartup({JAVA_OPTIONS: " ".join(options)}, recording)


def record_at_exit(java: str, pid: int, archive: Path) -> None:
    """When this process exits, dump the classes JVM ``pid`` (started with
    ``-XX:+RecordDynamicDumpInfo``) loaded into ``archive`` (module docstring)."""
    atexit.register(_dump, _jcmd(java), pid, archive)


def _dump(jcmd: str, pid: int, archive: Path) -> None:
    print("spark: archiving the JVM's classes, so that later runs start faster (once for this "
          "Java and pyspark)...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
    try:
        result = subprocess.run([jcmd, str(pid), "VM.cds", "dynamic_dump", str(partial)],
                                capture_output=True, text=True, timeout=DUMP_TIMEOUT)
        said = " ".join((result.stdout + result.stderr).split())
        # jcmd exits 0 when the JVM refuses the dump; its message is the sign (the file's
        # path, echoed on success, may hold any word)
        refused = "error" in said.replace(str(partial), "").lower()
        if result.returncode != 0 or not partial.is_file() or refused:
            raise OSError(said or f"jcmd exited with {result.returncode}")
        os.replace(partial, archive)
    except (OSError, subprocess.SubprocessError) as error:
        partial.unlink(missing_ok=True)
        _failed(archive).write_text(f"{error}\n")
        print(f"spark: the JVM's classes were not archived ({_failed(archive)} says why); Spark "
              f"starts without an archive", file=sys.stderr)
        return
    print(f"spark: the JVM's classes archived in {time.perf_counter() - start:.1f} s "
          f"({archive})", file=sys.stderr)


def _jcmd(java: str) -> str | None:
    """The ``jcmd`` beside ``java`` (a JDK has it; a JRE does not)."""
    candidate = Path(java).resolve().parent / "jcmd"
    return str(candidate) if candidate.is_file() else None


def _failed(archive: Path) -> Path:
    return archive.with_name(archive.name + ".failed")


def _lock(archive: Path) -> bool:
    """Whether this process now holds ``archive``'s lock (held until it exits)."""
    handle = open(archive.with_name(archive.name + ".lock"), "w")  # noqa: SIM115 (held)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return False
    _held_locks.append(handle)
    return True
