"""Every built-in RuleEvaluator, under every fixpoint, through the conformance suite of
``herbrand.framework.testing``. A new evaluator adds one entry to EVALUATORS, with its known
gaps as data (check name -> reason); they become strict xfails."""

from __future__ import annotations

import pytest

from herbrand.framework.registry import EVALUATORS as REGISTERED
from herbrand.framework.registry import FIXPOINTS
from herbrand.framework.testing import evaluator_check_params

# registered evaluator name -> expected failures
EVALUATORS: dict[str, dict[str, str]] = {
    "substitution": {},
    "relational": {},
}


def _params():
    params = []
    for evaluator, expected_failures in EVALUATORS.items():
        for fixpoint in FIXPOINTS.names():
            for check in evaluator_check_params(expected_failures):
                (function,) = check.values
                params.append(pytest.param(evaluator, fixpoint, function,
                                           id=f"{evaluator}-{fixpoint}-{check.id}",
                                           marks=check.marks))
    return params


@pytest.mark.parametrize(("evaluator", "fixpoint", "check"), _params())
def test_evaluator_conformance(evaluator, fixpoint, check):
    check(REGISTERED.get(evaluator), FIXPOINTS.get(fixpoint))
