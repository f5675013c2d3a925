"""Issue 12's protocol as users meet it: whole ``herbrand run --engine E --updates FILE`` processes.

    .venv/bin/python -m bench.update_processes --workloads rdfs-lubm1,tc-graph10000 --repeat 3

Per workload (``bench.incremental_workloads``'s), written once under
``cache_root()/updates/<workload>/``: ``program.dl``, ``facts/`` (the fixed inputs and the
first 99% of the changed facts, in their seeded order) and ``updates.txt``, two epochs: the
last 1% inserted, then deleted. Then, after one warm-up each, ``repeat`` processes of
``herbrand run program.dl -F facts -D OUT --no-progress`` (the materialization alone, no
engine) and of the same with ``--engine E --updates updates.txt`` per engine, alternated
run by run so that a slow period of the machine spreads over all of them. Printed per engine:
the median wall seconds of the process and its peak RSS (``herbrand.comparison.processes``:
``os.wait4``'s), and the median seconds of each epoch as the run itself reports them on
stderr. Every run's outputs are checked to be the run without an engine's (the insert and
its delete change nothing). ``update_costs`` measures the same updates in process, warm.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

from bench.incremental_workloads import NAMES, incremental_workload
from bench.processes import cache_root
from herbrand.comparison.processes import run_process
from herbrand.workloads.shared import write_facts_dir


def prepared(name: str, root: Path) -> Path:
    """The folder of workload ``name``'s files (see the module doc), written if missing."""
    folder = root / "updates" / name
    if (folder / "updates.txt").exists():
        return folder
    workload = incremental_workload(name)
    split = int(len(workload.changed) * 0.99)
    write_facts_dir(folder / "facts", {
        relation: rows if rows.dtype.kind in "iu" else map(tuple, rows.tolist())
        for relation, rows in workload.facts(workload.changed[:split]).items()})
    (folder / "program.dl").write_text(str(workload.program) + "\n")
    last = workload.changed[split:].facts()
    with open(folder / "updates.tmp", "w") as updates:
        for sign in "+-":
            for relation, rows in last.items():
                _write_rows(updates, sign + relation + "\t", rows)
            updates.write("commit\n")
    (folder / "updates.tmp").rename(folder / "updates.txt")
    return folder


def _write_rows(target: TextIO, prefix: str, rows: np.ndarray) -> None:
    """Tab-separated update lines to ``target``, each starting with ``prefix``."""
    for row in rows.reshape(len(rows), -1).astype(str).tolist():
        target.write(prefix + "\t".join(row) + "\n")


def _digests(folder: Path) -> dict[str, str]:
    """The SHA-256 of each file in ``folder``, by name."""
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.iterdir())}


def _epoch_seconds(stderr: str) -> list[float]:
    """The seconds column of the epoch lines a run prints (``epoch given added removed
    seconds strategy``)."""
    return [float(line.split("\t")[4]) for line in stderr.splitlines()
            if line[:1].isdigit() and line.count("\t") == 5]


def measure(name: str, engines: Sequence[str], repeat: int, root: Path) -> list[str]:
    """The lines printed for workload ``name`` (see the module doc). The runs write into a
    scratch folder of this call's own, removed at the end: two benchmarks sharing a cache do
    not read each other's outputs."""
    folder = prepared(name, root)
    with tempfile.TemporaryDirectory(dir=root / "updates", prefix="scratch-") as scratch:
        return _measured(name, folder, engines, repeat, Path(scratch))


def _measured(name: str, folder: Path, engines: Sequence[str], repeat: int,
              scratch: Path) -> list[str]:
    base = [sys.executable, "-m", "herbrand.cli", "run", str(folder / "program.dl"), "-F",
            str(folder / "facts"), "-D", str(scratch / "out"), "--no-progress"]
    commands = {"(no engine)": base, **{
        engine: [*base, "--engine", engine, "--updates", str(folder / "updates.txt")]
        for engine in engines}}
    seconds = {label: [] for label in commands}
    peaks = {label: [] for label in commands}
    epochs = {label: [] for label in commands}
    expected: dict[str, str] | None = None  # the outputs' digests, from the first run
    for number in range(repeat + 1):
        for label, command in commands.items():
            run = run_process(command, cwd=scratch)
            if run.status != "ok":
                raise SystemExit(f"{name} {label}: {run.status}: "
                                 f"{(scratch / 'stderr.txt').read_text()[-300:]}")
            written = _digests(scratch / "out")
            expected = written if expected is None else expected
            if written != expected:
                raise SystemExit(f"{name} {label}: its outputs differ from the run without "
                                 "an engine (an insert and its delete change nothing)")
            if number:  # the first round warms the page cache
                seconds[label].append(run.seconds)
                peaks[label].append(run.peak_rss_mb)
                epochs[label].append(_epoch_seconds((scratch / "stderr.txt").read_text()))
    lines = [f"{name}: whole processes, median of {repeat}"]
    for label in commands:
        epoch = " / ".join(f"{statistics.median(e) * 1e3:.0f}"
                           for e in zip(*epochs[label], strict=True))
        lines.append(f"  {label:12s} {statistics.median(seconds[label]):6.2f} s  "
                     f"{max(peaks[label]):6.0f} MB" + (f"  epochs {epoch} ms" if epoch else ""))
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.update_processes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", default="tc-graph10000,rdfs-lubm1",
                        help=f"comma-separated, of: {', '.join(NAMES)}")
    parser.add_argument("--engines", default="counting,dbsp,elastic,bf,dred")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    for name in args.workloads.split(","):
        print("\n".join(measure(name, args.engines.split(","), args.repeat, cache_root())),
              flush=True)


if __name__ == "__main__":
    main()
