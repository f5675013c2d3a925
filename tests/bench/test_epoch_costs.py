"""bench.epoch_costs: the 13 epochs on a cut workload, interleaved engines, and its table."""

from __future__ import annotations

from bench import epoch_costs
from bench.incremental_workloads import incremental_workload


def test_each_engine_runs_thirteen_epochs_and_the_first_is_the_reference():
    runs = epoch_costs.measure(incremental_workload("tc-graph1000"), ["recompute", "elastic"],
                               rounds=1, facts=400)
    assert [r.engine for r in runs] == ["recompute", "elastic"]
    assert all(len(r.seconds) == len(r.strategies) == 13 for r in runs)
    assert runs[0].strategies == ("bootstrap",) + ("recompute",) * 12
    assert runs[1].strategies[0] == "bootstrap" and all(s > 0 for s in runs[1].seconds)
    lines = epoch_costs.render("tc-graph1000", runs).splitlines()
    assert lines[0] == "tc-graph1000: 13 epochs (ratio to recompute)"
    assert "(1.00x)" in lines[1] and lines[2].lstrip().startswith("elastic")
    assert lines[1].split()[-1].endswith("r")  # the last epoch, a recompute


def test_the_command_line_prints_one_block_per_workload(capsys):
    epoch_costs.main(["--workloads", "tc-graph1000", "--engines", "recompute,bf",
                      "--rounds", "1", "--facts", "200", "--clock", "cpu"])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[2].lstrip().startswith("bf")
