"""Numba kernels of ``zset``: Z-sets on packed rows as runs of strictly ascending int64 keys
with int64 weights.

- ``sums(a, a_weights, b, b_weights, c, c_weights, total, total_weights)``: the sum
  δ = a + b + c and total + δ, each as (keys, weights) with the keys whose weights sum to 0
  dropped, in one pass over the four runs (a merge step per distinct key: the smallest of the
  four heads, and the weights of the runs that hold it). Summing them pairwise instead writes
  and reads again each partial sum (on TC over graph10000, an update's iterations sum the
  input-driven terms' change, the other terms' new value and their last one, then ΔX_{i-1}:
  1.55 ms of merges in three passes, 1.11 ms in one). The four heads are held in registers,
  an exhausted run's as the largest int64, so a step tests no run's end but the one it
  advances, and writes its entry before testing its weight (TC's three dense calls per 1%
  update: 0.87-0.90 -> 0.60-0.61 ms); a run that holds the largest int64 holds it last, and
  that key is summed after the loop. O(the four runs' lengths).
- ``run_sums(keys, weights)``: the distinct keys of ascending ``keys`` (repeats allowed) with
  the sums of their weights (zero sums kept): a pass that counts the distinct keys, then, when
  some repeat, one that writes every key and adds its weight at the current output slot,
  moving on at each new key (no branch), into results of the distinct count: the
  consolidation of a sorted bag (``ZSet.of``). Where numpy's run detection (``not_equal``,
  ``flatnonzero``, the run lengths, a boolean gather) took four passes and their arrays (TC
  over graph10000, a 1% insert's input-driven terms: 23k sorted keys, 44 -> 15 us). Results
  of n entries each, allocated before the count, raised the peak RSS of a TC process with
  dbsp from 190 to 206 MB, and their zeroed pages cost more than the pass (47,000 keys: 219
  against 27 us). The inputs themselves when no key repeats, else new arrays. O(n).

    >>> import numpy as np
    >>> one = np.array([1])
    >>> dk, dw, tk, tw = sums(np.array([1, 3]), np.array([2, 1]), np.array([3]), np.array([-1]),
    ...                       np.array([5]), one, np.array([1, 2]), np.array([-2, 4]))
    >>> dk.tolist(), dw.tolist(), tk.tolist(), tw.tolist()
    ([1, 5], [2, 1], [2, 5], [4, 1])
    >>> keys, weights = run_sums(np.array([2, 2, 3, 7, 7, 7]), np.array([1, -1, 2, 1, 1, 1]))
    >>> keys.tolist(), weights.tolist()
    ([2, 3, 7], [0, 2, 3])
"""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.native.exported import exported

# an exhausted run's head: above every key but the largest int64, which a run can hold last
_EXHAUSTED = np.iinfo(np.int64).max


@exported("UniTuple(i8[::1], 4)(i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], "
          "i8[::1], i8[::1])")
def sums(a, a_weights, b, b_weights, c, c_weights, total, total_weights):
    na, nb, nc, nt = a.shape[0], b.shape[0], c.shape[0], total.shape[0]
    delta_keys = np.empty(na + nb + nc + 1, dtype=np.int64)
    delta_weights = np.empty(na + nb + nc + 1, dtype=np.int64)
    keys = np.empty(na + nb + nc + nt + 1, dtype=np.int64)
    weights = np.empty(na + nb + nc + nt + 1, dtype=np.int64)
    i = j = k = m = d = o = 0
    x = a[0] if na else _EXHAUSTED
    y = b[0] if nb else _EXHAUSTED
    z = c[0] if nc else _EXHAUSTED
    t = total[0] if nt else _EXHAUSTED
    while True:
        key = min(min(x, y), min(z, t))
        if key == _EXHAUSTED:
            break
        change = 0
        if x == key:
            change += a_weights[i]
            i += 1
            x = a[i] if i < na else _EXHAUSTED
        if y == key:
            change += b_weights[j]
            j += 1
            y = b[j] if j < nb else _EXHAUSTED
        if z == key:
            change += c_weights[k]
            k += 1
            z = c[k] if k < nc else _EXHAUSTED
        summed = change
        if t == key:
            summed += total_weights[m]
            m += 1
            t = total[m] if m < nt else _EXHAUSTED
        delta_keys[d] = key  # written always, kept when non-zero: no branch
        delta_weights[d] = change
        d += change != 0
        keys[o] = key
        weights[o] = summed
        o += summed != 0
    # each run left holds one key, the largest int64
    change = ((a_weights[i] if i < na else 0) + (b_weights[j] if j < nb else 0)
              + (c_weights[k] if k < nc else 0))
    summed = change + (total_weights[m] if m < nt else 0)
    delta_keys[d] = keys[o] = _EXHAUSTED
    delta_weights[d], weights[o] = change, summed
    d += change != 0
    o += summed != 0
    return (delta_keys[:d].copy(), delta_weights[:d].copy(), keys[:o].copy(),
            weights[:o].copy())


@exported("UniTuple(i8[::1], 2)(i8[::1], i8[::1])")
def run_sums(keys, weights):
    n = keys.shape[0]
    d = 1 if n else 0  # the distinct keys, counted first: the results are allocated at size
    for j in range(1, n):
        d += keys[j] != keys[j - 1]
    if d == n:
        return keys, weights
    out_keys = np.empty(d, dtype=np.int64)
    out_weights = np.zeros(d, dtype=np.int64)
    out_keys[0] = keys[0]
    out_weights[0] = weights[0]
    d = 0  # the output slot of the current key
    for j in range(1, n):
        d += keys[j] != keys[j - 1]
        out_keys[d] = keys[j]
        out_weights[d] += weights[j]
    return out_keys, out_weights
