"""The native executor's kernels: relations and hash indexes, arithmetic, the interpreter.

These are numba functions compiled ahead of time into one extension module (``compiled``
builds and loads it; its entry points are ``compiled.ENTRY_POINTS``): a run imports neither
numba nor LLVM. They allocate nothing that outlives a call: every buffer and table is a numpy
array that ``store.NativeStore`` owns, and a kernel that needs one grown returns a request
(``layout.NEED_*``, saying which in its ``need`` array) after saving where it was, and is
called again once the store has grown it. Layout constants are ``layout``'s.

Storage, read and written through the addresses in the metadata arrays (a load costs about a
nanosecond; fetching an array from a container, about a hundred):

- relation ``r``: a (capacity, arity) int64 buffer, row-major (a dedup probe or a key
  comparison touches one cache line, where columns would touch one per column), described by
  ``rel_meta[r]`` = (address, capacity, rows in use, arity). It grows by doubling (amortised
  O(1) per row), so an iteration costs O(delta), never O(n).
- index ``i`` on one relation and a tuple of key columns: ``ix_meta[i]`` = (relation, offset of
  its key columns in ``ix_cols``, number of key columns, distinct keys, rows indexed so far,
  unique flag, table address, mask, chains address, chains length, shift); its table is an
  open-addressing array (linear probing, at most half full) of row numbers, the first row of
  each distinct key; its chains (int32: rows below 2^31) link the other rows with the same key
  (``next[row]``). A unique index (every column a key column) is a relation's dedup table and
  has no chains.
  Hashes are a murmur-style finaliser per value: a weak hash makes probe sequences cluster
  (3-20x slower, measured). A slot also holds its key's fingerprint (the hash's top 32 bits,
  which are also where probing starts), so probing reads a row only when fingerprints match
  and growing a table reads no row at all: each row read is a cache miss, and chain TC (no
  duplicates) spent most of its time in them.

The loops that run per row or per derivation (``_resume``, ``_index_rows``, ``append_rows``)
are compiled without numba's reference counting (``_nrt=False``): with it, every inlined helper
taking arrays counted references on each call, which measured about 140 ns per call against
under 2 ns without; their callers own every array.

The interpreter runs a rule compiled by ``encoding`` into arrays (``encoding.Program``): nested
loops over *levels*, each a scan of a relation (all of it, or the rows of its delta range) or a
probe of an index with a key taken from registers and constants, binding matched columns to
registers, then running the level's code (selections, comparisons, arithmetic into registers,
negation as a probe that must miss); the innermost level computes the head tuple and inserts it
into the head relation's dedup table, appending it when new. Nothing between the first level and
the head is materialized: the cost is per derivation, in native code. Probes read an index
caught up at the start of the rule, so rows a rule appends are not seen by its own probes (they
are the next iteration's delta).

On the parallel backend, threads run slices of one rule at once (``run_slice``) and insert
into its head relation together (``_add_concurrently``): a new tuple claims an empty dedup slot
with a compare-and-swap (reserved), takes the next row number, writes its row and publishes the
slot, so rows stay dense and no tuple is added twice; full scans read only the rows present
when the slices began.

Arithmetic is ``herbrand.evaluators.arithmetic``'s: 64-bit wrap-around, ``/`` truncating toward
zero, ``%`` with the dividend's sign, division by zero and negative exponents failing the
derivation, shift counts modulo 64.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from herbrand.evaluators.native.layout import (
    ADDED,
    DONE,
    E_END,
    E_SOURCE,
    EMPTY,
    FINGERPRINT,
    IX_COLS,
    IX_DONE,
    IX_KEYS,
    IX_MASK,
    IX_NEXT,
    IX_NEXT_CAPACITY,
    IX_REL,
    IX_SHIFT,
    IX_SLOTS,
    IX_UNIQUE,
    IX_WIDTH,
    MIX,
    NEED_INDEX,
    NEED_ROW,
    NEXT_ROW,
    NO_ROOM,
    OP_ABSENT,
    OP_COMPARE,
    OP_COMPARE_SOURCES,
    OP_EMPTY,
    OP_EQUAL,
    OP_MAP,
    P_BIND_COLUMN,
    P_BIND_REGISTER,
    P_CODE,
    P_CONSTANTS,
    P_EXPRESSIONS,
    P_LEVEL_BINDS,
    P_LEVEL_CODE,
    P_LEVEL_INDEX,
    P_LEVEL_KEYS,
    P_LEVEL_KIND,
    P_LEVEL_RANGE,
    P_LEVEL_REL,
    P_RULE_DEDUP,
    P_RULE_HEAD,
    P_RULE_HEAD_SOURCES,
    P_RULE_INDEX_LIST,
    P_RULE_INDEXES,
    P_RULE_LEVELS,
    P_SOURCES,
    PHASE_CHOOSE,
    PHASE_RUN,
    PHASE_START,
    PRESENT,
    PROBE,
    R_ADDRESS,
    R_ARITY,
    R_CAPACITY,
    R_SIZE,
    RESERVED,
    ROW,
    RUN_ADDED,
    RUN_ITERATIONS,
    RUN_PHASE,
    RUN_POSITION,
    RUN_RULE,
    S_ADDED,
    S_DEPTH,
    S_TICKETS,
    S_WAITING,
    SCAN,
    SEED,
    SHIFT,
    TICKET_BATCH,
    TICKETS_LEFT,
    UNIT,
)

# ---------------------------------------------------------------------------------------------
# Raw memory: storage read and written through the addresses in the metadata arrays
# ---------------------------------------------------------------------------------------------


def _pointer(context, builder, address, type_):
    """The int64 ``address`` as a pointer to ``type_``, in an intrinsic's code."""
    return builder.inttoptr(address, context.get_value_type(types.CPointer(type_)))


