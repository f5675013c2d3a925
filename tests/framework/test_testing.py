"""The oracle, the model check and the evaluator conformance suite itself."""

from __future__ import annotations

import subprocess
import sys

import pytest

from herbrand.evaluators.fixpoint import NaiveFixpoint, SemiNaiveFixpoint
from herbrand.evaluators.substitution import SubstitutionEvaluator
from herbrand.framework.parser import parse
from herbrand.framework.syntax import Literal, Rule
from herbrand.framework.testing import (
    check_evaluator,
    check_model,
    compare_with_oracle,
    evaluator_check_params,
    evaluator_checks,
    oracle_materialize,
)

TC = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
.decl unreached(x: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
unreached(x) :- edge(x, _), !path(_, x).
"""
EDGES = {"edge": [(1, 2), (2, 3)]}
MODEL = {"edge": {(1, 2), (2, 3)}, "path": {(1, 2), (2, 3), (1, 3)}, "unreached": {(1,)}}


# -- the oracle --------------------------------------------------------------------------------


def test_oracle_computes_the_perfect_model():
    assert oracle_materialize(parse(TC), EDGES) == MODEL


def test_oracle_arithmetic_and_aggregates():
    program = parse("""
        .decl p(x: number, y: number)
        .decl q(x: number, y: number, d: number, m: number)
        .decl c(x: number, n: number)
        .decl lo(x: number, n: number)
        .decl s(n: number)
        q(x, y, x / y, x % y) :- p(x, y).
        c(x, n) :- p(x, _), n = count : { p(x, _) }.
        lo(x, n) :- p(x, _), n = min y : { p(x, y), y > 5 }.
        s(n) :- n = sum y : { p(_, y) }.
        """)
    model = oracle_materialize(program, {"p": [(-7, 2), (-7, -2), (1, 0)]})
    assert model["q"] == {(-7, 2, -3, -1), (-7, -2, 3, -1)}
    assert model["c"] == {(-7, 2), (1, 1)}
    assert model["lo"] == set()
    assert model["s"] == {(0,)}


def test_oracle_keeps_inline_facts_and_symbols():
    program = parse('.decl s(x: symbol, n: number)\ns("a", 1 + 1).')
    assert oracle_materialize(program, {"s": [("b", 0)]}) == {"s": {("a", 2), ("b", 0)}}


# -- check_model -------------------------------------------------------------------------------


def test_check_model_accepts_the_model():
    check_model(parse(TC), EDGES, MODEL)


@pytest.mark.parametrize(("change", "message"), [
    (lambda m: m["path"].discard((1, 3)), r"rule path\(x, z\) :- .* not satisfied"),
    (lambda m: m["path"].add((5, 5)), "path are neither inputs nor derived"),
    (lambda m: m["edge"].discard((1, 2)), "input facts of edge missing"),
    (lambda m: m.pop("unreached"), "missing from the result"),
    (lambda m: m["unreached"].add((2,)), "unreached are neither inputs nor derived"),
])
def test_check_model_names_what_is_wrong(change, message):
    model = {name: set(rows) for name, rows in MODEL.items()}
    change(model)
    with pytest.raises(AssertionError, match=message):
        check_model(parse(TC), EDGES, model)


def test_compare_with_oracle_returns_the_decoded_result():
    assert compare_with_oracle(TC, EDGES, SubstitutionEvaluator, NaiveFixpoint) == MODEL


# -- the conformance suite ---------------------------------------------------------------------


class WithoutNegation(SubstitutionEvaluator):
    """A broken evaluator: it ignores negated literals."""

    def evaluate(self, rules, instance):
        stripped = [Rule(r.head, tuple(e for e in r.body
                                       if not (isinstance(e, Literal) and e.negated)))
                    for r in rules]
        return super().evaluate(stripped, instance)


NEGATION_CHECKS = ("check_negation", "check_negation_with_wildcards", "check_nullary",
                   "check_several_strata")


def test_evaluator_checks_are_named_and_cover_the_language():
    names = [name for name, _ in evaluator_checks()]
    assert len(names) == len(set(names)) >= 25
    assert all(name.startswith("check_") and check.__name__ == name and check.__doc__
               for name, check in evaluator_checks())
    for feature in ("tc_chain", "tc_cycle", "negation", "comparisons", "arithmetic",
                    "c_division", "aggregate_count", "aggregate_sum", "aggregate_min_max",
                    "wildcards", "symbols", "repeated_variables", "constants_in_atoms",
                    "nullary", "empty_input", "mutual_recursion", "several_strata"):
        assert f"check_{feature}" in names


@pytest.mark.parametrize("fixpoint", [None, NaiveFixpoint, SemiNaiveFixpoint])
def test_the_substitution_evaluator_passes(fixpoint):
    outcomes = check_evaluator(SubstitutionEvaluator, fixpoint)
    assert set(outcomes.values()) == {"passed"} and len(outcomes) == len(evaluator_checks())


def test_a_failing_check_is_named():
    with pytest.raises(AssertionError, match="check_negation failed") as error:
        check_evaluator(WithoutNegation)
    assert "check_tc_chain" not in str(error.value)


def test_declared_failures_are_accepted_with_their_reason():
    declared = dict.fromkeys(NEGATION_CHECKS, "ignores negation")
    outcomes = check_evaluator(WithoutNegation, expected_failures=declared)
    assert outcomes["check_negation"] == "expected failure: ignores negation"
    assert outcomes["check_tc_chain"] == "passed"


def test_a_declared_failure_that_passes_is_an_error():
    with pytest.raises(AssertionError, match="check_tc_chain passed but is declared failing"):
        check_evaluator(SubstitutionEvaluator, expected_failures={"check_tc_chain": "why"})


def test_unknown_declared_failures_are_rejected():
    with pytest.raises(ValueError, match="check_nonsense"):
        check_evaluator(SubstitutionEvaluator, expected_failures={"check_nonsense": "?"})


def test_pytest_params_have_readable_ids_and_strict_xfails():
    params = evaluator_check_params({"check_negation": "known gap"})
    assert [p.id for p in params] == [name for name, _ in evaluator_checks()]
    (marked,) = [p for p in params if p.marks]
    assert marked.id == "check_negation"
    (mark,) = marked.marks
    assert mark.name == "xfail" and mark.kwargs == {"reason": "known gap", "strict": True}


def test_the_framework_suite_imports_no_evaluator():
    code = ("import sys, herbrand.framework.testing; "
            "sys.exit(any(m.startswith('herbrand.evaluators') for m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
