"""The interpreter's loop: one rule, compiled by ``encoding`` into arrays, run as nested loops
over its levels from its first atom to its head (``_resume`` for one thread alone,
``_resume_concurrently`` for a parallel task), with the code of each level (``_run_code``) and
the opening of a level's rows (``_open``). ``kernels`` holds the entry points that call it; the
module doc there says how a rule runs and what it costs."""

from __future__ import annotations

import numpy as np
from numba import njit

from herbrand.evaluators.native.claims import (
    _claim,
    _claim_item,
    _in_claim,
    _join_or_wait,
    _leave_item,
    _offer_rest,
)
from herbrand.evaluators.native.concurrent import _add_pending_concurrently
from herbrand.evaluators.native.layout import (
    DONE,
    EMPTY,
    IX_COLS,
    IX_WIDTH,
    NEED_ROW,
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
    P_RULE_LEVELS,
    P_SOURCES,
    PENDING_MAX,
    PROBE,
    PROBE_CHAIN,
    PROBE_RUN,
    R_SIZE,
    ROW,
    S_ADDED,
    S_CLAIM_LOW,
    S_DEPTH,
    S_ITEM,
    S_PENDING,
    S_WAITING,
    SCAN,
    UNIQUE_PROBE,
    UNIT,
    VIEW_PROBE,
)
from herbrand.evaluators.native.memory import _cell, _slot
from herbrand.evaluators.native.operators import _compare, _evaluate, _fill_key, _source
from herbrand.evaluators.native.runs import _open_probe, _probe_next, _run_value
from herbrand.evaluators.native.tables import (
    _find_key,
    _hash_key,
    _insert_pending,
    _prefetch_slot,
    _room,
)
from herbrand.evaluators.native.views import _view_cell, _view_next


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
    """The (cursor, stop) of a level about to be iterated: a probe's (``runs._open_probe``), a
    row range for a scan (the delta range when the level is ranged; else the rows in use, at
    most ``visible[rel]``: rows other threads are appending are not read), one pass for a
    unit, nothing for a view probe (``views._view_next`` opens its runs), the row holding the
    key for a unique probe (none when absent, or outside the delta range when ranged)."""
    if kind == UNIT:
        return 0, 1
    if kind == VIEW_PROBE:
        return 0, 0
    if kind == SCAN:
        if ranged == 1:
            return low[rel], high[rel]
        return 0, min(rel_meta[rel, R_SIZE], visible[rel])
    _fill_key(sources, constants, key_first, key_width, registers, key)
    if kind == UNIQUE_PROBE:
        value = _slot(ix_meta, ix, _find_key(ix_meta, ix, rel_meta, ix_cols, key,
                                             _hash_key(key, key_width)))
        row = value & ROW
        if value == EMPTY or ranged == 1 and (row < low[rel] or row >= high[rel]):
            return 0, 0
        return row, row + 1
    return _open_probe(ix_meta, ix, rel_meta, ix_cols, key, key_width)

