import json

from herbrand.bench_report import render_report, write_report


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
