"""bench.update_costs: the per-update protocol on a cut workload, and its table."""

from __future__ import annotations

from bench import update_costs
from bench.incremental_workloads import incremental_workload


def test_every_engine_is_measured_on_a_cut_workload_and_rendered():
    full, changed, results = update_costs.measure(incremental_workload("tc-graph1000"),
                                                  ["recompute", "dred"], repeat=1, facts=400,
                                                  clock="wall")
    assert full > 0 and changed == 4  # 1% of 400 facts
    assert [r.engine for r in results] == ["recompute", "dred"]
    assert all(r.bootstrap > 0 and r.insert > 0 and r.delete > 0 for r in results)
    assert all(r.fixed_insert > 0 and r.fixed_delete > 0 for r in results)
    assert results[0].state == 0  # recompute keeps nothing beyond the materialization
    text = update_costs.render("tc-graph1000", full, changed, results)
    assert text.splitlines()[0].startswith("tc-graph1000: warm materialize")
    assert "dred" in text.splitlines()[2] and "%)" in text and "fixed" in text


def test_the_command_line_prints_one_block_per_workload(capsys):
    update_costs.main(["--workloads", "tc-graph1000", "--engines", "bf", "--repeat", "1",
                       "--facts", "200", "--clock", "cpu"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("tc-graph1000:") and lines[1].lstrip().startswith("bf")