@intrinsic
def _load(typingctx, address):
    """The int64 at ``address``."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        return builder.load(pointer)
    return types.int64(types.int64), codegen

@intrinsic
def _store(typingctx, address, value):
    """Write the int64 ``value`` at ``address``."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        builder.store(args[1], pointer)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@intrinsic
def _load32(typingctx, address):
    """The int32 at ``address``, as an int64 (sign-extended: -1 stays -1)."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int32)
        return builder.sext(builder.load(pointer), context.get_value_type(types.int64))
    return types.int64(types.int64), codegen


@intrinsic
def _store32(typingctx, address, value):
    """Write the int64 ``value`` (a row number below 2^31, or -1) as the int32 at
    ``address``."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int32)
        builder.store(builder.trunc(args[1], context.get_value_type(types.int32)), pointer)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@intrinsic
def _load_atomic(typingctx, address):
    """The int64 at ``address``, read atomically (a slot other threads may write)."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        return builder.load_atomic(pointer, "acquire", 8)
    return types.int64(types.int64), codegen


@intrinsic
def _publish(typingctx, address, value):
    """Write the int64 ``value`` at ``address`` atomically, after every write before it."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        builder.store_atomic(args[1], pointer, "release", 8)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@intrinsic
def _swap_if(typingctx, address, expected, value):
    """Write ``value`` at ``address`` if it holds ``expected``, atomically; whether it did."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        result = builder.cmpxchg(pointer, args[1], args[2], "acq_rel", "acquire")
        return builder.extract_value(result, 1)
    return types.boolean(types.int64, types.int64, types.int64), codegen


@intrinsic
def _fetch_add(typingctx, address, value):
    """Add ``value`` to the int64 at ``address`` atomically; the value before."""
    def codegen(context, builder, signature, args):
        pointer = _pointer(context, builder, args[0], types.int64)
        return builder.atomic_rmw("add", pointer, args[1], "monotonic")
    return types.int64(types.int64, types.int64), codegen


@njit(inline="always")
def _cell(rel_meta, rel, column, row):
    """The value at (column, row) of relation ``rel``."""
    return _load(rel_meta[rel, R_ADDRESS] + 8 * (row * rel_meta[rel, R_ARITY] + column))

@njit(inline="always")
def _slot(ix_meta, ix, s):
    return _load(ix_meta[ix, IX_SLOTS] + 8 * s)

@njit(inline="always")
def _set_slot(ix_meta, ix, s, row):
    _store(ix_meta[ix, IX_SLOTS] + 8 * s, row)

@njit(inline="always")
def _next(ix_meta, ix, row):
    """The row after ``row`` in its key's chain (EMPTY: none); chains are int32."""
    return _load32(ix_meta[ix, IX_NEXT] + 4 * row)

# ---------------------------------------------------------------------------------------------
# Relations and the hash index
# ---------------------------------------------------------------------------------------------


@njit(inline="always")
def _mix(h, value):
    h ^= np.uint64(value)
    h *= MIX
    return h ^ (h >> SHIFT)

@njit(inline="always")
def _hash_key(key, width):
    h = SEED
    for j in range(width):
        h = _mix(h, key[j])
    return h

@njit(inline="always")
def _hash_row(ix_meta, ix, rel_meta, ix_cols, row):
    rel, first = ix_meta[ix, IX_REL], ix_meta[ix, IX_COLS]
    h = SEED
    for j in range(ix_meta[ix, IX_WIDTH]):
        h = _mix(h, _cell(rel_meta, rel, ix_cols[first + j], row))
    return h

