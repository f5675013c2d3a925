"""Every configuration (evaluator x index x fixpoint x backend) against the oracle on
hypothesis-generated stratified programs with negation, comparisons, arithmetic and
aggregates."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

import herbrand
from herbrand.framework.testing import oracle_materialize
from tests.strategies import programs_with_facts

from .configurations import configuration_params


@pytest.mark.parametrize("configuration", configuration_params())
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=programs_with_facts(atom_expressions=True))
def test_random_programs_match_the_oracle(configuration, case):
    program, facts = case
    expected = oracle_materialize(program, facts)
    result = herbrand.materialize(program, facts=facts, **configuration)
    for declaration in program.declarations:
        name = declaration.name
        assert set(result.decoded_rows(name)) == set(expected.get(name, set())), name
