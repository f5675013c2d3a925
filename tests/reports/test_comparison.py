"""The report of herbrand compare: rows, the printed table, CSV, JSON and charts."""

from __future__ import annotations

import csv
import json

from herbrand.comparison.configurations import parse_configuration
from herbrand.comparison.measure import Measurement
from herbrand.comparison.outputs import Output
from herbrand.comparison.runner import Comparison
from herbrand.reports.comparison import COLUMNS, render, rows, to_frame, write_report
from herbrand.workloads.catalogue import Prepared


def _measured(name, seconds, status="ok", detail="", warm=None):
    return Measurement("tc", name, status, detail, list(seconds), [50.0] * len(seconds),
                       {"tc": Output(100, 7)} if status == "ok" else None, warm)


COMPARISON = Comparison(
    Prepared("tc", "", "tc.dl", "facts", headline="tc"),
    tuple(parse_configuration(c) for c in ("native", "native@parallel:2", "souffle",
                                           "duckdb")),
    (_measured("native", [2.0, 1.0, 3.0], warm=[0.5]), _measured("native@parallel:2", [1.5]),
     _measured("souffle", [4.0]), _measured("duckdb", [], "unavailable", "no duckdb here")),
    reference="native", skipped=("native takes no index (one configuration per backend)",),
    repeat=3)


def test_rows_hold_times_memory_throughput_and_ratios():
    native, parallel, souffle, duckdb = rows(COMPARISON)
    assert (native["median_s"], native["min_s"], native["max_s"]) == (2.0, 1.0, 3.0)
    assert (native["warm_s"], native["tuples"], native["tuples_per_s"]) == (0.5, 100, 50.0)
    assert parallel["x_fastest"] == 1.0 and souffle["x_fastest"] == 4.0 / 1.5
    assert (duckdb["status"], duckdb["median_s"], duckdb["detail"]) == (
        "unavailable", None, "no duckdb here")


def test_render_prints_the_table_and_the_lines_under_it():
    text = render(COMPARISON)
    assert text.splitlines()[0] == "tc: 100 tuples, 3 whole process(es) per configuration"
    assert any(line.split()[:4] == ["native@parallel:2", "2", "1.500", "1.500"]
               for line in text.splitlines())
    assert "skipped: native takes no index (one configuration per backend)" in text
    assert "not run: duckdb: no duckdb here" in text
    assert ("COST native@parallel:N: 2 cores (single thread: native 2.000 s)") in text


def test_frame_and_files(tmp_path):
    frame = to_frame(COMPARISON)
    assert list(frame.columns) == list(COLUMNS) and len(frame) == 4
    written = write_report(COMPARISON, tmp_path / "out")
    assert [p.name for p in written] == ["compare.csv", "compare.json", "compare-times.png",
                                         "compare-cores.png"]
    with open(tmp_path / "out" / "compare.csv") as handle:
        assert next(csv.DictReader(handle))["median_s"] == "2.0"
    document = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert document["machine"]["cpus"] >= 1 and "numba" in document["machine"]["versions"]
    assert document["cost"] == ["COST native@parallel:N: 2 cores (single thread: native "
                                "2.000 s)"]
    assert all(p.stat().st_size > 0 for p in written)
