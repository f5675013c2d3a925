"""The native kernels' entry points: rule plans run as nested loops from first atom to head.

These are numba functions compiled ahead of time, with those of ``memory``, ``tables`` and
``operators`` they call, into one extension module (``build`` compiles it, ``compiled`` loads
it; its entry points are ``build.ENTRY_POINTS``): a run imports neither numba nor LLVM. They
allocate nothing that outlives a call: every buffer and table is a numpy array that
``store.NativeStore`` owns, and a kernel that needs one grown returns a request
(``layout.NEED_*``, saying which in its ``need`` array) after saving where it was, and is
called again once the store has grown it.

The loops that run per row or per derivation (``interpreter._resume``, ``tables._index_rows``,
``tables.append_rows``) are compiled without numba's reference counting (``_nrt=False``): with
it, every inlined helper taking arrays counted references on each call, which measured about
140 ns per call against under 2 ns without; their callers own every array.

The interpreter (``interpreter``, whose loop these entry points call) runs a rule compiled by
``encoding`` into arrays (``encoding.Program``): nested loops over *levels*, each a scan of a
relation (all of it, or the rows of its delta range) or a probe of an index with a key taken
from registers and constants, binding matched columns to registers, then running the level's
code (selections, comparisons, arithmetic into registers, negation as a probe that must miss);
the innermost level computes the head tuple and inserts it into the head relation's dedup
table, appending it when new. Nothing between the first level and the head is materialized: the
cost is per derivation, in native code. Probes read an index caught up at the start of the
rule, so rows a rule appends are not seen by its own probes (they are the next iteration's
delta). On the parallel backend, one task per thread runs the same rule at once (``run_task``),
the tasks sharing out its first level's rows in chunks and a heavy row's second level
(``claims``); full scans then read only the rows present when the tasks began.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from herbrand.evaluators.native.choice import _choose
from herbrand.evaluators.native.claims import _release
from herbrand.evaluators.native.interpreter import _open, _resume, _resume_concurrently
from herbrand.evaluators.native.layout import (
    DONE,
    NEED_ROW,
    P_CONSTANTS,
    P_LEVEL_INDEX,
    P_LEVEL_KEYS,
    P_LEVEL_KIND,
    P_LEVEL_RANGE,
    P_LEVEL_REL,
    P_RULE_DEDUP,
    P_RULE_HEAD,
    P_RULE_INDEX_LIST,
    P_RULE_INDEXES,
    P_RULE_LEVELS,
    P_SOURCES,
    PHASE_CHOOSE,
    PHASE_RUN,
    PHASE_START,
    R_SIZE,
    RUN_ADDED,
    RUN_ITERATIONS,
    RUN_PHASE,
    RUN_POSITION,
    RUN_RULE,
    S_ADDED,
)
from herbrand.evaluators.native.tables import _catch_up


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
        max_delta, registers, values, cursor, stop, key, stack, part, progress, state, need,
        sizes):
    """Apply ``rules`` of ``program``, each rule or its alternative (``alternatives``, aligned
    with ``rules``, -1 for none), whichever ``_choose`` expects cheaper at each iteration, each
    head tuple inserted into its relation when new. With ``budget`` 0: once (a pass). Otherwise
    semi-naive iterations of a recursive stratum: while ``relations`` grew in the last iteration
    (their delta is ``[low, high)``, at most ``max_delta`` rows in all: a larger one is left to
    parallel tasks) and at most ``budget`` times, apply the delta variants ``rules``, then make
    the rows they appended the next delta. The stratum is at its fixpoint when the last delta is
    empty (``low == high`` for every relation). Iteration i of the call (from 0), for i below
    ``sizes``' rows, records the size of each of ``relations`` at its end in ``sizes[i]``
    (in the order of ``relations``): where each iteration's new rows end.

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
            # every rule's indexes caught up before any runs: a rule's probes then read the
            # relations as the iteration began, not the rows earlier rules of the same
            # iteration appended (those are the next delta: seen now, they would be joined
            # twice; Andersen points-to derived about 25% more, for the same fixpoint)
            for i in range(len(rules)):
                code = _catch_up_rule(program, rules[i], rel_meta, ix_meta, ix_cols, need)
                if code == DONE and alternatives[i] >= 0:
                    code = _catch_up_rule(program, alternatives[i], rel_meta, ix_meta, ix_cols,
                                          need)
                if code != DONE:
                    return code
            progress[RUN_PHASE] = PHASE_CHOOSE
        while progress[RUN_POSITION] < len(rules):
            i = progress[RUN_POSITION]
            if progress[RUN_PHASE] == PHASE_CHOOSE:
                rule, alternative = rules[i], alternatives[i]
                rule = _choose(program, rule, alternative, rel_meta, ix_meta, low, high)
                _start_rule(program, rule, rel_meta, ix_meta, ix_cols, low, high, every_row,
                            registers, key, cursor, stop, state)
                progress[RUN_RULE] = rule
                progress[RUN_PHASE] = PHASE_RUN
            rule = progress[RUN_RULE]
            if _resume(program, rule, rel_meta, ix_meta, ix_cols, low, high, every_row,
                       registers, values, cursor, stop, key, stack, part, state,
                       serial) == NEED_ROW:
                need[0], need[1] = program[P_RULE_HEAD][rule], program[P_RULE_DEDUP][rule]
                return NEED_ROW
            progress[RUN_ADDED] += state[S_ADDED]
            progress[RUN_POSITION] += 1
            progress[RUN_PHASE] = PHASE_CHOOSE
        if budget > 0:
            for rel in relations:
                low[rel] = high[rel]
                high[rel] = rel_meta[rel, R_SIZE]
            if progress[RUN_ITERATIONS] < sizes.shape[0]:
                for j in range(len(relations)):
                    sizes[progress[RUN_ITERATIONS], j] = high[relations[j]]
        progress[RUN_ITERATIONS] += 1
        progress[RUN_POSITION] = 0
        progress[RUN_PHASE] = PHASE_START
    return DONE


@njit(nogil=True, _nrt=False)
def run_task(program, rule, rel_meta, ix_meta, ix_cols, low, high, visible, registers, values,
             cursor, stop, key, stack, part, state, tickets):
    """A parallel task: rule ``rule`` of ``program`` from ``state`` (``_resume``'s; a new task
    has an empty first level, ``cursor[0] == stop[0]``), over the chunks of first-level rows it
    claims from ``tickets`` (``claims._claim``) until none are left, while other threads run
    tasks of the same rule and insert into the same head relation
    (``_add_concurrently``): DONE, or NEED_ROW when ``tickets`` are spent (the caller grows the
    head relation and its dedup table once every task of the round has returned, then calls
    again). A task out of first-level rows waits for a share of another's heavy row
    (``claims``) while any task of the round is active. The rule's indexes are caught up
    beforehand; full scans read ``visible`` rows at most. Cost: per derivation, as ``run``."""
    outcome = _resume_concurrently(program, rule, rel_meta, ix_meta, ix_cols, low, high,
                                   visible, registers, values, cursor, stop, key, stack, part,
                                   state, tickets)
    _release(tickets, state)
    return outcome
