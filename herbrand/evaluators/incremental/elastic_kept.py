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

A batch seeded by rows that no run writes and that this epoch lacks (an input's deleted rows:
new iteration NEVER for the whole run) is kept whole with each derivation's latest old
iteration Mo (``most_old``), which a run never changes either: its latest new iteration is
NEVER for good, so only its deletion term (Mo = h) can want it, and only at h = Mo. Such a
batch is read by buckets of Mo, not folded whole in every iteration (on TC over graph10000 a
1% delete kept 47,616 derivations of its 93 deleted edges, folded again in each of 4 to 5
iterations).

Cost: O(seed) to compare a seed with the kept one; the kept batches' memory until the run ends.

``KeptProofs`` does the same for the provenance queries of an Update (``head_seeded`` variants:
the re-discovery term and the proof counts, ``elastic_stratum``), which are seeded by heads,
not by body elements. The heads deleted so far are queried again in every iteration (on RDFS
over LUBM(1) a 1% delete asks for the same 1,009 to 1,063 heads of ``m`` in each of its
iterations, seven rules each), and the proof counts ask for heads they will ask for again. Both
want only derivations whose body's latest old iteration is at most h: every body element is a
row of the previous epoch, which a run neither moves nor renumbers (it appends new rows after
them, with old iteration NEVER). So the derivations a query finds over those rows are all it
can ever want of a head: ``KeptProofs`` joins each head once per run and hands back, for the
heads asked, the derivations kept of them (their iterations are read again from the
universes, so they are this iteration's).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.batch_joins import columns_at
from herbrand.framework.storage import Relation


@dataclass(frozen=True)
class Kept:
    """A variant's derivation ``batch`` seeded by the rows at ``selection`` over universes of
    ``sizes``; ``most_old``: each derivation's Mo when their new iterations are NEVER for the
    rest of the run (see the module doc), else None."""

    selection: np.ndarray
    sizes: tuple[int, ...]
    batch: np.ndarray
    most_old: np.ndarray | None = None
    latest: int = -1  # the largest of ``most_old`` (-1: none)

    @classmethod
    def whole(cls, selection: np.ndarray, sizes: tuple[int, ...], batch: np.ndarray,
              most_old: np.ndarray) -> Kept:
        """A batch kept whole with its derivations' Mo. O(m)."""
        return cls(selection, sizes, batch, most_old,
                   int(most_old.max()) if len(most_old) else -1)

    def bucket(self, h: int) -> np.ndarray:
        """The indexes of the derivations with Mo = h, ascending (``most_old`` only). O(m)
        compares, O(1) past the largest Mo."""
        if h > self.latest:
            return np.zeros(0, dtype=np.int64)
        return np.flatnonzero(self.most_old == h)


class KeptDerivations:
    """Each seeded variant's last derivation batch (see the module doc); mutable, per run."""

    __slots__ = ("_kept", "kept_any")

    def __init__(self) -> None:
        self._kept: dict[Hashable, Kept] = {}
        # whether a batch kept since the last ``new_step`` holds a derivation that a later
        # iteration may want (both its Mo and Mn at least the step's h)
        self.kept_any = False

    def new_step(self) -> None:
        """An iteration starts: ``kept_any`` is reset. O(1)."""
        self.kept_any = False

    def batch(self, variant: Hashable, selection: np.ndarray,
              sizes: tuple[int, ...]) -> Kept | None:
        """The kept batch of ``variant`` when it was seeded by the same ``selection`` (the seed
        rows' positions) over universes of the same ``sizes``; else None. O(seed)."""
        kept = self._kept.get(variant)
        if (kept is None or kept.sizes != sizes
                or not np.array_equal(kept.selection, selection)):
            return None
        return kept

    def keep(self, variant: Hashable, kept: Kept, h: int) -> None:
        """Keep ``kept``, the derivations of ``variant`` at the step of iteration ``h``
        (replacing the variant's previous ones): those a later step may want, or all of them
        with their ``most_old``. O(1)."""
        self._kept[variant] = kept
        self.kept_any |= (kept.batch.shape[1] > 0 if kept.most_old is None
                          else kept.latest >= h)


class KeptProofs:
    """Each ``head_seeded`` variant's derivations of the heads it was queried with in one
    Update run (see the module doc); mutable, per run."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        # variant -> (whether each head position was queried, their derivations)
        self._kept: dict[Hashable, tuple[np.ndarray, np.ndarray]] = {}

    def batch(self, variant: Hashable, heads: Relation,
              query: Callable[[Relation], np.ndarray | None]) -> np.ndarray | None:
        """The derivations of ``variant`` whose head is one of ``heads`` (rows with their
        positions as a last column; each derivation's last column is its head's position),
        ``query`` joining only the heads not asked for before (it returns their derivations,
        or None for none); None when there are none. O(heads + kept derivations), plus a
        bool per head position."""
        at = heads.columns[-1]
        queried, kept = self._kept.get(variant, (np.zeros(0, dtype=bool), None))
        if len(at) and at.max() >= len(queried):
            grown = np.zeros(int(at.max()) + 1, dtype=bool)
            grown[:len(queried)] = queried
            queried = grown
        fresh = ~queried[at]
        if fresh.any():
            found = query(heads if fresh.all() else Relation(columns_at(heads.columns, fresh),
                                                             unique=True))
            queried[at[fresh]] = True
            if found is not None and found.shape[1]:
                kept = found if kept is None else np.concatenate([kept, found], axis=1)
        self._kept[variant] = (queried, kept)
        if kept is None:
            return None
        asked = np.zeros(len(queried), dtype=bool)
        asked[at] = True
        wanted = asked[kept[-1]]
        if wanted.all():
            return kept
        return columns_at(kept, wanted) if wanted.any() else None
