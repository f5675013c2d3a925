"""One configuration measured on one program: whole-process runs, and warm in-process seconds.

- ``measure`` runs a configuration ``repeat`` times (after ``warmup`` untimed runs), each a
  fresh process (``processes.run_process``) whose outputs are checked against the expected
  sizes and a reference run's outputs (``outputs.difference``), and returns a
  ``Measurement``: the seconds and peak RSS of every timed run, or why there are none.
- ``measure_warm`` times ``herbrand.materialize`` in one child process (``warm``).
"""

from __future__ import annotations

import json
import shutil
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from herbrand.comparison.configurations import Configuration, env
from herbrand.comparison.outputs import Output, difference, output_summary
from herbrand.comparison.processes import (
    DEFAULT_TIMEOUT,
    Run,
    Unavailable,
    error_line,
    run_process,
)
from herbrand.workloads.catalogue import Prepared

DEFAULT_LONG_RUN = 60.0  # a warm-up longer than this is the only (timed) run


@dataclass
class Measurement:
    """``status``: ``ok``, ``unavailable``, ``timeout``, ``memory``, ``error`` (a failed run)
    or ``mismatch`` (an output differs); ``detail`` says why. ``seconds`` and ``peak_rss_mb``:
    one entry per timed run; ``outputs``: what the first checked run produced; ``warm``: the
    in-process seconds (``measure_warm``), when measured."""

    workload: str
    configuration: str
    status: str = "ok"
    detail: str = ""
    seconds: list[float] = field(default_factory=list)
    peak_rss_mb: list[float] = field(default_factory=list)
    outputs: dict[str, Output] | None = None
    warm: list[float] | None = None
    limit: float | None = None  # the timeout or memory limit that stopped it

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def rss(self) -> float:
        """The largest peak RSS over the timed runs, MB."""
        return max(self.peak_rss_mb)

    def tuples(self, headline: str | None) -> int | None:
        """The headline relation's size (all outputs together when None)."""
        if not self.outputs:
            return None
        if headline is None:
            return sum(o.rows for o in self.outputs.values())
        return self.outputs[headline].rows if headline in self.outputs else None


def measure(
    configuration: Configuration,
    prepared: Prepared,
    *,
    scratch: Path,
    cache_root: Path,
    name: str | None = None,
    repeat: int = 3,
    warmup: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit_mb: float | None = None,
    long_run: float = DEFAULT_LONG_RUN,
    reference: Mapping[str, Output] | None = None,
    compile: bool = True,
    log: Callable[[str], None] | None = None,
) -> Measurement:
    """Run ``configuration`` (called ``name``, default its text) on ``prepared``: ``warmup``
    untimed runs then ``repeat`` timed ones, each writing into a fresh ``scratch/out`` and
    checked (``outputs.difference``) against
    ``prepared.expected`` and ``reference``. A warm-up longer than ``long_run`` seconds is
    taken as the only timed run (at that length a second run adds nothing but minutes). The
    first run that fails (timeout, memory, exit status, wrong output) ends the measurement with
    that status; one that cannot run here is ``unavailable``. Soufflé binaries are compiled
    (when ``compile``) and cached under ``cache_root``. ``log`` gets one line per run."""
    result = Measurement(prepared.name, name or str(configuration))
    try:
        configuration.check(prepared, cache_root, compile)
    except Unavailable as why:
        result.status, result.detail = "unavailable", str(why)
        return result
    out_dir = scratch / "out"

    def one(label: str) -> Run | None:
        shutil.rmtree(scratch, ignore_errors=True)
        out_dir.mkdir(parents=True)
        run = run_process(configuration.command(prepared, out_dir, cache_root), cwd=scratch,
                          timeout=timeout, memory_limit_mb=memory_limit_mb, env=env())
        if log is not None:
            log(f"{prepared.name} {result.configuration} {label}: {run.status} "
                f"{run.seconds:.2f} s {run.peak_rss_mb:.0f} MB")
        if run.status != "ok":
            result.status = run.status
            result.limit = {"timeout": timeout, "memory": memory_limit_mb}.get(run.status)
            result.detail = {"timeout": f"over {timeout:.0f} s",
                             "memory": f"RSS over {memory_limit_mb or 0:.0f} MB"}.get(
                run.status, error_line(run))
            return None
        got = output_summary(out_dir, run.stdout)
        problem = difference(got, prepared.expected, reference, configuration.complete)
        if problem is not None:
            result.status, result.detail = "mismatch", problem
            return None
        if result.outputs is None:
            result.outputs = got
        return run

    runs: list[Run] = []
    for number in range(warmup):
        run = one(f"warm-up {number + 1}")
        if run is None:
            return result
        if run.seconds > long_run:
            runs.append(run)
            break
    while len(runs) < repeat and not (runs and runs[-1].seconds > long_run):
        run = one(f"run {len(runs) + 1}")
        if run is None:
            return result
        runs.append(run)
    result.seconds = [r.seconds for r in runs]
    result.peak_rss_mb = [r.peak_rss_mb for r in runs]
    shutil.rmtree(scratch, ignore_errors=True)
    return result


def measure_warm(configuration: Configuration, prepared: Prepared, *, scratch: Path,
                 repeat: int = 3, timeout: float = DEFAULT_TIMEOUT,
                 memory_limit_mb: float | None = None) -> list[float] | None:
    """In-process seconds of ``herbrand.materialize`` (reading the facts, not writing the
    outputs; after one untimed call) for a herbrand configuration, measured by
    ``herbrand.comparison.warm`` in a child process guarded like any run. None for a peer or
    when the child fails."""
    command = configuration.warm_command(prepared, repeat)
    if command is None:
        return None
    run = run_process(command, cwd=scratch, timeout=timeout, memory_limit_mb=memory_limit_mb,
                      env=env())
    try:
        return json.loads(run.stdout.read_text())["seconds"] if run.status == "ok" else None
    except (ValueError, KeyError):
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
