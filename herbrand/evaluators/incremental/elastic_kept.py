"""The derivations of a seed that an Update joins again in its next iteration, kept.

An Update (``elastic_stratum.StratumRun.update``) seeds, in every iteration h, each rule variant
with the body elements changed at h. An element that changed stays changed in every later
iteration (an input's inserted or deleted rows, a tuple that moved), so the same seed is joined
again and again: on TC over graph10000 a 1% insert joins its 93 new edges with the whole closure
in each of its 6 iterations (47,616 derivations each time), of which each iteration wants only
those whose body reaches iteration h. ``KeptDerivations`` keeps each variant's derivation batch
with the seed that made it, and hands it back when the next iteration seeds the variant with the
same rows and no universe it joins has grown since: the batch then holds every derivation of that
seed (their iterations are read again from the universes, so they are this iteration's).

Why growth of a universe joined *before* the seed element does not matter: a row a run appends is
new in this epoch, so it is in the Update's seed set of its relation in every later iteration
(``changed``: old iteration NEVER > h >= new), and a derivation holding it is the variant's of
that earlier element, dropped from this one's by the first-element rule of
``StratumDerivations.seeded``. That holds for the Update's seed sets only, so a Bootstrap keeps
nothing. Universes joined after the seed element are compared by size.

The kept batch also sheds the derivations no later iteration wants (the floor of
``StratumDerivations.seeded``: both their latest old and new body iterations below h, which no
longer change).

Cost: O(seed) to compare a seed with the kept one; the kept batches' memory until the run ends.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class _Kept:
    selection: np.ndarray
    sizes: tuple[int, ...]
    batch: np.ndarray


class KeptDerivations:
    """Each seeded variant's last derivation batch (see the module doc); mutable, per run."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept: dict[Hashable, _Kept] = {}

    def batch(self, variant: Hashable, selection: np.ndarray,
              sizes: tuple[int, ...]) -> np.ndarray | None:
        """The kept batch of ``variant`` when it was seeded by the same ``selection`` (the seed
        rows' positions) over universes of the same ``sizes``; else None. O(seed)."""
        kept = self._kept.get(variant)
        if (kept is None or kept.sizes != sizes
                or not np.array_equal(kept.selection, selection)):
            return None
        return kept.batch

    def keep(self, variant: Hashable, selection: np.ndarray, sizes: tuple[int, ...],
             batch: np.ndarray) -> None:
        """Keep ``batch``, the derivations of ``variant`` seeded by ``selection`` over
        universes of ``sizes`` (replacing the variant's previous one). O(1)."""
        self._kept[variant] = _Kept(selection, sizes, batch)
