"""Set operations on the sorted runs of the counting engine's trace (one codec each): by
merges and galloping searches of int64 keys when the runs pack (``counting_merge``), by
``SortedRun``'s lexicographic operations otherwise."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental import weighted
from herbrand.evaluators.incremental.counting_merge import found_in, sorted_positions, union
from herbrand.indexes.runs import RowCodec, SortedRun


def sorted_run(codec: RowCodec, rows: np.ndarray) -> SortedRun:
    """The run of (arity, n) ``rows`` that are already distinct and in lexicographic order
    (a consolidated batch's; ``codec`` keyed on every column in order,
    ``row_index.identity_codec``): encoded, not sorted again. O(arity n)."""
    return SortedRun(codec, *codec.encode(rows))


def summed_run(codec: RowCodec, *parts: weighted.Weighted) -> tuple[SortedRun, np.ndarray]:
    """The consolidated sum of weighted batches (``weighted.combine``) as a run of ``codec``
    (``row_index.identity_codec``: keyed on every column in order) and the weights in its
    order: the keys the sum is computed on when the rows pack, never unpacked and packed
    again. O(n log n) in the parts' size."""
    keyed = weighted.combine_keyed(codec.arity, *parts)
    if keyed is None:
        rows, weights = weighted.combine(codec.arity, *parts)
        return sorted_run(codec, rows), weights
    keys, weights = keyed
    return SortedRun(codec, keys[None, :], bool(codec.width)), weights


def run_minus(run: SortedRun, other: SortedRun) -> SortedRun:
    """The rows of ``run`` not in ``other`` (runs of one codec). When both pack, by galloping
    the smaller through the larger: O(s log(l / s) + s), plus an O(len(run)) copy if rows go;
    else ``SortedRun.difference``."""
    if not len(run) or not len(other):
        return run
    if not (run.packed and other.packed):
        return run.difference(other)
    if len(run) <= len(other):
        keep = ~found_in(other.data[0], run.data[0])
        return run if keep.all() else SortedRun(run.codec, run.data[:, keep], True)
    at = np.minimum(sorted_positions(run.data[0], other.data[0]), len(run) - 1)
    gone = at[run.data[0, at] == other.data[0]]
    return run if not len(gone) else SortedRun(run.codec, np.delete(run.data, gone, axis=1), True)


def run_union(run: SortedRun, other: SortedRun) -> SortedRun:
    """The rows of both runs (of one codec): one merge of int64 keys when both pack
    (``counting_merge.union``), else ``SortedRun.merge``. O(n + m)."""
    if not len(other):
        return run
    if not len(run):
        return other
    if not (run.packed and other.packed):
        return run.merge(other)
    return SortedRun(run.codec, union(run.data[0], other.data[0])[None, :], True)


def run_found(haystack: SortedRun, needles: SortedRun) -> np.ndarray:
    """Whether each row of the run ``needles`` is in the run ``haystack`` (one codec), as a
    mask: by galloping when both pack (O(m log(n / m) + m)), else a lexicographic binary
    search per row (O(m log n))."""
    if not len(haystack) or not len(needles):
        return np.zeros(len(needles), dtype=bool)
    if haystack.packed and needles.packed:
        return found_in(haystack.data[0], needles.data[0])
    return weighted.find(haystack.rows(), needles.rows())[1]


def taken(run: SortedRun, mask: np.ndarray) -> SortedRun:
    """The rows of ``run`` where ``mask`` holds (still sorted). O(n)."""
    return SortedRun(run.codec, run.data[:, mask], run.packed)


def without_runs(run: SortedRun, runs) -> SortedRun:
    """The rows of ``run`` in none of ``runs`` (``run_minus`` each)."""
    for other in runs:
        if not len(run):
            break
        run = run_minus(run, other)
    return run
