"""``herbrand compare``: the grid of the command line, run, printed and written.

    herbrand compare PROGRAM -F FACTS [--evaluator a,b] [--index a,b|all]
        [--backend local,parallel:2,spark:local[2]] [--peers souffle,duckdb,clingo|none]
        [--repeat 3] [--timeout S] [-o DIR]
    herbrand compare --workload NAME [--size full|smoke] ...
    herbrand compare --list-workloads

Progress goes to stderr (the combinations left out of the grid, then one line per
configuration as it finishes, then a final line); the table and the COST lines to stdout; with
``-o DIR``, the CSV, JSON and charts of ``herbrand.reports.comparison`` too. When two
configurations disagree, the report is written all the same and the command fails with
ResultsDisagreeError naming the first one, its relation and sizes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from herbrand.builtins import DEFAULT_BACKEND
from herbrand.comparison.configurations import PEERS, grid
from herbrand.comparison.runner import run_comparison
from herbrand.framework.errors import UsageError
from herbrand.framework.registry import INDEXES
from herbrand.reports.comparison import render, write_report
from herbrand.workloads.catalogue import WORKLOADS, prepare, prepare_program, spec

_LIST_ITEM = re.compile(r"(?:[^,\[]|\[[^\]]*\])+")


def _names(text: str | None) -> list[str]:
    """The comma-separated items of ``text``; a comma inside brackets belongs to its item
    (``spark:local-cluster[2,1,4096]``)."""
    return [item.strip() for item in _LIST_ITEM.findall(text or "") if item.strip()]


def workload_lines() -> list[str]:
    """``name: title`` of every shared workload."""
    return [f"{name}: {spec(name).title}" for name in WORKLOADS]


def _peers(text: str) -> list[str]:
    names = [] if text.strip() == "none" else _names(text)
    for name in names:
        if name not in PEERS and not name.startswith("duckdb:"):
            raise UsageError(f"--peers: unknown peer {name!r}; known: {', '.join(PEERS)}, "
                             f"duckdb:N, none")
    return names


def compare_command(args) -> int:
    """Run ``herbrand compare`` with the parsed arguments ``args``; the exit status."""
    if args.list_workloads:
        print("\n".join(workload_lines()))
        return 0
    if (args.program is None) == (args.workload is None):
        raise UsageError("compare takes a PROGRAM (with -F FACTS) or --workload NAME "
                         "(--list-workloads names them)")
    indexes = list(INDEXES.names()) if args.index == "all" else _names(args.index)
    configurations, skipped = grid(_names(args.evaluator), indexes,
                                   _names(args.backend) or [DEFAULT_BACKEND], _peers(args.peers))
    if args.workload is not None:
        target = prepare(args.workload, args.size)
    else:
        target = prepare_program(Path(args.program), Path(args.facts))

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    for line in skipped:
        log(f"skipped: {line}")
    comparison = run_comparison(target, configurations, repeat=args.repeat,
                                timeout=args.timeout, skipped=skipped, log=log)
    sys.stdout.write(render(comparison))
    if args.output is not None:
        for path in write_report(comparison, Path(args.output)):
            log(f"written: {path}")
    comparison.check_agreement()
    return 0
