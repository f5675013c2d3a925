"""One measured child process: wall time and peak resident memory, as a user meets a command.

``run_process`` runs one command through ``launch.py``, a small interpreter that forks it, and
reads back the command's wall time and its peak RSS from ``os.wait4``'s rusage (``ru_maxrss``,
kilobytes on Linux: native memory included, unlike tracemalloc; see ``launch.py`` for why the
harness does not fork the command itself), or the largest RSS of its whole process tree sampled
by the watchdog when that is larger (a Spark run's JVM is a process the command does not wait
for). The watchdog thread kills the process group when it outlives ``timeout`` or its tree's
RSS passes ``memory_limit_mb`` (a shared machine: a run that would swallow it is stopped and
marked instead).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

LAUNCHER = Path(__file__).resolve().with_name("launch.py")
DEFAULT_TIMEOUT = 600.0  # seconds per run
POLL_SECONDS = 0.05
STDERR_TAIL = 2000  # characters of a failed run's stderr kept for the report


class Unavailable(Exception):
    """A configuration that cannot run here (the message says why)."""


def default_memory_limit_mb() -> float:
    """Half the machine's physical memory, in MB: a run above it is stopped ("memory")."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20 / 2
    except (ValueError, OSError):
        return 8192.0



@dataclass(frozen=True)
class Run:
    """One child process. ``status``: ``ok`` (exit 0), ``error`` (another exit status or a
    signal), ``timeout`` or ``memory`` (stopped by the watchdog). ``peak_rss_mb``: the child's
    peak resident set size (``ru_maxrss``). ``stdout``: its standard output (a path)."""

    status: str
    seconds: float
    peak_rss_mb: float
    returncode: int | None
    stdout: Path
    stderr_tail: str = ""


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def _children(pid: int) -> list[int]:
    """The processes ``pid``'s threads started, from /proc: empty once it is gone, and
    without the threads that go while it is read (a process exits at any moment)."""
    try:
        with os.scandir(f"/proc/{pid}/task") as tasks:
            paths = [f"{task.path}/children" for task in tasks]
    except OSError:
        return []
    children = []
    for path in paths:
        try:
            with open(path, "rb") as handle:
                children += [int(child) for child in handle.read().split()]
        except (OSError, ValueError):
            continue
    return children


def _tree_rss_bytes(pid: int) -> int:
    """The resident memory of ``pid``'s descendants together (the launched command and what
    it starts: a Spark run's JVM is the command's child). O(processes) reads of /proc."""
    total, pending = 0, _children(pid)
    while pending:
        process = pending.pop()
        total += _rss_bytes(process)
        pending += _children(process)
    return total


def run_process(
    command: Sequence[str],
    *,
    cwd: Path,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit_mb: float | None = None,
    env: Mapping[str, str] | None = None,
) -> Run:
    """Run ``command`` in ``cwd`` (its stdout and stderr go to ``cwd/stdout.txt`` and
    ``cwd/stderr.txt``) through ``launch.py``, which forks it from a 5 MB interpreter, waits
    for it with ``os.wait4`` and reports its wall time (fork to exit) and peak RSS
    (``ru_maxrss``): forked from this process directly, the child's peak would include this
    process's size. Processes the command starts and does not wait for (a Spark run's JVM) are
    not in ``ru_maxrss``: the peak reported is the larger of it and the largest sum of RSS
    over the command's process tree that the watchdog saw. Watchdog: SIGKILL to the process group (launcher and command) after
    ``timeout`` seconds or once the RSS of the command's process tree (read from /proc every
    POLL_SECONDS) passes
    ``memory_limit_mb``; the launcher is reaped only after the watchdog has stood down, so it
    never signals a reused pid. Cost: the command's, plus about 20 ms of launcher start-up
    (not in the seconds) and a wake-up of the watchdog every POLL_SECONDS."""
    cwd.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = cwd / "stdout.txt", cwd / "stderr.txt"
    report = cwd / "launch.txt"
    report.unlink(missing_ok=True)
    limit = None if memory_limit_mb is None else memory_limit_mb * 2**20
    stopped: list[str] = []
    seen = [0]  # the largest RSS the watchdog saw, bytes
    lock = threading.Lock()
    finished = threading.Event()
    launcher = [sys.executable, "-I", "-S", str(LAUNCHER), str(report), *command]
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        start = time.perf_counter()
        child = subprocess.Popen(launcher, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err, start_new_session=True,
                                 env=None if env is None else dict(env))

    def watchdog() -> None:
        while not finished.wait(POLL_SECONDS):
            rss = _tree_rss_bytes(child.pid)
            seen[0] = max(seen[0], rss)
            reason = None
            if time.perf_counter() - start > timeout:
                reason = "timeout"
            elif limit is not None and rss > limit:
                reason = "memory"
            if reason:
                with lock:
                    if not finished.is_set():
                        stopped.append(reason)
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(child.pid, signal.SIGKILL)
                return

    guard = threading.Thread(target=watchdog, daemon=True)
    guard.start()
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
    seconds = time.perf_counter() - start
    with lock:
        finished.set()
    guard.join()
    _, status, _ = os.wait4(child.pid, 0)
    child.returncode = returncode = os.waitstatus_to_exitcode(status)
    peak = seen[0] / 2**20
    try:
        measured, maxrss, returncode = report.read_text().split()
        seconds, returncode = float(measured), int(returncode)
        peak = max(int(maxrss) / 1024, peak)
    except (OSError, ValueError):
        pass  # killed before it could report: the harness's figures stand
    state = stopped[0] if stopped else "ok" if returncode == 0 else "error"
    tail = ""
    if state == "error":
        tail = stderr_path.read_text(errors="replace")[-STDERR_TAIL:]
    return Run(state, seconds, round(peak, 1), returncode, stdout_path, tail)


def error_line(run: Run) -> str:
    """A failed run in one line: its exit status or signal, and its last line on stderr."""
    lines = [line for line in run.stderr_tail.splitlines() if line.strip()]
    status = (f"killed by signal {-run.returncode}" if (run.returncode or 0) < 0
              else f"exit status {run.returncode}")
    return f"{status}: {lines[-1].strip()}" if lines else status

