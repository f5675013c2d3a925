"""The COST table of issue 13: every workload on one machine's five ways to run it.

    python -m bench.cost_table                                 # every workload, heavy ones last
    python -m bench.cost_table --workloads tc-graph10000,rdfs-lubm1 --repeat 3
    python -m bench.cost_table --size smoke --repeat 1         # seconds, to try it out

Each workload is one ``herbrand compare`` (``run_comparison``) of CONFIGURATIONS: whole
``herbrand run`` processes, their outputs checked to agree, their peak RSS that of the process
tree (JVMs and Python workers included). The heavy workloads (``catalogue.HEAVY``) run once.

The single-thread reference of a workload is its fastest one-core configuration of any kind
(the local backend, or Spark on ``local[1]``). A family (FAMILIES: herbrand's native executor,
Spark on ``local[N]``, Spark on a local cluster) has as COST the fewest cores at which one of
its configurations beats that reference, the reference's own family its one core, and
"never" when none does (McSherry, Isard and Murray). The table is written as markdown to
``--output`` (default bench/results/cost_table.md), a row per workload.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from herbrand.comparison.configurations import Configuration, parse_configuration
from herbrand.comparison.measure import Measurement
from herbrand.comparison.runner import Comparison, run_comparison
from herbrand.workloads.catalogue import HEAVY, WORKLOADS, prepare

FAMILIES: dict[str, tuple[str, ...]] = {
    "herbrand native": ("native", "native@parallel:2"),
    "spark local[N]": ("spark:local[1]", "spark:local[2]"),
    "spark local-cluster": ("spark:local-cluster[2,1,1024]",),
}
CONFIGURATIONS = tuple(name for names in FAMILIES.values() for name in names)
NEVER = "never"
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "results" / "cost_table.md"


@dataclass(frozen=True)
class CostRow:
    """One workload's line: ``cells`` (configuration -> its Measurement), ``cores``
    (configuration -> cores), ``reference`` (the fastest one-core configuration that ran, None
    when none did), ``costs`` (family -> "1 core", "N cores" or NEVER; no entry when nothing ran)."""

    workload: str
    tuples: int | None
    cells: Mapping[str, Measurement]
    cores: Mapping[str, int]
    reference: str | None
    costs: Mapping[str, str]


def cost_row(workload: str, tuples: int | None, cells: Mapping[str, Measurement],
             cores: Mapping[str, int],
             families: Mapping[str, Sequence[str]] = FAMILIES) -> CostRow:
    """The COST row of one workload's measurements (the module's rule). O(configurations)."""
    ran = {name: cell.median for name, cell in cells.items() if cell.ok}
    one_core = [name for name in ran if cores[name] == 1]
    reference = min(one_core, key=ran.__getitem__, default=None)
    costs: dict[str, str] = {}
    for family, members in families.items():
        measured = [name for name in members if name in ran]
        if reference is None or not measured:
            continue
        beating = [name for name in measured
                   if name == reference or ran[name] < ran[reference]]
        fewest = min((cores[name] for name in beating), default=None)
        costs[family] = NEVER if fewest is None else \
            f"{fewest} core{'s' if fewest > 1 else ''}"
    return CostRow(workload, tuples, dict(cells), dict(cores), reference, costs)


def row_of(comparison: Comparison) -> CostRow:
    """The COST row of a ``run_comparison`` of CONFIGURATIONS-like configurations."""
    cells = {m.configuration: m for m in comparison.measurements}
    cores = {str(c): c.cores or 0 for c in comparison.configurations}
    return cost_row(comparison.target.name, comparison.tuples(), cells, cores)


def _cell_text(cell: Measurement | None) -> str:
    if cell is None:
        return "—"
    if not cell.ok:
        return cell.status
    return f"{cell.median:.1f} s · {cell.rss:,.0f} MB"


def render(rows: Sequence[CostRow], configurations: Sequence[str] = CONFIGURATIONS,
           families: Mapping[str, Sequence[str]] = FAMILIES) -> str:
    """The markdown table: workload, tuples, each configuration (median seconds, peak RSS
    of the process tree), the reference, each family's COST; then the failures' details."""
    header = ["workload", "tuples", *configurations, "single-thread reference", *families]
    lines = ["| " + " | ".join(header) + " |",
             "|---|---:|" + "---:|" * len(configurations) + "---|" + "---|" * len(families)]
    notes = []
    for row in rows:
        reference = "—" if row.reference is None else \
            f"{row.reference} ({row.cells[row.reference].median:.1f} s)"
        tuples = "—" if row.tuples is None else f"{row.tuples:,}"
        lines.append("| " + " | ".join([
            row.workload, tuples, *(_cell_text(row.cells.get(c)) for c in configurations),
            reference, *(row.costs.get(f, "—") for f in families)]) + " |")
        notes += [f"- {row.workload}, {name}: {cell.status}: {cell.detail}"
                  for name, cell in row.cells.items() if not cell.ok]
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.cost_table",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="comma-separated workloads (default all; heavy ones run last)")
    parser.add_argument("--size", choices=("full", "smoke"), default="full")
    parser.add_argument("--repeat", type=int, default=1,
                        help="whole processes per configuration (heavy workloads: 1)")
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds before a run is stopped and marked (default 1800)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    names = [n.strip() for n in args.workloads.split(",") if n.strip()]
    names.sort(key=lambda name: name in HEAVY)  # stable: the heavy ones last
    configurations: list[Configuration] = [parse_configuration(c) for c in CONFIGURATIONS]
    rows = []
    for name in names:
        comparison = run_comparison(
            prepare(name, args.size), configurations, timeout=args.timeout,
            repeat=1 if name in HEAVY else args.repeat,
            log=lambda line: print(line, file=sys.stderr, flush=True))
        rows.append(row_of(comparison))
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(render(rows))  # after each workload: a long run keeps its rows
    sys.stdout.write(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
