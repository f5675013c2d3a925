"""``.pragma "magic-transform"``: goals from the outputs, the list of adornable relations, and
materialization through it (every backend goes through ``api.program_to_run``)."""

from __future__ import annotations

import pytest

import herbrand
from herbrand.framework.errors import UndeclaredRelationError, UsageError
from herbrand.framework.parser import parse
from herbrand.translators.magic_pragma import apply_magic_pragma

PROGRAM = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
.decl mid(x: number, y: number)
.decl q(y: number)
.output q
tc(x, y) :- mid(x, y).
tc(x, z) :- tc(x, y), mid(y, z).
mid(x, y) :- e(x, y).
q(y) :- tc(1, y).
"""
FACTS = {"e": [(1, 2), (2, 3), (5, 6)]}


def test_star_adorns_every_derived_relation_the_outputs_reach():
    program = apply_magic_pragma(parse('.pragma "magic-transform" "*"' + PROGRAM))
    assert [d.name for d in program.declarations] == [
        "e", "q", "tc_bf", "magic_tc_bf", "mid_bf", "magic_mid_bf", "sup_tc_bf_1_1"]
    assert program.pragmas == ()


def test_a_list_adorns_only_the_relations_named():
    program = apply_magic_pragma(parse('.pragma "magic-transform" "tc"' + PROGRAM))
    names = [d.name for d in program.declarations]
    assert "tc_bf" in names and "mid" in names and "mid_bf" not in names


def test_a_program_without_the_pragma_or_outputs_is_itself():
    plain = parse(PROGRAM)
    assert apply_magic_pragma(plain) is plain
    silent = parse('.pragma "magic-transform" "*"' + PROGRAM.replace(".output q", ""))
    assert apply_magic_pragma(silent) is silent


def test_an_undeclared_relation_in_the_list_is_one_line_at_the_pragma():
    with pytest.raises(UndeclaredRelationError, match=r"^<input>:1:9: .* undeclared relation x"):
        apply_magic_pragma(parse('.pragma "magic-transform" "tc, x"' + PROGRAM))


@pytest.mark.parametrize("adorned", ["*", "tc", "mid", "q"])
def test_outputs_are_whole_whatever_is_adorned(adorned):
    program = parse(f'.pragma "magic-transform" "{adorned}"' + PROGRAM)
    result = herbrand.materialize(program, facts=FACTS, evaluator="substitution")
    assert set(result.decoded_rows("q")) == {(2,), (3,)}


def test_incremental_engines_refuse_the_pragma():
    with pytest.raises(UsageError, match="magic-transform"):
        herbrand.incremental('.pragma "magic-transform" "*"' + PROGRAM, facts=FACTS)
