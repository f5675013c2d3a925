"""Decomposed strata seeded from the driver (``driver_seeds``): the parts keep each pivot value
whole, in order and balanced; symbols rank by their bytes; a stratum the driver abandoned, or
one reading relations Spark read or derived within the driver's budget, runs as one job over
seeds the driver made, and agrees with the local backend (files byte for byte); over the
budget, Spark makes the seeds."""

from __future__ import annotations

import io as text_io
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import herbrand
from herbrand.framework import io
from herbrand.framework.analysis import analyse
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import ENCODING, SymbolTable
from herbrand.spark_backend import decomposed, decomposed_strata
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.driver_seeds import part_numbers, sort_keys
from herbrand.translators.pivots import find_pivot
from tests.spark_backend.edge_files import NUMBER_EDGES, SYMBOL_EDGES, tc_files
from tests.spark_backend.test_decomposed import (
    GUARDED_TC,
    NULLARY_IN_RECURSION,
    PIVOT_FIXTURES,
    REACH_SYMBOLS,
    _facts,
    _recursive_passes,
    _run,
)

TC = (PIVOT_FIXTURES / "tc_left_linear.dl").read_text()


@pytest.fixture
def _on_spark() -> None:
    """These tests give ``driver_rows`` themselves (tests/spark_backend/conftest.py)."""


@pytest.fixture
def seeded(monkeypatch) -> list[str]:
    """The strata (their relations, joined by ``,``) whose job ``driver_seeds`` made, in
    order, and ``frames`` for each made from frames (``decomposed.run_decomposed``)."""
    made: list[str] = []
    seeded_job, framed_job = (decomposed_strata.seeded_decomposition,
                              decomposed_strata.run_decomposed)

    def from_seeds(session, stratum, *args):
        made.append(",".join(stratum.relations))
        return seeded_job(session, stratum, *args)

    def from_frames(*args):
        made.append("frames")
        return framed_job(*args)

    monkeypatch.setattr(decomposed_strata, "seeded_decomposition", from_seeds)
    monkeypatch.setattr(decomposed_strata, "run_decomposed", from_frames)
    return made


def _abandoning(spark, budget: int) -> SparkBackend:
    """A backend whose driver holds every relation and abandons every stratum deriving more
    than ``budget`` rows."""
    return SparkBackend(session=spark, driver_rows=10**6, derived_budget=budget)


def _seeds(program: str, rows: dict[str, list[tuple]]) -> tuple[Database, object]:
    parsed = parse(program)
    [stratum] = [s for s in analyse(parsed) if s.recursive]
    symbols = SymbolTable()
    types = {d.name: d.types for d in parsed.declarations}
    relations = {name: Relation(np.array(
        [[symbols.intern(v) if t == "symbol" else v for v, t in zip(row, types[name],
                                                                      strict=True)]
         for row in table], dtype=np.int64).T, unique=True) for name, table in rows.items()}
    return Database(relations, symbols, types), stratum


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_parts_hold_whole_pivot_values_in_order_and_balanced(parts):
    generator = np.random.default_rng(parts)
    rows = [tuple(row) for row in generator.integers(-50, 50, size=(400, 2))]
    seeds, stratum = _seeds(TC, {"tc": sorted(set(rows)), "e": rows[:3]})
    [numbers] = part_numbers(seeds, stratum, find_pivot(stratum), parts, True).values()
    pivots = seeds["tc"].column(0)
    assert numbers.min() >= 0 and numbers.max() < parts
    for part in range(parts - 1):  # every value of a part before every value of the next
        here, after = pivots[numbers == part], pivots[numbers > part]
        assert not len(here) or not len(after) or here.max() < after.min()
    heaviest = np.unique(pivots, return_counts=True)[1].max()
    assert np.bincount(numbers, minlength=parts).max() <= len(pivots) / parts + heaviest


def test_parts_of_relations_pivoted_at_other_positions_agree():
    program = (PIVOT_FIXTURES / "mutual_recursion.dl").read_text()
    stratum = next(s for s in analyse(parse(program)) if s.recursive)
    pivot = find_pivot(stratum)
    first, second = stratum.relations
    values = np.arange(60) % 17
    seeds, _ = _seeds(program, {
        first: [(v, 0) if pivot.position(first) == 0 else (0, v) for v in values],
        second: [(v, 1) if pivot.position(second) == 0 else (1, v) for v in values]})
    numbers = part_numbers(seeds, stratum, pivot, 4, False)
    part_of = {}
    for name in stratum.relations:
        for value, part in zip(seeds[name].column(pivot.position(name)), numbers[name],
                               strict=True):
            assert part_of.setdefault(value, part) == part
    assert len(set(part_of.values())) > 1


