"""The small program and facts folder the Spark backend's file tests read and write: a number
column and a symbol column (with a space and a tab in its values), a duplicate row, a nullary
output and a ``.printsize``."""

from __future__ import annotations

PROGRAM = """
.decl edge(x: number, y: symbol)
.decl path(x: number, y: symbol)
.decl flag()
.input edge(delimiter=",")
.output path
.output flag
.printsize path
flag() :- edge(_, _).
path(x, y) :- edge(x, y).
path(x, "end") :- edge(x, _).
"""
FACTS = "2,b c\n10,a\n2,b c\n16,tab\tin\n"


def facts_dir(tmp_path, text: str = FACTS):
    """``tmp_path/facts`` holding ``edge.facts`` with ``text``."""
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "edge.facts").write_text(text)
    return facts
