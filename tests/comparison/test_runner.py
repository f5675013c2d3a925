"""A comparison: configurations measured in turn, checked to agree, unavailable ones said."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from herbrand.comparison.configurations import Configuration, parse_configuration
from herbrand.comparison.runner import ResultsDisagreeError, run_comparison
from herbrand.workloads.catalogue import Prepared, prepare_program


@dataclass(frozen=True)
class WrongPaths(Configuration):
    """A configuration whose process writes one path too few."""

    def command(self, prepared: Prepared, out_dir: Path, cache_root: Path) -> list[str]:
        rows = "".join(f"0\t{i}\n" for i in range(1, 6))  # 5 of the 15 paths
        return [sys.executable, "-c", f"open({str(out_dir / 'path.csv')!r}, 'w')"
                                      f".write({rows!r})"]

    def __str__(self) -> str:
        return "wrong"


def test_configurations_agree_and_a_disagreeing_one_is_named(tc_files, tmp_path):
    lines = []
    comparison = run_comparison(prepare_program(*tc_files),
                                [parse_configuration("native"), WrongPaths(),
                                 parse_configuration("clingo")],
                                repeat=1, cache_root=tmp_path, log=lines.append)
    native, wrong, clingo = comparison.measurements
    assert native.ok and native.warm and comparison.reference == "native"
    assert comparison.tuples() == 15 and clingo.ok  # clingo counts the same 15 paths
    assert (wrong.status, wrong.detail) == ("mismatch", "path: 5 rows, reference 15")
    assert lines[1] == "[2/3] wrong: mismatch: path: 5 rows, reference 15"
    assert lines[-1].startswith("compared 3 configurations of tc in ")
    with pytest.raises(ResultsDisagreeError, match="tc: wrong disagrees with native: "
                                                   "path: 5 rows, reference 15"):
        comparison.check_agreement()


def _without(monkeypatch, tmp_path, *tools):
    """PATH holding only the Python interpreter's folder and none of ``tools``."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    for tool in tools:
        assert not (folder / tool).exists()


def test_missing_peers_and_java_are_said_in_one_line_each(tc_files, tmp_path, monkeypatch):
    _without(monkeypatch, tmp_path, "souffle", "java")
    configurations = [parse_configuration(c) for c in
                      ("native", "souffle", "souffle-interpreted", "spark:local[1]",
                       "spark:local[2]")]
    comparison = run_comparison(prepare_program(*tc_files), configurations, repeat=1,
                                cache_root=tmp_path)
    assert comparison.unavailable() == [
        "not run: souffle, souffle-interpreted: souffle is not on PATH",
        "not run: spark:local[1], spark:local[2]: no Java (Spark needs Java 17 or later: set "
        "JAVA_HOME or put java on PATH)"]
    assert comparison.measurements[0].ok


def test_duckdb_says_why_it_skips_a_program_of_another_shape(tc_files, tmp_path):
    program, facts = tc_files
    program.write_text(program.read_text().replace("path(x, y) :- edge(x, y).",
                                                   "path(x, y) :- edge(y, x)."))
    comparison = run_comparison(prepare_program(program, facts), [Configuration(peer="duckdb")],
                                repeat=1, cache_root=tmp_path)
    assert comparison.unavailable() == [
        "not run: duckdb: the program is none of the peers' shapes (TC, same generation, "
        "RDFS), which are all they can run"]
