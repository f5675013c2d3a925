"""Every row of the bad-input catalogue (``bad_inputs``), run each way it applies.

- ``cli``: ``herbrand run prog.dl -F facts -D out FLAGS`` (or the row's own command) in this
  process: exit status 1 (2 for a malformed command line, with argparse's usage line), exactly
  one line on stderr, ``herbrand: error: `` and the place, nothing on stdout.
- ``api``: ``herbrand.materialize(Path("prog.dl"), facts_dir="facts")``: the row's error class,
  a one-line message (a syntax error adds its source line and caret below) naming the place.
- ``spark``: the ``cli`` way with ``--backend spark``, every file read by Spark
  (``strata_on_spark``): the Spark reader says what the local one says.
- ``call``: the row's Python call; for an ``incremental`` row, on a fresh Materialization of
  each engine, which must be exactly as it was afterwards (rows, symbols, program).

A few rows of each kind also run as a real ``herbrand`` process, to see that no traceback
escapes a whole run.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import herbrand
from herbrand.cli import main
from herbrand.framework.errors import HerbrandError, HerbrandSyntaxError
from tests.conformance.bad_inputs import (
    CATALOGUE,
    INCREMENTAL,
    INCREMENTAL_FACTS,
    KINDS,
    BadInput,
    UsageExit,
)

SPARK_FLAGS = ("--backend", "spark", "--master", "local[2]")


def _params(way: str) -> list:
    params = []
    for row in CATALOGUE:
        if way not in row.ways:
            continue
        engines = row.engines if row.kind == "incremental" else (None,)
        for engine in engines:
            ident = f"{row.kind}/{row.id}" + (f"[{engine}]" if engine else "")
            params.append(pytest.param(row, engine, id=ident))
    return params


def _lay_out(row: BadInput, directory: Path) -> None:
    program = row.program.encode() if isinstance(row.program, str) else row.program
    (directory / "prog.dl").write_bytes(program)
    (directory / "facts").mkdir()
    for name, content in row.files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            path.mkdir()
        else:
            path.write_bytes(content)
    if row.updates is not None:
        (directory / "u.txt").write_bytes(row.updates)


def _argv(row: BadInput, directory: Path, extra: tuple[str, ...] = ()) -> list[str]:
    if row.command is not None:
        return [part.replace("{dir}", str(directory)) for part in row.command]
    flags = [flag.replace("{dir}", str(directory)) for flag in row.flags]
    if row.updates is not None:
        flags += ["--engine", "dred", "--updates", str(directory / "u.txt")]
    return ["run", str(directory / "prog.dl"), "-F", str(directory / "facts"),
            "-D", str(directory / "out"), "--no-progress", *flags, *extra]


def _assert_cli(row: BadInput, status: int, out: str, err: str) -> None:
    if row.error is UsageExit:
        assert status == 2, err
        assert err.startswith("usage: herbrand") and row.place in err, err
        return
    assert status == 1, err
    assert out == "", out
    assert err.count("\n") == 1 and err.startswith("herbrand: error: "), err
    assert "Traceback" not in err
    assert row.place in err, f"{row.place!r} not in {err!r}"


def _run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    try:
        status = main(argv)
    except SystemExit as exit_:  # argparse
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _assert_error(row: BadInput, error: BaseException) -> None:
    assert isinstance(error, row.error), f"{type(error).__name__}: {error}"
    assert isinstance(error, HerbrandError)
    lines = str(error).splitlines()
    assert len(lines) == 1 or isinstance(error, HerbrandSyntaxError) and len(lines) == 3, lines
    assert row.place in lines[0], f"{row.place!r} not in {lines[0]!r}"


def test_the_catalogue_is_large_and_covers_every_kind():
    assert len(CATALOGUE) >= 150
    assert {row.kind for row in CATALOGUE} == set(KINDS)
    assert len({(row.kind, row.id) for row in CATALOGUE}) == len(CATALOGUE)
    assert sum("spark" in row.ways for row in CATALOGUE) >= 20


@pytest.mark.parametrize(("row", "engine"), _params("cli"))
def test_cli(row, engine, tmp_path, capsys):
    _lay_out(row, tmp_path)
    _assert_cli(row, *_run_cli(_argv(row, tmp_path), capsys))


@pytest.mark.parametrize(("row", "engine"), _params("api"))
def test_api(row, engine, tmp_path):
    _lay_out(row, tmp_path)
    with pytest.raises(HerbrandError) as raised:
        herbrand.materialize(tmp_path / "prog.dl", facts_dir=tmp_path / "facts")
    _assert_error(row, raised.value)


@pytest.mark.parametrize(("row", "engine"), _params("spark"))
def test_spark(row, engine, tmp_path, capsys, spark, strata_on_spark):
    _lay_out(row, tmp_path)
    _assert_cli(row, *_run_cli(_argv(row, tmp_path, SPARK_FLAGS), capsys))


@pytest.mark.parametrize(("row", "engine"), _params("call"))
def test_call(row, engine):
    if row.kind == "python":
        with pytest.raises(HerbrandError) as raised:
            row.call()
        _assert_error(row, raised.value)
        return
    materialization = herbrand.incremental(INCREMENTAL, facts=INCREMENTAL_FACTS, engine=engine)
    before = _state(materialization)
    with pytest.raises(HerbrandError) as raised:
        row.call(materialization)
    _assert_error(row, raised.value)
    assert _state(materialization) == before
    changes = materialization.update(insert={"edge": [(3, 1)]})  # still takes valid updates
    assert (3, 1) in changes["path"].added


def _state(materialization) -> tuple:
    database = materialization.database
    names = [d.name for d in materialization.program.declarations]
    return (tuple(materialization.relation(name) for name in names), len(database.symbols),
            materialization.program)


@pytest.mark.parametrize("kind", ["syntax", "semantics", "facts", "cli", "updates"])
def test_a_whole_process_prints_one_line_and_no_traceback(kind, tmp_path):
    rows = [row for row in CATALOGUE if row.kind == kind and row.error is not UsageExit]
    for row in rows[:: max(1, len(rows) // 3)]:
        directory = tmp_path / row.id
        directory.mkdir()
        _lay_out(row, directory)
        result = subprocess.run([sys.executable, "-m", "herbrand.cli", *_argv(row, directory)],
                                capture_output=True, text=True, errors="replace", timeout=300)
        assert result.returncode == 1, (row.id, result.stderr)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, row.id
        assert row.place in result.stderr, (row.id, result.stderr)
