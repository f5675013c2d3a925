"""translate_rule, translate_program, format_plan and explain_program."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import herbrand.translators
from herbrand.framework.analysis import rule_literals
from herbrand.framework.parser import parse
from herbrand.translators.ir import Plan, Scan, TranslationError, walk
from herbrand.translators.pending import Pending
from herbrand.translators.pipeline import (
    DEFAULT_PASSES,
    _translated,
    explain_program,
    format_plan,
    translate_program,
    translate_rule,
)
from tests.strategies import programs_with_facts

TC = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
edge(1, 2).
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def rule(text: str):
    (parsed,) = parse(text).rules
    return parsed


@pytest.mark.parametrize("module", [
    m.name for m in pkgutil.iter_modules(herbrand.translators.__path__, "herbrand.translators.")])
def test_docstring_examples(module):
    assert doctest.testmod(importlib.import_module(module)).failed == 0


def test_output_columns_are_the_head_terms():
    plan = translate_rule(rule('r(y, 1, x + y, "s") :- e(x, y), x < y.'))
    assert plan.arity == 4
    assert not any(isinstance(node, Pending) for node, _ in walk(plan))


def test_caller_passes_their_own_list():
    r = rule("path(x, z) :- path(x, y), edge(y, z).")
    assert translate_rule(r, ()) == Pending.of(r)
    assert format_plan(translate_rule(r, DEFAULT_PASSES[:7])) == (
        "Project [0, 3]\n  SelectByColumns $1 = $2\n    Product\n"
        "      Scan path/2\n      Scan edge/2")


def test_hints_reach_only_the_passes_that_declare_them():
    received = {}

    def hinted(plan: Plan, *, sizes=None) -> Plan:
        received["sizes"] = sizes
        return plan

    def plain(plan: Plan) -> Plan:
        return plan

    translate_rule(rule("p(x) :- e(x)."), (plain, hinted), sizes={"e": 3})
    assert received == {"sizes": {"e": 3}}


def test_delta_variant_reads_the_delta_relation_first():
    r = rule("path(x, z) :- edge(x, y), path(y, z).")
    plan = translate_rule(r, delta={1})
    scans = [node for node, _ in walk(plan) if isinstance(node, Scan)]
    assert [s.relation for s in scans] == ["@delta:path", "edge"]


@pytest.mark.parametrize("position", [5, 1, -1])
def test_delta_position_must_be_a_positive_atom(position):
    with pytest.raises(ValueError, match="not a positive atom"):
        translate_rule(rule("p(x) :- e(x), !f(x)."), delta={position})


@pytest.mark.parametrize(("text", "message"), [
    ("p(x, y) :- e(x).", "head term y is not bound"),
    ("p(x) :- e(x), !f(x, y).", "variables y are never bound"),
    ("p(x) :- e(x), y < x.", "variables y are never bound"),
    ("p(x) :- e(x), c = count : { f(x, z), z < w }.", "never bound"),
    ("p(x, m) :- e(x), m = mean y : { f(x, y) }.", "mean is not supported"),
    ("p(_) :- e(_).", "head term _"),
])
def test_untranslatable_rules_name_the_rule(text, message):
    with pytest.raises(TranslationError, match=message) as error:
        translate_rule(rule(text))
    assert str(error.value).startswith(f"rule {rule(text)} at <input>:1:1: ")


def test_translate_program_covers_the_proper_rules_in_order():
    program = parse(TC)
    plans = translate_program(program)
    assert list(plans) == list(program.proper_rules)
    assert plans[program.proper_rules[0]] == Scan("edge", 2)


def test_format_plan_indents_children():
    assert format_plan(Scan("e", 1), 2) == "    Scan e/1"


def test_explain_program_prints_rules_plans_delta_variants_and_pivots():
    assert explain_program(parse(TC)) == """\
path(x, y) :- edge(x, y).
  Scan edge/2

path(x, z) :- path(x, y), edge(y, z).
  Project [0, 3]
    Join left=[1] right=[0]
      Scan path/2
      Scan edge/2
  delta variant, path(x, y) reads @delta:path:
    Project [0, 3]
      Join left=[1] right=[0]
        Scan @delta:path/2
        Scan edge/2

recursive stratum path: pivot path=0
"""


def test_a_rule_translated_again_with_its_sizes_in_the_same_order_gets_the_kept_plan():
    r = rule("path(x, z) :- path(x, y), edge(y, z), node(z).")
    first = translate_rule(r, sizes={"path": 10, "edge": 5, "node": 7, "other": 1})
    assert translate_rule(r, sizes={"path": 900, "edge": 20, "node": 30}) is first
    # another order of sizes is another key: the plan of a fresh translation
    reordered = translate_rule(r, sizes={"path": 1, "edge": 5, "node": 7})
    assert reordered is not first
    assert reordered == _translated.__wrapped__(r, DEFAULT_PASSES, (("edge", 5), ("node", 7),
                                                                    ("path", 1)))


@settings(max_examples=60, deadline=None)
@given(programs_with_facts(max_body=4), st.lists(st.integers(0, 5), min_size=8, max_size=8))
def test_kept_plans_equal_plans_translated_with_the_exact_sizes(case, drawn):
    """Ranks of sizes order the joins as the sizes do (ties and unknown sizes included)."""
    program, _ = case
    names = sorted({d.name for d in program.declarations})
    sizes = {name: size for name, size in zip(names, drawn, strict=False) if size}
    for r in program.proper_rules:
        exact = tuple((name, sizes[name]) for name in sorted(
            {literal.atom.relation for literal, _ in rule_literals(r)}) if name in sizes)
        assert translate_rule(r, sizes=sizes) == _translated.__wrapped__(
            r, DEFAULT_PASSES, exact)
