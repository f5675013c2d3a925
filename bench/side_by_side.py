"""The side-by-side table: herbrand's configurations beside Soufflé (compiled, interpreted),
DuckDB and clingo, every one a whole process on the same program and facts files.

    python -m bench.side_by_side                          # every workload, every configuration
    python -m bench.side_by_side --workloads tc-graph10000,counter100k --repeat 3
    python -m bench.side_by_side --size smoke --repeat 1  # seconds, to try it out
    python -m bench.side_by_side --resume                 # add what bench/results/side_by_side.json lacks

Rows are workloads (``herbrand.workloads.catalogue``) with their tuple counts; columns are
configurations (``bench.processes.CONFIGURATIONS``), each cell the median wall seconds and the peak RSS (MB)
of the process, then the ratios of herbrand's default and of its best configuration to Soufflé
compiled. A configuration that cannot run here (no ``souffle`` on PATH, no ``native`` evaluator
registered) is left out and listed under the table; a run that outlives ``--timeout`` or passes
``--memory-limit`` is marked in its cell, and the table goes on. The measurements are also
written as JSON beside the markdown, which ``--resume`` reads to run only what is missing.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path

from herbrand.comparison.measure import (
    DEFAULT_LONG_RUN,
    Measurement,
    measure,
    measure_warm,
)
from herbrand.comparison.outputs import Output
from herbrand.comparison.processes import DEFAULT_TIMEOUT, default_memory_limit_mb
from herbrand.reports.machine import machine_description
from herbrand.workloads.catalogue import HEAVY, WORKLOADS, prepare, spec

from .processes import CONFIGURATIONS, DEFAULT_CONFIGURATIONS, REFERENCE, cache_root

PARALLEL = "herbrand-parallel2"  # the configuration whose speed-up over REFERENCE is shown

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "side_by_side.md"


def _split(text: str, known: Sequence[str], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown {what} {unknown[0]!r}; known: {', '.join(known)}")
    return names


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.side_by_side",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help=f"comma-separated (default all: {', '.join(WORKLOADS)})")
    parser.add_argument("--configurations", default=",".join(DEFAULT_CONFIGURATIONS),
                        help=f"comma-separated, in column order (known: "
                             f"{', '.join(CONFIGURATIONS)}; default: all but duckdb-2thread)")
    parser.add_argument("--size", choices=("full", "smoke"), default="full",
                        help="the workloads' sizes (smoke: seconds in all; default full)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per cell (default 3)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed runs before them (default 1)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds before a run is stopped and marked (default "
                             f"{DEFAULT_TIMEOUT:.0f})")
    parser.add_argument("--heavy-timeout", type=float, default=None,
                        help=f"the timeout of {', '.join(HEAVY)} (default --timeout)")
    parser.add_argument("--memory-limit", type=float, default=None, metavar="MB",
                        help="peak RSS above which a run is stopped and marked (default half "
                             "the machine's memory)")
    parser.add_argument("--long-run", type=float, default=DEFAULT_LONG_RUN,
                        help="a warm-up longer than this many seconds is the cell's only run "
                             f"(default {DEFAULT_LONG_RUN:.0f})")
    parser.add_argument("--warm", action="store_true",
                        help="also measure herbrand's in-process (warm) seconds")
    parser.add_argument("--no-compile", action="store_true",
                        help="use only Soufflé binaries compiled before (bench/.cache)")
    parser.add_argument("--resume", action="store_true",
                        help="keep the cells of the JSON file and run only the missing ones")
    parser.add_argument("-o", "--output", default=str(DEFAULT_OUTPUT),
                        help="the markdown file (default bench/results/side_by_side.md); the "
                             "JSON goes beside it")
    args = parser.parse_args(argv)
    args.workloads = _split(args.workloads, WORKLOADS, "workload")
    args.configurations = _split(args.configurations, list(CONFIGURATIONS), "configuration")
    if args.memory_limit is None:
        args.memory_limit = default_memory_limit_mb()
    return args


# ---------------------------------------------------------------------------------------------
# JSON
# ---------------------------------------------------------------------------------------------


def _to_json(measurement: Measurement) -> dict:
    data = asdict(measurement)
    data["outputs"] = (None if measurement.outputs is None else
                       {k: [v.rows, v.digest] for k, v in measurement.outputs.items()})
    return data


def _from_json(data: dict) -> Measurement:
    outputs = data.get("outputs")
    data = {**data, "outputs": None if outputs is None else
            {k: Output(rows, digest) for k, (rows, digest) in outputs.items()}}
    return Measurement(**data)


def _load(path: Path) -> tuple[list[Measurement], list[str], list[str], dict[str, str]]:
    """The measurements, the run lines (one per invocation that added cells), the workloads
    and the reference configuration of each workload of an earlier JSON file; nothing when
    there is none."""
    if not path.exists():
        return [], [], [], {}
    data = json.loads(path.read_text())
    measurements = [_from_json(item) for item in data["measurements"]]
    workloads = data.get("workloads") or sorted({m.workload for m in measurements})
    return measurements, data.get("runs", []), workloads, data.get("references", {})


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------


def _git_revision() -> str:
    """``$HERBRAND_BENCH_REVISION`` (to label a snapshot outside git), else the commit of the
    checkout that holds the imported ``herbrand`` and whether herbrand/ has uncommitted
    changes there."""
    if os.environ.get("HERBRAND_BENCH_REVISION"):
        return os.environ["HERBRAND_BENCH_REVISION"]
    import herbrand

    def git(*arguments: str) -> str:
        return subprocess.run(["git", *arguments], capture_output=True, text=True,
                              cwd=Path(herbrand.__file__).parent, timeout=30).stdout.strip()

    try:
        revision = git("rev-parse", "--short", "HEAD") or "?"
        changed = git("status", "--porcelain", "--", ".")
    except (OSError, subprocess.SubprocessError):
        return "?"
    return revision + (" with uncommitted changes in herbrand/" if changed else "")


def machine_line() -> str:
    description = machine_description()
    versions = description["versions"]
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    return (f"{description['cpu']}, {description['cpus']} cores, "
            f"{description['memory_gb']:.0f} GB (load average {load} at the start); Python "
            f"{description['python']}; herbrand {_git_revision()}; Soufflé "
            f"{versions['souffle']}; DuckDB {versions['duckdb']}; clingo {versions['clingo']}")


def _cell(m: Measurement | None) -> str:
    if m is None:
        return "…"
    if m.status == "unavailable":
        return "—"
    if m.status == "timeout":
        return f"timeout (> {m.limit:.0f} s)" if m.limit else "timeout"
    if m.status == "memory":
        return f"stopped: RSS > {m.limit:,.0f} MB" if m.limit else "out of memory"
    if m.status in ("error", "mismatch"):
        return m.status
    single = "†" if len(m.seconds) == 1 else ""
    return f"{m.median:.2f} s{single} · {m.rss:,.0f} MB"


def _ratio(m: Measurement | None, base: Measurement | None, digits: int = 1) -> str:
    """``m``'s median over ``base``'s, or — when either did not run."""
    if m is None or base is None or not m.ok or not base.ok or base.median <= 0:
        return "—"
    return f"{m.median / base.median:.{digits}f}×"


def render(measurements: Iterable[Measurement], configurations: Sequence[str],
           workloads: Sequence[str], settings: str, reasons: dict[str, str],
           references: dict[str, str]) -> str:
    """The markdown page: settings, the table, the unavailable configurations, the failures
    and the per-cell details."""
    cells = {(m.workload, m.configuration): m for m in measurements}
    shown = [c for c in configurations if c not in reasons]
    herbrand = [c for c in shown if CONFIGURATIONS[c].kind == "herbrand"]
    warm = any(m.warm for m in cells.values())
    head = ["workload", "tuples"]
    for name in shown:
        head.append(CONFIGURATIONS[name].label)
        if name == REFERENCE and warm:
            head.append("herbrand default, in-process")
    head += ["default / Soufflé compiled", "best herbrand / Soufflé compiled"]
    speedup = PARALLEL in shown
    if speedup:
        head.append("parallel-2 speed-up (default / parallel-2)")
    lines = ["# herbrand beside Soufflé, DuckDB and clingo: whole processes", "", settings, "",
             "| " + " | ".join(head) + " |",
             "|---|---:|" + "---:|" * (len(head) - 2)]
    notes: list[str] = []
    for workload in workloads:
        row = [cells.get((workload, c)) for c in shown]
        tuples = next((m.tuples(spec(workload).headline) for m in row
                       if m is not None and m.outputs
                       and CONFIGURATIONS[m.configuration].complete), None)
        title = spec(workload).title
        line = [f"{title} (`{workload}`)", "—" if tuples is None else f"{tuples:,}"]
        for name, m in zip(shown, row, strict=True):
            text = _cell(m)
            if m is not None and m.status in ("error", "mismatch"):
                notes.append(f"{workload}, {CONFIGURATIONS[name].label}: {m.detail}")
                text += f" [{len(notes)}]"
            line.append(text)
            if name == REFERENCE and warm:
                line.append(f"{min(m.warm):.2f} s" if m is not None and m.warm else "—")
        souffle = cells.get((workload, "souffle-compiled"))
        default = cells.get((workload, REFERENCE))
        candidates = [m for m in (cells.get((workload, c)) for c in herbrand)
                      if m is not None and m.ok]
        best = min(candidates, key=lambda m: m.median, default=None)
        best_text = _ratio(best, souffle)
        if best is not None and best_text != "—":
            best_text += f" ({CONFIGURATIONS[best.configuration].label})"
        line += [_ratio(default, souffle), best_text]
        if speedup:
            line.append(_ratio(default, cells.get((workload, PARALLEL)), digits=2))
        lines.append("| " + " | ".join(line) + " |")
    lines.append("")
    if notes:
        lines += ["Failures:", ""] + [f"{i}. {note}" for i, note in enumerate(notes, 1)] + [""]
    if reasons:
        lines += ["Not available here (left out of the table):", ""]
        lines += [f"- {CONFIGURATIONS[c].label} (`{c}`): {why}" for c, why in reasons.items()]
        lines.append("")
    missing = sorted({(m.workload, CONFIGURATIONS[m.configuration].label, m.detail)
                      for m in cells.values() if m.status == "unavailable"
                      and m.configuration not in reasons and m.workload in workloads})
    if missing:
        lines += ["Cells marked — (this configuration has no program for this workload, or "
                  "cannot run it here):", ""]
        lines += [f"- {w}, {label}: {why}" for w, label, why in missing] + [""]
    odd = {w: r for w, r in references.items() if r != REFERENCE and w in workloads}
    if odd:
        lines += ["Outputs checked against another configuration than herbrand's default "
                  "(which did not finish): " + ", ".join(f"{w}: {r}" for w, r in odd.items()),
                  ""]
    lines += ["## Every cell", "",
              "| workload | configuration | status | runs | median (s) | min (s) | max (s) "
              "| peak RSS (MB) | in-process (s) | note |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for workload in workloads:
        for name in configurations:
            m = cells.get((workload, name))
            if m is None or name in reasons:
                continue
            if m.ok:
                times = (f"{len(m.seconds)} | {m.median:.3f} | {min(m.seconds):.3f} | "
                         f"{max(m.seconds):.3f} | {m.rss:,.1f}")
            else:
                times = "0 | | | | "
            warm_text = f"{min(m.warm):.3f}" if m.warm else ""
            lines.append(f"| {workload} | {name} | {m.status} | {times} | {warm_text} | "
                         f"{m.detail.replace('|', '/')} |")
    lines.append("")
    return "\n".join(lines)


def run_line(args: argparse.Namespace) -> str:
    """One invocation's conditions: its workloads, date, machine and limits."""
    heavy = [w for w in args.workloads if w in HEAVY]
    timeout = f"timeout {args.timeout:.0f} s" + (
        f" ({args.heavy_timeout:.0f} s for {', '.join(heavy)})"
        if args.heavy_timeout and heavy else "")
    return (f"{', '.join(f'`{w}`' for w in args.workloads)}: measured "
            f"{datetime.date.today().isoformat()} on {machine_line()}; {args.repeat} timed "
            f"run(s) after {args.warmup} warm-up(s), {timeout}, memory limit "
            f"{args.memory_limit:,.0f} MB, {args.size} size.")


