"""One iteration of a counting update over packed keys, in one native pass (``refreshed``).

``counting_walk.Walk.step`` finishes iteration k of one relation from the change of D_k
between the states: it adds the change to the counts, and finds which touched tuples (T: the
change's, and the tuples of X'_{k-1} and X_{k-1} that differ) enter or leave Δ_k. Done with
numpy, that is a search of T in each old run Δ_1..Δ_k, in D'_k, in plus and minus, a merge
for the counts and several masked copies: on TC over graph10000, ten calls per iteration and
most of an update. When every key packs into one int64 (``RowCodec``), ``refreshed`` does all
of it in one call: T is merged from its three sorted parts (flags say which it came from), each
T key is galloped into D_k (its base and its pending keys, ``PackedCounts``: when D_k
changes, the changed counts of base keys are a patch of the base, written at the commit, the
new keys merged into a new pending part; or, past the budget, all merged into a new base),
into Δ_k (when some tuples leave or join it, its stretches between them are block-copied
into Δ'_k) unless it is counted in both D_k and D'_k and is in neither plus nor minus (it
then stays in Δ_k or out of it: on TC over graph10000, most keys; not searching them made the
kernel about a quarter faster) and, only when that does not tell whether it is in X_{k-1},
into the old runs of iterations before k (until one holds it: the runs are disjoint). It
tells for most: a key of minus_{k-1} is in X_{k-1}, one of plus_{k-1} is not, and one counted
in D_k is in X_k, so in X_{k-1} unless in Δ_k (on TC over graph10000 this made the kernel
a fifth faster, on RDFS over LUBM(1) a third). Cost: O(|T| log(n / |T|)), plus O(k) searches
of each key it does not tell, O(|pending| + |T|) when D_k changes (O(|D_k|) when it
merges) and O(|Δ_k|) when Δ_k changes; one allocation per output.

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
    >>> d_2 = PackedCounts(keys(7)[None, :], True, np.array([1], dtype=np.int8))
    >>> out = refreshed(d_2, keys(7, 9), keys(-1, 1), keys(), keys(), keys(1, 5, 7),
    ...                 keys(2, 3), 2)
    >>> # 7's count (at position 0 of the base) to be 0, 9 pending
    >>> out.patch[1].tolist(), out.patch[2].tolist(), out.counts.pending[0].tolist()
    ([0], [0], [9])
    >>> out.counts.zeros, out.first.tolist()
    (1, [9])
    >>> out.gained.tolist(), out.dropped.tolist(), out.plus.tolist(), out.minus.tolist()
    ([9], [7], [9], [7])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.incremental.counting_trace import PackedCounts
from herbrand.evaluators.native.exported import exported, helper
from herbrand.indexes.kernels import gallop_within

# flags of a touched key: from the change of D_k, from plus_{k-1}, from minus_{k-1}
_DELTA, _PLUS, _MINUS = 1, 2, 4
_LARGEST = 9223372036854775807
# the entries ``_gallop_near`` compares before it gallops
_WINDOW = 8
# D_k's counts (its base's and pending ones) and D'_k's of one of four integer types; the
# kernel returns five arrays (a call costs about 1 us per array returned): the scratch (the
# sizes, then the patch's positions, plus_k, minus_k, gained, dropped, the dropped keys'
# positions in Δ_k and the gained keys' places among its kept keys, n slots each),
# the patch's counts, Δ'_k, and D'_k's pending (patched) or base (rebased) keys and counts
_SIGNATURE = ("Tuple((i8[::1], {0}[::1], i8[::1], i8[::1], {0}[::1]))"
              "(i8[::1], {0}[::1], i8[::1], {0}[::1], i8, i8[::1], i8[::1], i8[::1], i8[::1], "
              "i8[::1], i8[::1], i8, i8, i8)")
# the sizes at the scratch's start, by index
_MODE, _MERGED, _PATCHES, _PENDING, _ZEROS, _FIRST, _PLUS_K, _MINUS_K, _GAINED, _DROPPED = range(10)
_NEGATIVE, _OVERFLOW = 10, 11
_SIZES = 12
# the scratch's parts after the sizes, n slots each, in order (by the index of their size)
_SCRATCH_PARTS = (_PATCHES, _PLUS_K, _MINUS_K, _GAINED, _DROPPED, _DROPPED, _GAINED)
_PARTS = len(_SCRATCH_PARTS)
# D'_k: D_k itself, D_k's base patched (pending rebuilt), or one merged base
_KEPT, _PATCHED, _REBASED = 0, 1, 2


@helper(inline="always")
def _gallop_near(haystack, lo, hi, x):
    """``gallop_within`` for a key likely within a few entries of ``lo``: the entries of
    ``haystack[lo:lo + 8]`` below ``x`` counted without a branch per entry (the window is
    sorted, so the count is the position), galloping past it only when all are below. The
    touched keys are dense in D_k and Δ_k (on TC over graph10000 a sixth and a third of
    them), where a gallop's branches mispredict: this made the kernel an eighth faster."""
    if lo + _WINDOW > hi:
        return gallop_within(haystack, lo, hi, x)
    below = 0
    for at in range(lo, lo + _WINDOW):
        below += haystack[at] < x
    return lo + below if below < _WINDOW else gallop_within(haystack, lo + _WINDOW, hi, x)


