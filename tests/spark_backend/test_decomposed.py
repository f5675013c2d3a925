"""Decomposed strata: a recursive stratum with a pivot runs as one job, herbrand's engine in each
partition, and agrees with the local backend; a small one without a pivot runs as one job in
one partition; a larger one without a pivot, or one with lower relations too large to
broadcast, runs as semi-naive passes."""

from __future__ import annotations

import io as io_text
from pathlib import Path

import numpy as np
import pytest

import herbrand
from herbrand.framework import io
from herbrand.framework.analysis import analyse
from herbrand.framework.parser import parse
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.decomposed import ordered_by_pivot, sorted_table
from herbrand.translators.pivots import find_pivot
from tests.spark_backend.conftest import recorded_writes

PIVOT_FIXTURES = Path(__file__).parents[1] / "translators" / "pivot_fixtures"
REACH_SYMBOLS = """
.decl link(a: symbol, b: symbol)
.decl reach(a: symbol, b: symbol)
reach(a, b) :- link(a, b).
reach(a, c) :- reach(a, b), link(b, c), c != "n0".
"""

NULLARY_IN_RECURSION = """
.decl e(x: number, y: number)
.decl p(x: number)
.decl flag()
p(x) :- e(x, _).
flag() :- p(3).
p(y) :- p(x), e(x, y), flag().
p(100) :- flag().
"""


def _facts(program, seed: int) -> dict[str, np.ndarray]:
    """Random rows for the input relations of ``program`` (over 0..29)."""
    generator = np.random.default_rng(seed)
    derived = {rule.head.relation for rule in program.rules}
    return {d.name: generator.integers(0, 30, size=(60, d.arity))
            for d in program.declarations if d.name not in derived}


def _run(program, facts, backend) -> tuple[dict[str, set], list]:
    database, stats = herbrand.api.materialize_with_stats(program, facts, backend=backend)
    return {name: set(database[name].to_rows()) for name in database}, stats


def _recursive_passes(program, stats) -> list[int]:
    recursive = {s.index for s in analyse(program) if s.recursive}
    return [s.iterations for s in stats if s.stratum in recursive]


@pytest.mark.parametrize("path", [p for p in sorted(PIVOT_FIXTURES.glob("*.dl"))
                                  if "pivot: none" not in p.read_text()],
                         ids=lambda path: path.stem)
@pytest.mark.parametrize("seed", [1, 2])
def test_a_pivoted_stratum_runs_as_one_job_and_agrees_with_the_local_backend(spark, path, seed):
    program = parse(path.read_text())
    facts = _facts(program, seed)
    decomposed, stats = _run(program, facts, SparkBackend(session=spark))
    local, _ = _run(program, facts, "local")
    assert decomposed == local
    assert _recursive_passes(program, stats) == [2]  # the first pass, then the one job


def _recursive_without_pivot(path: Path) -> bool:
    return "pivot: none" in path.read_text() and any(
        s.recursive for s in analyse(parse(path.read_text())))


@pytest.mark.parametrize("path", [p for p in sorted(PIVOT_FIXTURES.glob("*.dl"))
                                  if _recursive_without_pivot(p)], ids=lambda path: path.stem)
def test_a_small_stratum_without_a_pivot_runs_in_one_partition(spark, path):
    program = parse(path.read_text())
    facts = _facts(program, 3)
    single, stats = _run(program, facts, SparkBackend(session=spark))
    local, _ = _run(program, facts, "local")
    assert single == local
    assert _recursive_passes(program, stats) == [2] * len(_recursive_passes(program, stats))
    assert _recursive_passes(program, stats)
    passes, _ = _run(program, facts, SparkBackend(session=spark, single_partition_rows=0))
    assert passes == local


def test_a_nullary_relation_of_a_stratum_in_one_partition_keeps_its_row(spark):
    program = parse(NULLARY_IN_RECURSION)
    facts = {"e": [(1, 2), (2, 3), (3, 4), (4, 5)]}
    single, stats = _run(program, facts, SparkBackend(session=spark))
    local, _ = _run(program, facts, "local")
    assert single == local and local["flag"] == {()}
    assert _recursive_passes(program, stats) == [2]


