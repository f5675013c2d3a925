"""The COST section: single-thread time, each configuration, and the COST itself."""

from __future__ import annotations

from herbrand.reports.cost import cost_chart, cost_of, cost_sections


def _bench(name: str, median: float, cores: int) -> dict:
    return {"name": name, "stats": {"median": median}, "extra_info": {"cores": cores}}


GROUPS = {
    "cost-tc": [_bench("local-1thread", 2.0, 1), _bench("spark-local[1]", 9.0, 1),
                _bench("spark-local[2]", 1.5, 2), _bench("parallel-2", 1.0, 2)],
    "cost-rdfs": [_bench("local-1thread", 1.0, 1), _bench("spark-local[2]", 5.0, 2)],
    "other": [_bench("x", 1.0, 1)],
}


def test_cost_is_the_smallest_configuration_beating_one_thread():
    assert cost_of(GROUPS["cost-tc"]) == "parallel-2"
    assert cost_of(GROUPS["cost-rdfs"]) == "not within tested"


def test_sections_print_single_thread_times_and_costs():
    text = "\n".join(cost_sections(GROUPS, chart="c.png"))
    assert "| tc | 2.000 | spark-local[1] | 1 | 9.000 | 0.222 |" in text
    assert "| rdfs | not within tested |" in text and "![COST](c.png)" in text
    assert cost_sections({"other": GROUPS["other"]}) == []


def test_chart_is_written(tmp_path):
    assert cost_chart(GROUPS, tmp_path / "cost.png").stat().st_size > 0
    assert cost_chart({}, tmp_path / "none.png") is None
