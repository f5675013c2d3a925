"""The whole-process harness of bench/: the runner (time, peak RSS, timeout, memory limit), the
output check, the configurations, the workloads' files and the side-by-side table."""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path

import pytest

from bench import side_by_side
from bench.processes import (
    CONFIGURATIONS,
    Measurement,
    Output,
    compare,
    file_summary,
    measure,
    output_summary,
    run_process,
)
from bench.workloads import WORKLOADS, prepare, spec

PY = sys.executable


def python(code: str) -> list[str]:
    return [PY, "-c", code]


def test_run_measures_time_and_the_childs_own_peak_rss(tmp_path):
    ballast = bytearray(300 * 2**20)  # this process is big: a child must not report it
    ballast[::4096] = b"x" * len(ballast[::4096])
    small = run_process(python("pass"), cwd=tmp_path / "small")
    big = run_process(python("b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096])"),
                      cwd=tmp_path / "big")
    assert small.status == big.status == "ok"
    assert small.peak_rss_mb < 100 < 200 < big.peak_rss_mb < 290
    assert 0 < small.seconds < 10
    del ballast


def test_run_reports_exit_status_and_stderr(tmp_path):
    run = run_process(python("import sys; print('boom', file=sys.stderr); sys.exit(3)"),
                      cwd=tmp_path)
    assert (run.status, run.returncode) == ("error", 3)
    assert "boom" in run.stderr_tail
    missing = run_process(["no-such-program-here"], cwd=tmp_path)
    assert (missing.status, missing.returncode) == ("error", 127)


def test_run_stops_at_the_timeout(tmp_path):
    run = run_process(python("import time; time.sleep(30)"), cwd=tmp_path, timeout=0.5)
    assert run.status == "timeout"
    assert run.seconds < 10


def test_run_stops_past_the_memory_limit(tmp_path):
    code = ("import time; b = bytearray(400 * 2**20); b[::4096] = b'x' * len(b[::4096]); "
            "time.sleep(30)")
    run = run_process(python(code), cwd=tmp_path, memory_limit_mb=150)
    assert run.status == "memory"
    assert run.seconds < 20


def test_file_summary_is_independent_of_row_order_and_line_endings(tmp_path):
    rows = [f"{i}\t{i * 7 % 13}" for i in range(1000)]
    one, other, crlf = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    one.write_text("\n".join(rows) + "\n")
    other.write_text("\n".join(reversed(rows)))  # no final newline
    crlf.write_bytes(("\r\n".join(rows) + "\r\n").encode())
    summaries = {file_summary(p, chunk_bytes=97) for p in (one, other, crlf)}
    assert summaries == {Output(1000, sum(zlib.crc32(r.encode()) for r in rows))}
    (tmp_path / "empty.csv").write_text("")
    assert file_summary(tmp_path / "empty.csv") == Output(0, 0)


def test_output_summary_reads_files_and_printed_counts(tmp_path):
    (tmp_path / "tc.csv").write_text("1\t2\n")
    stdout = tmp_path / "stdout.txt"
    stdout.write_text("banner line\nsize\t42\ntc\t99\n")
    summary = output_summary(tmp_path, stdout)
    assert summary["tc"].rows == 1 and summary["tc"].digest is not None  # the file wins
    assert summary["size"] == Output(42)
    assert "banner" not in " ".join(summary)


def test_compare():
    reference = {"tc": Output(3, 10), "other": Output(0, 0)}
    assert compare({"tc": Output(3, 10), "other": Output(0, 0)}, {"tc": 3}, reference, True) \
        is None
    assert "expected 4" in compare({"tc": Output(3, 10)}, {"tc": 4}, None, False)
    assert "other rows" in compare({"tc": Output(3, 11)}, {}, reference, False)
    assert compare({"tc": Output(3)}, {}, reference, False) is None  # a peer's count
    assert "missing" in compare({"tc": Output(3, 10)}, {}, reference, True)
    assert "reference 3" in compare({"tc": Output(2)}, {}, reference, False)
    assert compare({}, {}, None, False) == "no output"


def test_every_workload_has_a_smoke_size_or_is_heavy():
    for name in WORKLOADS:
        assert "smoke" in spec(name).sizes or name in ("tc-gnutella08", "galen-el")
        assert spec(name).title


def test_prepare_writes_the_files_once(tmp_path):
    prepared = prepare("tc-chain2000", "smoke", tmp_path)
    assert prepared.program.read_text().startswith(".decl e")
    assert prepared.inputs == {"e": prepared.facts / "e.facts"}
    assert len(prepared.inputs["e"].read_text().splitlines()) == 100
    assert prepared.expected == {"tc": 5050}
    stamp = prepared.inputs["e"].stat().st_mtime_ns
    assert prepare("tc-chain2000", "smoke", tmp_path).inputs["e"].stat().st_mtime_ns == stamp
    with pytest.raises(ValueError, match="no 'smoke' size"):
        prepare("galen-el", "smoke", tmp_path)


def test_measure_herbrand_and_a_peer_check_the_output(tmp_path):
    prepared = prepare("tc-chain2000", "smoke", tmp_path / "cache")
    herbrand = measure(CONFIGURATIONS["herbrand"], prepared, scratch=tmp_path / "run",
                       repeat=2, warmup=0)
    assert herbrand.ok, herbrand.detail
    assert len(herbrand.seconds) == 2 and herbrand.rss > 10
    assert herbrand.outputs["tc"].rows == 5050 and herbrand.tuples("tc") == 5050
    wrong = {"tc": Output(5050, herbrand.outputs["tc"].digest + 1)}
    again = measure(CONFIGURATIONS["herbrand"], prepared, scratch=tmp_path / "run", repeat=1,
                    warmup=0, reference=wrong)
    assert (again.status, again.detail) == ("mismatch", "tc: same size as the reference, "
                                                        "other rows")
    peer = measure(CONFIGURATIONS["clingo"], prepared, scratch=tmp_path / "run", repeat=1,
                   warmup=0, reference=herbrand.outputs)
    assert peer.ok, peer.detail
    assert peer.outputs == {"tc": Output(5050)}
    unavailable = measure(CONFIGURATIONS["duckdb"], prepare("andersen5000", "smoke", tmp_path),
                          scratch=tmp_path / "run")
    assert unavailable.status == "unavailable"


def test_measure_stops_at_the_first_failed_run(tmp_path):
    prepared = prepare("counter100k", "smoke", tmp_path / "cache")
    result = measure(CONFIGURATIONS["herbrand"], prepared, scratch=tmp_path / "run",
                     timeout=0.01)
    assert result.status == "timeout" and not result.seconds and result.limit == 0.01


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


def test_warm_prints_in_process_seconds(tmp_path):
    from bench.processes import measure_warm

    prepared = prepare("counter100k", "smoke", tmp_path / "cache")
    seconds = measure_warm(CONFIGURATIONS["herbrand"], prepared, scratch=tmp_path / "w",
                           repeat=2)
    assert seconds is not None and len(seconds) == 2
    assert measure_warm(CONFIGURATIONS["clingo"], prepared, scratch=tmp_path / "w") is None


def test_launcher_is_importable_without_site():
    launcher = Path(__file__).resolve().parents[2] / "bench" / "launch.py"
    assert "import os\nimport sys\nimport time\n" in launcher.read_text()
