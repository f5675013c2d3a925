"""Fixtures of the incremental engines' tests."""

from __future__ import annotations

import pytest

from herbrand.evaluators.incremental import bf
from herbrand.evaluators.incremental.backward_forward import BackwardForward


@pytest.fixture
def checks(monkeypatch) -> list[BackwardForward]:
    """Every BackwardForward whose deletion step the engine runs from now on (not those its
    bootstrap prepares with)."""
    made = []

    class Recorded(BackwardForward):
        def deleted(self, seeds):
            made.append(self)
            return super().deleted(seeds)

    monkeypatch.setattr(bf, "BackwardForward", Recorded)
    return made
