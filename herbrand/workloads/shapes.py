"""Which peer computation a program is: its shape (``programs.PEER_PROGRAMS``), if any.

The peers (DuckDB, clingo) cannot run an arbitrary Datalog program: each shape is one
computation written once for each of them. ``recognise(program)`` finds the shape whose
Datalog program equals ``program`` up to the names of relations and variables, the order of
the rules and the order of each rule's body, with the same inputs and the shape's counted
relation among the outputs, every column a number (the peers read numbers); it returns the ``Shape`` with the renaming, so a peer can be given
the program's files under the shape's relation names. A program with inline facts, or with
anything the shape lacks, is no shape.

    >>> from herbrand.api import parse
    >>> recognise(parse('''.decl edge(a: number, b: number) .decl path(a: number, b: number)
    ...     .input edge .output path
    ...     path(a, c) :- edge(b, c), path(a, b).  path(a, b) :- edge(a, b).''')).relations
    {'e': 'edge', 'tc': 'path'}

Cost: per shape, one renaming per permutation of the declared relations of equal arity (two
or three relations), each rule's body permuted (at most three elements): microseconds.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from herbrand.framework.parser import parse
from herbrand.framework.syntax import NUMBER, Program, Rule
from herbrand.workloads.programs import PEER_PROGRAMS, PeerProgram

# identifiers of a printed rule (quoted strings are skipped); an identifier before "(" is a
# relation (or a functor, which no shape has), any other a variable
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|([A-Za-z_]\w*)(\()?')


@dataclass(frozen=True)
class Shape:
    """A recognised program: ``name`` (a key of ``PEER_PROGRAMS``) and ``relations``: the
    shape's relation -> the program's."""

    name: str
    relations: Mapping[str, str]

    @property
    def peer(self) -> PeerProgram:
        return PEER_PROGRAMS[self.name]

    @property
    def output(self) -> str:
        """The program's name of the relation the peers count."""
        return self.relations[self.peer.output]


def _rule_text(rule: Rule, body: tuple, relations: Mapping[str, str]) -> str:
    variables: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        name, call = match.group(1), match.group(2)
        if name is None:
            return match.group(0)
        if call:
            return relations.get(name, name) + call
        return variables.setdefault(name, f"v{len(variables)}")

    return _TOKEN.sub(rename, str(Rule(rule.head, body)))


def _canonical(rules: tuple[Rule, ...], relations: Mapping[str, str]) -> list[str]:
    """Each rule's smallest text over the orders of its body, relations renamed, variables
    numbered by first occurrence; sorted."""
    return sorted(min(_rule_text(rule, body, relations)
                      for body in itertools.permutations(rule.body)) for rule in rules)


@cache
def _reference(name: str) -> tuple[Program, list[str]]:
    program = parse(PEER_PROGRAMS[name].datalog)
    return program, _canonical(program.rules, {})


def _arities(program: Program) -> dict[str, int]:
    return {d.name: d.arity for d in program.declarations}


def recognise(program: Program) -> Shape | None:
    """The shape ``program`` computes, or None (see the module's docstring)."""
    if (any(rule.is_fact or len(rule.body) > 3 for rule in program.rules)
            or any(t != NUMBER for d in program.declarations for t in d.types)):
        return None  # the peers read numbers only, and get no inline facts
    arities = _arities(program)
    for name in PEER_PROGRAMS:
        reference, expected = _reference(name)
        wanted = _arities(reference)
        if len(program.rules) != len(reference.rules) or sorted(wanted.values()) != sorted(
                arities.values()):
            continue
        shape_names = list(wanted)
        for chosen in itertools.permutations(arities, len(shape_names)):
            relations = dict(zip(shape_names, chosen, strict=True))
            if any(wanted[s] != arities[p] for s, p in relations.items()):
                continue
            back = {p: s for s, p in relations.items()}
            if (_canonical(program.rules, back) == expected
                    and {back[r] for r in program.inputs} == set(reference.inputs)
                    and relations[PEER_PROGRAMS[name].output] in program.outputs):
                return Shape(name, relations)
    return None
