"""The COST part of ``herbrand bench report``: the configurations that outperform a single thread.

Benchmark groups named ``cost-<workload>`` (``bench/bench_spark.py``) hold one benchmark per
configuration, with ``extra_info["cores"]``; the one named ``SINGLE_THREAD`` is the single
thread. ``cost_sections`` prints per workload the single-thread time, each configuration's time
and speed-up, and the COST: the configuration with the fewest cores (then the fastest) whose
median beats the single thread, or "not within tested". ``cost_chart`` draws the times.
Cost: O(benchmarks) plus matplotlib's rendering.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

COST_PREFIX = "cost-"
SINGLE_THREAD = "local-1thread"


def cost_groups(groups: Mapping[str, Sequence[dict]]) -> dict[str, list[dict]]:
    """Workload -> its configurations, ordered by cores then median, for each COST group with
    a single-thread run."""
    out = {}
    for group, benches in sorted(groups.items()):
        names = {b["name"] for b in benches}
        if group.startswith(COST_PREFIX) and SINGLE_THREAD in names:
            out[group[len(COST_PREFIX):]] = sorted(benches, key=_size)
    return out


def _size(bench: dict) -> tuple[int, float]:
    return bench.get("extra_info", {}).get("cores", 1), bench["stats"]["median"]


def cost_of(benches: Sequence[dict]) -> str:
    """The name of the COST configuration of one workload, or "not within tested"."""
    single = next(b for b in benches if b["name"] == SINGLE_THREAD)["stats"]["median"]
    beating = sorted((b for b in benches
                      if b["name"] != SINGLE_THREAD and b["stats"]["median"] < single), key=_size)
    return beating[0]["name"] if beating else "not within tested"


def cost_sections(groups: Mapping[str, Sequence[dict]], chart: str | None = None) -> list[str]:
    """Markdown lines of the COST section (empty without COST groups)."""
    workloads = cost_groups(groups)
    if not workloads:
        return []
    lines = ["## COST (configuration that outperforms a single thread)", ""]
    if chart:
        lines += [f"![COST]({chart})", ""]
    lines += ["| workload | single thread (s) | configuration | cores | median (s) "
              "| x single thread |", "|---|---:|---|---:|---:|---:|"]
    for workload, benches in workloads.items():
        single = next(b for b in benches if b["name"] == SINGLE_THREAD)["stats"]["median"]
        for bench in benches:
            median = bench["stats"]["median"]
            lines.append(f"| {workload} | {single:.3f} | {bench['name']} | "
                         f"{bench.get('extra_info', {}).get('cores', 1)} | {median:.3f} | "
                         f"{single / median:.3g} |")
    lines += ["", "| workload | COST |", "|---|---|"]
    lines += [f"| {workload} | {cost_of(benches)} |" for workload, benches in workloads.items()]
    return lines + [""]


def cost_chart(groups: Mapping[str, Sequence[dict]], path: Path) -> Path | None:
    """Write a chart of each workload's configuration times (log scale, the single thread as
    a dashed line) to ``path``; None (nothing written) without COST groups."""
    workloads = cost_groups(groups)
    if not workloads:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(1, len(workloads), figsize=(4.5 * len(workloads), 3.6),
                                   squeeze=False)
    for axis, (workload, benches) in zip(axes[0], workloads.items(), strict=True):
        single = next(b for b in benches if b["name"] == SINGLE_THREAD)["stats"]["median"]
        axis.bar([b["name"] for b in benches], [b["stats"]["median"] for b in benches])
        axis.axhline(single, linestyle="--", color="tab:red", label="single thread")
        axis.set_yscale("log")
        axis.set_title(f"{workload}: COST = {cost_of(benches)}", fontsize=8)
        axis.tick_params(axis="x", labelrotation=60, labelsize=7)
        axis.set_ylabel("median seconds (log)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return path
