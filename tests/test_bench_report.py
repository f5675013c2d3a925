from herbrand.bench_report import render_report


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
