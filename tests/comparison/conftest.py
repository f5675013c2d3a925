"""A tiny TC program and its facts folder, for the comparison tests' whole processes."""

from __future__ import annotations

import pytest

TC = """\
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.input edge
.output path
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


@pytest.fixture
def tc_files(tmp_path):
    """(program file, facts folder) of TC over the chain 0 -> 1 -> ... -> 5: 15 paths."""
    program = tmp_path / "tc.dl"
    program.write_text(TC)
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "edge.facts").write_text("".join(f"{i}\t{i + 1}\n" for i in range(5)))
    return program, facts