@helper
def _touched(delta_keys, plus, minus):
    """The ascending union of three strictly ascending key arrays and each key's flags."""
    nd, np_, nm = delta_keys.shape[0], plus.shape[0], minus.shape[0]
    keys = np.empty(nd + np_ + nm, dtype=np.int64)
    flags = np.empty(nd + np_ + nm, dtype=np.int64)
    i = j = m = n = 0
    while True:
        # the change's keys below the next key of plus or minus copied in a tight loop (most
        # touched keys are only the change's: on TC over graph10000 this made the merge
        # 0.14 -> 0.06 ms for 41,000 keys), then that key with its flags
        last = j == np_ and m == nm
        y = _LARGEST
        if j < np_:
            y = plus[j]
        if m < nm and minus[m] < y:
            y = minus[m]
        while i < nd and (last or delta_keys[i] < y):
            keys[n] = delta_keys[i]
            flags[n] = _DELTA
            n += 1
            i += 1
        if last:
            break
        flag = 0
        if i < nd and delta_keys[i] == y:
            flag |= _DELTA
            i += 1
        if j < np_ and plus[j] == y:
            flag |= _PLUS
            j += 1
        if m < nm and minus[m] == y:
            flag |= _MINUS
            m += 1
        keys[n] = y
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
def _summed(keys, counts, pending_keys, pending_counts, touched, flags, delta_counts):
    """Per touched key: its insertion position among D_k's base keys, its count in D_k (in
    the base or among the pending entries) and in D'_k."""
    n, e, p = touched.shape[0], keys.shape[0], pending_keys.shape[0]
    positions = np.empty(n, dtype=np.int64)
    olds = np.empty(n, dtype=np.int64)
    sums = np.empty(n, dtype=np.int64)
    at = pat = d = 0
    for t in range(n):
        x = touched[t]
        at = _gallop_near(keys, at, e, x)
        pat = gallop_within(pending_keys, pat, p, x)
        positions[t] = at
        old = 0
        if at < e and keys[at] == x:
            old = counts[at]
        elif pat < p and pending_keys[pat] == x:
            old = pending_counts[pat]
        count = old
        if flags[t] & _DELTA:
            count += delta_counts[d]
            d += 1
        olds[t], sums[t] = old, count
    return positions, olds, sums


@helper
def _patched(keys, pending_keys, pending_counts, touched, flags, positions, olds, sums,
             patch_positions, patch_counts, out_keys, out_counts):
    """D'_k as D_k's base patched: the changed counts of base keys into ``patch_positions``
    / ``patch_counts`` (returns how many), the pending entries merged with
    the changed keys outside the base into ``out_keys`` / ``out_counts`` (those whose count
    drops to 0 left out)."""
    e, p = keys.shape[0], pending_keys.shape[0]
    patches = j = q = 0
    for t in range(touched.shape[0]):
        x = touched[t]
        if not flags[t] & _DELTA or sums[t] == olds[t]:
            continue
        at = positions[t]
        if at < e and keys[at] == x:
            patch_positions[patches] = at
            patch_counts[patches] = sums[t]
            patches += 1
            continue
        while j < p and pending_keys[j] < x:
            out_keys[q], out_counts[q] = pending_keys[j], pending_counts[j]
            j, q = j + 1, q + 1
        if j < p and pending_keys[j] == x:
            j += 1
        if sums[t] > 0:
            out_keys[q], out_counts[q] = x, sums[t]
            q += 1
    _copy(pending_keys, j, p, out_keys, q)
    _copy(pending_counts, j, p, out_counts, q)
    return patches


@helper
def _rebased(keys, counts, pending_keys, pending_counts, touched, sums, out_keys, out_counts):
    """D'_k as one base: D_k's base and pending entries and the touched keys' new counts,
    merged, entries of count 0 left out; returns its length."""
    e, p, n = keys.shape[0], pending_keys.shape[0], touched.shape[0]
    i = j = t = out = 0
    while i < e or j < p or t < n:
        x = _LARGEST
        if i < e:
            x = keys[i]
        if j < p and pending_keys[j] < x:
            x = pending_keys[j]
        if t < n and touched[t] < x:
            x = touched[t]
        if t < n and touched[t] == x:
            count = sums[t]
            t += 1
            if i < e and keys[i] == x:
                i += 1
            elif j < p and pending_keys[j] == x:
                j += 1
        elif i < e and keys[i] == x:
            count = counts[i]
            i += 1
        else:
            count = pending_counts[j]
            j += 1
        if count > 0:
            out_keys[out], out_counts[out] = x, count
            out += 1
    return out


