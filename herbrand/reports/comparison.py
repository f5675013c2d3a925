"""The report of ``herbrand compare``: a table, COST lines, CSV, JSON and PNG charts.

``rows(comparison)`` is the table as records with the columns of ``COLUMNS``:

- ``configuration``, ``cores``, ``status`` (ok, unavailable, error, timeout, memory,
  mismatch) and ``detail`` (why, when not ok);
- ``runs``, ``median_s``, ``min_s``, ``max_s``: whole-process seconds of the timed runs;
- ``peak_rss_mb``: the largest peak resident memory of those runs;
- ``warm_s``: in-process seconds of ``herbrand.materialize`` (herbrand configurations);
- ``tuples``, ``tuples_per_s``: the result's size (the headline relation, else every output)
  over the median;
- ``x_fastest``: the median over the fastest configuration's.

``render`` prints them with the skipped combinations, the configurations that could not run,
the disagreements and the COST lines; ``write_report`` writes ``compare.csv``,
``compare.json`` (with the machine's description) and the charts ``compare-times.png`` (time
per configuration) and ``compare-cores.png`` (time against cores, when there are parallel or
distributed configurations). Cost: O(configurations) plus matplotlib's rendering.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from herbrand.comparison.runner import Comparison
from herbrand.reports.charts import group_bar_chart
from herbrand.reports.cost import cores_chart
from herbrand.reports.machine import machine_description, machine_line

COLUMNS = ("configuration", "cores", "status", "runs", "median_s", "min_s", "max_s",
           "peak_rss_mb", "warm_s", "tuples", "tuples_per_s", "x_fastest", "detail")
_HEADINGS = ("configuration", "cores", "median s", "min s", "max s", "peak RSS MB", "warm s",
             "tuples/s", "x fastest")


def rows(comparison: Comparison) -> list[dict[str, object]]:
    """One record per configuration, in the comparison's order (see the module's docstring)."""
    tuples = comparison.tuples()
    fastest = min((m.median for m in comparison.measurements if m.ok), default=None)
    records = []
    for configuration, m in zip(comparison.configurations, comparison.measurements,
                                strict=True):
        record = dict.fromkeys(COLUMNS)
        record.update(configuration=m.configuration, cores=configuration.cores,
                      status=m.status, detail=m.detail, runs=len(m.seconds),
                      warm_s=min(m.warm) if m.warm else None, tuples=tuples)
        if m.ok:
            record.update(median_s=m.median, min_s=min(m.seconds), max_s=max(m.seconds),
                          peak_rss_mb=m.rss, x_fastest=m.median / fastest,
                          tuples_per_s=tuples / m.median if tuples is not None else None)
        records.append(record)
    return records


def _cell(value: object, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.0f}" if digits == 0 else f"{value:.{digits}f}"
    return str(value)


def render(comparison: Comparison) -> str:
    """The table and the lines under it, as ``herbrand compare`` prints them."""
    table = []
    for r in rows(comparison):
        if r["status"] == "ok":
            cells = [_cell(r["median_s"]), _cell(r["min_s"]), _cell(r["max_s"]),
                     _cell(r["peak_rss_mb"], 0), _cell(r["warm_s"]),
                     _cell(r["tuples_per_s"], 0), f"{r['x_fastest']:.2f}"]
        else:
            cells = [r["status"], "", "", "", _cell(r["warm_s"]), "", ""]
        table.append([str(r["configuration"]), _cell(r["cores"]), *cells])
    widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(_HEADINGS)]
    lines = [f"{comparison.target.name}: {_cell(comparison.tuples())} tuples, "
             f"{comparison.repeat} whole process(es) per configuration"]
    for row in [list(_HEADINGS), *table]:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    lines += [f"skipped: {line}" for line in comparison.skipped]
    lines += comparison.unavailable()
    lines += [f"failed: {m.configuration}: {m.status}: {m.detail}"
              for m in comparison.measurements if m.status in ("error", "timeout", "memory")]
    lines += [f"DISAGREES with {comparison.reference}: {m.configuration}: {m.detail}"
              for m in comparison.disagreements()]
    lines += [str(cost) for cost in comparison.costs()]
    return "\n".join(lines) + "\n"


def to_frame(comparison: Comparison):
    """The rows as a pandas DataFrame with the columns of COLUMNS (the ``frames`` extra)."""
    import pandas

    return pandas.DataFrame(rows(comparison), columns=list(COLUMNS))


def write_report(comparison: Comparison, directory: Path) -> list[Path]:
    """Write ``compare.csv``, ``compare.json`` and the charts into ``directory`` (created);
    returns the paths written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    records = rows(comparison)
    table = directory / "compare.csv"
    with open(table, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(records)
    machine = machine_description()
    document = {
        "target": {"name": comparison.target.name, "program": str(comparison.target.program),
                   "facts": str(comparison.target.facts), "tuples": comparison.tuples()},
        "machine": machine, "machine_line": machine_line(machine),
        "repeat": comparison.repeat, "seconds": comparison.seconds,
        "reference": comparison.reference, "rows": records,
        "skipped": list(comparison.skipped), "unavailable": comparison.unavailable(),
        "cost": [str(cost) for cost in comparison.costs()],
    }
    summary = directory / "compare.json"
    summary.write_text(json.dumps(document, indent=1))
    written = [table, summary]
    finished = [{"name": r["configuration"], "stats": {"median": r["median_s"]},
                 "extra_info": {"peer": c.peer is not None}}
                for r, c in zip(records, comparison.configurations, strict=True)
                if r["status"] == "ok"]
    if finished:
        written.append(group_bar_chart({comparison.target.name: finished},
                                       directory / "compare-times.png",
                                       "whole-process median seconds per configuration"))
    cores = cores_chart(comparison.timings(), directory / "compare-cores.png",
                        f"{comparison.target.name}: seconds against cores")
    return written + ([cores] if cores else [])
