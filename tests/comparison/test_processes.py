"""One measured process: wall time, the child's own peak RSS, exit status, timeout and memory
limit, through the launcher."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from herbrand.comparison import processes
from herbrand.comparison.processes import run_process

PY = sys.executable


def python(code: str) -> list[str]:
    return [PY, "-c", code]


def test_run_measures_time_and_the_childs_own_peak_rss(tmp_path):
    ballast = bytearray(300 * 2**20)  # this process is big: a child must not report it
    ballast[::4096] = b"x" * len(ballast[::4096])
    small = run_process(python("pass"), cwd=tmp_path / "small")
    big = run_process(python("b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096])"),
                      cwd=tmp_path / "big")
    assert small.status == big.status == "ok"
    assert small.peak_rss_mb < 100 < 200 < big.peak_rss_mb < 290
    assert 0 < small.seconds < 10
    del ballast


def test_the_peak_counts_a_process_the_command_starts_and_does_not_wait_for(tmp_path):
    """As a Spark run's JVM: ru_maxrss of the command does not hold it; the watchdog's
    samples of the process tree do."""
    grandchild = ("import time; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]);"
                  " time.sleep(1.0)")
    run = run_process(python(f"import subprocess, sys, time; subprocess.Popen([sys.executable, "
                             f"'-c', {grandchild!r}]); time.sleep(0.8)"), cwd=tmp_path)
    assert run.status == "ok"
    assert 200 < run.peak_rss_mb < 400


def test_run_reports_exit_status_and_stderr(tmp_path):
    run = run_process(python("import sys; print('boom', file=sys.stderr); sys.exit(3)"),
                      cwd=tmp_path)
    assert (run.status, run.returncode) == ("error", 3)
    assert "boom" in run.stderr_tail
    missing = run_process(["no-such-program-here"], cwd=tmp_path)
    assert (missing.status, missing.returncode) == ("error", 127)


def test_run_stops_at_the_timeout(tmp_path):
    run = run_process(python("import time; time.sleep(30)"), cwd=tmp_path, timeout=0.5)
    assert run.status == "timeout"
    assert run.seconds < 10


def test_run_stops_past_the_memory_limit(tmp_path):
    code = ("import time; b = bytearray(400 * 2**20); b[::4096] = b'x' * len(b[::4096]); "
            "time.sleep(30)")
    run = run_process(python(code), cwd=tmp_path, memory_limit_mb=150)
    assert run.status == "memory"
    assert run.seconds < 20


def test_launcher_is_importable_without_site():
    launcher = Path(__file__).resolve().parents[2] / "herbrand" / "comparison" / "launch.py"
    assert "import os\nimport sys\nimport time\n" in launcher.read_text()


def test_a_process_that_exits_while_its_tree_is_read_has_no_children(monkeypatch):
    """The watchdog reads the tree every poll; a process that goes between the look-up of its
    threads and their listing must not end the watchdog (and its timeout) with an error."""
    scandir = os.scandir

    def going(path):
        if str(path).startswith(f"/proc/{os.getpid()}/task"):
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", going)
    assert processes._children(os.getpid()) == []
