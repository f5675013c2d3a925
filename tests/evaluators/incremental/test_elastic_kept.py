"""``elastic_kept.KeptProofs``: the provenance queries' derivations kept per run."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.elastic_kept import KeptProofs
from herbrand.framework.storage import Relation


def _heads(*positions: int) -> Relation:
    """Heads (one value column, then the position)."""
    return Relation(np.array([[10 * p for p in positions], list(positions)], dtype=np.int64),
                    unique=True)


def test_only_heads_not_asked_before_are_joined_and_only_those_asked_come_back():
    asked = []

    def query(heads: Relation) -> np.ndarray | None:
        """Two derivations per head with an even position, none for an odd one (each
        derivation: the head's value, a body position, the head's position)."""
        asked.append(heads.columns[-1].tolist())
        even = heads.columns[:, heads.columns[-1] % 2 == 0]
        if not even.shape[1]:
            return None
        twice = np.repeat(even, 2, axis=1)
        return np.stack([twice[0], np.arange(twice.shape[1]), twice[1]])

    kept = KeptProofs()
    first = kept.batch("rule", _heads(2, 3), query)
    assert asked == [[2, 3]] and first[-1].tolist() == [2, 2]
    assert kept.batch("rule", _heads(3), query) is None  # asked before: no join, nothing kept
    later = kept.batch("rule", _heads(40, 3, 2), query)  # beyond the positions seen so far
    assert asked == [[2, 3], [40]]
    assert sorted(later[-1].tolist()) == [2, 2, 40, 40]
    assert kept.batch("rule", _heads(40), query)[-1].tolist() == [40, 40]
    assert kept.batch("other", _heads(40), query)[-1].tolist() == [40, 40]  # its own variant
    assert asked == [[2, 3], [40], [40]]
