"""The native executor's storage layout and plan encoding, as integers shared by the kernels
(``kernels``, compiled ahead of time) and the Python that drives them (``store``, ``encoding``).
Importing it loads numpy only.

``rel_meta[r]`` describes relation ``r`` (``R_*`` columns), ``ix_meta[i]`` index ``i``
(``IX_*``; a view index's runs ``V_*``); a rule plan is a tuple of ``PROGRAM_FIELDS`` int64
arrays (``P_*``) of levels (``UNIT``, ``SCAN``, ``PROBE``, ``VIEW_PROBE``), code (``OP_*``)
and postfix expressions (``E_*``). The kernels return ``DONE`` or a request for room
(``NEED_*``, the relation or index in their ``need`` array), which ``store.NativeStore`` grants
by growing a buffer or a table (or catching a view up) and calling again.
"""

from __future__ import annotations

import numpy as np

# the hash, the empty slot and a slot's fields are those of a native view's hash run
from herbrand.framework.native_view import (  # noqa: F401 - re-exported to the kernels
    EMPTY,
    FINGERPRINT,
    HASH_RUN,
    MIX,
    PACKED_RUN,
    ROW,
    SEED,
    SHIFT,
    SORTED_RUN,
)

# rel_meta columns: the buffer's address and capacity, rows in use, arity, and the address of
# its derivation counts (one int64 per row of the buffer's capacity; 0: not counted, see
# ``tables._insert_pending``)
R_ADDRESS, R_CAPACITY, R_SIZE, R_ARITY, R_COUNTS = range(5)
REL_FIELDS = 5
# ix_meta columns: relation, offset of the key columns in ix_cols, their number, distinct keys,
# rows indexed so far, unique flag, the table's address and mask (length - 1), the chains'
# address (where row 0's link would be: they hold only the rows not in runs) and end row,
# 64 - log2(table length)
IX_REL, IX_COLS, IX_WIDTH, IX_KEYS, IX_DONE, IX_UNIQUE = range(6)
IX_SLOTS, IX_MASK, IX_NEXT, IX_NEXT_CAPACITY, IX_SHIFT = range(6, 11)
# a probe index's (not unique) keys and runs (``runs``): the addresses of its per-key arrays
# (int32: the newest row not in a run, a row holding the key; as long as half its table), of
# its runs' starts (int64, one per key in runs and one more), rows (int32) and values (int64,
# IX_RUN_WIDTH per row: the columns that are not key columns), the rows in runs, the keys in
# runs
IX_HEADS, IX_REPS, IX_STARTS, IX_RUN_ROWS, IX_RUN_VALUES, IX_RUN_WIDTH = range(11, 17)
IX_COMPACTED, IX_COMPACTED_KEYS = range(17, 19)
IX_FIELDS = 19
# a slot holds the key's hash's top 32 bits (its fingerprint, FINGERPRINT) above a row number
# (< 2^32, ROW) in a unique index, above a key id (numbered from 0 as keys are first indexed)
# in a probe index; after a probe index's key columns, ix_cols holds each column's field in its
# runs' values (-1: a key column)

# an index that is an IndexBacking's native view (``herbrand.framework.native_view``) has
# IX_UNIQUE == VIEW, IX_SLOTS the address of its run table, IX_MASK its number of runs, IX_KEYS
# an estimate of its distinct keys, and in ix_cols, after its key columns, the field of each
# column of its relation; the store catches it up (the kernels ask with NEED_INDEX)
VIEW = 2
# run table columns (one row per run of the view): kind (SORTED_RUN, PACKED_RUN, HASH_RUN),
# the data's address, its stride (between fields), rows, fields, bits per packed field, and
# for a hash run its directory's address, mask and shift (64 - log2 length), its chains' address
V_KIND, V_DATA, V_STRIDE, V_ROWS, V_FIELDS, V_WIDTH = range(6)
V_SLOTS, V_MASK, V_SHIFT, V_CHAINS = range(6, 10)
VIEW_FIELDS = 10
SIGN = np.uint64(1 << 63)

# level kinds (VIEW_PROBE: a probe of a view index; UNIQUE_PROBE: of a unique index, its key
# every column, so at most one row)
UNIT, SCAN, PROBE, VIEW_PROBE, UNIQUE_PROBE = 0, 1, 2, 3, 4

# code operations (a level's code, after binding): operands follow the opcode
OP_EQUAL = 1  # a, b: sources that must be equal
OP_COMPARE = 2  # comparison, left expression offset, right expression offset
OP_MAP = 3  # register, expression offset: register := value (fails with the expression)
OP_ABSENT = 4  # index, key offset, key width: the key must not be in the index (negation)
OP_EMPTY = 5  # relation: must be empty (negation without keys)
OP_FAIL = 6  # never holds (a selection between two different constants)
OP_COMPARE_SOURCES = 7  # comparison, a, b: sources compared (no arithmetic to evaluate)

# expression tokens (postfix): a source, an operator with its argument count, the end
E_END, E_SOURCE, E_OPERATOR = 0, 1, 2

