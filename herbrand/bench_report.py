"""``herbrand bench report``: a markdown table from pytest-benchmark's JSON output.

One table per benchmark group (a workload); one row per benchmark (an implementation), with the
median and minimum time over the rounds, the ratio to the fastest median of the group, and any
``extra_info`` the benchmark recorded (tuples derived, peak memory, ...).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def _format_extra(extra: dict) -> str:
    return ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in extra.items())


def render_report(results: dict) -> str:
    """The markdown text for a parsed pytest-benchmark JSON document. O(benchmarks)."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for bench in results.get("benchmarks", []):
        groups[bench.get("group") or "(no group)"].append(bench)
    machine = results.get("machine_info", {})
    lines = ["# Benchmark report", ""]
    if machine:
        lines += [f"Machine: {machine.get('node', '?')}, {machine.get('cpu', {}).get('brand_raw', '')}"
                  f", Python {machine.get('python_version', '?')}", ""]
    for group in sorted(groups):
        benches = sorted(groups[group], key=lambda b: b["stats"]["median"])
        fastest = benches[0]["stats"]["median"] or float("nan")
        lines += [f"## {group}", "", "| benchmark | median (s) | min (s) | rounds | x fastest | extra |",
                  "|---|---:|---:|---:|---:|---|"]
        for bench in benches:
            stats = bench["stats"]
            lines.append(
                f"| {bench['name']} | {stats['median']:.4f} | {stats['min']:.4f} | "
                f"{stats['rounds']} | {stats['median'] / fastest:.2f} | "
                f"{_format_extra(bench.get('extra_info', {}))} |"
            )
        lines.append("")
    return "\n".join(lines)


def write_report(results_path: Path, output: str) -> None:
    """Render ``results_path`` to ``output`` (a path, or ``-`` for stdout)."""
    text = render_report(json.loads(Path(results_path).read_text()))
    if output == "-":
        sys.stdout.write(text)
    else:
        Path(output).write_text(text)
