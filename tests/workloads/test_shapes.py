"""Recognising the peers' computations in programs, up to renaming and reordering."""

from __future__ import annotations

import pytest

from herbrand.api import parse
from herbrand.workloads import programs
from herbrand.workloads.shapes import recognise

RENAMED_TC = """
.decl edge(a: number, b: number)
.decl path(a: number, b: number)
.input edge
.output path
path(a, c) :- edge(b, c), path(a, b).
path(a, b) :- edge(a, b).
"""


@pytest.mark.parametrize(("text", "shape"), [
    (programs.TC_DL, "tc"), (programs.SAME_GENERATION_DL, "sg"), (programs.RDFS_DL, "rdfs"),
    (programs.tc_file_dl("graph.facts"), "tc"), (RENAMED_TC, "tc")])
def test_the_peers_programs_are_recognised(text, shape):
    assert recognise(parse(text)).name == shape


def test_a_renamed_program_maps_the_shapes_relations_to_its_own():
    shape = recognise(parse(RENAMED_TC))
    assert shape.relations == {"e": "edge", "tc": "path"} and shape.output == "path"


@pytest.mark.parametrize("text", [
    programs.ANDERSEN_DL,
    programs.counter_dl(3),
    RENAMED_TC.replace("path(a, c) :- edge(b, c)", "path(a, c) :- edge(c, b)"),  # reversed
    RENAMED_TC.replace(".input edge\n", ""),  # edge is no input
    RENAMED_TC + "edge(1, 2).\n",  # inline facts: the peers would not see them
    RENAMED_TC.replace("b: number)\n.decl path", "b: symbol)\n.decl path"),  # symbols
])
def test_other_programs_are_no_shape(text):
    assert recognise(parse(text)) is None
