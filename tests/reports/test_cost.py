"""The COST section: single-thread time, each configuration, and the COST itself."""

from __future__ import annotations

from herbrand.reports.cost import (
    Timing,
    cores_chart,
    cost_chart,
    cost_of,
    cost_sections,
    family_costs,
    one_core_point,
    single_thread,
)


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


# -- COST per family, as herbrand compare reports it -----------------------------------------

TIMINGS = [
    Timing("native", None, 1, 2.0),
    Timing("souffle", None, 1, 1.5),  # the best single thread, of any kind
    Timing("native@parallel:1", "native@parallel:N", 1, 2.2),
    Timing("native@parallel:2", "native@parallel:N", 2, 1.2),
    Timing("native@parallel:4", "native@parallel:N", 4, 0.7),
    Timing("spark:local[1]", "spark:local[N]", 1, 1.0),  # one core of a distributed system
    Timing("spark:local[2]", "spark:local[N]", 2, 9.0),
    Timing("spark:local-cluster[2,2,1024]", "spark:local-cluster[E,C,...]", 4, 3.0),
]


def test_cost_per_family_is_the_fewest_cores_beating_the_best_single_thread():
    costs = {c.family: c for c in family_costs(TIMINGS)}
    assert single_thread(TIMINGS).name == "souffle"  # spark on one core is no single thread
    assert costs["native@parallel:N"].cores == 2
    assert str(costs["native@parallel:N"]) == ("COST native@parallel:N: 2 cores (single "
                                               "thread: souffle 1.500 s)")
    assert costs["spark:local[N]"].cores == 1  # it beats the single thread on one core
    cluster = costs["spark:local-cluster[E,C,...]"]
    assert (cluster.cores, cluster.tested) == (None, 4)
    assert str(cluster).startswith("COST spark:local-cluster[E,C,...]: not within 4 cores")


def test_no_cost_without_a_single_thread_and_chart_of_cores(tmp_path):
    assert family_costs([t for t in TIMINGS if t.family is not None]) == []
    assert cores_chart(TIMINGS, tmp_path / "cores.png", "t").stat().st_size > 0
    assert cores_chart(TIMINGS[:2], tmp_path / "none.png", "t") is None


def test_a_parallel_family_is_drawn_from_its_executor_on_one_local_thread():
    local = [Timing("relational/btree", None, 1, 3.0), Timing("native", None, 1, 2.0),
             Timing("native@parallel:2", "native@parallel:N", 2, 1.2)]
    assert one_core_point("native@parallel:N", local) == [local[1]]
    assert one_core_point("native@parallel:N", TIMINGS) == []  # it has a 1-core member
    assert one_core_point("spark:local[N]", local + TIMINGS) == []  # not a parallel family
    assert one_core_point("relational/hash@parallel:N", local) == []  # not measured locally