@njit(inline="always")
def _packed(h, row):
    """A slot's value: the hash's top 32 bits (its fingerprint) above the row number."""
    return np.int64(h & FINGERPRINT) | row

@njit(inline="always")
def _start(ix_meta, ix, h):
    """The first slot to probe: the top bits of the hash (so that the fingerprint alone gives
    a key's slot in a table of any size up to 2^32)."""
    return np.int64(h >> np.uint64(ix_meta[ix, IX_SHIFT]))

@njit(inline="always")
def _find_key(ix_meta, ix, rel_meta, ix_cols, key, h):
    """The slot of ``key`` (hash ``h``) in index ``ix``, or the empty slot where it would go.
    Rows are read only when a slot's fingerprint matches."""
    rel, first, width = ix_meta[ix, IX_REL], ix_meta[ix, IX_COLS], ix_meta[ix, IX_WIDTH]
    fingerprint = h & FINGERPRINT
    mask = ix_meta[ix, IX_MASK]
    s = _start(ix_meta, ix, h)
    while True:
        value = _slot(ix_meta, ix, s)
        if value == EMPTY:
            return s
        if np.uint64(value) & FINGERPRINT == fingerprint:
            row = value & ROW
            same = True
            for j in range(width):
                if _cell(rel_meta, rel, ix_cols[first + j], row) != key[j]:
                    same = False
                    break
            if same:
                return s
        s = (s + 1) & mask

@njit(inline="always")
def _find_row(ix_meta, ix, rel_meta, ix_cols, row, h):
    """The slot of stored row ``row``'s key (hash ``h``) in index ``ix``, or the empty slot
    for it."""
    rel, first, width = ix_meta[ix, IX_REL], ix_meta[ix, IX_COLS], ix_meta[ix, IX_WIDTH]
    fingerprint = h & FINGERPRINT
    mask = ix_meta[ix, IX_MASK]
    s = _start(ix_meta, ix, h)
    while True:
        value = _slot(ix_meta, ix, s)
        if value == EMPTY:
            return s
        if np.uint64(value) & FINGERPRINT == fingerprint:
            other = value & ROW
            same = True
            for j in range(width):
                c = ix_cols[first + j]
                if _cell(rel_meta, rel, c, other) != _cell(rel_meta, rel, c, row):
                    same = False
                    break
            if same:
                return s
        s = (s + 1) & mask


@njit(nogil=True, _nrt=False)
def rehash(old, slots):
    """Move the entries of table ``old`` into the empty table ``slots`` (a power of two long,
    up to 2^32; the keys are distinct). The fingerprints give the new positions: no row is
    read. O(len(old) + len(slots))."""
    mask = slots.shape[0] - 1
    shift = np.uint64(64)
    length = slots.shape[0]
    while length > 1:
        length >>= 1
        shift -= np.uint64(1)
    for value in old:
        if value == EMPTY:
            continue
        s = np.int64((np.uint64(value) & FINGERPRINT) >> shift)
        while slots[s] != EMPTY:
            s = (s + 1) & mask
        slots[s] = value


@njit(nogil=True, _nrt=False)
def _index_rows(ix_meta, rel_meta, ix_cols, ix, size):
    """Index rows of index ``ix``'s relation from the first not yet indexed, until ``size`` or
    until the table needs to grow; the next row to index."""
    unique = ix_meta[ix, IX_UNIQUE] == 1
    keys = ix_meta[ix, IX_KEYS]
    row = ix_meta[ix, IX_DONE]
    while row < size and 2 * (keys + 1) <= ix_meta[ix, IX_MASK] + 1:
        h = _hash_row(ix_meta, ix, rel_meta, ix_cols, row)
        s = _find_row(ix_meta, ix, rel_meta, ix_cols, row, h)
        head = _slot(ix_meta, ix, s)
        if head == EMPTY:
            keys += 1
            if not unique:
                _store32(ix_meta[ix, IX_NEXT] + 4 * row, EMPTY)
        elif not unique:
            _store32(ix_meta[ix, IX_NEXT] + 4 * row, head & ROW)
        if head == EMPTY or not unique:
            _set_slot(ix_meta, ix, s, _packed(h, row))
        row += 1
    ix_meta[ix, IX_KEYS] = keys
    ix_meta[ix, IX_DONE] = row
    return row