def test_symbols_and_comparisons_cross_the_partitions(spark):
    program = parse(REACH_SYMBOLS)
    links = [(f"n{i}", f"n{(i * 7 + 3) % 40}") for i in range(40)] + [("n5", "é\udcff")]
    facts = {"link": links}
    decomposed, stats = _run(program, facts, SparkBackend(session=spark))
    local, _ = _run(program, facts, "local")
    assert decomposed == local
    assert _recursive_passes(program, stats) == [2]


def test_without_a_pivot_or_room_to_broadcast_the_passes_run(spark):
    nonlinear = parse((PIVOT_FIXTURES / "tc_nonlinear.dl").read_text())
    assert all(find_pivot(s) is None for s in analyse(nonlinear) if s.recursive)
    facts = {"e": [(i, i + 1) for i in range(12)]}
    result, stats = _run(nonlinear, facts, SparkBackend(session=spark, single_partition_rows=11))
    assert len(result["tc"]) == 78 and _recursive_passes(nonlinear, stats)[0] > 2
    result, stats = _run(nonlinear, facts, SparkBackend(session=spark, single_partition_rows=12))
    assert len(result["tc"]) == 78 and _recursive_passes(nonlinear, stats) == [2]
    linear = parse((PIVOT_FIXTURES / "tc_left_linear.dl").read_text())
    for backend in (SparkBackend(session=spark, broadcast_rows=5),
                    SparkBackend(session=spark, decompose=False)):
        result, stats = _run(linear, facts, backend)
        assert len(result["tc"]) == 78 and _recursive_passes(linear, stats) == [13]


GUARDED_TC = """
.decl on()
.decl e(a: number, b: number)
.decl tc(a: number, b: number)
tc(x, y) :- e(x, y).
tc(x, z) :- on(), e(x, y), tc(y, z).
"""


@pytest.mark.parametrize("on, expected", [(True, 78), (False, 12)])
def test_a_nullary_lower_relation_reaches_the_partitions(spark, on, expected):
    """A nullary relation's one row crosses the broadcast (Spark's ``toArrow`` of a frame with
    no columns has no rows: the partitions then derived nothing, found by the golden case
    magic_names1)."""
    program = parse(GUARDED_TC + ("on()." if on else ""))
    facts = {"e": [(i, i + 1) for i in range(12)]}
    decomposed, stats = _run(program, facts, SparkBackend(session=spark))
    local, _ = _run(program, facts, "local")
    assert decomposed == local and len(local["tc"]) == expected
    assert _recursive_passes(program, stats) == [2]


def _fixture_positions(path: Path) -> dict[str, int]:
    """The pivot positions a fixture's first line states (``// pivot: a=0, b=1``; none: {})."""
    stated = path.read_text().splitlines()[0].removeprefix("// pivot:").strip()
    if stated.startswith("none"):
        return {}
    return {name: int(position) for name, position in
            (item.strip().split("=") for item in stated.split(","))}


@pytest.mark.parametrize("path", sorted(PIVOT_FIXTURES.glob("*.dl")), ids=lambda path: path.stem)
def test_a_stratum_is_ordered_by_its_pivot_when_it_is_every_first_column(path):
    program = parse(path.read_text())
    types = {d.name: d.types for d in program.declarations}
    positions = _fixture_positions(path)
    expected = bool(positions) and set(positions.values()) == {0}
    found = [ordered_by_pivot(s, find_pivot(s), types) for s in analyse(program) if s.recursive]
    assert any(found) == expected, found


