"""SwitchBudget: the work counted against an Update, the exempt work apart."""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.evaluators.incremental.elastic_budget import (
    MAX_SKIPPED,
    Abandoned,
    SwitchBackoff,
    SwitchBudget,
)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_check_raises_once_counted_work_passes_the_limit():
    clock = _Clock()
    budget = SwitchBudget(clock, 5.0)
    clock.now = 5.0
    budget.check()  # exactly at the limit: still within it
    clock.now = 5.5
    with pytest.raises(Abandoned):
        budget.check()


def test_exempt_work_is_not_counted_and_is_recorded():
    clock = _Clock()
    budget = SwitchBudget(clock, 5.0)

    def work() -> str:
        clock.now += 4.0
        budget.check()  # a check inside exempt work passes
        return "done"

    assert budget.exempt(work) == "done"
    clock.now += 5.0
    budget.check()  # 9 s passed, 4 of them exempt
    assert budget.exempted == 4.0
    clock.now += 0.5
    with pytest.raises(Abandoned):
        budget.check()


def test_exempt_work_beyond_the_cap_counts():
    clock = _Clock()
    budget = SwitchBudget(clock, 5.0)

    def work() -> None:
        clock.now += 8.0
        budget.check()  # 8 s, at most 5 exempt: 3 counted
        clock.now += 3.0
        budget.check()  # 11 s, 6 counted

    with pytest.raises(Abandoned):
        budget.exempt(work)
    assert budget.exempted == 11.0


def test_exempt_work_that_fails_is_still_recorded():
    clock = _Clock()
    budget = SwitchBudget(clock, 1.0)

    def failing() -> None:
        clock.now += 0.5
        raise ValueError("boom")

    with pytest.raises(ValueError):
        budget.exempt(failing)
    assert budget.exempted == 0.5
    budget.check()


def test_unlimited_never_runs_out():
    budget = SwitchBudget.unlimited()
    budget.exempt(lambda: None)
    budget.check()


def test_counted_leaves_out_exempt_work_up_to_the_cap():
    clock = _Clock()
    budget = SwitchBudget(clock, 5.0)
    assert budget.limit == 5.0
    clock.now = 1.0
    budget.exempt(lambda: setattr(clock, "now", 3.0))  # 2 s exempt
    clock.now = 4.0
    assert budget.counted() == 2.0


def test_backoff_skips_twice_as_many_updates_after_each_abandoned_attempt():
    backoff = SwitchBackoff()
    pattern = []
    for _ in range(30):
        attempt = backoff.attempt(10)
        pattern.append(attempt)
        if attempt:
            backoff.record(True, 10)
    gaps = np.diff(np.flatnonzero(pattern)).tolist()
    assert gaps == [2, 4, 8, 8]  # 1, 3, 7 skipped, then at most MAX_SKIPPED
    assert MAX_SKIPPED == 7
    backoff.record(False, 10)
    assert backoff.attempt(10) and backoff.attempt(10)


def test_backoff_attempts_an_update_half_the_size_of_the_abandoned_ones():
    backoff = SwitchBackoff()
    backoff.record(True, 100)
    backoff.record(True, 20)  # the smallest abandoned: 20 rows
    assert not backoff.attempt(11)
    assert backoff.attempt(10)  # half of it: attempted, no skip consumed
    backoff.record(True, 10)
    assert not backoff.attempt(6) and backoff.attempt(5)