@njit(inline="always")
def _catch_up(rel_meta, ix_meta, ix_cols, ix, need):
    """Index the rows of index ``ix``'s relation appended since it was last caught up: DONE,
    or NEED_INDEX (``need[0] = ix``) when its chains or table must grow first (the rows indexed
    so far stay indexed). O(new rows) expected."""
    size = rel_meta[ix_meta[ix, IX_REL], R_SIZE]
    if ix_meta[ix, IX_DONE] >= size:
        return DONE
    if ((ix_meta[ix, IX_UNIQUE] == 0 and ix_meta[ix, IX_NEXT_CAPACITY] < size)
            or _index_rows(ix_meta, rel_meta, ix_cols, ix, size) < size):
        need[0] = ix
        return NEED_INDEX
    return DONE


@njit(nogil=True, _nrt=False)
def catch_up(rel_meta, ix_meta, ix_cols, ix, need):
    """``_catch_up`` of index ``ix``, from Python."""
    return _catch_up(rel_meta, ix_meta, ix_cols, ix, need)


@njit(inline="always")
def _full(rel_meta, ix_meta, rel, dedup):
    """Whether inserting one more row into ``rel`` needs room first (its buffer is full, or
    its dedup table would pass half full)."""
    return (rel_meta[rel, R_SIZE] == rel_meta[rel, R_CAPACITY]
            or 2 * (ix_meta[dedup, IX_KEYS] + 1) > ix_meta[dedup, IX_MASK] + 1)

@njit(inline="always")
def _append(rel_meta, ix_meta, ix_cols, rel, dedup, values):
    """Insert the tuple ``values`` into relation ``rel`` unless its dedup index ``dedup``
    (caught up, with room: not ``_full``) holds it; True when it was new. O(1) expected."""
    h = _hash_key(values, ix_meta[dedup, IX_WIDTH])
    s = _find_key(ix_meta, dedup, rel_meta, ix_cols, values, h)
    if _slot(ix_meta, dedup, s) != EMPTY:
        return False
    size = rel_meta[rel, R_SIZE]
    arity = rel_meta[rel, R_ARITY]
    address = rel_meta[rel, R_ADDRESS] + 8 * size * arity
    for c in range(arity):
        _store(address + 8 * c, values[c])
    _set_slot(ix_meta, dedup, s, _packed(h, size))
    rel_meta[rel, R_SIZE] = size + 1
    ix_meta[dedup, IX_KEYS] += 1
    ix_meta[dedup, IX_DONE] = size + 1
    return True

@njit(nogil=True, _nrt=False)
def append_rows(rel_meta, ix_meta, ix_cols, rel, dedup, block, start, values):
    """Insert rows ``start``, ... of ``block`` until it ends or ``rel`` needs room; (the next
    row, the number of new rows)."""
    added = 0
    i = start
    while i < block.shape[1] and not _full(rel_meta, ix_meta, rel, dedup):
        for c in range(block.shape[0]):
            values[c] = block[c, i]
        if _append(rel_meta, ix_meta, ix_cols, rel, dedup, values):
            added += 1
        i += 1
    return i, added

@njit(inline="always")
def _add_concurrently(rel_meta, ix_meta, ix_cols, rel, dedup, values, h, tickets, state):
    """Insert the tuple ``values`` (hash ``h``) into relation ``rel`` unless its dedup index
    ``dedup`` holds it, while other threads insert into it too: ADDED, PRESENT, or NO_ROOM
    when ``tickets[TICKETS_LEFT]`` (rows that may still be added before the storage grows) is
    spent: a thread takes ``TICKET_BATCH`` at a time into ``state[S_TICKETS]`` (the caller
    empties it before each round), so the shared counter is touched once per batch. Rows are
    numbered from ``tickets[NEXT_ROW]`` (the relation's size is set after the threads are done:
    written here, it would share a cache line with the addresses every thread reads).

    A thread claims an empty slot by marking it reserved (its fingerprint above
    ``RESERVED``), only then takes the next row number, writes the row and publishes the slot:
    a row is never taken for a tuple another thread adds, and a slot is read as a row only once
    that row is written (a thread meeting a reservation with its fingerprint waits for it).
    O(1) expected."""
    fingerprint = h & FINGERPRINT
    mask = ix_meta[dedup, IX_MASK]
    table = ix_meta[dedup, IX_SLOTS]
    width = ix_meta[dedup, IX_WIDTH]
    first = ix_meta[dedup, IX_COLS]
    ticket = False
    s = _start(ix_meta, dedup, h)
    while True:
        value = _load_atomic(table + 8 * s)
        if value == EMPTY:
            if not ticket:
                if state[S_TICKETS] == 0:
                    left = _fetch_add(tickets.ctypes.data + 8 * TICKETS_LEFT, -TICKET_BATCH)
                    if left <= 0:
                        return NO_ROOM
                    state[S_TICKETS] = min(left, TICKET_BATCH)
                state[S_TICKETS] -= 1
                ticket = True
            if not _swap_if(table + 8 * s, EMPTY, np.int64(fingerprint) | RESERVED):
                continue  # another thread took the slot: read it again
            row = _fetch_add(tickets.ctypes.data + 8 * NEXT_ROW, 1)
            address = rel_meta[rel, R_ADDRESS] + 8 * row * rel_meta[rel, R_ARITY]
            for c in range(rel_meta[rel, R_ARITY]):
                _store(address + 8 * c, values[c])
            _publish(table + 8 * s, _packed(h, row))
            return ADDED
        if np.uint64(value) & FINGERPRINT == fingerprint:
            while value & ROW == RESERVED:
                value = _load_atomic(table + 8 * s)
            row = value & ROW
            same = True
            for j in range(width):
                if _cell(rel_meta, rel, ix_cols[first + j], row) != values[j]:
                    same = False
                    break
            if same:
                return PRESENT
        s = (s + 1) & mask


