"""Naive and semi-naive fixpoints: the delta rewrite (golden), the loop, stats, and agreement
with the oracle on random programs."""

from __future__ import annotations

import doctest
import time

import pytest
from hypothesis import HealthCheck, given, settings

from herbrand.evaluators import fixpoint
from herbrand.evaluators.fixpoint import (
    NaiveFixpoint,
    SemiNaiveFixpoint,
    delta_name,
    delta_variants,
)
from herbrand.evaluators.substitution import SubstitutionEvaluator
from herbrand.framework.contracts import RuleEvaluator
from herbrand.framework.errors import ArityError, StratificationError
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.testing import check_model, encode_facts, oracle_materialize
from herbrand.workloads.shared import dyre_edges, dyre_program
from tests.strategies import programs_with_facts

FIXPOINTS = [NaiveFixpoint, SemiNaiveFixpoint]

TC = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def rule(text: str):
    (parsed,) = parse(text).rules
    return parsed


# -- delta_variants: golden cases --------------------------------------------------------------

GOLDEN = [
    ("path(x, y) :- edge(x, y).", {"path"}, []),
    ("path(x, z) :- path(x, y), edge(y, z).", {"path"},
     ["path(x, z) :- @delta:path(x, y), edge(y, z)."]),
    ("path(x, z) :- path(x, y), path(y, z).", {"path"},
     ["path(x, z) :- @delta:path(x, y), path(y, z).",
      "path(x, z) :- @delta:path(y, z), path(x, y)."]),
    ("a(x) :- b(x), c(x, y), a(y), x < 3.", {"a", "b"},
     ["a(x) :- @delta:b(x), c(x, y), a(y), x < 3.",
      "a(x) :- @delta:a(y), b(x), c(x, y), x < 3."]),
    ("a(x) :- e(x), !a(x).", {"a"}, []),
    ("a(n) :- e(x), n = count : { a(x) }.", {"a"}, []),
]


@pytest.mark.parametrize(("source", "recursive", "expected"), GOLDEN,
                         ids=[g[0] for g in GOLDEN])
def test_delta_variants_golden(source, recursive, expected):
    assert [str(v) for v in delta_variants(rule(source), recursive)] == expected


def test_delta_variants_is_pure_and_keeps_heads_and_locations():
    original = rule("path(x, z) :- path(x, y), path(y, z).")
    variants = delta_variants(original, frozenset({"path"}))
    assert original == rule("path(x, z) :- path(x, y), path(y, z).")
    assert all(v.head == original.head and v.location == original.location for v in variants)
    assert variants[0].body[0].atom.location == original.body[0].atom.location


def test_delta_name():
    assert delta_name("path") == "@delta:path"


def test_doctests():
    assert doctest.testmod(fixpoint).failed == 0


# -- materialize -------------------------------------------------------------------------------


def materialize(fixpoint_class, text: str, facts: dict, **kwargs):
    program = parse(text)
    runner = fixpoint_class(SubstitutionEvaluator())
    result = runner.materialize(program, encode_facts(program, facts), **kwargs)
    return runner, result


@pytest.mark.parametrize("fixpoint_class", FIXPOINTS)
def test_transitive_closure(fixpoint_class):
    _, result = materialize(fixpoint_class, TC, {"edge": [(1, 2), (2, 3), (3, 4)]})
    assert result["path"].to_set() == {(1, 2), (2, 3), (3, 4), (1, 3), (2, 4), (1, 4)}


@pytest.mark.parametrize("fixpoint_class", FIXPOINTS)
def test_result_is_typed_complete_and_shares_the_symbol_table(fixpoint_class):
    program = parse(TC + """
        .decl name(x: number, s: symbol)
        .decl idle(s: symbol)
        name(x, "n") :- edge(x, _).
        """)
    database = encode_facts(program, {"edge": [(1, 2)]})
    result = fixpoint_class(SubstitutionEvaluator()).materialize(program, database)
    assert set(result) == {"edge", "path", "name", "idle"}
    assert result.types["name"] == ("number", "symbol") and result.symbols is database.symbols
    assert result.decoded_rows("name") == [(1, "n")] and not len(result["idle"])
    assert set(database) == {"edge"}


@pytest.mark.parametrize("fixpoint_class", FIXPOINTS)
def test_inline_facts_join_the_given_facts(fixpoint_class):
    text = ".decl n(x: number)\n.decl s(x: symbol)\nn(1 + 1).\nn(1 / 0).\ns(\"a\")."
    _, result = materialize(fixpoint_class, text, {"n": [(5,)]})
    assert result["n"].to_set() == {(2,), (5,)} and result.decoded_rows("s") == [("a",)]


