"""Which of a delta variant's two join orders to run in an iteration: the one whose expected
work over the current relations is smaller (``_choose``), from the sizes of its levels'
relations (or deltas) and the distinct keys of the indexes it probes. O(levels), in native
code, so a recursive stratum can choose anew at each iteration inside ``kernels.run``."""

from __future__ import annotations

from numba import njit

from herbrand.evaluators.native.layout import (
    IX_KEYS,
    P_LEVEL_INDEX,
    P_LEVEL_KIND,
    P_LEVEL_RANGE,
    P_LEVEL_REL,
    P_RULE_LEVELS,
    PROBE,
    R_SIZE,
    UNIQUE_PROBE,
    UNIT,
    VIEW_PROBE,
)


@njit(inline="always")
def _estimate(program, rule, rel_meta, ix_meta, low, high):
    """The expected work of rule ``rule`` over the current relations: the sum over its levels
    of the times each is opened and the rows it yields, a probe yielding its relation's (or
    delta's) rows per distinct key of its index (caught up). O(levels)."""
    first_level = program[P_RULE_LEVELS][rule]
    kinds, rels, ranged = program[P_LEVEL_KIND], program[P_LEVEL_REL], program[P_LEVEL_RANGE]
    level_index = program[P_LEVEL_INDEX]
    rows = 1.0
    work = 0.0
    for level in range(first_level, program[P_RULE_LEVELS][rule + 1]):
        kind, rel = kinds[level], rels[level]
        if kind == UNIT:
            continue
        n = float(high[rel] - low[rel] if ranged[level] == 1 else rel_meta[rel, R_SIZE])
        if kind in (PROBE, VIEW_PROBE, UNIQUE_PROBE):
            n /= max(ix_meta[level_index[level], IX_KEYS], 1)
        work += rows
        rows *= n
        work += rows
    return work


@njit(inline="always")
def _choose(program, rule, alternative, rel_meta, ix_meta, low, high):
    """Of rule ``rule`` and its ``alternative`` (another join order of the same delta variant;
    -1: none), the one expected to do less work now (``_estimate``; both caught up). A
    delta-first order is cheap while the delta is small against the relations it probes; the
    body's own order (Soufflé's) when a small base relation leads and the delta is probed last.
    O(levels)."""
    if alternative >= 0 and (_estimate(program, alternative, rel_meta, ix_meta, low, high)
                             < _estimate(program, rule, rel_meta, ix_meta, low, high)):
        return alternative
    return rule


@njit(nogil=True)
def choose(program, rule, alternative, rel_meta, ix_meta, low, high):
    """``_choose``, from Python."""
    return _choose(program, rule, alternative, rel_meta, ix_meta, low, high)