# ---------------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------------


@njit(inline="always")
def _truncating_divide(a, b):
    if b == -1:
        return -a
    q = a // b
    if q * b != a and (a < 0) != (b < 0):
        q += 1
    return q

@njit(inline="always")
def _remainder(a, b):
    if b == -1:
        return 0
    return a - _truncating_divide(a, b) * b

@njit(inline="always")
def _power(a, b):
    result = 1
    base = a
    while b > 0:
        if b & 1:
            result *= base
        base *= base
        b >>= 1
    return result

@njit(inline="always")
def _apply(op, stack, top, count):
    """Apply operator ``op`` to the ``count`` values on top of ``stack``; (new top, ok)."""
    if count == 1:
        a = stack[top - 1]
        if op == 16:
            stack[top - 1] = -a
        elif op == 17:
            stack[top - 1] = ~a
        elif op == 18:
            stack[top - 1] = 1 if a == 0 else 0
        elif op == 21:
            stack[top - 1] = -a if a < 0 else a
        # min and max of one value are the value
        return top, True
    if op == 19 or op == 20:
        best = stack[top - count]
        for j in range(top - count + 1, top):
            v = stack[j]
            if (op == 19 and v < best) or (op == 20 and v > best):
                best = v
        top -= count - 1
        stack[top - 1] = best
        return top, True
    a, b = stack[top - 2], stack[top - 1]
    top -= 1
    if op == 1:
        r = a + b
    elif op == 2:
        r = a - b
    elif op == 3:
        r = a * b
    elif op == 4:
        if b == 0:
            return top, False
        r = _truncating_divide(a, b)
    elif op == 5:
        if b == 0:
            return top, False
        r = _remainder(a, b)
    elif op == 6:
        if b < 0:
            return top, False
        r = _power(a, b)
    elif op == 7:
        r = a & b
    elif op == 8:
        r = a | b
    elif op == 9:
        r = a ^ b
    elif op == 10:
        r = a << (b & 63)
    elif op == 11:
        r = a >> (b & 63)
    elif op == 12:
        r = np.int64(np.uint64(a) >> np.uint64(b & 63))
    elif op == 13:
        r = 1 if a != 0 and b != 0 else 0
    elif op == 14:
        r = 1 if a != 0 or b != 0 else 0
    else:  # 15: lxor
        r = 1 if (a != 0) != (b != 0) else 0
    stack[top - 1] = r
    return top, True

@njit(inline="always")
def _source(sources, constants, registers, s):
    code = sources[s]
    return registers[code] if code >= 0 else constants[-code - 1]

@njit(inline="always")
def _evaluate(expressions, start, sources, constants, registers, stack):
    """The value of the postfix expression at ``expressions[start:]``; (value, ok)."""
    top = 0
    i = start
    while True:
        token = expressions[i]
        if token == E_END:
            return stack[0], True
        if token == E_SOURCE:
            stack[top] = _source(sources, constants, registers, expressions[i + 1])
            top += 1
            i += 2
        else:
            top, ok = _apply(expressions[i + 1], stack, top, expressions[i + 2])
            if not ok:
                return 0, False
            i += 3

@njit(inline="always")
def _compare(comparison, a, b):
    if comparison == 0:
        return a == b
    if comparison == 1:
        return a != b
    if comparison == 2:
        return a < b
    if comparison == 3:
        return a <= b
    if comparison == 4:
        return a > b
    return a >= b

# ---------------------------------------------------------------------------------------------
# The interpreter
# ---------------------------------------------------------------------------------------------