@pytest.mark.parametrize("fixpoint_class", FIXPOINTS)
def test_given_rows_of_the_wrong_arity_are_rejected(fixpoint_class):
    program = parse(TC)
    database = Database({"edge": Relation.from_rows([(1, 2, 3)])}, SymbolTable())
    with pytest.raises(ArityError, match="edge"):
        fixpoint_class(SubstitutionEvaluator()).materialize(program, database)


@pytest.mark.parametrize("fixpoint_class", FIXPOINTS)
def test_analysis_errors_come_first(fixpoint_class):
    text = ".decl e(x: number)\n.decl p(x: number)\np(x) :- e(x), !p(x)."
    with pytest.raises(StratificationError):
        materialize(fixpoint_class, text, {})


CHAIN_WITH_NEGATION = TC + """
.decl node(x: number)
.decl root(x: number)
node(x) :- edge(x, _).
root(x) :- node(x), !path(_, x).
"""


def test_stats_and_progress_of_semi_naive():
    events = []
    runner, result = materialize(SemiNaiveFixpoint, CHAIN_WITH_NEGATION,
                                 {"edge": [(1, 2), (2, 3), (3, 4)]}, observer=events.append)
    by_relations = {s.relations: s for s in runner.stats}
    # path: the first pass derives the 3 edges, then 2, 1, and an empty delta ends the loop
    assert by_relations[("path",)].iterations == 4 and by_relations[("path",)].derived == 6
    assert by_relations[("node",)].iterations == 1 and by_relations[("root",)].derived == 1
    path_stratum = by_relations[("path",)].stratum
    assert [e.delta for e in events if e.stratum == path_stratum] == [3, 2, 1, 0]
    assert len(events) == sum(s.iterations for s in runner.stats)
    assert events[-1].total == sum(s.derived for s in runner.stats) == 6 + 3 + 1
    assert all(s.seconds >= 0 for s in runner.stats)


def test_naive_iterates_until_nothing_is_new():
    runner, _ = materialize(NaiveFixpoint, TC, {"edge": [(1, 2), (2, 3), (3, 4)]})
    (stats,) = runner.stats
    assert stats.iterations == 4 and stats.derived == 6


class Recording(RuleEvaluator):
    """A RuleEvaluator that records the relations each call's rules read."""

    def __init__(self):
        self.inner = SubstitutionEvaluator()
        self.calls = []

    def evaluate(self, rules, instance):
        self.calls.append(sorted({e.atom.relation for r in rules for e in r.body
                                  if hasattr(e, "atom")}))
        return self.inner.evaluate(rules, instance)


def test_semi_naive_reads_deltas_after_the_first_iteration():
    recording = Recording()
    program = parse(TC)
    SemiNaiveFixpoint(recording).materialize(program, encode_facts(program, {"edge": [(1, 2)]}))
    assert recording.calls == [["edge", "path"], ["@delta:path", "edge"]]


def test_non_recursive_strata_take_one_pass_in_semi_naive():
    recording = Recording()
    program = parse(".decl e(x: number)\n.decl f(x: number)\nf(x) :- e(x).")
    SemiNaiveFixpoint(recording).materialize(program, encode_facts(program, {"e": [(1,)]}))
    assert recording.calls == [["e"]]


def test_transitive_closure_of_graph1000_has_11532_tuples():
    program = parse(dyre_program("tc").read_text())
    database = Database({"e": Relation.from_rows(dyre_edges("graph1000"))}, SymbolTable())
    start = time.perf_counter()
    result = SemiNaiveFixpoint(SubstitutionEvaluator()).materialize(program, database)
    assert len(result["tc"]) == 11_532
    assert time.perf_counter() - start < 10


# -- random programs: naive == semi-naive == oracle --------------------------------------------


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs_with_facts(atom_expressions=True))
def test_random_programs_agree_with_the_oracle(program_and_facts):
    program, facts = program_and_facts
    expected = oracle_materialize(program, facts)
    for fixpoint_class in FIXPOINTS:
        result = fixpoint_class(SubstitutionEvaluator()).materialize(
            program, encode_facts(program, facts))
        decoded = {d.name: set(result.decoded_rows(d.name)) for d in program.declarations}
        assert decoded == expected, fixpoint_class.__name__
        check_model(program, facts, decoded)
