"""Numba kernels of ``Counts``: entries (key, iteration, running count) sorted by int64 key
(a packed row, or a row's rank) and then iteration. ``starts`` are the left positions of
ascending needles among the keys (``counting_merge.sorted_positions``, by galloping).

- ``counts_at(keys, iterations, counts, probe, starts, i)``: for each distinct probe key, the
  running count of its entry with the last iteration <= i (0 when none), and the iteration of
  its next entry: a scan of the key's run from its start. O(m + the runs' lengths).
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
    >>> keys, at, counts = counts_plus(keys, at, counts, np.array([1, 4]), np.array([1, 1]),
    ...                                np.array([2, -2]), np.array([0, 2]), np.dtype(np.uint8))
    >>> keys.tolist(), at.tolist(), counts.tolist()
    ([1, 1, 1], [0, 1, 2], [1, 3, 5])
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native.exported import exported

# the iteration arrays' widths (``Counts`` stores the narrowest that holds its iterations)
ITERATION_TYPES = ("u1", "u2", "u4", "u8", "i8")
# the next iteration of a row whose count never changes again
NEVER = np.iinfo(np.int64).max


@exported(*(f"i8(i8[::1], {t}[::1], i8[::1], i8[::1], i8[::1], i8, i8[::1], i8[::1])"
            for t in ITERATION_TYPES), writes=("out", "nexts"))
def _counts_at(keys, iterations, counts, probe, starts, i, out, nexts):
    n = keys.shape[0]
    for j in range(probe.shape[0]):
        at = starts[j]
        out[j], nexts[j] = 0, NEVER
        while at < n and keys[at] == probe[j]:
            if iterations[at] > i:
                nexts[j] = iterations[at]
                break
            out[j] = counts[at]
            at += 1
    return probe.shape[0]


def counts_at(keys: np.ndarray, iterations: np.ndarray, counts: np.ndarray, probe: np.ndarray,
              starts: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """See the module docstring; also returns, per probe, the iteration of its key's next
    entry after i (``NEVER`` when none): its running count is the same up to there."""
    out, nexts = np.empty(len(probe), dtype=np.int64), np.empty(len(probe), dtype=np.int64)
    _counts_at(keys, iterations, counts, probe, starts, i, out, nexts)
    return out, nexts


@exported(*(f"i8(i8[::1], {t}[::1], i8[::1], i8[::1], {t}[::1], i8[::1], i8[::1], i8[::1], "
            f"{t}[::1], i8[::1])" for t in ITERATION_TYPES),
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
    """See the module docstring; ``dtype``: the type of the output's iterations."""
    size = keys.shape[0] + change.shape[0]
    out_keys, out_at = np.empty(size, dtype=np.int64), np.empty(size, dtype=dtype)
    out_counts = np.empty(size, dtype=np.int64)
    k = _counts_plus(keys, iterations.astype(dtype, copy=False), counts, change,
                     change_at.astype(dtype), weights, starts, out_keys, out_at, out_counts)
    return out_keys[:k], out_at[:k], out_counts[:k]
