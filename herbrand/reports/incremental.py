"""The incremental sections of ``herbrand bench report`` (from ``bench/bench_incremental.py``).

- ``incremental_sections(results, timelines)``: markdown for the epoch workloads (one table per
  workload: each engine's seconds per epoch, marked where it switched to a bootstrap, its total,
  its total over recompute's and its state over the materialization's bytes after the last
  epoch, with the timeline image when given) and for memory (each engine's state next to the materialization's
  size, from the protocol's bootstrap steps, as Table 2 of the elastic paper).
- ``epoch_timelines(results, directory, stem)``: one PNG per epoch workload, seconds per epoch
  for each engine on a log scale, recompute drawn as the dashed reference line.

Benchmarks are recognised by their groups: ``epochs <workload>`` and ``incremental <workload>
<share>%`` with ``bootstrap`` steps. Cost: O(benchmarks) plus matplotlib's rendering.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

EPOCHS = "epochs "
PROTOCOL = "incremental "
REFERENCE = "recompute"
SWITCHED_MARK = "*"  # after an epoch's seconds: that epoch switched to a bootstrap


def _epoch_groups(results: dict) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for bench in results.get("benchmarks", []):
        group = bench.get("group") or ""
        if group.startswith(EPOCHS) and "epoch_seconds" in bench.get("extra_info", {}):
            groups.setdefault(group[len(EPOCHS):], []).append(bench)
    return groups


def _epoch_table(workload: str, benches: list[dict], timeline: str | None) -> list[str]:
    reference = next((b for b in benches if b["name"] == REFERENCE), None)
    reference_total = sum(reference["extra_info"]["epoch_seconds"]) if reference else None
    epochs = len(benches[0]["extra_info"]["epoch_seconds"])
    lines = [f"## Epochs: {workload}", ""]
    if timeline:
        lines += [f"![seconds per epoch, {workload}]({timeline})", ""]
    lines += ["| engine | " + " | ".join(str(i) for i in range(epochs))
              + " | total | / recompute | state / materialization |",
              "|---|" + "---:|" * (epochs + 3)]
    for bench in sorted(benches, key=lambda b: b["name"]):
        extra = bench["extra_info"]
        seconds = extra["epoch_seconds"]
        strategies = extra.get("epoch_strategies") or [""] * len(seconds)
        ratio = f"{sum(seconds) / reference_total:.2f}" if reference_total else "-"
        state = (f"{extra['state_bytes'] / extra['bytes']:.2f}" if extra.get("bytes")
                 and "state_bytes" in extra else "-")
        cells = [f"{s:.3f}" + (SWITCHED_MARK if strategy.startswith("switched") else "")
                 for s, strategy in zip(seconds, strategies, strict=True)]
        lines.append(f"| {bench['name']} | " + " | ".join(cells)
                     + f" | {sum(seconds):.3f} | {ratio} | {state} |")
    lines.append("")
    if any(SWITCHED_MARK in line for line in lines):
        lines += [f"{SWITCHED_MARK}: the update was abandoned and the engine bootstrapped "
                  "(elastic's switch).", ""]
    return lines


def _memory_table(results: dict) -> list[str]:
    rows = []
    for bench in results.get("benchmarks", []):
        group, extra = bench.get("group") or "", bench.get("extra_info", {})
        engine, _, step = bench["name"].rpartition(" ")
        if group.startswith(PROTOCOL) and step == "bootstrap" and "state_bytes" in extra:
            ratio = extra["state_bytes"] / extra["bytes"] if extra["bytes"] else float("nan")
            rows.append(f"| {group[len(PROTOCOL):]} | {engine} | {extra['state_tuples']:,} | "
                        f"{extra['state_bytes']:,} | {extra['tuples']:,} | {extra['bytes']:,} | "
                        f"{ratio:.2f} |")
    if not rows:
        return []
    return ["## Memory: engine state next to the materialization", "",
            "| workload | engine | state tuples | state bytes | tuples | bytes | state / bytes |",
            "|---|---|---:|---:|---:|---:|---:|", *sorted(rows), ""]


def incremental_sections(results: dict, timelines: Mapping[str, str] | None = None) -> list[str]:
    """Markdown lines of the epoch tables and the memory table (none when the results hold no
    incremental benchmarks); ``timelines``: workload -> image path to link."""
    lines = []
    for workload, benches in sorted(_epoch_groups(results).items()):
        lines += _epoch_table(workload, benches, (timelines or {}).get(workload))
    return lines + _memory_table(results)


def epoch_timelines(results: dict, directory: Path, stem: str) -> dict[str, str]:
    """Write ``<stem>-epochs-<workload>.png`` into ``directory`` for each epoch workload;
    workload -> file name."""
    groups = _epoch_groups(results)
    if not groups:
        return {}
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    written = {}
    for workload, benches in sorted(groups.items()):
        figure, axis = pyplot.subplots(figsize=(8, 4))
        for bench in sorted(benches, key=lambda b: b["name"]):
            seconds = bench["extra_info"]["epoch_seconds"]
            is_reference = bench["name"] == REFERENCE
            axis.plot(range(len(seconds)), seconds, label=bench["name"], marker=".",
                      linestyle="--" if is_reference else "-",
                      color="black" if is_reference else None)
        axis.set_yscale("log")
        axis.set_xlabel("epoch (0: initial evaluation)")
        axis.set_ylabel("seconds (log scale)")
        axis.set_title(f"{workload}: seconds per epoch; dashed: {REFERENCE}", fontsize=10)
        axis.legend(fontsize=8)
        figure.tight_layout()
        name = f"{stem}-epochs-{workload}.png"
        figure.savefig(directory / name, dpi=110)
        pyplot.close(figure)
        written[workload] = name
    return written
