"""One iteration of a counting update over packed keys, in one native pass (``refreshed``).

``counting_walk.Walk.step`` finishes iteration k of one relation from the change of D_k
between the states: it adds the change to the counts, and finds which touched tuples (T: the
change's, and the tuples of X'_{k-1} and X_{k-1} that differ) enter or leave Δ_k. Done with
numpy, that is a search of T in each old run Δ_1..Δ_k, in D'_k, in plus and minus, a merge
for the counts and several masked copies: on TC over graph10000, ten calls per iteration and
most of an update. When every key packs into one int64 (``RowCodec``), ``refreshed`` does all
of it in one call: T is merged from its three sorted parts (flags say which it came from), each
T key is galloped into D_k (when D_k changes, the stretches of D_k between them are
block-copied into D'_k), into Δ_k (when some tuples leave or join it, its stretches between
them are block-copied into Δ'_k) and, only when that does not tell whether it is in X_{k-1},
into the old runs of iterations before k (until one holds it: the runs are disjoint). It
tells for most: a key of minus_{k-1} is in X_{k-1}, one of plus_{k-1} is not, and one counted
in D_k is in X_k, so in X_{k-1} unless in Δ_k (on TC over graph10000 this made the kernel
a fifth faster, on RDFS over LUBM(1) a third). Cost: O(|T| log(n / |T|)), plus O(k) searches
of each key it does not tell, O(|D_k|) when D_k changes and O(|Δ_k|) when Δ_k does; one
allocation per output.

The masks over T, with ``alive`` (a count in D'_k), ``was_in`` (in X_{k-1}), ``was_first``
(in Δ_k), ``in_plus`` / ``in_minus`` (in plus_{k-1} / minus_{k-1}):

- is_in = (was_in & ~in_minus) | in_plus (in X'_{k-1}); entering = alive & ~is_in (in Δ'_k);
- gained = entering & ~was_first, dropped = was_first & ~entering;
  Δ'_k = Δ_k - dropped ∪ gained;
- plus_k = (in_plus & ~was_first) | (gained & ~was_in),
  minus_k = (in_minus & ~entering) | (dropped & ~is_in).

    >>> import numpy as np
    >>> keys = lambda *values: np.array(values, dtype=np.int64)
    >>> # Δ_1 = {1, 5}, Δ_2 = {7}, D_2 = {7: 1}; the change of D_2: 7 loses it, 9 gains one
    >>> out = refreshed(keys(7), keys(1), keys(7, 9), keys(-1, 1), keys(), keys(),
    ...                 keys(1, 5, 7), keys(2, 3), 2)
    >>> out.keys.tolist(), out.counts.tolist(), out.first.tolist()
    ([9], [1], [9])
    >>> out.gained.tolist(), out.dropped.tolist(), out.plus.tolist(), out.minus.tolist()
    ([9], [7], [9], [7])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.incremental.counting_merge import gallop_within
from herbrand.evaluators.native.exported import exported, helper

# flags of a touched key: from the change of D_k, from plus_{k-1}, from minus_{k-1}
_DELTA, _PLUS, _MINUS = 1, 2, 4
_LARGEST = 9223372036854775807
_WIDER = {np.int8: np.int16, np.int16: np.int32, np.int32: np.int64}
# D_k's counts and D'_k's of one of four integer types
_SIGNATURE = ("Tuple((i8[::1], {0}[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1]))"
              "(i8[::1], {0}[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8[::1], i8, i8)")


@helper
def _touched(delta_keys, plus, minus):
    """The ascending union of three strictly ascending key arrays and each key's flags."""
    nd, np_, nm = delta_keys.shape[0], plus.shape[0], minus.shape[0]
    keys = np.empty(nd + np_ + nm, dtype=np.int64)
    flags = np.empty(nd + np_ + nm, dtype=np.int64)
    i = j = m = n = 0
    while i < nd or j < np_ or m < nm:
        x = _LARGEST
        if i < nd:
            x = delta_keys[i]
        if j < np_ and plus[j] < x:
            x = plus[j]
        if m < nm and minus[m] < x:
            x = minus[m]
        flag = 0
        if i < nd and delta_keys[i] == x:
            flag |= _DELTA
            i += 1
        if j < np_ and plus[j] == x:
            flag |= _PLUS
            j += 1
        if m < nm and minus[m] == x:
            flag |= _MINUS
            m += 1
        keys[n] = x
        flags[n] = flag
        n += 1
    return keys[:n], flags[:n]


