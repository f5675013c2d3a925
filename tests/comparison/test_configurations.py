"""The configuration syntax, its one-line errors, and the grid of herbrand compare."""

from __future__ import annotations

import os

import pytest

from herbrand.comparison.configurations import (
    Configuration,
    grid,
    parse_configuration,
)
from herbrand.framework.errors import UsageError


@pytest.mark.parametrize(("text", "expected"), [
    ("native", Configuration("native")),
    ("relational/btree", Configuration("relational", "btree")),
    ("native/spine", Configuration("native", "spine")),
    ("native/hash@parallel:2", Configuration("native", "hash", "parallel", 2)),
    ("/hash", Configuration("relational", "hash")),  # the evaluator herbrand run would use
    ("@parallel:2", Configuration("native", backend="parallel", workers=2)),
    ("relational/spine@parallel:4", Configuration("relational", "spine", "parallel", 4)),
    ("spark:local[2]", Configuration(backend="spark", master="local[2]")),
    ("@spark:local-cluster[2,1,1024]",
     Configuration(backend="spark", master="local-cluster[2,1,1024]")),
    ("souffle", Configuration(peer="souffle")),
    ("duckdb:2", Configuration(peer="duckdb", threads=2)),
])
def test_syntax_parses_and_prints_back(text, expected):
    parsed = parse_configuration(text)
    assert parsed == expected
    assert parse_configuration(str(parsed)) == parsed


@pytest.mark.parametrize(("text", "message"), [
    ("natve", "unknown evaluator 'natve'; known: native, relational, substitution"),
    ("relational/btre", "unknown index 'btre'"),
    ("substitution/btree", "evaluator 'substitution' does not use an index"),
    ("native@paralel:2", "unknown backend 'paralel'"),
    ("native@parallel:two", "workers must be a whole number >= 1, got 'two'"),
    ("relational@spark:local[2]", "backend 'spark' runs its own plans: no evaluator or index"),
    ("", "empty"),
])
def test_bad_configurations_are_one_line_usage_errors(text, message):
    with pytest.raises(UsageError) as error:
        parse_configuration(text)
    assert str(error.value).startswith(f"configuration {text!r}: ")
    assert message in str(error.value) and "\n" not in str(error.value)


def test_cores_and_families():
    def of(text):
        parsed = parse_configuration(text)
        return parsed.cores, parsed.family

    assert of("native") == (1, None) and of("souffle") == (1, None)
    assert of("relational/hash@parallel:2") == (2, "relational/hash@parallel:N")
    assert of("spark:local[3]") == (3, "spark:local[N]")
    assert of("spark:local[*]")[0] == os.cpu_count()
    assert of("spark:local-cluster[2,3,1024]") == (6, "spark:local-cluster[E,C,...]")
    assert of("spark:spark://host:7077") == (None, "spark:spark://host:7077")
    assert of("duckdb:4") == (4, "duckdb:N") and of("duckdb") == (1, None)


def test_grid_pairs_indexes_with_the_evaluators_that_take_one():
    configurations, skipped = grid([], ["hash", "btree"], ["local", "parallel:2"], ["souffle"])
    assert [str(c) for c in configurations] == [
        "native", "relational/hash", "relational/btree",
        "native@parallel:2", "relational/hash@parallel:2", "relational/btree@parallel:2",
        "souffle", "souffle-interpreted"]
    assert skipped == []
    configurations, skipped = grid(["native", "substitution"], ["spine", "open_hash"])
    assert [str(c) for c in configurations] == [
        "native/spine", "native/open_hash", "substitution"]
    assert skipped == ["substitution takes no index (one configuration per backend)"]


def test_grid_gives_a_backend_with_its_own_plans_one_configuration():
    configurations, skipped = grid(["native", "substitution"], [], ["spark:local[2]", "local"])
    assert [str(c) for c in configurations] == ["spark:local[2]", "native", "substitution"]
    assert skipped == ["spark runs its own plans (no evaluator or index)"]
    assert grid([], [], ["local", "local"])[0] == [Configuration("native")]  # no repeats
    with pytest.raises(UsageError, match="unknown evaluator 'nope'"):
        grid(["nope"])
