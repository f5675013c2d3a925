"""The incremental sections of the benchmark report: epoch tables, timelines, memory."""

from __future__ import annotations

from herbrand.reports.incremental import epoch_timelines, incremental_sections


def _bench(group, name, **extra):
    return {"group": group, "name": name, "extra_info": extra,
            "stats": {"median": 1.0, "min": 1.0, "rounds": 1}}


RESULTS = {"benchmarks": [
    _bench("epochs tc", "recompute", epoch_seconds=[1.0, 1.0, 2.0]),
    _bench("epochs tc", "counting", epoch_seconds=[1.5, 0.1, 0.4], state_bytes=250, bytes=100),
    _bench("epochs tc", "elastic", epoch_seconds=[1.0, 0.1, 1.2],
           epoch_strategies=["bootstrap", "update", "switched-to-bootstrap"]),
    _bench("incremental tc 99%", "counting bootstrap", state_tuples=10, state_bytes=300,
           tuples=5, bytes=100),
    _bench("incremental tc 99%", "counting insert", state_tuples=10, state_bytes=300,
           tuples=5, bytes=100),
    _bench("other", "x"),
]}


def test_epoch_tables_give_totals_over_recompute_and_link_the_timeline():
    text = "\n".join(incremental_sections(RESULTS, {"tc": "t.png"}))
    assert "## Epochs: tc" in text and "![seconds per epoch, tc](t.png)" in text
    assert "| counting | 1.500 | 0.100 | 0.400 | 2.000 | 0.50 | 2.50 |" in text
    assert "| recompute | 1.000 | 1.000 | 2.000 | 4.000 | 1.00 | - |" in text


def test_epochs_that_switched_to_a_bootstrap_are_marked():
    text = "\n".join(incremental_sections(RESULTS))
    assert "| elastic | 1.000 | 0.100 | 1.200* | 2.300 | 0.57 | - |" in text
    assert "*: the update was abandoned and the engine bootstrapped" in text


def test_memory_table_lists_bootstrap_steps_only():
    text = "\n".join(incremental_sections(RESULTS))
    assert "| tc 99% | counting | 10 | 300 | 5 | 100 | 3.00 |" in text
    assert text.count("| tc 99% |") == 1


def test_no_incremental_benchmarks_no_sections(tmp_path):
    results = {"benchmarks": [_bench("other", "x")]}
    assert incremental_sections(results) == []
    assert epoch_timelines(results, tmp_path, "r") == {}


def test_timelines_are_written_per_workload(tmp_path):
    written = epoch_timelines(RESULTS, tmp_path, "report")
    assert written == {"tc": "report-epochs-tc.png"}
    assert (tmp_path / "report-epochs-tc.png").read_bytes()[:4] == b"\x89PNG"
