"""The translator on real programs: the Soufflé conformance corpus and the dyre programs.

Every rule of every program translates to a plan without a Pending node whose arity is the
head's, except the rules that are unsafe here (aggregate witnesses: declared below with the
reason, checked strictly). And on every case the reference evaluators materialize
quickly, each rule's plan (after the magic-sets rewrite a pragma asks for), run by the reference interpreter over the materialized model,
derives exactly what one application of the substitution evaluator derives.
"""

from __future__ import annotations

import pytest

import herbrand
from herbrand.api import program_to_run
from herbrand.evaluators.substitution import SubstitutionEvaluator
from herbrand.framework.parser import parse_file
from herbrand.translators.encode_symbols import encode_symbols
from herbrand.translators.interpreter import evaluate
from herbrand.translators.ir import TranslationError, walk
from herbrand.translators.pending import Pending
from herbrand.translators.pipeline import translate_rule
from herbrand.workloads import souffle_cases
from herbrand.workloads.shared import workload_path

TIERS = ("tierA_plain", "tierB_arith_agg", "tierD_ignorable_directives")
WITNESSES = "a head variable bound only inside an aggregate (a Soufflé witness) is unsafe here"
UNSAFE = {
    "tierB_arith_agg/aggregate_witnesses": WITNESSES,
    "tierB_arith_agg/longest_path": WITNESSES,
}
HEAVY = "too heavy for the reference evaluators (minutes, or memory)"
NOT_MATERIALIZED = {
    "tierB_arith_agg/independent_body3": HEAVY,
    "tierD_ignorable_directives/inline_nats": HEAVY,
}
# Over 10 s each, mostly in the reference interpreter's joins (pytest -m "not slow" leaves out).
SLOW = {"tierA_plain/hmmer", "tierB_arith_agg/amicable", "tierB_arith_agg/catalan",
        "tierB_arith_agg/cprog4"}


def programs() -> list:
    cases = [pytest.param(f"{tier}/{case.name}", case.program, id=f"{tier}/{case.name}")
             for tier in TIERS for case in souffle_cases(tier)]
    dyre = [pytest.param(f"dyre/{name}", workload_path("dyre", name), id=f"dyre/{name}")
            for name in ("tc.dl", "rdfs.dl")]
    return cases + dyre


@pytest.mark.parametrize(("key", "path"), programs())
def test_every_rule_translates(key, path):
    failures = []
    for rule in parse_file(path).proper_rules:
        try:
            plan = translate_rule(rule)
        except TranslationError as error:
            failures.append(str(error))
            continue
        assert plan.arity == rule.head.arity
        assert not any(isinstance(node, Pending) for node, _ in walk(plan))
    if key in UNSAFE:
        assert failures, f"{key} translates now: take it off UNSAFE"
    else:
        assert not failures


def cases() -> list:
    params = []
    for tier in TIERS:
        for case in souffle_cases(tier):
            key = f"{tier}/{case.name}"
            marks = []
            if key in UNSAFE:
                marks.append(pytest.mark.xfail(strict=True, reason=UNSAFE[key],
                                               raises=herbrand.HerbrandError))
            if key in NOT_MATERIALIZED:
                marks.append(pytest.mark.xfail(run=False, reason=NOT_MATERIALIZED[key]))
            if key in SLOW:
                marks.append(pytest.mark.slow)
            params.append(pytest.param(case, id=key, marks=marks))
    return params


@pytest.mark.parametrize("case", cases())
def test_plans_derive_what_the_substitution_evaluator_derives(case):
    # the rules that run: after the magic-sets rewrite where a pragma asks for it
    program = program_to_run(herbrand.parse(case.program))
    facts_dir = case.facts_dir if case.facts_dir.is_dir() else case.directory
    model = herbrand.materialize(program, facts_dir=facts_dir)
    relations = {name: model[name].to_rows() for name in model}
    for rule in program.proper_rules:
        plan = encode_symbols(translate_rule(rule), model.symbols)
        expected = SubstitutionEvaluator().evaluate([rule], model)[rule.head.relation]
        assert evaluate(plan, relations) == set(expected.to_rows()), str(rule)