@pytest.mark.parametrize("by_tasks", [True, False], ids=["by its tasks", "by Spark"])
@pytest.mark.parametrize("kind", ["number", "symbol"])
def test_a_stratum_ordered_by_its_pivot_is_written_without_a_sort(spark, tmp_path, monkeypatch,
                                                                   kind, by_tasks):
    """TC (pivot: the first column): the decomposed job's partitions are ranges of the pivot,
    each sorted (symbols by their bytes, as Spark and the local writer order them), so the
    output is written as it is: by the job's tasks to a local file (``part_files``), else by
    Spark's writer (0 parts: no sort); either way the local backend's file."""
    from herbrand.spark_backend import outputs

    if not by_tasks:  # as for a path that is not local: hdfs://, s3a://
        monkeypatch.setattr(outputs, "task_written_path", lambda path, master: None)
    written = recorded_writes(monkeypatch)
    path = PIVOT_FIXTURES / "tc_left_linear.dl"
    program = parse(path.read_text().replace("number", kind) + "\n.input e\n.output tc\n")
    facts = tmp_path / "facts"
    facts.mkdir()
    edges = np.random.default_rng(3).integers(-40, 40, size=(120, 2))
    names = ["Z", "a b", "\u00e9", "n10", "n9", "\u4e2d", "~", "A"]
    value = (lambda v: str(v)) if kind == "number" else (lambda v: names[v % 8] + str(v // 8))
    (facts / "e.facts").write_text("".join(f"{value(a)}\t{value(b)}\n" for a, b in edges),
                                   encoding="utf-8")
    SparkBackend(session=spark).materialize_files(program, facts, tmp_path / "spark")
    io.write_outputs(program, herbrand.materialize(program, facts_dir=facts), tmp_path / "local")
    assert written == ([] if by_tasks else [0])
    assert (tmp_path / "spark" / "tc.csv").read_bytes() == (
        tmp_path / "local" / "tc.csv").read_bytes()
    assert [p.name for p in (tmp_path / "spark").iterdir()] == ["tc.csv"]


@pytest.mark.parametrize("types, rows", [
    (("number", "number"), [(3, -2), (-7, 2**62), (3, -5), (0, 0), (-7, -2**62)]),
    (("number", "number", "number"), [(2**40, 1, 2), (-2**40, 5, 1), (2**40, 0, 9)]),
    (("symbol", "number"), [("b", 2), ("a", 9), ("b", 1), ("ab", 0)]),
])
def test_a_partition_sorts_its_rows_as_arrow_does(types, rows):
    """Numbers (negative, and spans that pack into several keys) sort by packed keys, symbols
    by Arrow: the order is column by column, a symbol by its text, either way."""
    symbols = SymbolTable()
    encoded = [tuple(symbols.intern(v) if t == "symbol" else v for v, t in zip(row, types, strict=True))
               for row in rows]
    table = sorted_table(Relation(np.array(encoded, dtype=np.int64).T), types, symbols)
    assert table.to_pylist() == [dict(zip(table.column_names, row, strict=True)) for row in sorted(rows)]


@pytest.mark.parametrize("printsize", [False, True])
def test_a_stratum_only_written_is_computed_by_its_write_and_counted_by_its_tasks(
        spark, tmp_path, monkeypatch, printsize):
    """TC written once (``outputs.written_once``) is not cached and counted by a job of its
    own (``Decomposition.store``): its write (by its tasks, ``Decomposition.write_parts``)
    computes it, and its size, reported after the write, is what the tasks counted; read once
    more (``.printsize``), it is stored and written by Spark."""
    from herbrand.spark_backend import outputs
    from herbrand.spark_backend.decomposed import Decomposition

    events, stores = [], []
    store = Decomposition.store
    monkeypatch.setattr(Decomposition, "store",
                        lambda self: stores.append(1) or store(self))
    write = outputs._write_single_file
    monkeypatch.setattr(outputs, "_write_single_file",
                        lambda *args: events.append("write") or write(*args))
    write_parts = Decomposition.write_parts
    monkeypatch.setattr(Decomposition, "write_parts",
                        lambda *args: events.append("write by tasks") or write_parts(*args))
    program = parse((PIVOT_FIXTURES / "tc_left_linear.dl").read_text()
                    + "\n.input e\n.output tc\n" + (".printsize tc\n" if printsize else ""))
    facts = tmp_path / "facts"
    facts.mkdir()
    edges = np.random.default_rng(5).integers(0, 60, size=(150, 2))
    (facts / "e.facts").write_text("".join(f"{a}\t{b}\n" for a, b in edges))
    run = SparkBackend(session=spark).materialize_files(
        program, facts, tmp_path / "spark", observer=events.append, stdout=io_text.StringIO())
    local = herbrand.materialize(program, facts_dir=facts)
    size = len(local["tc"])
    assert [s.derived for s in run.stats] == [size]
    passes = [(event.iteration, event.total) for event in events if not isinstance(event, str)]
    assert passes[-1] == (2, size)
    # written once: pass 2 comes after the write
    write = "write" if printsize else "write by tasks"
    assert [event for event in events if isinstance(event, str)] == [write]
    assert events.index(write) == (2 if printsize else 1)
    assert stores == ([1] if printsize else [])
    io.write_outputs(program, local, tmp_path / "local", stdout=io_text.StringIO())
    assert (tmp_path / "spark" / "tc.csv").read_bytes() == (
        tmp_path / "local" / "tc.csv").read_bytes()
