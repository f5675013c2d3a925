"""Numba kernels of ``Counts``: entries (key, iteration, running count) sorted by int64 key
(a packed row, or a row's rank) and then iteration. ``starts`` are the left positions of
ascending needles among the keys (``counting_merge.sorted_positions``, by galloping).

- ``counts_at(keys, iterations, counts, probe, starts, i)``: for each distinct probe key, the
  running count of its entry with the last iteration <= i (0 when none), and the iteration of
  its next entry: a scan of the key's run from its start. O(m + the runs' lengths).
- ``counts_resumed(keys, iterations, counts, probe, last, last_found, last_until, last_ends,
  i, found, until, ends, work)``: the same for ascending probe keys, one level at a time, resuming
  an earlier read (at an iteration < i) of the ascending keys ``last``, which found
  ``last_found``, the iterations ``last_until`` at which those change, and the positions
  ``last_ends`` where its scans stopped in this level: a probe read then whose count holds
  (until > i) takes its found count, until and end; one whose count changed scans on from its
  end; the others are found by galloping. Adds each scanned level's count into ``found``,
  lowers ``until`` to the level's next iteration, and writes the probes' ``ends`` in this
  level (the caller sets found to 0 and until to ``NEVER`` before the first level); adds to
  ``work`` the probes searched for and those scanned. Returns m.
  O(m log(m' / m) + s log(N / s) + the entries scanned), for the s probes not read then.
- ``counts_plus(keys, iterations, counts, change, change_at, weights, starts, dtype)``: the
  entries after adding the differences ``weights`` at (key, iteration) = (``change``,
  ``change_at``) (sorted by key then iteration, distinct): the untouched stretches between
  changed keys are block-copied, each changed key's run merged with its changes; within it
  every later entry's count grows by the changes before it, and an entry whose difference
  becomes 0 is dropped. O(n) copied + O(c + the changed runs).

    >>> import numpy as np
    >>> keys, at, counts = np.array([1, 1, 4]), np.array([0, 2, 1]), np.array([1, 3, 2])
    >>> found, nexts = counts_at(keys, at, counts, np.array([1, 4, 5]), np.array([0, 2, 3]), 1)
    >>> found.tolist(), (nexts == NEVER).tolist(), int(nexts[0])
    ([1, 2, 0], [False, True, True], 2)
    >>> found, until, ends, work = (np.zeros(2, dtype=np.int64), np.full(2, NEVER),
    ...                             np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64))
    >>> counts_resumed(keys, at, counts, np.array([1, 4]), np.array([1]), np.array([1]),
    ...                np.array([2]), np.array([1]), 2, found, until, ends, work)
    2
    >>> found.tolist(), (until == NEVER).tolist(), ends.tolist(), work.tolist()
    ([3, 2], [True, True], [2, 3], [1, 2])
    >>> keys, at, counts = counts_plus(keys, at, counts, np.array([1, 4]), np.array([1, 1]),
    ...                                np.array([2, -2]), np.array([0, 2]), np.dtype(np.uint8))
    >>> keys.tolist(), at.tolist(), counts.tolist()
    ([1, 1, 1], [0, 1, 2], [1, 3, 5])
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.counting_merge import narrowest_count_type
from herbrand.evaluators.native.exported import exported, helper
from herbrand.indexes.kernels import gallop

# the iteration arrays' widths (``Counts`` stores the narrowest that holds its iterations)
ITERATION_TYPES = ("u1", "u2", "u4", "u8", "i8")
# the running counts' widths (``counts_plus`` returns the narrowest that holds its counts):
# one byte for the small counts of most programs (TC over graph10000's are at most 74), else
# eight; each width more would compile every count kernel once more per iteration width
COUNT_TYPES = ("i1", "i8")


def _signatures(template: str) -> tuple[str, ...]:
    """``template`` with {t} an iteration type and {c} a count type, for each pair."""
    return tuple(template.format(t=t, c=c) for t in ITERATION_TYPES for c in COUNT_TYPES)


# the next iteration of a row whose count never changes again
NEVER = np.iinfo(np.int64).max


@helper
def _scan(keys, iterations, counts, at, key, i):
    """(X_i of ``key``, the iteration of its next entry or NEVER, that entry's position),
    scanning its run from ``at``: its start, or a position inside it after entries at
    iterations <= i only."""
    n = keys.shape[0]
    found = counts[at - 1] if at > 0 and keys[at - 1] == key else 0
    while at < n and keys[at] == key:
        if iterations[at] > i:
            return found, iterations[at], at
        found = counts[at]
        at += 1
    return found, NEVER, at


@exported(*_signatures("i8(i8[::1], {t}[::1], {c}[::1], i8[::1], i8[::1], i8, i8[::1], i8[::1])"),
          writes=("out", "nexts"))
def _counts_at(keys, iterations, counts, probe, starts, i, out, nexts):
    for j in range(probe.shape[0]):
        out[j], nexts[j], _ = _scan(keys, iterations, counts, starts[j], probe[j], i)
    return probe.shape[0]


def counts_at(keys: np.ndarray, iterations: np.ndarray, counts: np.ndarray, probe: np.ndarray,
              starts: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """See the module docstring; also returns, per probe, the iteration of its key's next
    entry after i (``NEVER`` when none): its running count is the same up to there."""
    out, nexts = np.empty(len(probe), dtype=np.int64), np.empty(len(probe), dtype=np.int64)
    _counts_at(keys, iterations, counts, probe, starts, i, out, nexts)
    return out, nexts


@exported(*_signatures("i8(i8[::1], {t}[::1], {c}[::1], i8[::1], i8[::1], i8[::1], i8[::1], "
                       "i8[::1], i8, i8[::1], i8[::1], i8[::1], i8[::1])"),
          writes=("found", "until", "ends", "work"))
def counts_resumed(keys, iterations, counts, probe, last, last_found, last_until, last_ends, i,
                   found, until, ends, work):
    m = last.shape[0]
    lo = q = 0  # everything before lo in keys, and before q in last, is below the probe
    for j in range(probe.shape[0]):
        key = probe[j]
        q = gallop(last, q, key)
        if q < m and last[q] == key:
            at = last_ends[q]
            if last_until[q] > i:  # its count holds
                found[j], until[j], ends[j] = last_found[q], last_until[q], at
                lo = at
                continue
        else:
            at = gallop(keys, lo, key)
            work[0] += 1
        work[1] += 1
        value, later, lo = _scan(keys, iterations, counts, at, key, i)
        found[j] += value
        until[j] = min(until[j], later)
        ends[j] = lo
    return probe.shape[0]


@exported(*_signatures("i8(i8[::1], {t}[::1], {c}[::1], i8[::1], {t}[::1], i8[::1], i8[::1], "
                       "i8[::1], {t}[::1], i8[::1])"),
          writes=("out_keys", "out_at", "out_counts"))
def _counts_plus(keys, iterations, counts, change, change_at, weights, starts, out_keys,
                 out_at, out_counts):
    n, c = keys.shape[0], change.shape[0]
    p = q = k = 0
    while q < c:
        key = change[q]
        size = starts[q] - p  # the untouched entries before this key's run
        if size > 0:
            out_keys[k:k + size] = keys[p:p + size]
            out_at[k:k + size] = iterations[p:p + size]
            out_counts[k:k + size] = counts[p:p + size]
            k += size
            p += size
        added = stored = last = 0  # in this key's run: changes so far, stored count, output
        while (p < n and keys[p] == key) or (q < c and change[q] == key):
            from_entries = p < n and keys[p] == key
            from_change = q < c and change[q] == key
            if from_entries and from_change:
                from_entries = iterations[p] <= change_at[q]
                from_change = change_at[q] <= iterations[p]
            if from_entries:
                stored, iteration = counts[p], iterations[p]
                p += 1
            else:
                iteration = change_at[q]
            if from_change:
                added += weights[q]
                q += 1
            if stored + added != last:
                last = stored + added
                out_keys[k], out_at[k], out_counts[k] = key, iteration, last
                k += 1
    size = n - p
    out_keys[k:k + size] = keys[p:]
    out_at[k:k + size] = iterations[p:]
    out_counts[k:k + size] = counts[p:]
    return k + size


def counts_plus(keys: np.ndarray, iterations: np.ndarray, counts: np.ndarray,
                change: np.ndarray, change_at: np.ndarray, weights: np.ndarray,
                starts: np.ndarray, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """See the module docstring; ``dtype``: the type of the output's iterations. The output's
    counts are of the narrowest of ``COUNT_TYPES`` that holds them (``narrowest_count_type``:
    one more pass over them)."""
    size = keys.shape[0] + change.shape[0]
    out_keys, out_at = np.empty(size, dtype=np.int64), np.empty(size, dtype=dtype)
    out_counts = np.empty(size, dtype=np.int64)
    k = _counts_plus(keys, iterations.astype(dtype, copy=False), counts, change,
                     change_at.astype(dtype), weights, starts, out_keys, out_at, out_counts)
    out_counts = out_counts[:k]
    return (out_keys[:k], out_at[:k],
            out_counts.astype(narrowest_count_type(out_counts, COUNT_TYPES), copy=False))
