"""``herbrand bench report``: a markdown table from pytest-benchmark's JSON output.

One table per benchmark group (a workload); one row per benchmark (an implementation), with the
median and minimum time over the rounds, the ratio to the fastest median of the group, the ratio
to each peer of the group (benchmarks whose ``extra_info`` has ``peer: True``: clingo, DuckDB),
and any ``extra_info`` the benchmark recorded (tuples derived, peak memory, ...). Written to a
file, the report also gets a bar chart of every group (``bench_charts``), linked from the text.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from herbrand.bench_charts import group_bar_chart


def _format_extra(extra: dict) -> str:
    return ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in extra.items())


def benchmark_groups(results: dict) -> dict[str, list[dict]]:
    """The benchmarks of a pytest-benchmark JSON document by group."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for bench in results.get("benchmarks", []):
        groups[bench.get("group") or "(no group)"].append(bench)
    return groups


def render_report(results: dict, chart: str | None = None) -> str:
    """The markdown text for a parsed pytest-benchmark JSON document, linking ``chart`` (an
    image path) when given. O(benchmarks)."""
    groups = benchmark_groups(results)
    machine = results.get("machine_info", {})
    lines = ["# Benchmark report", ""]
    if machine:
        lines += [f"Machine: {machine.get('node', '?')}, {machine.get('cpu', {}).get('brand_raw', '')}"
                  f", Python {machine.get('python_version', '?')}", ""]
    if chart:
        lines += [f"![median time per workload]({chart})", ""]
    for group in sorted(groups):
        benches = sorted(groups[group], key=lambda b: b["stats"]["median"])
        fastest = benches[0]["stats"]["median"] or float("nan")
        peers = [b for b in benches if b.get("extra_info", {}).get("peer")]
        lines += [f"## {group}", "",
                  "| benchmark | median (s) | min (s) | rounds | x fastest | "
                  + "".join(f"/ {p['name']} | " for p in peers) + "extra |",
                  "|---|---:|---:|---:|---:|" + "---:|" * len(peers) + "---|"]
        for bench in benches:
            stats = bench["stats"]
            ratios = "".join(f"{stats['median'] / (p['stats']['median'] or float('nan')):.2f} | "
                             for p in peers)
            extra = {k: v for k, v in bench.get("extra_info", {}).items() if k != "peer"}
            lines.append(
                f"| {bench['name']} | {stats['median']:.4f} | {stats['min']:.4f} | "
                f"{stats['rounds']} | {stats['median'] / fastest:.2f} | {ratios}"
                f"{_format_extra(extra)} |"
            )
        lines.append("")
    return "\n".join(lines)


def write_report(results_path: Path, output: str) -> None:
    """Render ``results_path`` to ``output`` (a path, or ``-`` for stdout)."""
    results = json.loads(Path(results_path).read_text())
    if output == "-":
        sys.stdout.write(render_report(results))
        return
    chart = Path(output).with_suffix(".png")
    group_bar_chart(benchmark_groups(results), chart, "herbrand benchmarks")
    Path(output).write_text(render_report(results, chart=chart.name))
