"""Real executor processes: ``local-cluster[2,1,1024]`` starts two executor JVMs.

Each test runs ``herbrand run --backend spark`` in a subprocess (one process can hold only one
SparkContext, and the suite's own session is a ``local[2]`` one), both with TC decomposed (its
pivot: one job, herbrand's engine in each partition, in Python workers the executors start) and
with semi-naive passes (``--no-decompose``), writing a gzipped file (the executors' parts,
each gzipped, joined) with the local backend's bytes. One test kills an executor JVM in the middle of the
recursive run; with reliable checkpoints the run still completes, its lost tasks redone on the
executor the cluster starts in its place.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from herbrand.cli import main
from herbrand.workloads import dyre_edges, dyre_program, write_facts_dir

from .conftest import requires_java
from .edge_files import plain_bytes

MASTER = "local-cluster[2,1,1024]"
TC_GRAPH1000 = 11_532
pytestmark = requires_java


def _command(facts: Path, out: Path, *extra: str, program: Path | None = None) -> list[str]:
    return [sys.executable, "-m", "herbrand.cli", "run", str(program or dyre_program("tc")),
            "-F", str(facts), "-D", str(out), "--backend", "spark", "--master", MASTER,
            "--spark-conf", "spark.ui.enabled=false",
            "--spark-conf", "spark.sql.shuffle.partitions=4", "--driver-rows", "0", *extra]


def _executors(driver: int) -> list[int]:
    """The pids of the executor JVMs below process ``driver``."""
    table = subprocess.run(["ps", "-ww", "-eo", "pid=,ppid=,args="], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    parent, executors = {}, []
    for line in table:
        pid, ppid, *args = line.split(None, 2)
        parent[int(pid)] = int(ppid)
        if "CoarseGrainedExecutorBackend" in "".join(args):
            executors.append(int(pid))

    def below(pid: int) -> bool:
        while pid in parent and pid > 1:
            pid = parent[pid]
            if pid == driver:
                return True
        return False

    return [pid for pid in executors if below(pid)]


def _facts(tmp_path: Path) -> Path:
    return write_facts_dir(tmp_path / "facts", {"e": dyre_edges("graph1000")})


# the extra flags of a path, and the progress line's iteration from which it is under way
PATHS = {"decomposed": ((), 1), "semi-naive": (("--no-decompose",), 3)}


@pytest.mark.parametrize("path", PATHS)
def test_tc_over_graph1000_on_two_executors(tmp_path, path):
    extra, _ = PATHS[path]
    program = tmp_path / "tc.dl"
    program.write_text(dyre_program("tc").read_text().replace(
        ".output tc\n", '.output tc(filename="tc.csv.gz")\n'))
    facts = _facts(tmp_path)
    result = subprocess.run(_command(facts, tmp_path / "out", "--no-progress", "--stats",
                                     *extra, program=program),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert main(["run", str(program), "-F", str(facts), "-D", str(tmp_path / "local"),
                 "--no-progress"]) == 0
    written = plain_bytes(tmp_path / "out" / "tc.csv.gz")
    assert written == plain_bytes(tmp_path / "local" / "tc.csv.gz")
    assert written.count(b"\n") == TC_GRAPH1000
    passes = int(re.search(r"^total\t(\d+)\t", result.stderr, re.MULTILINE)[1])
    assert (passes == 2) == (path == "decomposed"), result.stderr[-2000:]


@pytest.mark.parametrize("path", PATHS)
def test_killing_an_executor_during_recursion_still_gives_the_right_answer(tmp_path, path):
    extra, under_way = PATHS[path]
    command = _command(_facts(tmp_path), tmp_path / "out",
                       "--checkpoint-dir", str(tmp_path / "checkpoints"), *extra)
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    killed, progress = None, []
    try:
        for line in process.stderr:  # progress lines: "stratum 1/1  iteration N  ..."
            found = re.search(r"iteration (\d+)", line)
            progress += [line] if found else []
            executors = (_executors(process.pid) if found and int(found[1]) >= under_way
                         else [])
            if executors:
                os.kill(executors[0], signal.SIGKILL)
                killed = executors[0]
                break
        process.stderr.read()
        status = process.wait(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
    assert killed is not None, f"no executor found to kill; progress seen: {progress}"
    assert status == 0
    assert len((tmp_path / "out" / "tc.csv").read_text().splitlines()) == TC_GRAPH1000
