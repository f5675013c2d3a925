"""Golden fixtures: for each pass of DEFAULT_PASSES, rules and the plan after that pass.

Layout: ``fixtures/<pass name>/<case>.txt``, each file the input, a line ``----``, and the
expected ``format_plan`` of ``translate_rule(rule, DEFAULT_PASSES[:k + 1])`` where pass k is
the folder's. The input is Datalog text with exactly one rule; comment lines may give hints:
``// sizes: big=1000, small=10`` (passed as ``sizes``) and ``// delta: 1`` (body positions
reading their deltas). A fixture whose output changes fails; after checking that a change is
intended, regenerate the expected sections with ``HERBRAND_UPDATE_FIXTURES=1 pytest
tests/translators/test_fixtures.py`` and review the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from herbrand.framework.parser import parse
from herbrand.translators.pipeline import DEFAULT_PASSES, format_plan, translate_rule

FIXTURES = Path(__file__).parent / "fixtures"
SEPARATOR = "----"
UPDATE = os.environ.get("HERBRAND_UPDATE_FIXTURES") == "1"
PASS_NAMES = [p.__name__ for p in DEFAULT_PASSES]


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("*/*.txt"))


def hints(text: str) -> dict:
    found = {}
    sizes = re.search(r"^// sizes: (.*)$", text, re.MULTILINE)
    if sizes:
        pairs = (item.split("=") for item in sizes.group(1).split(","))
        found["sizes"] = {name.strip(): int(size) for name, size in pairs}
    delta = re.search(r"^// delta: (.*)$", text, re.MULTILINE)
    if delta:
        found["delta"] = {int(p) for p in delta.group(1).split(",")}
    return found


def actual_plan(path: Path, source: str) -> str:
    (rule,) = parse(source).rules
    position = PASS_NAMES.index(path.parent.name)
    return format_plan(translate_rule(rule, DEFAULT_PASSES[: position + 1], **hints(source)))


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_fixture(path: Path):
    source, _, expected = path.read_text().partition(f"\n{SEPARATOR}\n")
    actual = actual_plan(path, source)
    if UPDATE:
        path.write_text(f"{source}\n{SEPARATOR}\n{actual}\n")
    else:
        assert actual == expected.rstrip("\n"), f"{path} changed:\n{actual}"


def test_every_pass_has_fixtures_and_every_folder_is_a_pass():
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert folders == set(PASS_NAMES)
    for name in PASS_NAMES:
        assert len(list((FIXTURES / name).glob("*.txt"))) >= 3, name
