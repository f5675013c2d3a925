"""Plans lowered to the interpreter's levels: which run natively, and how."""

from __future__ import annotations

import pytest

from herbrand.evaluators.fixpoint import delta_variants
from herbrand.evaluators.native import layout as k
from herbrand.evaluators.native.encoding import NativeRule, Program, delta_relation, lower_rule
from herbrand.framework.parser import parse
from herbrand.translators.pipeline import translate_rule

IDS = {"e": 0, "n": 1, "p": 2, "c": 3}


def _lower(text: str, delta: frozenset[int] = frozenset()) -> tuple[NativeRule | None, list]:
    program = parse(".decl e(x: number, y: number)\n.decl n(x: number)\n"
                    ".decl p(x: number, y: number)\n.decl c(x: number, n: number)\n" + text)
    created = []

    def index_of(rel, key, whole):
        created.append((rel, key))
        return k.PROBE, len(created) - 1

    def resolve(name, arity):
        relation, is_delta = delta_relation(name)
        return IDS[relation], is_delta

    plan = translate_rule(program.rules[0], delta=delta)
    return lower_rule(plan, resolve, index_of), created


def test_a_join_is_a_scan_then_a_probe_keyed_on_the_join_column():
    rule, created = _lower("p(x, z) :- p(x, y), e(y, z).", delta=frozenset({0}))
    first, second = rule.levels
    assert (first.kind, first.relation, first.ranged) == (k.SCAN, IDS["p"], True)
    assert (second.kind, second.relation, second.ranged) == (k.PROBE, IDS["e"], False)
    assert created == [(IDS["e"], (0,))] and second.key == (("register", 1),)
    assert rule.head == (("register", 0), ("register", 2))


def test_a_constant_of_a_probed_atom_joins_its_key():
    rule, created = _lower("p(x, y) :- p(x, y), e(y, 7).", delta=frozenset({0}))
    assert [level.kind for level in rule.levels] == [k.SCAN, k.PROBE]
    assert created == [(IDS["e"], (0, 1))]
    assert rule.levels[1].key == (("register", 1), ("constant", 7))


def test_negation_comparisons_and_arithmetic_become_level_code():
    rule, created = _lower("p(x, z) :- e(x, y), !n(y), z = x + y, z < 10.")
    (level,) = rule.levels
    assert [operation[0] for operation in level.code] == [k.OP_MAP, k.OP_COMPARE, k.OP_ABSENT]
    assert created == [(IDS["n"], (0,))]


def test_a_rule_without_atoms_runs_one_pass():
    rule, _ = _lower("n(x) :- x = 3 + 4.")
    assert [level.kind for level in rule.levels] == [k.UNIT]


@pytest.mark.parametrize("text", [
    "c(x, m) :- n(x), m = count : e(x, _).",
    "c(x, m) :- n(x), m = max y : e(x, y).",
])
def test_aggregates_are_left_to_the_batch_executor(text):
    assert _lower(text)[0] is None


def test_a_program_encodes_every_rule_as_arrays():
    rule, _ = _lower("p(x, z) :- p(x, y), e(y, z), x != z.")
    program = Program([(rule, IDS["p"], 5)])
    arrays = program.arrays
    assert len(arrays) == k.PROGRAM_FIELDS
    assert list(arrays[k.P_RULE_LEVELS]) == [0, 2] and list(arrays[k.P_RULE_DEDUP]) == [5]
    assert list(arrays[k.P_LEVEL_KIND]) == [k.SCAN, k.PROBE]


def test_a_filter_pushed_onto_a_probed_atom_is_tested_after_the_probe():
    rule, _ = _lower("p(x, z) :- p(x, y), e(y, z), z < 0.", delta=frozenset({0}))
    first, second = rule.levels
    assert second.kind == k.PROBE
    assert [operation[0] for operation in second.code] == [k.OP_COMPARE]


def test_only_a_joins_probe_of_a_whole_relation_may_read_a_view():
    program = parse(".decl e(x: number, y: number)\n.decl p(x: number, y: number)\n"
                    "p(x, z) :- p(x, y), e(y, z), !e(z, x).")
    asked = []

    def index_of(rel, key, whole):
        asked.append((rel, key, whole))
        return (k.VIEW_PROBE if whole else k.PROBE), len(asked) - 1

    def resolve(name, arity):
        relation, is_delta = delta_relation(name)
        return {"e": 0, "p": 1}[relation], is_delta

    variant = delta_variants(program.rules[0], {"p"})[0]  # p read as a delta, e whole
    lowered = lower_rule(translate_rule(variant), resolve, index_of)
    assert [level.kind for level in lowered.levels] == [k.SCAN, k.VIEW_PROBE]
    assert asked == [(0, (0,), True), (0, (0, 1), False)]  # the join; the negation
    assert lowered.indexes() == (0, 1)
