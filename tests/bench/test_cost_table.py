"""The COST table of bench/: its reference, its COST per family and its rendering (no timing)."""

from __future__ import annotations

from bench import cost_table
from herbrand.comparison.configurations import parse_configuration
from herbrand.comparison.measure import Measurement

CORES = {"native": 1, "native@parallel:2": 2, "spark:local[1]": 1, "spark:local[2]": 2,
         "spark:local-cluster[2,1,1024]": 2}


def _cells(seconds: dict[str, float | str]) -> dict[str, Measurement]:
    return {name: Measurement("w", name, seconds=[value], peak_rss_mb=[100.0])
            if isinstance(value, float) else Measurement("w", name, value, "why")
            for name, value in seconds.items()}


def test_the_reference_is_the_fastest_one_core_configuration_of_any_kind():
    row = cost_table.cost_row("w", 10, _cells({
        "native": 4.0, "native@parallel:2": 3.0, "spark:local[1]": 2.5,
        "spark:local[2]": 9.0, "spark:local-cluster[2,1,1024]": 2.0}), CORES)
    assert row.reference == "spark:local[1]"
    assert row.costs == {"herbrand native": "never", "spark local[N]": "1 core",
                         "spark local-cluster": "2 cores"}


def test_a_family_beating_the_reference_at_two_cores_and_one_that_never_does():
    row = cost_table.cost_row("w", 10, _cells({
        "native": 2.0, "native@parallel:2": 1.5, "spark:local[1]": 20.0,
        "spark:local[2]": 12.0, "spark:local-cluster[2,1,1024]": "timeout"}), CORES)
    assert row.reference == "native"
    assert row.costs == {"herbrand native": "1 core", "spark local[N]": "never"}


def test_nothing_that_ran_on_one_core_means_no_reference_and_no_cost():
    row = cost_table.cost_row("w", None, _cells({"native": "error", "spark:local[2]": 1.0}),
                              CORES)
    assert (row.reference, row.costs) == (None, {})


def test_render_has_a_row_per_workload_and_the_failures_below():
    cells = _cells({"native": 2.0, "native@parallel:2": 1.5, "spark:local[1]": "timeout"})
    text = cost_table.render([cost_table.cost_row("tc-x", 1234, cells, CORES)])
    header, rule, row, blank, note = text.splitlines()
    assert header.split(" | ")[1:3] == ["tuples", "native"]
    assert row.startswith("| tc-x | 1,234 | 2.0 s · 100 MB | 1.5 s · 100 MB | timeout | — |")
    assert row.endswith("| native (2.0 s) | 1 core | — | — |")
    assert note == "- tc-x, spark:local[1]: timeout: why"


def test_the_configurations_parse_and_have_the_cores_of_the_table():
    assert {name: parse_configuration(name).cores for name in cost_table.CONFIGURATIONS} \
        == CORES
