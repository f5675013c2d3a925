"""``herbrand explain``: the proof or the why-not on stdout, exit status 0 when derived and
NOT_DERIVED_STATUS when not, errors in one line with status 1. (Kept apart from
test_cli.py, which other commands' tests share.)"""

from __future__ import annotations

import json

import pytest

from herbrand.cli import NOT_DERIVED_STATUS, main


@pytest.fixture
def tc_dir(tmp_path):
    (tmp_path / "tc.dl").write_text(
        ".decl e(x: number, y: number)\n.decl tc(x: number, y: number)\n.input e\n"
        "tc(x, y) :- e(x, y).\ntc(x, z) :- tc(x, y), e(y, z).\n")
    (tmp_path / "e.facts").write_text("1\t2\n2\t3\n3\t4\n")
    return tmp_path


def _explain(tc_dir, *arguments: str) -> int:
    return main(["explain", str(tc_dir / "tc.dl"), "-F", str(tc_dir), *arguments])


def test_a_derived_tuple_prints_its_proof_and_exits_0(tc_dir, capsys):
    assert _explain(tc_dir, "tc(1, 3)") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("tc(1, 3) [2] rule #2 at ")
    assert lines[1:] == [f"  tc(1, 2) [1] rule #1 at {tc_dir / 'tc.dl'}:4:1: tc(x, y) :- e(x, y).",
                         "    e(1, 2) [0] input fact", "  e(2, 3) [0] input fact"]


def test_a_tuple_not_derived_prints_why_and_exits_with_its_own_status(tc_dir, capsys):
    assert _explain(tc_dir, "tc(4, 1)") == NOT_DERIVED_STATUS != 1
    out = capsys.readouterr().out
    assert out.startswith("tc(4, 1) is not derived") and "no match for e(4, 1)" in out


def test_json_and_max_depth(tc_dir, capsys):
    assert _explain(tc_dir, "tc(1, 4)", "--json", "--max-depth", "1") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["derived"] and data["height"] == 3
    assert data["premises"][0]["truncated"] and data["premises"][0]["premises"] == []
    assert _explain(tc_dir, "tc(4, 1)", "--json") == NOT_DERIVED_STATUS
    assert json.loads(capsys.readouterr().out)["derived"] is False


@pytest.mark.parametrize(("arguments", "message"), [
    (["tc(1)"], "herbrand: error: goal:1:1: tc has 1 argument(s) here but 2 in its declaration "
                "at "),
    (["nope(1)"], "herbrand: error: goal:1:1: undeclared relation nope"),
    (["tc(1, 2"], "herbrand: error: goal:1:8: expected ',' or ')' but found end of input"),
    (["tc(1, 2)", "--max-depth", "-1"], "herbrand: error: --max-depth -1: expected a number "
                                        "of levels >= 0"),
])
def test_errors_are_one_line_with_status_1(tc_dir, capsys, arguments, message):
    assert _explain(tc_dir, *arguments) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(message) and captured.err.count("\n") == 1
    assert captured.out == ""


def test_a_missing_facts_directory_is_named(tc_dir, capsys):
    assert main(["explain", str(tc_dir / "tc.dl"), "-F", str(tc_dir / "none"),
                 "tc(1, 2)"]) == 1
    assert "facts directory: no such directory" in capsys.readouterr().err
