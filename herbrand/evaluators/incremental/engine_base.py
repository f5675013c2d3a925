"""``StoredEngine``: the frame of engines that keep their materialization and the name of
their last strategy as plain attributes (``recompute``, ``dred``, ``counting``).

Subclasses set ``self._database`` and ``self._strategy`` when they commit a bootstrap or an
update; the contract's ``database`` and ``last_strategy`` read them (O(1)).
"""

from __future__ import annotations

from herbrand.framework.contracts import IncrementalEvaluator
from herbrand.framework.storage import Database


class StoredEngine(IncrementalEvaluator):
    """An IncrementalEvaluator whose state includes ``_database`` and ``_strategy``."""

    def __init__(self) -> None:
        self._database: Database | None = None
        self._strategy = "none"

    @property
    def database(self) -> Database:
        return self._database

    @property
    def last_strategy(self) -> str:
        return self._strategy