@exported(*(_SIGNATURE.format(counts) for counts in ("i8", "i4", "i2", "i1")))
def _refreshed(keys, counts, pending_keys, pending_counts, zeros, delta_keys, delta_counts,
               plus, minus, firsts, ends, k, high, budget):
    touched, flags = _touched(delta_keys, plus, minus)
    n, e, p = touched.shape[0], keys.shape[0], pending_keys.shape[0]
    positions, olds, sums = _summed(keys, counts, pending_keys, pending_counts, touched, flags,
                                    delta_counts)
    scratch = np.empty(_SIZES + _PARTS * n, dtype=np.int64)
    sizes = scratch[:_SIZES]
    sizes[:] = 0
    patch_positions = scratch[_SIZES:_SIZES + n]
    plus_k = scratch[_SIZES + n:_SIZES + 2 * n]
    minus_k = scratch[_SIZES + 2 * n:_SIZES + 3 * n]
    gained = scratch[_SIZES + 3 * n:_SIZES + 4 * n]
    dropped = scratch[_SIZES + 4 * n:_SIZES + 5 * n]
    left = scratch[_SIZES + 5 * n:_SIZES + 6 * n]
    kept_before = scratch[_SIZES + 6 * n:_SIZES + 7 * n]
    nothing, no_counts = np.empty(0, dtype=np.int64), np.empty(0, dtype=counts.dtype)
    for t in range(n):
        if sums[t] < 0:
            sizes[_NEGATIVE] = 1
        elif sums[t] > high:
            sizes[_OVERFLOW] = 1
    if sizes[_NEGATIVE] or sizes[_OVERFLOW]:
        return scratch, no_counts, nothing, nothing, no_counts
    # D'_k is D_k when there is no change of it (touched by plus or minus only); else the
    # base patched while its zeros and the pending entries stay within the budget
    zeros_after, pending_after = zeros, p
    if delta_keys.shape[0]:
        for t in range(n):
            if flags[t] & _DELTA:
                at = positions[t]
                if at < e and keys[at] == touched[t]:  # a count of 0 stays, as a zero
                    if sums[t] == 0 and olds[t] != 0:
                        zeros_after += 1
                    elif sums[t] != 0 and olds[t] == 0:
                        zeros_after -= 1
                elif sums[t] > 0 and olds[t] == 0:  # a pending entry of count 0 goes
                    pending_after += 1
                elif sums[t] == 0 and olds[t] > 0:
                    pending_after -= 1
        sizes[_MODE] = _PATCHED if zeros_after + pending_after <= budget else _REBASED
    patch_counts, out_keys, out_counts = no_counts, nothing, no_counts
    if sizes[_MODE] == _PATCHED:
        patch_counts = np.empty(n, dtype=counts.dtype)
        out_keys = np.empty(pending_after, dtype=np.int64)
        out_counts = np.empty(pending_after, dtype=counts.dtype)
        sizes[_PATCHES] = _patched(keys, pending_keys, pending_counts, touched, flags,
                                   positions, olds, sums, patch_positions,
                                   patch_counts, out_keys, out_counts)
        sizes[_PENDING], sizes[_ZEROS] = pending_after, zeros_after
    elif sizes[_MODE] == _REBASED:
        out_keys = np.empty(e + p + n, dtype=np.int64)
        out_counts = np.empty(e + p + n, dtype=counts.dtype)
        sizes[_MERGED] = _rebased(keys, counts, pending_keys, pending_counts, touched, sums,
                                  out_keys, out_counts)
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
    moves = np.zeros(n, dtype=np.int8)  # 1: joins Δ'_k, 2: leaves it
    places = np.empty(n, dtype=np.int64)  # of the touched keys in Δ_k
    npl = nmi = ng = ndr = 0
    for t in range(n):
        x = touched[t]
        in_plus, in_minus = (flags[t] & _PLUS) != 0, (flags[t] & _MINUS) != 0
        if olds[t] > 0 and sums[t] > 0 and not (in_plus or in_minus):
            # counted in D_k and D'_k, so in X_k and X'_k, and in X_{k-1} and X'_{k-1}
            # alike: in Δ'_k exactly when in Δ_k, so neither searched there nor moved (on
            # TC over graph10000, all but a few hundred of the 40,000 keys of a 1% update's
            # largest iterations)
            continue
        position = searched = _gallop_near(firsts, searched, first_hi, x)
        places[t] = position
        was_first = position < first_hi and firsts[position] == x
        # whether x is in X_{k-1}, searched in the runs Δ_1..Δ_{k-1} only when unknown: minus
        # is X_{k-1} - X'_{k-1}, plus X'_{k-1} - X_{k-1}, and a tuple counted in D_k is in
        # X_k, X_{k-1} and Δ_k disjoint
        was_in = in_minus or (not in_plus and not was_first and olds[t] > 0)
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
            kept_before[ng] = places[t] - first_lo - ndr  # the dropped keys are below x
            ng += 1
        elif drop:
            moves[t] = 2
            dropped[ndr] = x
            left[ndr] = places[t] - first_lo
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
    sizes[_FIRST], sizes[_PLUS_K], sizes[_MINUS_K] = nf, npl, nmi
    sizes[_GAINED], sizes[_DROPPED] = ng, ndr
    return scratch, patch_counts, new_first, out_keys, out_counts


