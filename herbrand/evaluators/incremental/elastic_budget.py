"""The elastic switch's time budget for one Update, with the Bootstrap's deferred work apart.

The switch abandons an Update whose own work runs longer than ``share`` times a recompute. The
native Bootstrap (``elastic_native``) defers part of a recompute to the first Update after it:
Algorithm 2's proof counts, the row indexes of the relations it numbers and the relational
evaluator's join indexes on them (``StratumRun._resolve_counts``, ``StratumRun._find``,
``elastic_setup``). That work is the Bootstrap's, not the Update's that happens to trigger it,
so ``SwitchBudget`` counts it where it belongs: not against the Update (``exempt``) but in the
recompute the Update is compared with, whose seconds grow by it as it runs (the limit is
``share`` x (the Bootstrap's seconds + the exempt seconds so far)), and the engine adds it to the
Bootstrap's time when the Update completes (``exempted``). The switch compares an Update with
the Bootstrap that the paper defines (one that counts proofs and indexes), like with like, and
a one-fact update after a Bootstrap is not abandoned for the set-up it pays once (on RDFS over
LUBM(1) that set-up is about 70 ms against a Bootstrap of about 70 ms and an Update of 15).

An abandoned Update wastes the deferred work it did (the Bootstrap it switches to starts a new
state): an attempt costs at most its deferred work plus ``share`` of a recompute that includes
it. ``SwitchBackoff`` bounds how often a workload whose every Update switches pays that.

``SwitchBackoff`` decides whether to attempt an Update at all: after j abandoned attempts in a
row the next 2^j - 1 updates (at most ``MAX_SKIPPED``) bootstrap at once, unless one is at
most half the size of the smallest of those attempts, and an Update that completes resets j.
On TC over graph1000 a Bootstrap takes about 2 ms and an Update's fixed cost in Python is
several times that, so every attempt was abandoned: the engine paid for an attempt on every
epoch. With the backoff a run of switching epochs pays for one attempt in 2^j (at most one in
``MAX_SKIPPED`` + 1), and a workload whose updates become small again attempts one within
``MAX_SKIPPED`` + 1 updates. An abandoned update of one changed row, the least an Update can
be, says that its fixed cost alone runs past the budget, so that every update of its kind
would: the next ``MAX_SKIPPED`` bootstrap at once. On TC over graph1000 and Andersen over 1,000
variables, whose small updates are one row and whose Bootstraps take 2 and 10 ms, the 13 epochs
attempted four updates and were 1.33x and 1.28x recompute; now they attempt two (one a kind).

Cost: one clock reading per ``check`` and two per outermost ``exempt``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class SwitchRecord:
    """How one Update met its budget (``ElasticEngine.last_switch``): the seconds allowed (with
    the exempt work done), the seconds counted against them and exempt when it ended (or was
    abandoned), and the strategy it ended with ("update", "switched-to-bootstrap", or
    "skipped-to-bootstrap" when ``SwitchBackoff`` did not attempt one)."""

    budget: float
    counted: float
    exempted: float
    strategy: str


class Abandoned(Exception):
    """An Update ran past its time budget (the switch)."""


class SwitchBudget:
    """An Update's budget from now on ``clock``: ``share`` x (``bootstrap`` seconds + the
    seconds of ``exempt`` work so far) of counted work, the ``exempt`` work not counted."""

    __slots__ = ("_bootstrap", "_clock", "_exempt_since", "_share", "_start", "exempted")

    def __init__(self, clock: Callable[[], float], share: float, bootstrap: float):
        self._clock, self._share, self._bootstrap = clock, share, bootstrap
        self._start = clock()
        self._exempt_since: float | None = None  # the start of the exempt work under way
        self.exempted = 0.0  # seconds spent in ``exempt`` work that has ended

    @classmethod
    def unlimited(cls) -> SwitchBudget:
        """A budget that never runs out (a Bootstrap's run, or the tests')."""
        return cls(lambda: 0.0, 1.0, math.inf)

    def _exempt_so_far(self, now: float) -> float:
        return self.exempted + (now - self._exempt_since if self._exempt_since is not None
                                else 0.0)

    @property
    def limit(self) -> float:
        """The seconds of counted work allowed, given the exempt work so far."""
        return self._share * (self._bootstrap + self._exempt_so_far(self._clock()))

    def counted(self) -> float:
        """The seconds of work counted so far (the exempt work left out)."""
        now = self._clock()
        return now - self._start - self._exempt_so_far(now)

    @property
    def limited(self) -> bool:
        """Whether the budget can run out (not ``unlimited``)."""
        return math.isfinite(self._bootstrap)

    def check(self, ahead: float = 0.0) -> None:
        """Raise Abandoned once the work counted so far, plus ``ahead`` seconds of counted work
        expected still to come (the rest of a join under way), exceeds the limit."""
        now = self._clock()
        exempt = self._exempt_so_far(now)
        if now - self._start - exempt + ahead > self._share * (self._bootstrap + exempt):
            raise Abandoned

    def exempt(self, work: Callable[[], T]) -> T:
        """Run ``work`` with its time not counted; its result. Reentrant: ``work`` may call
        ``exempt`` (the outermost call times it)."""
        if self._exempt_since is not None:
            return work()
        self._exempt_since = self._clock()
        try:
            return work()
        finally:
            self.exempted += self._clock() - self._exempt_since
            self._exempt_since = None


MAX_SKIPPED = 7  # updates bootstrapped at once, at most, after abandoned attempts in a row
LEAST_UPDATE = 1  # changed input rows of the least update: its abandon skips MAX_SKIPPED


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
        least = abandoned and size <= LEAST_UPDATE
        self._skip = MAX_SKIPPED if least else min(2 ** self._abandoned - 1, MAX_SKIPPED)
