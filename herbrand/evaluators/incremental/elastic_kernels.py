"""The elastic engine's per-derivation work on a derivation batch, as numba passes.

A batch of derivations of one probe variant (``elastic_derivations``) holds one position per
positive body element: its row in that element's universe, whose old and new first iterations
(``Universe.old_iteration`` / ``new_iteration``) the Bootstrap and Update terms compare. The
terms need only the largest old and new iteration of each derivation's body (Mo and Mn) and,
for a variant seeded at body element e, whether an element before e is in the seed set (the
derivation then belongs to that element's variant). ``members`` selects a seed set's
positions; ``fold`` reads one element's iterations through its positions and folds them into
those three per-derivation values in one pass (no (elements, m) arrays of iterations);
``terms`` reads them once and returns the derivations a step wants, with their signs.

A step's ``kind`` (with its iteration h) says which seed set and which terms:

- ``GROWTH`` (Bootstrap): the seed set is the tuples of new iteration h; a derivation is
  wanted, +1, when Mn = h <= Mo.
- ``CHANGE`` (Update): the seed set is the tuples whose old and new iteration lie on either
  side of h (``(o <= h < n) or (n <= h < o)``); the deletion term is -1 where Mo = h < Mn, the
  insertion term +1 where Mn = h < Mo.
- ``REDISCOVERY`` (the Update's provenance query of deleted heads): no seed set; +1 where
  Mo <= h = Mn.

    >>> import numpy as np
    >>> most_old, most_new = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    >>> earlier = np.zeros(3, dtype=np.bool_)
    >>> fold(np.array([0, 1, 2]), np.array([1, 1, 9]), np.array([1, 9, 1]),
    ...      most_old, most_new, earlier, 1, CHANGE, False)
    >>> wanted, signs, later = terms(most_old, most_new, earlier, 1, CHANGE)
    >>> wanted.tolist(), signs.tolist(), later.tolist()
    ([1, 2], [-1, 1], [0, 1, 2])
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native.exported import exported, helper

GROWTH, CHANGE, REDISCOVERY = 0, 1, 2  # a step's kind (see the module doc)


@helper(inline="always")
def _member(old, new, h, kind):
    """Whether a body element of iterations (``old``, ``new``) is in the seed set of a step
    of ``kind`` at ``h``."""
    if kind == GROWTH:
        return new == h
    return (old <= h < new) or (new <= h < old)


@exported("void(i8[:], i8[::1], i8[::1], i8[::1], i8[::1], b1[::1], i8, i8, b1)",
          writes=("most_old", "most_new", "earlier"))
def _fold(positions, old_iteration, new_iteration, most_old, most_new, earlier, h, kind,
          seeding):
    for i in range(positions.shape[0]):
        p = positions[i]
        old, new = old_iteration[p], new_iteration[p]
        if old > most_old[i]:
            most_old[i] = old
        if new > most_new[i]:
            most_new[i] = new
        if seeding and not earlier[i] and _member(old, new, h, kind):
            earlier[i] = True


@exported("i8[::1](i8[::1], i8[::1], i8[::1], i8, i8)")
def _members(positions, old_iteration, new_iteration, h, kind):
    out = np.empty(positions.shape[0], dtype=np.int64)
    found = 0
    for i in range(positions.shape[0]):
        p = positions[i]
        if _member(old_iteration[p], new_iteration[p], h, kind):
            out[found] = p
            found += 1
    return out[:found]


def members(positions: np.ndarray, old_iteration: np.ndarray, new_iteration: np.ndarray,
            h: int, kind: int) -> np.ndarray:
    """Those of ``positions`` (in their order) whose iterations are in the seed set of the
    step (``kind``, ``h``; not ``REDISCOVERY``). One pass, O(m)."""
    return _members(positions, old_iteration, new_iteration, h, kind)


def fold(positions: np.ndarray, old_iteration: np.ndarray, new_iteration: np.ndarray,
         most_old: np.ndarray, most_new: np.ndarray, earlier: np.ndarray, h: int, kind: int,
         seeding: bool) -> None:
    """Fold one body element into each derivation's ``most_old`` / ``most_new`` (the largest
    iterations so far, in place), reading the element's iterations at ``positions`` (one per
    derivation); where ``seeding`` (an element before the variant's seed element), also mark
    in ``earlier`` the derivations whose element is in the seed set of the step (``kind``,
    ``h``). One pass, O(m), two gathers per derivation."""
    _fold(positions, old_iteration, new_iteration, most_old, most_new, earlier, h, kind,
          seeding)


@exported("Tuple((i8[::1], i8[::1]))(i8[::1], i8[::1], i8[::1], i8, i4[::1])",
          writes=("slots",))
def _undecided_sums(positions, weights, new_iteration, k, slots):
    m = positions.shape[0]
    at = np.empty(m, dtype=np.int64)
    total = np.empty(m, dtype=np.int64)
    found = 0
    for i in range(m):
        p = positions[i]
        if p < 0 or new_iteration[p] < k:
            continue
        j = slots[p]
        if j == 0:
            at[found] = p
            total[found] = 0
            found += 1
            j = found
            slots[p] = j
        total[j - 1] += weights[i]
    for j in range(found):
        slots[at[j]] = 0
    return at[:found], total[:found]


def undecided_sums(positions: np.ndarray, weights: np.ndarray, new_iteration: np.ndarray,
                   k: int, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``positions`` (a bag of m row positions; negative ones skipped) whose
    ``new_iteration`` is at least k, in the order first met, and for each the sum of its
    ``weights``. ``slots``: an int32 scratch of zeros, one per position (at least the
    largest), left zero again. One pass, O(m), reading the iterations and touching the
    scratch of the undecided positions only (no pass over all positions: on TC graph10000's
    1% insert only 17k of 47k and 1.5k of 25k found heads are undecided)."""
    return _undecided_sums(positions, weights, new_iteration, k, slots)


@exported("Tuple((i8[::1], i8[::1], i8[::1]))(i8[::1], i8[::1], b1[::1], i8, i8)")
def _terms(most_old, most_new, earlier, h, kind):
    m = most_old.shape[0]
    wanted = np.empty(m, dtype=np.int64)
    signs = np.empty(m, dtype=np.int64)
    later = np.empty(m, dtype=np.int64)
    found = kept = 0
    for i in range(m):
        old, new = most_old[i], most_new[i]
        if kind == REDISCOVERY:
            sign = 1 if old <= h and new == h else 0
        else:
            if min(old, new) >= h:
                later[kept] = i
                kept += 1
            if earlier[i]:
                sign = 0
            elif kind == GROWTH:
                sign = 1 if new == h <= old else 0
            elif old == h < new:
                sign = -1
            else:
                sign = 1 if new == h < old else 0
        if sign:
            wanted[found] = i
            signs[found] = sign
            found += 1
    return wanted[:found], signs[:found], later[:kept]


def terms(most_old: np.ndarray, most_new: np.ndarray, earlier: np.ndarray, h: int,
          kind: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(wanted, signs, later)`` of derivations with body maxima ``most_old`` / ``most_new``
    (``fold``): the ascending indexes of those the step (``kind``, ``h``) wants that have no
    ``earlier`` seed element, their signs (see the module doc), and the ascending indexes of
    those a later step of the same run may still want (both maxima at least h; none for
    ``REDISCOVERY``). One pass, O(m)."""
    return _terms(most_old, most_new, earlier, h, kind)