@helper(inline="always")
def _copy(source, start, stop, target, at):
    """``target[at:at + stop - start] = source[start:stop]`` element by element: the
    stretches between touched keys are short (a slice assignment costs about 25 ns to set
    up: it made a merge whose touched keys are a sixth of the entries 2.5 times slower)."""
    for p in range(start, stop):
        target[at] = source[p]
        at += 1


@helper
def _summed(keys, counts, touched, flags, delta_counts):
    """Per touched key: its insertion position in D_k's ``keys`` and its count in D'_k."""
    n, e = touched.shape[0], keys.shape[0]
    positions = np.empty(n, dtype=np.int64)
    sums = np.empty(n, dtype=np.int64)
    at = d = 0
    for t in range(n):
        x = touched[t]
        at = gallop_within(keys, at, e, x)
        positions[t] = at
        count = 0
        if flags[t] & _DELTA:
            count = delta_counts[d]
            d += 1
        if at < e and keys[at] == x:
            count += counts[at]
        sums[t] = count
    return positions, sums


@helper
def _merged(keys, counts, touched, positions, sums, out_keys, out_counts):
    """D'_k into ``out_keys`` / ``out_counts``: D_k's stretches between the touched keys
    block-copied, each touched key with a positive sum written; returns its length."""
    e = keys.shape[0]
    at = out = 0
    for t in range(touched.shape[0]):
        stop = positions[t]
        _copy(keys, at, stop, out_keys, out)
        _copy(counts, at, stop, out_counts, out)
        out += stop - at
        at = stop + 1 if stop < e and keys[stop] == touched[t] else stop
        if sums[t] > 0:
            out_keys[out] = touched[t]
            out_counts[out] = sums[t]
            out += 1
    out_keys[out:out + e - at] = keys[at:]
    out_counts[out:out + e - at] = counts[at:]
    return out + e - at


@exported(*(_SIGNATURE.format(counts) for counts in ("i8", "i4", "i2", "i1")))
def _refreshed(keys, counts, delta_keys, delta_counts, plus, minus, firsts, ends, k, high):
    touched, flags = _touched(delta_keys, plus, minus)
    n, e = touched.shape[0], keys.shape[0]
    positions, sums = _summed(keys, counts, touched, flags, delta_counts)
    sizes = np.zeros(8, dtype=np.int64)
    for t in range(n):
        if sums[t] < 0:
            sizes[6] = 1
        elif sums[t] > high:
            sizes[7] = 1
    # D'_k is D_k when there is no change of it (touched by plus or minus only)
    merging = delta_keys.shape[0] > 0 and not (sizes[6] or sizes[7])
    out_keys = np.empty(e + n if merging else 0, dtype=np.int64)
    out_counts = np.empty(out_keys.shape[0], dtype=counts.dtype)
    if sizes[6] or sizes[7]:
        return (out_keys, out_counts, out_keys, out_keys, out_keys, out_keys, out_keys, sizes)
    if merging:
        sizes[0] = _merged(keys, counts, touched, positions, sums, out_keys, out_counts)
    # the old runs: X_{k-1} is the runs of iterations 1..k-1, Δ_k the k-th (disjoint)
    runs = ends.shape[0]
    before = min(k - 1, runs)
    cursors = np.zeros(before, dtype=np.int64)
    for j in range(before):
        cursors[j] = ends[j - 1] if j else 0
    first_lo = first_hi = 0  # Δ_k: empty past the old trace
    if k <= runs:
        first_lo, first_hi = (ends[k - 2] if k >= 2 else 0), ends[k - 1]
    searched = first_lo  # in Δ_k: galloped to
    places = np.empty(n, dtype=np.int64)  # of the touched keys in Δ_k
    moves = np.zeros(n, dtype=np.int8)  # 1: joins Δ'_k, 2: leaves it
    plus_k = np.empty(n, dtype=np.int64)
    minus_k = np.empty(n, dtype=np.int64)
    gained = np.empty(n, dtype=np.int64)
    dropped = np.empty(n, dtype=np.int64)
    npl = nmi = ng = ndr = 0
    for t in range(n):
        x = touched[t]
        position = searched = gallop_within(firsts, searched, first_hi, x)
        places[t] = position
        was_first = position < first_hi and firsts[position] == x
        in_plus, in_minus = (flags[t] & _PLUS) != 0, (flags[t] & _MINUS) != 0
        at = positions[t]
        # whether x is in X_{k-1}, searched in the runs Δ_1..Δ_{k-1} only when unknown: minus
        # is X_{k-1} - X'_{k-1}, plus X'_{k-1} - X_{k-1}, and a tuple counted in D_k is in
        # X_k, X_{k-1} and Δ_k disjoint
        was_in = in_minus or (not in_plus and not was_first
                              and at < e and keys[at] == x and counts[at] > 0)
        if not (was_in or was_first or in_plus):
            for j in range(before):
                position = gallop_within(firsts, cursors[j], ends[j], x)
                cursors[j] = position
                if position < ends[j] and firsts[position] == x:
                    was_in = True
                    break
        is_in = (was_in and not in_minus) or in_plus
        entering = sums[t] > 0 and not is_in
        gain = entering and not was_first
        drop = was_first and not entering
        if gain:
            moves[t] = 1
            gained[ng] = x
            ng += 1
        elif drop:
            moves[t] = 2
            dropped[ndr] = x
            ndr += 1
        if (in_plus and not was_first) or (gain and not was_in):
            plus_k[npl] = x
            npl += 1
        if (in_minus and not entering) or (drop and not is_in):
            minus_k[nmi] = x
            nmi += 1
    # Δ'_k: Δ_k's stretches between the keys that join or leave it, when some do
    new_first = np.empty(first_hi - first_lo + ng if ng + ndr else 0, dtype=np.int64)
    nf = copied = 0
    if ng + ndr:
        copied = first_lo
        for t in range(n):
            if moves[t]:
                position = places[t]
                _copy(firsts, copied, position, new_first, nf)
                nf += position - copied
                copied = position
                if moves[t] == 1:
                    new_first[nf] = touched[t]
                    nf += 1
                else:
                    copied += 1
        new_first[nf:nf + first_hi - copied] = firsts[copied:first_hi]
        nf += first_hi - copied
    sizes[1], sizes[2], sizes[3], sizes[4], sizes[5] = nf, npl, nmi, ng, ndr
    return (out_keys, out_counts, new_first, plus_k, minus_k, gained, dropped, sizes)