# operators and comparisons, by code
OPERATOR_CODES = {
    "+": 1, "-": 2, "*": 3, "/": 4, "%": 5, "^": 6, "band": 7, "bor": 8, "bxor": 9,
    "bshl": 10, "bshr": 11, "bshru": 12, "land": 13, "lor": 14, "lxor": 15, "neg": 16,
    "bnot": 17, "lnot": 18, "min": 19, "max": 20, "abs": 21,
}
COMPARISON_CODES = {"=": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}

# Program fields (a tuple of int64 arrays; see encoding.Program)
(P_RULE_LEVELS, P_RULE_HEAD, P_RULE_DEDUP, P_RULE_HEAD_SOURCES, P_RULE_REGISTERS,
 P_RULE_INDEXES, P_RULE_INDEX_LIST, P_LEVEL_KIND, P_LEVEL_REL, P_LEVEL_INDEX, P_LEVEL_KEYS,
 P_LEVEL_BINDS, P_LEVEL_CODE, P_LEVEL_RANGE, P_SOURCES, P_CONSTANTS, P_BIND_COLUMN,
 P_BIND_REGISTER, P_CODE, P_EXPRESSIONS) = range(20)
PROGRAM_FIELDS = 20
MAX_STACK = 64

# what a kernel returns: done, or the storage it needs grown first (``need`` says which)
DONE = 0
NEED_ROW = 1  # room for one more row in relation need[0] (buffer) and its dedup need[1] (table)
# index need[0] must grow (its chains to its relation's capacity, or its table) or compact
NEED_INDEX = 2
# ``_add_concurrently``'s outcomes, and the row number of a slot reserved by a thread that has
# not yet written its row (rows are numbered below it)
PRESENT, ADDED, NO_ROOM = 0, 1, 2
RESERVED = 0xFFFFFFFE
# the cells threads share while inserting at once, a cache line apart: rows they may still add,
# the next row number; then, on a line of their own, the first-level rows the tasks of a rule
# share out (``claims._claim``): the next row not yet claimed, the end, the rows a claim takes
TICKETS_LEFT, NEXT_ROW = 0, 8
CLAIM_NEXT, CLAIM_END, CLAIM_CHUNK = 16, 17, 18
# then the tasks still working in this round and those waiting for work; then the shared item
# (``claims``: the rest of one first-level row's second level, shared out by row number): a
# lock held by the task that offered it while it lasts, the last item's id, its first-level row,
# its lowest row, the rows a claim takes, and its cursor (the item's id << ITEM_SHIFT | the next
# row not yet claimed, claims stepping down)
ACTIVE, IDLE = 24, 25
ITEM_LOCK, ITEM_ID, ITEM_ROW0, ITEM_LOW, ITEM_CHUNK = 32, 33, 34, 35, 36
ITEM_CURSOR = 40
TICKET_FIELDS = 48
ITEM_SHIFT = 40  # row numbers stay below 2**40
ITEM_CHUNKS = 8  # claims an item is cut into
TICKET_BATCH = 64  # tickets (and row numbers) a thread takes at a time
# the interpreter's state for one rule between calls: depth, a head waiting for room, tuples
# added so far, and a parallel task's tickets
S_DEPTH, S_WAITING, S_ADDED = range(3)
S_TICKETS = 3  # a parallel task's tickets taken and not yet used
S_PENDING = 4  # head tuples derived and not yet inserted (``kernels._resume``)
S_ROW = 5  # a parallel task's next row number, of the block taken with its tickets
# a parallel task's item (``claims``; 0: none), whether it offered it, its lowest row and claim
# size, the rows of its claim (``[S_CLAIM_LOW, S_CLAIM_HIGH)``), and whether the task's share of
# ``ACTIVE`` is given back in this round
S_ITEM, S_OWNER, S_ITEM_LOW, S_ITEM_CHUNK, S_CLAIM_LOW, S_CLAIM_HIGH, S_RELEASED = range(6, 13)
STATE_FIELDS = 13
# head tuples a serial rule holds before inserting them together: each one's dedup slot is
# prefetched when it is derived, so the slots' cache misses overlap instead of one at a time
PENDING_MAX = 16
# ``run``'s progress between calls: iterations done, tuples added, position in its rules, the
# phase there, the rule chosen for it
RUN_ITERATIONS, RUN_ADDED, RUN_POSITION, RUN_PHASE, RUN_RULE = range(5)
RUN_FIELDS = 5
PHASE_START, PHASE_CHOOSE, PHASE_RUN = range(3)
# a probe level's phase (``part[depth]``): the key's chain of rows not yet in runs (its cursor
# the next row, its stop the key id), then its run (its cursor the next position, stepping
# down, its stop the run's first)
PROBE_CHAIN, PROBE_RUN = -1, 1
# a probe index moves its chained rows into runs once they are at least as many as the rows in
# runs and at least this many (doubling: amortised O(1) per row)
COMPACT_MIN_ROWS = 1024