def test_no_seeds_are_no_rows_of_any_part():
    seeds, stratum = _seeds(TC, {"e": [(1, 2)]})
    seeds = seeds.with_relations({"tc": Relation.empty(2)})
    assert [len(n) for n in part_numbers(seeds, stratum, find_pivot(stratum), 4,
                                         True).values()] == [0]


def test_without_a_pivot_every_seed_is_in_the_one_part():
    seeds, stratum = _seeds(TC, {"tc": [(1, 2), (3, 4)], "e": [(1, 2)]})
    assert [list(n) for n in part_numbers(seeds, stratum, None, 4, True).values()] == [[0, 0]]


def test_symbols_rank_by_their_bytes():
    texts = ["b", "a b", "\u00e9", "Z", "\u4e2d", "a\udcff", "a", "~"]
    symbols = SymbolTable()
    ids = symbols.intern_many(texts[::-1] + texts)
    ranks = sort_keys(ids, symbols)
    ordered = sorted(set(texts), key=lambda text: text.encode(*ENCODING))
    assert [ordered[rank] for rank in ranks] == texts[::-1] + texts


def _seed_rows(program, facts) -> int:
    """The most rows the exit rules of a recursive stratum of ``program`` derive over
    ``facts`` (its recursive rules dropped)."""
    recursive = [s for s in analyse(program) if s.recursive]
    exits = tuple(rule for rule in program.rules if not any(
        rule in s.rules and any(getattr(e, "atom", None) is not None
                                and e.atom.relation in s.relations for e in rule.body)
        for s in recursive))
    seeds, _ = _run(replace(program, rules=exits), facts, "local")
    return max(len(seeds[name]) for s in recursive for name in s.relations)


@pytest.mark.parametrize("path", [p for p in sorted(PIVOT_FIXTURES.glob("*.dl"))
                                  if "pivot: none" not in p.read_text()],
                         ids=lambda path: path.stem)
def test_an_abandoned_pivoted_stratum_runs_from_the_driver_s_seeds(spark, seeded, path):
    program = parse(path.read_text())
    facts = _facts(program, 4)
    budget = _seed_rows(program, facts)
    local, _ = _run(program, facts, "local")
    assert budget < max(len(local[name]) for s in analyse(program) if s.recursive
                        for name in s.relations)  # the driver's attempt is abandoned
    result, stats = _run(program, facts, _abandoning(spark, budget))
    assert result == local
    assert _recursive_passes(program, stats) == [2]
    assert seeded == [",".join(s.relations) for s in analyse(program) if s.recursive]


@pytest.mark.parametrize("program, facts, budget", [
    (REACH_SYMBOLS, {"link": [(f"n{i}", f"n{(i * 7 + 3) % 40}") for i in range(40)]
                     + [("n5", "\u00e9\udcff")]}, 41),
    (GUARDED_TC + "on().", {"e": [(i, i + 1) for i in range(12)]}, 12),
    (NULLARY_IN_RECURSION, {"e": [(1, 2), (2, 3), (3, 4), (4, 5)]}, 4),
], ids=["symbols", "nullary lower", "nullary own, no pivot"])
def test_symbols_and_nullary_relations_cross_from_the_driver(spark, seeded, program, facts,
                                                             budget):
    program = parse(program)
    result, _ = _run(program, facts, _abandoning(spark, budget))  # the seeds' rows
    local, _ = _run(program, facts, "local")
    assert result == local
    assert seeded and "frames" not in seeded


def test_exit_rules_over_the_budget_leave_the_stratum_to_spark_s_first_pass(spark, seeded):
    program = parse(TC)
    facts = {"e": [(i, i + 1) for i in range(60)]}
    # 60 seeds: over the budget by more than the native engine's slack (``arrays``)
    result, _ = _run(program, facts, _abandoning(spark, budget=20))
    local, _ = _run(program, facts, "local")
    assert result == local and seeded == ["frames"]


SPARK_DERIVED_TC = """
.decl a(x: number, y: number)
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
e(x, y) :- a(x, y), x != y.
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""
WIDE_SEEDS_TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, _), e(_, y).
tc(x, z) :- tc(x, y), e(y, z).
"""