def method_text(long_run: float, warm: bool) -> str:
    """The paragraph that says what a cell is."""
    return (
        "Each cell: the median wall time of the timed runs, from starting the process to its "
        "exit (start-up, reading the facts, evaluating, writing the outputs), and the largest "
        "peak resident memory of those runs (`ru_maxrss` from `os.wait4`, taken by "
        "`herbrand/comparison/launch.py`), in MB. † one run only: the warm-up took over "
        f"{long_run:.0f} s and counts as the measurement. Every run's output is checked "
        "against the known sizes and against herbrand's default configuration (the rows of "
        "each output file, in any order; the peers' counts). Soufflé compiled: `souffle -o` "
        "once per program (not timed), one thread like Soufflé's interpreter and herbrand's "
        "default; parallel-2: `--backend parallel --workers 2`. Ratios: median over Soufflé "
        "compiled's median (above 1: herbrand is slower); the parallel-2 speed-up: herbrand "
        "default's median over parallel-2's, whole processes (issue 10's target: 1.8× or more "
        "wherever the default takes over a second)."
        + (" In-process: the fastest `herbrand.materialize` call in one process after a "
           "warm-up call (reading the facts, not writing the outputs)." if warm else "")
    )


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


def unavailable_configurations(configurations: Sequence[str]) -> dict[str, str]:
    """Configuration -> why it cannot run on this machine at all (for the whole table)."""
    reasons = {}
    for name in configurations:
        configuration = CONFIGURATIONS[name].configuration
        if configuration.kind == "souffle" and shutil.which("souffle") is None:
            reasons[name] = "`souffle` is not on PATH"
        elif configuration.kind == "peer":
            try:
                __import__(configuration.peer)
            except ImportError:
                reasons[name] = f"the {configuration.peer} Python package is not installed"
    return reasons


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    json_path = output.with_suffix(".json")
    kept, earlier, earlier_workloads, references = (
        _load(json_path) if args.resume else ([], [], [], {}))
    cells = {(m.workload, m.configuration): m for m in kept}
    reasons = unavailable_configurations(args.configurations)
    shown_workloads = [w for w in WORKLOADS if w in args.workloads or w in earlier_workloads]
    shown_configurations = [c for c in CONFIGURATIONS if c in args.configurations
                            or any(m.configuration == c for m in kept)]
    order = [REFERENCE] + [c for c in args.configurations if c != REFERENCE]

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    def save() -> None:
        measurements = list(cells.values())
        added = len(cells) > len(kept) or any(c is not k for c, k in zip(
            cells.values(), kept, strict=False))
        runs = earlier + [run_line(args)] if added or not earlier else earlier
        text = (method_text(args.long_run, any(m.warm for m in measurements)) + "\n\n"
                + "\n".join(f"- {line}" for line in runs))
        json_path.write_text(json.dumps({"runs": runs, "workloads": shown_workloads,
                                         "references": references,
                                         "measurements": [_to_json(m) for m in measurements]},
                                        indent=1))
        output.write_text(render(measurements, shown_configurations, shown_workloads, text,
                                 reasons, references))

    scratch = cache_root() / "scratch"
    for workload in args.workloads:
        if args.size not in spec(workload).sizes:
            log(f"{workload}: no {args.size} size, skipped")
            continue
        prepared = prepare(workload, args.size)
        timeout = args.heavy_timeout if args.heavy_timeout and workload in HEAVY else args.timeout
        reference = None
        for name in order:
            if name in reasons or (name not in args.configurations and name != REFERENCE):
                continue
            previous = cells.get((workload, name))
            if previous is not None and previous.status != "unavailable":
                measurement = previous
            else:
                configuration = CONFIGURATIONS[name].configuration
                measurement = measure(configuration, prepared, scratch=scratch,
                                      cache_root=cache_root(), name=name, repeat=args.repeat, warmup=args.warmup, timeout=timeout,
                                      memory_limit_mb=args.memory_limit,
                                      long_run=args.long_run, reference=reference,
                                      compile=not args.no_compile, log=log)
                if args.warm and measurement.ok and configuration.kind == "herbrand":
                    measurement.warm = measure_warm(  # one timed call after a long run
                        configuration, prepared, scratch=scratch,
                        repeat=args.repeat if len(measurement.seconds) > 1 else 1,
                        timeout=timeout, memory_limit_mb=args.memory_limit)
                if measurement.status != "ok":
                    log(f"{workload} {name}: {measurement.status}: {measurement.detail}")
                cells[(workload, name)] = measurement
            if (reference is None and measurement.ok and measurement.outputs
                    and CONFIGURATIONS[name].complete):
                reference = measurement.outputs
                references[workload] = name
            if name in args.configurations:
                save()
    save()
    log(f"written: {output} and {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