@dataclass(frozen=True)
class Refreshed:
    """Iteration k of one relation after an update's change: D'_k (``counts``: D_k itself
    when there was no change of it), the ``patch`` of D_k's base counts it needs when it
    shares them (``(counts, positions, values)``, for ``PackedCounts.patched``; applied once
    the update commits, None when there is none), and as ascending packed keys Δ'_k
    (``first``; ``changed`` is False when it is Δ_k, and then it is empty), plus_k, minus_k,
    gained (Δ'_k - Δ_k) and dropped (Δ_k - Δ'_k); and where they move, for a copy of Δ_k's
    rows (``counting_merge.spliced``): the positions in Δ_k of the dropped keys (``left``)
    and, per gained key, how many of Δ_k's kept keys are below it (``kept_before``)."""

    counts: PackedCounts
    patch: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    first: np.ndarray
    plus: np.ndarray
    minus: np.ndarray
    gained: np.ndarray
    dropped: np.ndarray
    left: np.ndarray
    kept_before: np.ndarray

    @property
    def changed(self) -> bool:
        return bool(len(self.gained) or len(self.dropped))


def refreshed(counts: PackedCounts, delta_keys: np.ndarray, delta_counts: np.ndarray,
              plus: np.ndarray, minus: np.ndarray, firsts: np.ndarray, ends: np.ndarray,
              k: int) -> Refreshed:
    """Iteration ``k`` after an update (see the module doc): D_k (packed ``counts``), the
    change (ascending ``delta_keys``, int64 ``delta_counts``), plus_{k-1} and minus_{k-1}
    (ascending), and the old runs Δ_1, Δ_2, ... one after the other in ``firsts``, the i-th
    ending at ``ends[i - 1]``; as in the engine's state, D_k counts only tuples of X_k,
    minus_{k-1} is in X_{k-1} and plus_{k-1} is not (the results are undefined otherwise).
    D'_k shares D_k's base (patched) while its zeros and pending entries stay within
    ``PackedCounts.budget``, else it is one new base. Its counts are of D_k's type, or a
    wider one when a count needs it (the kernel then runs again). Raises AssertionError for a
    count the change makes negative (a bug of the caller)."""
    while True:
        pending_keys, pending_counts = counts.pending_entries()
        scratch, patch_counts, first, keys, values = _refreshed(
            counts.data[0], counts.counts, pending_keys, pending_counts, counts.zeros,
            delta_keys, delta_counts, plus, minus, firsts, ends, k,
            int(np.iinfo(counts.counts.dtype).max), counts.budget())
        sizes = scratch[:_SIZES].tolist()
        assert not sizes[_NEGATIVE], "a derivation count below zero"
        if not sizes[_OVERFLOW]:
            break
        counts = counts.widened()
    n = (len(scratch) - _SIZES) // _PARTS
    patch_positions, plus_k, minus_k, gained, dropped, left, kept_before = (
        scratch[_SIZES + part * n:_SIZES + part * n + sizes[size]]
        for part, size in enumerate(_SCRATCH_PARTS))
    patch = None
    if sizes[_MODE] == _PATCHED:
        patch = (counts.counts, patch_positions, patch_counts[:sizes[_PATCHES]])
        counts = counts.patched(keys, values, sizes[_ZEROS])
    elif sizes[_MODE] == _REBASED:
        counts = PackedCounts(keys[None, :sizes[_MERGED]], True, values[:sizes[_MERGED]])
    return Refreshed(counts, patch, first[:sizes[_FIRST]], plus_k, minus_k, gained, dropped,
                     left, kept_before)
