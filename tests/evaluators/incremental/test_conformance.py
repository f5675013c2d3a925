"""Every registered incremental engine against the oracle: the named checks of
``check_incremental`` and random stratified programs under random update sequences."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from herbrand.framework.registry import INCREMENTAL_ENGINES
from herbrand.framework.testing import IncrementalSession, incremental_check_params
from tests.strategies import programs_with_updates

ENGINES = INCREMENTAL_ENGINES.names()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("check", incremental_check_params())
def test_check_incremental(engine, check):
    check(INCREMENTAL_ENGINES.get(engine))


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=programs_with_updates())
def test_random_programs_and_updates_match_recomputation(engine, case):
    program, facts, updates = case
    session = IncrementalSession(INCREMENTAL_ENGINES.get(engine), program, facts)
    for number, (insert, delete) in enumerate(updates, start=1):
        session.update(insert, delete, label=f"update {number} of {updates}")