def _interpreter(concurrent):
    """The interpreter's loop (``_resume``) for one thread alone (``concurrent`` False),
    or for a parallel task (True): a constant when compiled, so each version has only the
    insertion code it runs."""

    @njit(inline="always")
    def flush(rel_meta, ix_meta, ix_cols, head_rel, dedup, values, pending, head_width,
              tickets, state, start):
        """Insert the ``pending`` head tuples held in ``values``: (the number new, the number
        left for when there is room). Alone: all of them when the head relation has room for
        them, else none (its derivations counted from row ``start`` when it counts them:
        ``tables._insert_pending``); concurrently:
        ``concurrent._add_pending_concurrently``."""
        if concurrent:
            return _add_pending_concurrently(rel_meta, ix_meta, ix_cols, head_rel, dedup,
                                             values, pending, head_width, tickets, state)
        if not _room(rel_meta, ix_meta, head_rel, dedup, pending):
            return 0, pending
        return _insert_pending(rel_meta, ix_meta, ix_cols, head_rel, dedup, values, pending,
                               head_width, start), 0

    @njit(inline="always")
    def flush_or_wait(rel_meta, ix_meta, ix_cols, head_rel, dedup, values, pending, head_width,
                      tickets, state, depth, added, start):
        """``flush``, then: (the tuples added so far, False) when every pending tuple went in;
        else (the same, True) with ``state`` saying where the rule stopped and how many tuples
        wait in ``values`` for room (``resume`` then returns NEED_ROW and flushes them first
        when called again)."""
        new, left = flush(rel_meta, ix_meta, ix_cols, head_rel, dedup, values, pending,
                          head_width, tickets, state, start)
        added += new
        if left > 0:
            state[S_DEPTH], state[S_WAITING], state[S_ADDED] = depth, 1, added
            state[S_PENDING] = left
            return added, True
        state[S_WAITING] = 0
        return added, False

    @njit(nogil=True, _nrt=False)
    def resume(program, rule, rel_meta, ix_meta, ix_cols, low, high, visible, registers, values,
               cursor, stop, key, stack, part, state, tickets):
        """Run rule ``rule`` from ``state`` until it is done (DONE) or needs room (NEED_ROW,
        with the head tuples waiting in ``values``), inserting each head tuple into the head
        relation when new. It holds up to ``PENDING_MAX`` head tuples (and their hashes) in
        ``values``, prefetching each one's dedup slot, and inserts them together (``flush``):
        their cache misses overlap. Concurrently (a parallel task, with ``tickets``: one
        cell), other threads run tasks of the same rule at once, each tuple goes in through
        ``concurrent._add_concurrently``, and room is needed when the tickets are spent; full scans
        read at most ``visible`` rows; a task's first level done, it claims the next chunk of
        its rows (``claims._claim``). Touches nothing reference-counted: the cost is per
        derivation, O(1) per level."""
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
        depth = state[S_DEPTH]
        added = state[S_ADDED]
        pending = state[S_PENDING]
        if state[S_WAITING] == 1:
            added, waiting = flush_or_wait(rel_meta, ix_meta, ix_cols, head_rel, dedup, values,
                                           pending, head_width, tickets, state, depth, added,
                                           high[head_rel])
            if waiting:
                return NEED_ROW
            pending = 0
        while depth >= 0:
            level = first_level + depth
            kind = kinds[level]
            rel = rels[level]
            row = -1  # the level's next row, if any
            position = -1  # a probe's row's position in its index's runs, if there
            if kind == PROBE:
                row, position = _probe_next(ix_meta, level_index[level], depth, cursor, stop, part,
                                            ranged[level], low[rel], high[rel])
                if concurrent and depth == 1 and row >= 0 and kinds[first_level] == SCAN:
                    if state[S_ITEM] != 0:  # an item's task: only the rows of its claim
                        where = _in_claim(state, row)
                        if where == 0:
                            continue
                        if where < 0:
                            part[1], cursor[1], stop[1] = PROBE_RUN, -1, 0  # the probe ends
                            row = -1
                    if row >= 0:  # a task waits: offer it the rows below this one
                        _offer_rest(tickets, state, cursor[0] - 1,
                                    max(low[rel] if ranged[level] == 1 else 0,
                                        state[S_CLAIM_LOW] if state[S_ITEM] != 0 else 0), row)
            elif kind == VIEW_PROBE and cursor[depth] >= stop[depth]:  # a run's rows step below
                row = _view_next(ix_meta, level_index[level], depth, cursor, stop, part, sources,
                                 constants, registers, key, level_keys[2 * level],
                                 level_keys[2 * level + 1])
            elif cursor[depth] < stop[depth]:
                row = cursor[depth]
                cursor[depth] += 1
            if row < 0:
                if concurrent and depth == 1 and state[S_ITEM] != 0:
                    if _claim_item(tickets, state):  # the item's next claim: the probe again
                        cursor[1], stop[1] = _open(kind, rel, ranged[level], level_index[level],
                                                   level_keys[2 * level],
                                                   level_keys[2 * level + 1], sources, constants,
                                                   registers, key, rel_meta, ix_meta, ix_cols,
                                                   low, high, visible)
                        part[1] = PROBE_CHAIN
                        continue
                    _leave_item(tickets, state)
                # a parallel task's first level done: on to the next chunk of its rows, else
                # to a heavy row's rest that another task shares out (``claims``)
                if not (concurrent and depth == 0 and (_claim(tickets, cursor, stop)
                                                       or _join_or_wait(tickets, state, cursor,
                                                                        stop))):
                    depth -= 1
                continue
            first_bind = level_binds[2 * level]
            if kind == VIEW_PROBE:  # ix_cols after the key columns: each column's field
                ix = level_index[level]
                fields = ix_meta[ix, IX_COLS] + ix_meta[ix, IX_WIDTH]
                for b in range(first_bind, first_bind + level_binds[2 * level + 1]):
                    registers[bind_register[b]] = _view_cell(ix_meta, ix, part[depth],
                                                             ix_cols[fields + bind_column[b]], row)
            elif position >= 0:  # a probe's row in runs: its columns lie beside its row number
                ix = level_index[level]
                for b in range(first_bind, first_bind + level_binds[2 * level + 1]):
                    registers[bind_register[b]] = _run_value(ix_meta, ix, ix_cols, bind_column[b],
                                                             position)
            elif kind != UNIT:
                for b in range(first_bind, first_bind + level_binds[2 * level + 1]):
                    registers[bind_register[b]] = _cell(rel_meta, rel, bind_column[b], row)
            code_first = level_code[2 * level]
            code_end = code_first + level_code[2 * level + 1]
            if code_end > code_first and not _run_code(code, code_first, code_end, sources,
                                                       constants, expressions, registers, stack,
                                                       key, rel_meta, ix_meta, ix_cols):
                continue
            if depth == levels - 1:
                at = pending * head_width
                _fill_key(sources, constants, head_first, head_width, registers, values, at)
                h = _hash_key(values, head_width, at)
                values[PENDING_MAX * head_width + pending] = np.int64(h)
                _prefetch_slot(ix_meta, dedup, h)
                pending += 1
                if pending == PENDING_MAX:
                    added, waiting = flush_or_wait(rel_meta, ix_meta, ix_cols, head_rel, dedup,
                                                   values, pending, head_width, tickets, state,
                                                   depth, added, high[head_rel])
                    if waiting:
                        return NEED_ROW
                    pending = 0
                continue
            depth += 1
            level += 1
            cursor[depth], stop[depth] = _open(kinds[level], rels[level], ranged[level],
                                               level_index[level], level_keys[2 * level],
                                               level_keys[2 * level + 1], sources, constants,
                                               registers, key, rel_meta, ix_meta, ix_cols, low,
                                               high, visible)
            part[depth] = PROBE_CHAIN  # a probe's first phase; a view probe's: no run open yet
        if pending > 0:
            added, waiting = flush_or_wait(rel_meta, ix_meta, ix_cols, head_rel, dedup, values,
                                           pending, head_width, tickets, state, depth, added,
                                           high[head_rel])
            if waiting:
                return NEED_ROW
        state[S_DEPTH], state[S_ADDED], state[S_PENDING] = depth, added, 0
        return DONE


    return resume


_resume = _interpreter(False)
_resume_concurrently = _interpreter(True)
