"""SwitchBudget: the work counted against an Update, the exempt work apart; SwitchBackoff."""

from __future__ import annotations

import numpy as np
import pytest

from herbrand.evaluators.incremental.elastic_budget import (
    LEAST_UPDATE,
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
    budget = SwitchBudget(clock, 0.5, 10.0)
    clock.now = 5.0
    budget.check()  # exactly at the limit: still within it
    clock.now = 5.5
    with pytest.raises(Abandoned):
        budget.check()


def test_exempt_work_is_not_counted_and_raises_the_limit():
    clock = _Clock()
    budget = SwitchBudget(clock, 0.5, 10.0)

    def work() -> str:
        clock.now += 4.0
        budget.check()  # a check inside exempt work passes
        return "done"

    assert budget.exempt(work) == "done"
    assert budget.exempted == 4.0 and budget.limit == 7.0  # half of 10 + 4 s
    clock.now += 7.0
    budget.check()  # 11 s passed, 4 of them exempt: 7 counted
    clock.now += 0.5
    with pytest.raises(Abandoned):
        budget.check()


def test_exempt_work_however_long_is_not_counted():
    clock = _Clock()
    budget = SwitchBudget(clock, 0.5, 10.0)

    def work() -> None:
        clock.now += 80.0
        budget.check()

    budget.exempt(work)
    clock.now += 45.0  # the Bootstrap's 10 s and the 80 s it deferred: 45 s allowed
    budget.check()
    clock.now += 0.5
    with pytest.raises(Abandoned):
        budget.check()


def test_nested_exempt_work_is_timed_once():
    clock = _Clock()
    budget = SwitchBudget(clock, 0.5, 10.0)

    def inner() -> int:
        clock.now += 1.0
        return 1

    def outer() -> int:
        clock.now += 2.0
        return budget.exempt(inner) + 1

    assert budget.exempt(outer) == 2
    assert budget.exempted == 3.0 and budget.counted() == 0.0


def test_exempt_work_that_fails_is_still_recorded():
    clock = _Clock()
    budget = SwitchBudget(clock, 0.5, 2.0)

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


def test_counted_leaves_out_exempt_work():
    clock = _Clock()
    budget = SwitchBudget(clock, 0.5, 10.0)
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


def test_backoff_skips_the_most_after_an_abandoned_update_of_one_row():
    """A one-row update is the least there is: its abandon skips MAX_SKIPPED updates at once
    (the exponential backoff would skip one), and a completed update ends the skipping."""
    backoff = SwitchBackoff()
    assert LEAST_UPDATE == 1 and backoff.attempt(1)
    backoff.record(True, 1)
    assert [backoff.attempt(1) for _ in range(MAX_SKIPPED + 1)] == [False] * MAX_SKIPPED + [True]
    backoff.record(False, 1)
    assert backoff.attempt(1)
    backoff.record(True, 2)  # two rows: not the least; one update skipped
    assert [backoff.attempt(2) for _ in range(2)] == [False, True]
