"""``herbrand bench report``: a markdown table from pytest-benchmark's JSON output.

One table per benchmark group (a workload); one row per benchmark (an implementation), with the
median and minimum time over the rounds, the ratio to the fastest median of the group, the ratio
to each peer of the group (benchmarks whose ``extra_info`` has ``peer: True``: clingo, DuckDB),
and any ``extra_info`` the benchmark recorded (tuples derived, peak memory, ...). Written to a
file, the report also gets a bar chart of every group (``reports.charts``), linked from the text.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from herbrand.framework.errors import ReportError, os_reason
from herbrand.reports.charts import group_bar_chart
from herbrand.reports.cost import cost_chart, cost_sections
from herbrand.reports.incremental import epoch_timelines, incremental_sections


def _format_extra(extra: dict) -> str:
    return ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in extra.items())


def benchmark_groups(results: dict) -> dict[str, list[dict]]:
    """The benchmarks of a pytest-benchmark JSON document by group."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for bench in results.get("benchmarks", []):
        groups[bench.get("group") or "(no group)"].append(bench)
    return groups


def render_report(results: dict, chart: str | None = None,
                  timelines: dict[str, str] | None = None, cost: str | None = None) -> str:
    """The markdown text for a parsed pytest-benchmark JSON document, linking ``chart`` (an
    image path) and the epoch ``timelines`` (workload -> image path) when given, followed by
    the incremental sections (``reports.incremental``) and the COST section
    (``reports.cost``; ``cost``: its chart's path). O(benchmarks)."""
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
    lines += incremental_sections(results, timelines)
    lines += cost_sections(groups, cost)
    return "\n".join(lines)


def read_results(results_path: Path) -> dict:
    """The pytest-benchmark JSON document at ``results_path``; ReportError naming the file
    when it cannot be read, is not JSON, or holds no benchmarks."""
    try:
        results = json.loads(Path(results_path).read_bytes())
    except OSError as error:
        raise ReportError(f"{results_path}: cannot read benchmark results: "
                          f"{os_reason(error)}") from None
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError
        raise ReportError(f"{results_path}: not a pytest-benchmark JSON file: {error}") from None
    benchmarks = results.get("benchmarks") if isinstance(results, dict) else None
    if not isinstance(benchmarks, list) or not benchmarks:
        raise ReportError(f"{results_path}: no benchmarks in this file (expected the JSON "
                          f"written by pytest --benchmark-json)")
    for number, bench in enumerate(benchmarks, start=1):
        if not isinstance(bench, dict) or not isinstance(bench.get("name"), str) or not all(
                isinstance(bench.get("stats", {}).get(key), (int, float))
                for key in ("median", "min", "rounds")):
            raise ReportError(f"{results_path}: benchmark {number} has no name and stats "
                              f"(median, min, rounds)")
    return results


def write_report(results_path: Path, output: str) -> list[Path]:
    """Render ``results_path`` to ``output`` (a path, or ``-`` for stdout); returns the chart
    images written beside a file ``output`` (``<stem>.png``, ``<stem>-cost.png``, one
    timeline per incremental workload). Raises ReportError for a file that is not
    pytest-benchmark JSON with at least one benchmark."""
    results = read_results(results_path)
    if output == "-":
        sys.stdout.write(render_report(results))
        return []
    chart = Path(output).with_suffix(".png")
    group_bar_chart(benchmark_groups(results), chart, "herbrand benchmarks")
    timelines = epoch_timelines(results, Path(output).parent, Path(output).stem)
    cost = cost_chart(benchmark_groups(results), Path(output).with_name(
        Path(output).stem + "-cost.png"))
    Path(output).write_text(render_report(results, chart=chart.name, timelines=timelines,
                                          cost=cost.name if cost else None))
    return [chart, *(Path(output).parent / name for name in timelines.values()),
            *([cost] if cost else [])]