@dataclass(frozen=True)
class Refreshed:
    """Iteration k of one relation after an update's change, as ascending packed keys: D'_k
    (``keys``, ``counts``; empty when there was no change of D_k: D'_k is D_k), Δ'_k
    (``first``; ``changed`` is False when it is Δ_k, and then it is empty), and plus_k,
    minus_k, gained (Δ'_k - Δ_k), dropped (Δ_k - Δ'_k)."""

    keys: np.ndarray
    counts: np.ndarray
    first: np.ndarray
    plus: np.ndarray
    minus: np.ndarray
    gained: np.ndarray
    dropped: np.ndarray

    @property
    def changed(self) -> bool:
        return bool(len(self.gained) or len(self.dropped))


def refreshed(keys: np.ndarray, counts: np.ndarray, delta_keys: np.ndarray,
              delta_counts: np.ndarray, plus: np.ndarray, minus: np.ndarray,
              firsts: np.ndarray, ends: np.ndarray, k: int) -> Refreshed:
    """Iteration ``k`` after an update (see the module doc): D_k (ascending ``keys``, their
    ``counts``, int8 to int64), the change (ascending ``delta_keys``, int64
    ``delta_counts``), plus_{k-1} and minus_{k-1} (ascending), and the old runs Δ_1, Δ_2, ...
    one after the other in ``firsts``, the i-th ending at ``ends[i - 1]``; as in the
    engine's state, D_k counts only tuples of X_k, minus_{k-1} is in X_{k-1} and plus_{k-1}
    is not (the results are undefined otherwise). D'_k's counts are of D_k's type, or a wider one when a count needs it (the kernel then runs again).
    Raises AssertionError for a count the change makes negative (a bug of the caller)."""
    while True:
        out = _refreshed(keys, counts, delta_keys, delta_counts, plus, minus, firsts, ends, k,
                         int(np.iinfo(counts.dtype).max))
        sizes = out[7].tolist()
        assert not sizes[6], "a derivation count below zero"
        if not sizes[7]:
            return Refreshed(*(array[:size] for array, size in zip(
                out[:7], [sizes[0], *sizes[:6]], strict=True)))
        counts = counts.astype(_WIDER[counts.dtype.type])
