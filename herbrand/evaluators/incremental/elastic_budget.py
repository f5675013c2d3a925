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

``SwitchBackoff`` decides whether to attempt an Update at all: after j abandoned attempts in a
row the next 2^j - 1 updates (at most ``MAX_SKIPPED``) bootstrap at once, unless one is at
most half the size of the smallest of those attempts, and an Update that completes resets j.
On TC over graph1000 a Bootstrap takes about 2 ms and an Update's fixed cost in Python is
several times that, so every attempt was abandoned: the engine paid 20% of a
Bootstrap more than recompute on every epoch. With the backoff a run of switching epochs pays
for one attempt in 2^j (at most one in ``MAX_SKIPPED`` + 1), and a workload whose updates become
small again attempts one within ``MAX_SKIPPED`` + 1 updates.

Cost: one clock reading per ``check`` and two per ``exempt``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class SwitchRecord:
    """How one Update met its budget (``ElasticEngine.last_switch``): the seconds allowed, the
    seconds counted against them and exempt when it ended (or was abandoned), and the
    strategy it ended with ("update", "switched-to-bootstrap", or "skipped-to-bootstrap" when
    ``SwitchBackoff`` did not attempt one)."""

    budget: float
    counted: float
    exempted: float
    strategy: str


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

    @property
    def limit(self) -> float:
        """The seconds of counted work allowed."""
        return self._limit

    def counted(self) -> float:
        """The seconds of work counted so far (exempt work beyond the cap included)."""
        now = self._clock()
        exempt = self.exempted + (now - self._exempt_since
                                  if self._exempt_since is not None else 0.0)
        return now - self._start - min(exempt, self._limit)

    def check(self) -> None:
        """Raise Abandoned once the work counted so far exceeds the budget."""
        if self.counted() > self._limit:
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


MAX_SKIPPED = 7  # updates bootstrapped at once, at most, after abandoned attempts in a row


class SwitchBackoff:
    """Whether to attempt the next Update, from how the last ones ended (see the module doc).

    An update at most half the size (changed input rows) of the smallest abandoned attempt of
    the current run is attempted whatever the count of skips: an abandoned large update says
    nothing about a small one (the 13 epochs' small update after a large insert)."""

    __slots__ = ("_abandoned", "_skip", "_smallest")

    def __init__(self) -> None:
        self._abandoned = 0  # abandoned attempts in a row
        self._skip = 0  # updates still to bootstrap without an attempt
        self._smallest = 0  # changed input rows of the smallest of those attempts

    def attempt(self, size: int) -> bool:
        """Whether to attempt an update changing ``size`` input rows (False consumes one
        skipped update)."""
        if not self._skip or 2 * size <= self._smallest:
            return True
        self._skip -= 1
        return False

    def record(self, abandoned: bool, size: int) -> None:
        """An attempted Update of ``size`` changed input rows completed (False) or was
        abandoned (True)."""
        if abandoned:
            self._smallest = min(self._smallest, size) if self._abandoned else size
            self._abandoned += 1
        else:
            self._abandoned = 0
        self._skip = min(2 ** self._abandoned - 1, MAX_SKIPPED)