def test_a_stratum_reading_what_spark_derived_runs_from_the_driver_s_seeds(spark, seeded):
    program = parse(SPARK_DERIVED_TC)
    facts = {"a": [(i % 13, (i * 5) % 17) for i in range(40)]}
    result, stats = _run(program, facts, SparkBackend(session=spark, driver_rows=0))
    local, _ = _run(program, facts, "local")
    assert result == local
    assert [s.where for s in stats] == ["spark", "spark"]  # e on Spark, collected for tc
    assert _recursive_passes(program, stats) == [2] and seeded == ["tc"]


@pytest.mark.parametrize("program, budget", [
    (SPARK_DERIVED_TC, 39),  # e: 40 rows Spark derived, over the budget
    (WIDE_SEEDS_TC, 100),  # e: 60 rows within it, but the exit rule derives 3,600
], ids=["relations read", "seeds"])
def test_over_the_budget_spark_makes_the_seeds(spark, seeded, program, budget):
    program = parse(program)
    facts = ({"a": [(i, i + 1) for i in range(40)]} if "a" in program.declaration_of
             else {"e": [(i, i + 1) for i in range(60)]})
    result, stats = _run(program, facts, SparkBackend(session=spark, driver_rows=0,
                                                      derived_budget=budget))
    local, _ = _run(program, facts, "local")
    assert result == local and seeded == ["frames"]


@pytest.mark.parametrize("program, budget, collected", [
    (SPARK_DERIVED_TC, 39, 1),  # e over the budget: not held, collected for the job
    (WIDE_SEEDS_TC, 100, 0),  # e held (collected for the seeds): broadcast as it is
], ids=["not held", "held"])
def test_the_job_collects_only_the_lower_relations_the_driver_does_not_hold(
        spark, seeded, monkeypatch, program, budget, collected):
    program = parse(program)
    facts = ({"a": [(i, i + 1) for i in range(40)]} if "a" in program.declaration_of
             else {"e": [(i, i + 1) for i in range(60)]})
    collecting, frames = decomposed.frame_table, []

    def recorded(frame):
        frames.append(frame)
        return collecting(frame)

    monkeypatch.setattr(decomposed, "frame_table", recorded)
    result, _ = _run(program, facts, SparkBackend(session=spark, driver_rows=0,
                                                  derived_budget=budget))
    local, _ = _run(program, facts, "local")
    assert result == local and seeded == ["frames"] and len(frames) == collected


def test_a_budget_of_zero_makes_no_seeds_on_the_driver(spark, seeded):
    program = parse(TC)
    result, _ = _run(program, {"e": []}, SparkBackend(session=spark, driver_rows=0,
                                                      derived_budget=0))
    assert result == {"e": set(), "tc": set()} and seeded == ["frames"]


@pytest.mark.parametrize("kind, edges", [("number", NUMBER_EDGES), ("symbol", SYMBOL_EDGES)],
                         ids=["number", "symbol"])
@pytest.mark.parametrize("printsize", [False, True], ids=["written by tasks", "stored"])
@pytest.mark.parametrize("read_by", ["driver", "spark"])
def test_files_from_the_driver_s_seeds_are_the_local_backend_s(spark, seeded, tmp_path, kind,
                                                              edges, printsize, read_by):
    program, facts = tc_files(tmp_path, kind, "", edges, "\n.printsize tc\n" * printsize)
    parsed = herbrand.parse(program.read_text())
    local = herbrand.materialize(parsed, facts_dir=facts)
    stdout = text_io.StringIO()
    backend = (_abandoning(spark, len(local["e"])) if read_by == "driver"  # the seeds' rows
               else SparkBackend(session=spark, driver_rows=0))  # e collected from Spark
    run = backend.materialize_files(parsed, facts, tmp_path / "spark", stdout=stdout)
    local_stdout = text_io.StringIO()
    io.write_outputs(parsed, local, tmp_path / "local", stdout=local_stdout)
    assert seeded == ["tc"]
    assert [s.derived for s in run.stats] == [len(local["tc"])]
    assert stdout.getvalue() == local_stdout.getvalue()
    assert Path(tmp_path / "spark" / "tc.csv").read_bytes() == Path(
        tmp_path / "local" / "tc.csv").read_bytes()
