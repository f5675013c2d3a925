"""The elastic switch's time budget for one Update, with the Bootstrap's deferred work exempt.

The switch abandons an Update that runs longer than ``switch`` times the last Bootstrap. The
native Bootstrap (``elastic_native``) defers Algorithm 2's proof counts and the row indexes of
the relations it numbers: the first Updates after it compute the counts they need
(``StratumRun._resolve_counts``) and index a relation when they first search it
(``StratumRun._find``). That work belongs to the Bootstrap, not to the Update that happens to
trigger it, so ``SwitchBudget`` does not count it against the Update (``exempt``) and the
engine adds it to the Bootstrap's time instead (``exempted``): the switch compares an Update
with the Bootstrap that the paper defines (one that counts proofs), like with like.

The exemption is capped at the budget itself: deferred work beyond ``seconds`` counts like
any other. An Update that is abandoned wastes the deferred work it did (the Bootstrap it
switches to starts a new state), so an abandoned attempt costs at most twice the budget, not
the whole deferred work: on a workload where every Update switches (TC over graph1000, whose
row indexes take longer to build than its Bootstrap), the attempts stay 2 x 20% of a Bootstrap.

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
    """``seconds`` of Update work from now on ``clock``, up to ``seconds`` of ``exempt`` work
    not counted."""

    __slots__ = ("_clock", "_exempt_since", "_limit", "_start", "exempted")

    def __init__(self, clock: Callable[[], float], seconds: float):
        self._clock, self._limit = clock, seconds
        self._start = clock()
        self._exempt_since: float | None = None  # the start of the exempt work under way
        self.exempted = 0.0  # seconds spent in ``exempt`` work that has ended

    @classmethod
    def unlimited(cls) -> SwitchBudget:
        """A budget that never runs out (a Bootstrap's run, or the tests')."""
        return cls(lambda: 0.0, math.inf)

    def check(self) -> None:
        """Raise Abandoned once the work counted so far (exempt work beyond the cap included)
        exceeds the budget."""
        now = self._clock()
        exempt = self.exempted + (now - self._exempt_since
                                  if self._exempt_since is not None else 0.0)
        if now - self._start - min(exempt, self._limit) > self._limit:
            raise Abandoned

    def exempt(self, work: Callable[[], T]) -> T:
        """Run ``work`` with its time not counted (up to the cap); its result. Not reentrant:
        ``work`` does not call ``exempt``."""
        self._exempt_since = self._clock()
        try:
            return work()
        finally:
            self.exempted += self._clock() - self._exempt_since
            self._exempt_since = None
