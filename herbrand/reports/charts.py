"""PNG charts for ``herbrand bench report`` (matplotlib, the ``bench`` extra).

``group_bar_chart`` draws one panel per benchmark group (a workload) with one bar per benchmark
(an implementation or a peer), the median time on a log scale, so an index comparison and its
peers read at a glance. Cost: O(benchmarks) plus matplotlib's rendering.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def group_bar_chart(groups: Mapping[str, Sequence[dict]], path: Path, title: str) -> Path:
    """Write the bar chart of ``groups`` (group -> pytest-benchmark entries) to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    names = sorted(groups)
    figure, axes = pyplot.subplots(len(names), 1, figsize=(9, 2.2 + 0.28 * max(
        len(groups[n]) for n in names) * len(names)), squeeze=False)
    for axis, group in zip(axes[:, 0], names, strict=True):
        benches = sorted(groups[group], key=lambda b: b["stats"]["median"])
        labels = [b["name"] for b in benches]
        medians = [b["stats"]["median"] for b in benches]
        colours = ["tab:grey" if b.get("extra_info", {}).get("peer") else "tab:blue"
                   for b in benches]
        axis.barh(labels, medians, color=colours)
        axis.set_xscale("log")
        axis.invert_yaxis()
        axis.set_title(group, fontsize=9, loc="left")
        axis.tick_params(labelsize=7)
    axes[-1, 0].set_xlabel("median seconds (log scale); grey: peers")
    figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return path