@njit(inline="always")
def _fill_key(sources, constants, first, width, registers, key):
    for j in range(width):
        key[j] = _source(sources, constants, registers, first + j)

@njit(inline="always")
def _run_code(code, i, end, sources, constants, expressions, registers, stack, key, rel_meta,
              ix_meta, ix_cols):
    """Run the code ``code[i:end]`` of a level over the registers; False when a condition
    fails. (Helpers of the interpreter take arrays, never the program tuple: an item of a
    tuple of arrays taken per derivation costs reference counting, about 0.4 µs.)"""
    while i < end:
        op = code[i]
        if op == OP_EQUAL:
            if (_source(sources, constants, registers, code[i + 1])
                    != _source(sources, constants, registers, code[i + 2])):
                return False
            i += 3
        elif op == OP_COMPARE_SOURCES:
            if not _compare(code[i + 1], _source(sources, constants, registers, code[i + 2]),
                            _source(sources, constants, registers, code[i + 3])):
                return False
            i += 4
        elif op == OP_COMPARE:
            a, ok = _evaluate(expressions, code[i + 2], sources, constants, registers, stack)
            if not ok:
                return False
            b, ok = _evaluate(expressions, code[i + 3], sources, constants, registers, stack)
            if not ok or not _compare(code[i + 1], a, b):
                return False
            i += 4
        elif op == OP_MAP:
            v, ok = _evaluate(expressions, code[i + 2], sources, constants, registers, stack)
            if not ok:
                return False
            registers[code[i + 1]] = v
            i += 3
        elif op == OP_ABSENT:
            ix = code[i + 1]
            _fill_key(sources, constants, code[i + 2], code[i + 3], registers, key)
            h = _hash_key(key, code[i + 3])
            if _slot(ix_meta, ix, _find_key(ix_meta, ix, rel_meta, ix_cols, key, h)) != EMPTY:
                return False
            i += 4
        elif op == OP_EMPTY:
            if rel_meta[code[i + 1], R_SIZE] > 0:
                return False
            i += 2
        else:  # OP_FAIL
            return False
    return True

@njit(inline="always")
def _open(kind, rel, ranged, ix, key_first, key_width, sources, constants, registers, key,
          rel_meta, ix_meta, ix_cols, low, high, visible):
    """The (cursor, stop) of a level about to be iterated: a chain's first row for a probe, a
    row range for a scan (the delta range when the level is ranged; else the rows in use, at
    most ``visible[rel]``: rows other threads are appending are not read), one pass for a
    unit."""
    if kind == UNIT:
        return 0, 1
    if kind == SCAN:
        if ranged == 1:
            return low[rel], high[rel]
        return 0, min(rel_meta[rel, R_SIZE], visible[rel])
    _fill_key(sources, constants, key_first, key_width, registers, key)
    value = _slot(ix_meta, ix, _find_key(ix_meta, ix, rel_meta, ix_cols, key,
                                         _hash_key(key, key_width)))
    return (EMPTY if value == EMPTY else value & ROW), 0

