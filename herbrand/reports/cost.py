"""COST (McSherry et al.): the configuration that outperforms a single thread.

``cheapest_beating`` is the one rule: of the configurations faster than the single-thread
reference, the one with the fewest cores (then the fastest). Two reports apply it:

- ``herbrand compare`` (``family_costs``, ``cores_chart``): per parallel or distributed family
  (``native@parallel:N``, ``spark:local[N]``, ...), the smallest core count whose time beats
  the fastest one-core configuration of any kind, or "not within N cores".
- ``herbrand bench report``: benchmark groups named ``cost-<workload>`` (``bench/bench_spark.py``) hold one benchmark per
configuration, with ``extra_info["cores"]``; the one named ``SINGLE_THREAD`` is the single
thread. ``cost_sections`` prints per workload the single-thread time, each configuration's time
and speed-up, and the COST: the configuration with the fewest cores (then the fastest) whose
median beats the single thread, or "not within tested". ``cost_chart`` draws the times.
Cost: O(benchmarks) plus matplotlib's rendering.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

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


def cheapest_beating(candidates: Iterable[T], single: float, cores: Callable[[T], int],
                     seconds: Callable[[T], float]) -> T | None:
    """The candidate with the fewest ``cores`` (then the fewest ``seconds``) whose seconds are
    below ``single``, or None. O(candidates)."""
    beating = [c for c in candidates if seconds(c) < single]
    return min(beating, key=lambda c: (cores(c), seconds(c)), default=None)


def cost_of(benches: Sequence[dict]) -> str:
    """The name of the COST configuration of one workload, or "not within tested"."""
    single = next(b for b in benches if b["name"] == SINGLE_THREAD)["stats"]["median"]
    best = cheapest_beating((b for b in benches if b["name"] != SINGLE_THREAD), single,
                            lambda b: _size(b)[0], lambda b: b["stats"]["median"])
    return best["name"] if best else "not within tested"


@dataclass(frozen=True)
class Timing:
    """One configuration's time for COST: ``family`` None for a single thread by construction
    (not a parallel or distributed system run on one core), else its family's name."""

    name: str
    family: str | None
    cores: int
    seconds: float


@dataclass(frozen=True)
class FamilyCost:
    """The COST of one family: ``cores`` (None: no configuration tried beats the single
    thread), ``tested`` (the most cores tried), ``best`` (its fastest configuration), and the
    single-thread reference."""

    family: str
    cores: int | None
    tested: int
    best: Timing
    single: Timing

    def __str__(self) -> str:
        reference = f"single thread: {self.single.name} {self.single.seconds:.3f} s"
        if self.cores is None:
            return (f"COST {self.family}: not within {self.tested} cores (fastest "
                    f"{self.best.name} {self.best.seconds:.3f} s; {reference})")
        return f"COST {self.family}: {self.cores} cores ({reference})"


def single_thread(timings: Iterable[Timing]) -> Timing | None:
    """The fastest one-core configuration that is no parallel or distributed one."""
    return min((t for t in timings if t.family is None and t.cores == 1),
               key=lambda t: t.seconds, default=None)


def family_costs(timings: Sequence[Timing]) -> list[FamilyCost]:
    """The COST of each family among ``timings``, in order of first appearance (none without a
    single-thread configuration). O(timings)."""
    single = single_thread(timings)
    if single is None:
        return []
    families: dict[str, list[Timing]] = {}
    for timing in timings:
        if timing.family is not None:
            families.setdefault(timing.family, []).append(timing)
    costs = []
    for family, members in families.items():
        beating = cheapest_beating(members, single.seconds, lambda t: t.cores,
                                   lambda t: t.seconds)
        costs.append(FamilyCost(family, beating.cores if beating else None,
                                max(t.cores for t in members),
                                min(members, key=lambda t: t.seconds), single))
    return costs


def cores_chart(timings: Sequence[Timing], path: Path, title: str) -> Path | None:
    """Write seconds against cores, one line per family (a parallel family starts from its
    executor on the local backend, its 1-core point), the single thread as a dashed horizontal
    line, to ``path``; None (nothing written) without a family or a single thread."""
    costs = family_costs(timings)
    if not costs:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axis = pyplot.subplots(figsize=(7, 4.2))
    for cost in costs:
        members = sorted((t for t in timings if t.family == cost.family), key=lambda t: t.cores)
        members = [*one_core_point(cost.family, timings), *members]
        axis.plot([t.cores for t in members], [t.seconds for t in members], marker="o",
                  label=f"{cost.family} (COST: {cost.cores or 'none'})")
    single = costs[0].single
    axis.axhline(single.seconds, linestyle="--", color="black",
                 label=f"single thread: {single.name}")
    axis.set_yscale("log")
    axis.set_xticks(sorted({1, *(t.cores for t in timings)}))
    axis.set_xlabel("cores")
    axis.set_ylabel("median seconds (log scale)")
    axis.set_title(title, fontsize=10)
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return path


PARALLEL_FAMILY = "@parallel:N"


def one_core_point(family: str, timings: Sequence[Timing]) -> list[Timing]:
    """The drawn 1-core point of a parallel family (``X@parallel:N``): ``X`` on the local
    backend, the same executor on one thread, when it was measured and the family has no
    1-core member of its own; else nothing."""
    if not family.endswith(PARALLEL_FAMILY):
        return []
    if any(t.family == family and t.cores == 1 for t in timings):
        return []
    local = family[:-len(PARALLEL_FAMILY)]
    return [t for t in timings if t.name == local and t.family is None and t.cores == 1][:1]


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
