"""The side-by-side table of bench/: its cells, its files and its resumption."""

from __future__ import annotations

import json

import pytest

from bench import side_by_side
from herbrand.comparison.measure import Measurement
from herbrand.comparison.outputs import Output


def _cell(workload, configuration, status="ok", seconds=(1.0,), rss=(10.0,), rows=None):
    return Measurement(workload, configuration, status, "why" if status != "ok" else "",
                       list(seconds) if status == "ok" else [],
                       list(rss) if status == "ok" else [],
                       {"tc": Output(rows, 1)} if rows else None, limit=600.0)


def test_render_marks_timeouts_failures_and_unavailable_configurations():
    cells = [
        _cell("tc-chain2000", "herbrand", seconds=(4.0, 5.0, 6.0), rss=(300.0,), rows=5050),
        _cell("tc-chain2000", "souffle-compiled", seconds=(0.5,), rows=5050),
        _cell("tc-chain2000", "duckdb", status="timeout"),
        _cell("tc-chain2000", "herbrand-parallel2", status="mismatch"),
    ]
    text = side_by_side.render(cells, ["herbrand", "herbrand-parallel2", "souffle-compiled",
                                       "duckdb", "herbrand-native"],
                               ["tc-chain2000"], "settings", {"herbrand-native": "not here"},
                               {"tc-chain2000": "herbrand"})
    row = next(line for line in text.splitlines() if line.startswith("| TC, chain"))
    assert "| 5,050 |" in row and "5.00 s · 300 MB" in row and "0.50 s† · 10 MB" in row
    assert "timeout (> 600 s)" in row and "mismatch [1]" in row
    assert "10.0×" in row  # herbrand default over Soufflé compiled
    assert "native" not in text.split("## Every cell")[0].splitlines()[4]  # no such column
    assert "- native (`herbrand-native`): not here" in text
    assert "1. tc-chain2000, parallel-2: why" in text
    assert "parallel-2 speed-up (default / parallel-2)" in text
    assert row.endswith("| — |")  # parallel-2 did not run correctly: no speed-up


def test_render_shows_the_parallel_speed_up_over_the_default():
    cells = [_cell("tc-chain2000", "herbrand", seconds=(3.0, 4.0, 5.0), rows=5050),
             _cell("tc-chain2000", "herbrand-parallel2", seconds=(2.5,), rows=5050)]
    text = side_by_side.render(cells, ["herbrand", "herbrand-parallel2"], ["tc-chain2000"],
                               "settings", {}, {"tc-chain2000": "herbrand"})
    row = next(line for line in text.splitlines() if line.startswith("| TC, chain"))
    assert row.endswith("| 1.60× |")
    without = side_by_side.render(cells[:1], ["herbrand"], ["tc-chain2000"], "settings", {},
                                  {"tc-chain2000": "herbrand"})
    assert "speed-up" not in without


def test_side_by_side_writes_markdown_and_json_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("HERBRAND_BENCH_CACHE", str(tmp_path / "cache"))
    output = tmp_path / "table.md"
    arguments = ["--size", "smoke", "--workloads", "tc-chain2000", "--configurations",
                 "herbrand,clingo", "--repeat", "1", "--warmup", "0", "-o", str(output)]
    assert side_by_side.main(arguments) == 0
    text = output.read_text()
    assert "| TC, chain of 2,000 edges (`tc-chain2000`) | 5,050 |" in text
    cells = json.loads(output.with_suffix(".json").read_text())["measurements"]
    assert {(c["configuration"], c["status"]) for c in cells} == {("herbrand", "ok"),
                                                                  ("clingo", "ok")}
    before = output.with_suffix(".json").read_text()
    assert side_by_side.main([*arguments, "--resume"]) == 0  # nothing left to run
    assert output.with_suffix(".json").read_text() == before


def test_side_by_side_rejects_unknown_names():
    with pytest.raises(SystemExit, match="unknown workload 'nope'"):
        side_by_side.parse_args(["--workloads", "nope"])