@njit(nogil=True, _nrt=False)
def _resume(program, rule, rel_meta, ix_meta, ix_cols, low, high, visible, registers, values,
            cursor, stop, key, stack, state, tickets):
    """Run rule ``rule`` from ``state`` until it is done (DONE) or needs room (NEED_ROW,
    with the head tuple waiting in ``values``), inserting each head tuple into the head
    relation when new. With ``tickets`` (one cell: a parallel task), other threads run tasks of
    the same rule at once and insert through ``_add_concurrently``, which needs room when the
    tickets are spent; full scans read at most ``visible`` rows. Touches nothing
    reference-counted: the cost is per derivation, O(1) per level."""
    level_bounds = program[P_RULE_LEVELS]
    first_level, levels = level_bounds[rule], level_bounds[rule + 1] - level_bounds[rule]
    kinds, rels, ranged = program[P_LEVEL_KIND], program[P_LEVEL_REL], program[P_LEVEL_RANGE]
    level_index, level_binds = program[P_LEVEL_INDEX], program[P_LEVEL_BINDS]
    level_keys, level_code = program[P_LEVEL_KEYS], program[P_LEVEL_CODE]
    bind_column, bind_register = program[P_BIND_COLUMN], program[P_BIND_REGISTER]
    sources, constants = program[P_SOURCES], program[P_CONSTANTS]
    code, expressions = program[P_CODE], program[P_EXPRESSIONS]
    head_rel, dedup = program[P_RULE_HEAD][rule], program[P_RULE_DEDUP][rule]
    head_first = program[P_RULE_HEAD_SOURCES][2 * rule]
    head_width = program[P_RULE_HEAD_SOURCES][2 * rule + 1]
    concurrent = tickets.shape[0] > 0
    depth = state[S_DEPTH]
    added = state[S_ADDED]
    if state[S_WAITING] == 1:
        if concurrent:
            outcome = _add_concurrently(rel_meta, ix_meta, ix_cols, head_rel, dedup, values,
                                        _hash_key(values, head_width), tickets, state)
            if outcome == NO_ROOM:
                return NEED_ROW
            added += outcome
        elif _append(rel_meta, ix_meta, ix_cols, head_rel, dedup, values):
            added += 1
        state[S_WAITING] = 0
    while depth >= 0:
        level = first_level + depth
        kind = kinds[level]
        rel = rels[level]
        row = -1  # the level's next row, if any
        if kind == PROBE:
            ix = level_index[level]
            while cursor[depth] != EMPTY:
                candidate = cursor[depth]
                cursor[depth] = _next(ix_meta, ix, candidate)
                if ranged[level] == 0:
                    row = candidate
                    break
                if candidate < low[rel]:  # a chain runs newest row first: the delta is passed
                    cursor[depth] = EMPTY
                    break
                if candidate < high[rel]:
                    row = candidate
                    break
        elif cursor[depth] < stop[depth]:
            row = cursor[depth]
            cursor[depth] += 1
        if row < 0:
            depth -= 1
            continue
        if kind != UNIT:
            first_bind = level_binds[2 * level]
            for b in range(first_bind, first_bind + level_binds[2 * level + 1]):
                registers[bind_register[b]] = _cell(rel_meta, rel, bind_column[b], row)
        code_first = level_code[2 * level]
        code_end = code_first + level_code[2 * level + 1]
        if code_end > code_first and not _run_code(code, code_first, code_end, sources,
                                                   constants, expressions, registers, stack,
                                                   key, rel_meta, ix_meta, ix_cols):
            continue
        if depth == levels - 1:
            _fill_key(sources, constants, head_first, head_width, registers, values)
            if concurrent:
                outcome = _add_concurrently(rel_meta, ix_meta, ix_cols, head_rel, dedup, values,
                                            _hash_key(values, head_width), tickets, state)
                if outcome == NO_ROOM:
                    state[S_DEPTH], state[S_WAITING], state[S_ADDED] = depth, 1, added
                    return NEED_ROW
                added += outcome
                continue
            if _full(rel_meta, ix_meta, head_rel, dedup):
                state[S_DEPTH], state[S_WAITING], state[S_ADDED] = depth, 1, added
                return NEED_ROW
            if _append(rel_meta, ix_meta, ix_cols, head_rel, dedup, values):
                added += 1
            continue
        depth += 1
        level += 1
        cursor[depth], stop[depth] = _open(kinds[level], rels[level], ranged[level],
                                           level_index[level], level_keys[2 * level],
                                           level_keys[2 * level + 1], sources, constants,
                                           registers, key, rel_meta, ix_meta, ix_cols, low,
                                           high, visible)
    state[S_DEPTH], state[S_ADDED] = depth, added
    return DONE


@njit(inline="always")
def _catch_up_rule(program, rule, rel_meta, ix_meta, ix_cols, need):
    """Catch up the indexes rule ``rule`` probes and its head's dedup table: DONE, or the
    request of the first that must grow."""
    indexes = program[P_RULE_INDEXES]
    index_list = program[P_RULE_INDEX_LIST]
    for j in range(indexes[rule], indexes[rule + 1]):
        code = _catch_up(rel_meta, ix_meta, ix_cols, index_list[j], need)
        if code != DONE:
            return code
    return _catch_up(rel_meta, ix_meta, ix_cols, program[P_RULE_DEDUP][rule], need)


@njit(nogil=True)
def catch_up_rule(program, rule, rel_meta, ix_meta, ix_cols, need):
    """``_catch_up_rule``, from Python."""
    return _catch_up_rule(program, rule, rel_meta, ix_meta, ix_cols, need)


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
        if kind == PROBE:
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


@njit(inline="always")
def _start_rule(program, rule, rel_meta, ix_meta, ix_cols, low, high, visible, registers, key,
                cursor, stop, state):
    """Make ``state`` and the cursors those of rule ``rule`` about to run: its first level
    opened, nothing added."""
    first_level = program[P_RULE_LEVELS][rule]
    keys = program[P_LEVEL_KEYS]
    registers[:] = 0
    state[:] = 0
    cursor[0], stop[0] = _open(program[P_LEVEL_KIND][first_level],
                               program[P_LEVEL_REL][first_level],
                               program[P_LEVEL_RANGE][first_level],
                               program[P_LEVEL_INDEX][first_level], keys[2 * first_level],
                               keys[2 * first_level + 1], program[P_SOURCES],
                               program[P_CONSTANTS], registers, key, rel_meta, ix_meta,
                               ix_cols, low, high, visible)


