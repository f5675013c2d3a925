"""SwitchBudget: the work counted against an Update, the exempt work apart."""

from __future__ import annotations

import pytest

from herbrand.evaluators.incremental.elastic_budget import Abandoned, SwitchBudget


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
