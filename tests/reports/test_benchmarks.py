import json

import pytest

from herbrand.cli import main
from herbrand.reports.benchmarks import render_report, write_report


def test_report_groups_by_workload_and_shows_ratios():
    results = {"benchmarks": [
        {"group": "tc", "name": "slow", "stats": {"median": 2.0, "min": 1.9, "rounds": 3},
         "extra_info": {"tuples": 11532}},
        {"group": "tc", "name": "fast", "stats": {"median": 1.0, "min": 0.9, "rounds": 3}},
    ]}
    text = render_report(results)
    assert "## tc" in text
    fast, slow = text.index("| fast |"), text.index("| slow |")
    assert fast < slow
    assert "| slow | 2.0000 | 1.9000 | 3 | 2.00 | tuples=11,532 |" in text


def test_peers_get_a_ratio_column_and_the_chart_is_written(tmp_path):
    results = {"benchmarks": [
        {"group": "tc", "name": "herbrand", "stats": {"median": 1.0, "min": 0.9, "rounds": 3}},
        {"group": "tc", "name": "clingo", "stats": {"median": 4.0, "min": 3.9, "rounds": 3},
         "extra_info": {"peer": True}},
    ]}
    text = render_report(results)
    assert "| / clingo |" in text
    assert "| herbrand | 1.0000 | 0.9000 | 3 | 1.00 | 0.25 |" in text
    source = tmp_path / "results.json"
    source.write_text(json.dumps(results))
    write_report(source, str(tmp_path / "report.md"))
    assert "![median time per workload](report.png)" in (tmp_path / "report.md").read_text()
    assert (tmp_path / "report.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(("content", "message"), [
    ("not json", "not a pytest-benchmark JSON file"),
    ("{}", "no benchmarks in this file"),
    ('{"benchmarks": []}', "no benchmarks in this file"),
    ('[1, 2]', "no benchmarks in this file"),
    ('{"benchmarks": [{"name": "x"}]}', "benchmark 1 has no name and stats"),
])
def test_a_file_that_is_not_benchmark_results_is_one_line_naming_it(tmp_path, capsys, content,
                                                                    message):
    source = tmp_path / "results.json"
    source.write_text(content)
    assert main(["bench", "report", str(source)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{source}: {message}" in err


def test_the_charts_written_beside_the_report_are_named(tmp_path, capsys):
    source = tmp_path / "results.json"
    source.write_text(json.dumps({"benchmarks": [
        {"group": "tc", "name": "a", "stats": {"median": 1.0, "min": 0.9, "rounds": 3}}]}))
    assert main(["bench", "report", str(source), "-o", str(tmp_path / "r.md")]) == 0
    assert f"chart: {tmp_path / 'r.png'}" in capsys.readouterr().err
    assert (tmp_path / "r.png").is_file()