@njit(nogil=True)
def run(program, rules, alternatives, relations, rel_meta, ix_meta, ix_cols, low, high, budget,
        max_delta, registers, values, cursor, stop, key, stack, progress, state, need):
    """Apply ``rules`` of ``program``, each rule or its alternative (``alternatives``, aligned
    with ``rules``, -1 for none), whichever ``_choose`` expects cheaper at each iteration, each
    head tuple inserted into its relation when new. With ``budget`` 0: once (a pass). Otherwise
    semi-naive iterations of a recursive stratum: while ``relations`` grew in the last iteration
    (their delta is ``[low, high)``, at most ``max_delta`` rows in all: a larger one is left to
    parallel tasks) and at most ``budget`` times, apply the delta variants ``rules``, then make
    the rows they appended the next delta. The stratum is at its fixpoint when the last delta is
    empty (``low == high`` for every relation).

    Returns DONE, with ``progress`` holding the iterations run and the tuples added, or a
    request for room (``need``): the caller grows the storage and calls again with the same
    arguments (``progress``, ``state`` and the scratch arrays carry where it was; the scratch
    arrays are sized for the program's largest rule, ``progress`` zeroed before the first
    call). Cost per iteration: O(1) plus its derivations, O(1) expected per level."""
    every_row = np.full(rel_meta.shape[0], np.iinfo(np.int64).max, dtype=np.int64)
    serial = np.empty(0, dtype=np.int64)  # no tickets: this thread alone inserts
    while progress[RUN_ITERATIONS] < max(budget, 1):
        if progress[RUN_PHASE] == PHASE_START:
            if budget > 0:
                delta = 0
                for rel in relations:
                    delta += high[rel] - low[rel]
                if delta == 0 or delta > max_delta:
                    return DONE
            progress[RUN_PHASE] = PHASE_CHOOSE
        while progress[RUN_POSITION] < len(rules):
            i = progress[RUN_POSITION]
            if progress[RUN_PHASE] == PHASE_CHOOSE:
                rule, alternative = rules[i], alternatives[i]
                code = _catch_up_rule(program, rule, rel_meta, ix_meta, ix_cols, need)
                if code == DONE and alternative >= 0:
                    code = _catch_up_rule(program, alternative, rel_meta, ix_meta, ix_cols,
                                          need)
                if code != DONE:
                    return code
                rule = _choose(program, rule, alternative, rel_meta, ix_meta, low, high)
                _start_rule(program, rule, rel_meta, ix_meta, ix_cols, low, high, every_row,
                            registers, key, cursor, stop, state)
                progress[RUN_RULE] = rule
                progress[RUN_PHASE] = PHASE_RUN
            rule = progress[RUN_RULE]
            if _resume(program, rule, rel_meta, ix_meta, ix_cols, low, high, every_row,
                       registers, values, cursor, stop, key, stack, state, serial) == NEED_ROW:
                need[0], need[1] = program[P_RULE_HEAD][rule], program[P_RULE_DEDUP][rule]
                return NEED_ROW
            progress[RUN_ADDED] += state[S_ADDED]
            progress[RUN_POSITION] += 1
            progress[RUN_PHASE] = PHASE_CHOOSE
        if budget > 0:
            for rel in relations:
                low[rel] = high[rel]
                high[rel] = rel_meta[rel, R_SIZE]
        progress[RUN_ITERATIONS] += 1
        progress[RUN_POSITION] = 0
        progress[RUN_PHASE] = PHASE_START
    return DONE


@njit(nogil=True, _nrt=False)
def run_slice(program, rule, rel_meta, ix_meta, ix_cols, low, high, visible, registers, values,
              cursor, stop, key, stack, state, tickets):
    """A parallel task: rule ``rule`` of ``program`` from ``state`` (``_resume``'s; a new task
    has its first level's ``cursor[0]``, ``stop[0]`` set to its slice of rows), while other
    threads run other slices of the same rule and insert into the same head relation
    (``_add_concurrently``): DONE, or NEED_ROW when ``tickets`` are spent (the caller grows the
    head relation and its dedup table once every task of the round has returned, then calls
    again). The rule's indexes are caught up beforehand; full scans read ``visible`` rows at
    most. Cost: per derivation, as ``run``."""
    return _resume(program, rule, rel_meta, ix_meta, ix_cols, low, high, visible, registers,
                   values, cursor, stop, key, stack, state, tickets)
