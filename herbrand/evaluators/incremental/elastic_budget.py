"""The elastic switch's time budget for one Update, with the Bootstrap's deferred work exempt.

The switch abandons an Update that runs longer than ``switch`` times the last Bootstrap. The
native Bootstrap (``elastic_native``) defers Algorithm 2's proof counts and the row indexes of
the relations it numbers: the first Updates after it compute the counts they need
(``StratumRun._resolve_counts``) and index a relation when they first search it
(``StratumRun._find``). That work belongs to the Bootstrap, not to the Update that happens to trigger it, so ``SwitchBudget`` does not count it
against the Update (``exempt``) and the engine adds it to the Bootstrap's time instead
(``exempted``): the switch compares an Update with the Bootstrap that the paper defines (one
that counts proofs), like with like.

Cost: one clock reading per ``check`` and two per ``exempt``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Abandoned(Exception):
    """An Update ran past its time budget (the switch)."""


class SwitchBudget:
    """``seconds`` of Update work from now on ``clock``, the ``exempt`` work not counted."""

    __slots__ = ("_clock", "_exempting", "_limit", "_start", "exempted")

    def __init__(self, clock: Callable[[], float], seconds: float):
        self._clock, self._limit = clock, seconds
        self._start = clock()
        self._exempting = False  # inside ``exempt`` work, whose own checks pass
        self.exempted = 0.0  # seconds spent in ``exempt`` work so far

    @classmethod
    def unlimited(cls) -> SwitchBudget:
        """A budget that never runs out (a Bootstrap's run, or the tests')."""
        return cls(lambda: 0.0, math.inf)

    def check(self) -> None:
        """Raise Abandoned once the work counted so far exceeds the budget (never inside
        ``exempt`` work)."""
        if not self._exempting and self._clock() - self._start - self.exempted > self._limit:
            raise Abandoned

    def exempt(self, work: Callable[[], T]) -> T:
        """Run ``work`` without counting its time against the budget (the checks it makes
        pass); its result. Not reentrant: ``work`` does not call ``exempt``."""
        start, self._exempting = self._clock(), True
        try:
            return work()
        finally:
            self._exempting = False
            self.exempted += self._clock() - start
