"""Pivots of recursive strata: golden fixtures (``pivot_fixtures/*.dl``, each with a first line
``// pivot: REL=POS, ...`` or ``// pivot: none``), and the property a pivot promises: the
stratum's fixpoint is the union of the fixpoints of its seeds split by the pivot value."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import herbrand
from herbrand.framework.analysis import analyse
from herbrand.framework.parser import parse
from herbrand.framework.syntax import Atom, Declaration, Literal, Rule, Var
from herbrand.translators.pivots import find_pivot

FIXTURES = sorted((Path(__file__).parent / "pivot_fixtures").glob("*.dl"))
PARTS = 3


def _expected(text: str) -> str | None:
    found = re.match(r"// pivot: (.*)", text).group(1).strip()
    return None if found.startswith("none") else found


def _pivots(program):
    return [(stratum, find_pivot(stratum)) for stratum in analyse(program) if stratum.recursive]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda path: path.stem)
def test_pivot_fixture(path):
    text = path.read_text()
    found = [str(pivot) for _, pivot in _pivots(parse(text)) if pivot is not None]
    expected = _expected(text)
    assert found == ([] if expected is None else [expected])


def _split_run(program, facts, stratum, pivot) -> dict[str, set]:
    """The stratum's relations computed part by part: its exit rules' tuples (the seeds) split
    by pivot value, each part run to its fixpoint alone through seed relations; asserts that
    each part derives only tuples of its own pivot values and that the parts unite to the
    whole."""
    whole = herbrand.materialize(program, facts)
    own = set(stratum.relations)
    exit_rules = tuple(rule for rule in stratum.rules
                       if not any(isinstance(e, Literal) and e.atom.relation in own
                                  for e in rule.body))
    recursive = tuple(rule for rule in stratum.rules if rule not in exit_rules)
    lower = {name: whole[name].to_rows() for name in whole if name not in own}
    seeds_program = replace(program, rules=tuple(
        rule for rule in program.rules if rule.head.relation not in own) + exit_rules)
    seeds = herbrand.materialize(seeds_program, facts)
    united: dict[str, set] = {name: set() for name in own}
    declared = {d.name: d for d in program.declarations}
    for part in range(PARTS):
        seed_rules, declarations, part_facts = [], list(program.declarations), dict(lower)
        for name in own:
            seed = f"seed_{name}"
            declarations.append(Declaration(seed, declared[name].columns))
            variables = tuple(Var(f"v{i}") for i in range(declared[name].arity))
            seed_rules.append(Rule(Atom(name, variables), (Literal(Atom(seed, variables)),)))
            position = pivot.position(name)
            part_facts[seed] = [row for row in seeds[name].to_rows()
                                if hash(row[position]) % PARTS == part]
        part_program = replace(program, declarations=tuple(declarations),
                               rules=tuple(seed_rules) + recursive, directives=())
        result = herbrand.materialize(part_program, part_facts)
        for name in own:
            rows = set(result[name].to_rows())
            position = pivot.position(name)
            # a pivot keeps every part's tuples in that part: the parts never overlap
            assert all(hash(row[position]) % PARTS == part for row in rows), (name, part)
            united[name] |= rows
    assert united == {name: set(whole[name].to_rows()) for name in own}
    return united


edges = st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=25)


@pytest.mark.parametrize("path", [p for p in FIXTURES if _expected(p.read_text())],
                         ids=lambda path: path.stem)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_pivoted_stratum_is_the_union_of_its_parts(path, data):
    program = parse(path.read_text())
    inputs = {declaration.name for declaration in program.declarations} - {
        rule.head.relation for rule in program.rules}
    facts = {}
    for declaration in program.declarations:
        if declaration.name in inputs:
            facts[declaration.name] = [row[:declaration.arity] for row in data.draw(edges)]
    for stratum, pivot in _pivots(program):
        _split_run(program, facts, stratum, pivot)
