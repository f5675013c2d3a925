"""The small programs and facts the Spark backend's file tests read and write: ``PROGRAM``, a
number column and a symbol column (with a space and a tab in its values), a duplicate row, a
nullary output and a ``.printsize``; ``TC`` over numbers or symbols (``.format(kind=...,
params=...)``, the output's parameters) with ``NUMBER_EDGES`` or ``SYMBOL_EDGES`` (bytes that
are not UTF-8)."""

from __future__ import annotations

import gzip
from pathlib import Path

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


TC = """
.decl e(x: {kind}, y: {kind})
.decl tc(x: {kind}, y: {kind})
.input e
.output tc{params}
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""
NUMBER_EDGES = b"".join(b"%d\t%d\n" % ((i * 37) % 41 - 20, (i * 11) % 43 - 21)
                        for i in range(90))
SYMBOL_EDGES = (b"a\xff\tb\nb\t\xfe\x00c\n\xfe\x00c\t\xc3\xa9\n\xc3\xa9\ta\xff\n"
                b"\x80\t\xed\xa0\x80q\nz\t\x80\nm\t\xc3\xa9\n")


def tc_files(tmp_path, kind: str, params: str, edges: bytes, more: str = "") -> tuple[Path, Path]:
    """(``tmp_path/tc.dl``: ``TC`` of ``kind`` with the output's ``params`` and ``more``
    directives, ``tmp_path/facts`` holding ``e.facts`` with ``edges``)."""
    program = tmp_path / "tc.dl"
    program.write_text(TC.format(kind=kind, params=params) + more)
    facts = tmp_path / "facts"
    facts.mkdir()
    (facts / "e.facts").write_bytes(edges)
    return program, facts


def plain_bytes(path: Path) -> bytes:
    """The bytes of the output file ``path``, gunzipped when its name ends in ``.gz`` (which
    must then hold gzip: an empty or plain file fails)."""
    data = path.read_bytes()
    if path.suffix != ".gz":
        return data
    assert data[:2] == b"\x1f\x8b", f"{path} is not gzip: {data[:20]!r}"
    return gzip.decompress(data)
