import threading

import numpy as np

import herbrand
from herbrand.evaluators.native.store import NativeStore
from herbrand.evaluators.parallel import ParallelBackend
from herbrand.framework.spread import Spread

# a join through two indexes that start empty: the first pass catches both up at once
PATHS = """
.decl e(x: number, y: number)
.decl f(x: number, y: number)
.decl g(x: number, y: number)
.decl path(x: number, w: number)
path(x, w) :- e(x, y), f(y, z), g(z, w).
"""


def test_a_pass_catches_its_indexes_up_on_threads_and_joins_as_one_thread_does(monkeypatch):
    rng = np.random.default_rng(5)
    nodes = Spread.MIN_LENGTH + 5_000  # each index this far behind: the threads catch up
    facts = {name: np.stack([np.arange(nodes), rng.integers(0, nodes, nodes)], axis=1)
             for name in ("e", "f", "g")}
    workers = set()  # the pool's threads that caught an index up
    catch_up = NativeStore.catch_up

    def spied(store, ix):
        if threading.current_thread() is not threading.main_thread():
            workers.add(threading.get_ident())
        catch_up(store, ix)

    monkeypatch.setattr(NativeStore, "catch_up", spied)
    parallel = herbrand.materialize(PATHS, facts=facts, backend=ParallelBackend(workers=2))
    assert workers
    monkeypatch.undo()
    assert parallel["path"] == herbrand.materialize(PATHS, facts=facts)["path"]
    assert len(parallel["path"]) == nodes


# one row of d leads to most derivations: a fixed cut of d would leave one thread the rest
SKEWED = """
.decl d(x: number, y: number)
.decl e(y: number, z: number)
.decl tc(x: number, z: number)
tc(x, z) :- d(x, z).
tc(x, z) :- tc(x, y), e(y, z).
"""


def test_threads_share_a_skewed_first_level_out_in_chunks_and_agree_with_the_reference(
        monkeypatch):
    """One task per thread per rule, the tasks claiming the first level's rows in chunks; the
    row blocks they leave unused are closed up; the rows equal one thread's and the
    reference's."""
    from herbrand.evaluators.native import layout as L
    from herbrand.evaluators.native.compiled import kernels
    from herbrand.evaluators.native.store import MIN_CHUNK, claim_chunk

    rng = np.random.default_rng(11)
    rows = 3_000
    light = np.stack([np.arange(1, rows), rng.integers(10_000, 20_000, rows - 1)], axis=1)
    facts = {"d": np.concatenate([[[0, 0]], light]),  # row 0 reaches every z of e(0, z)
             "e": np.stack([np.zeros(20_000, dtype=np.int64), np.arange(1, 20_001)], axis=1)}
    tasks = []  # each task's (thread, state, tickets), as the kernel left them
    run_task = kernels().run_task

    def recorded_task(*args):
        tasks.append((threading.get_ident(), args[-2], args[-1]))
        return run_task(*args)

    closed = []  # (rows taken, rows once the holes of blocks left unused are closed)
    close_holes = NativeStore._close_holes

    def spied(store, head, dedup, taken, states):
        closed.append((taken, close_holes(store, head, dedup, taken, states)))
        return closed[-1][1]

    monkeypatch.setattr(kernels(), "run_task", recorded_task)
    monkeypatch.setattr(NativeStore, "_close_holes", spied)
    parallel = herbrand.materialize(SKEWED, facts, evaluator="native",
                                    backend=ParallelBackend(workers=2, min_rows=1))
    monkeypatch.undo()
    assert any(size < taken for taken, size in closed)  # rows were moved into holes
    assert parallel["tc"] == herbrand.materialize(SKEWED, facts, evaluator="native")["tc"]
    reference = herbrand.materialize(SKEWED, facts, evaluator="substitution")
    assert parallel["tc"] == reference["tc"] and len(reference["tc"]) > 20_000
    rounds = {id(tickets): tickets for _, _, tickets in tasks}
    assert len(tasks) >= 2 * len(rounds)  # one task per worker per rule (more: grown rounds)
    # the calling thread runs one task of each round and a pool thread the other
    assert {thread for thread, _, _ in tasks} - {threading.main_thread().ident}
    for tickets in rounds.values():  # every first-level row claimed, in chunks
        assert tickets[L.CLAIM_NEXT] >= tickets[L.CLAIM_END]
        assert tickets[L.CLAIM_CHUNK] >= MIN_CHUNK
    assert claim_chunk(rows, 2) < rows // 100  # d's rows: over a hundred chunks


def test_a_first_level_of_few_rows_is_claimed_row_by_row():
    """A small base relation leading a rule may hold most of a pass's work in one of its rows:
    its rows are claimed one at a time, a large first level's in chunks up to MAX_CHUNK."""
    from herbrand.evaluators.native.store import MAX_CHUNK, claim_chunk

    assert claim_chunk(250, 2) == 1
    assert claim_chunk(0, 2) == 1
    assert 1 < claim_chunk(100_000, 2) <= MAX_CHUNK
    assert claim_chunk(10**9, 2) == MAX_CHUNK


def test_a_heavy_first_level_row_is_shared_out_and_the_rows_agree(monkeypatch):
    """A task out of first-level rows waits; the task inside the heavy row offers it the rest
    of its second level (an item, ``claims``), and both threads derive that row's tuples; the
    rows equal one thread's and the batch executor's. PATHS: one row of e (y = 0) leads to
    nearly every derivation, through f's 100,000 rows with y = 0."""
    from herbrand.evaluators.native import layout as L
    from herbrand.evaluators.native.compiled import kernels

    heavy = 100_000
    z = np.arange(1, heavy + 1)
    facts = {"e": np.array([[0, 0]] + [[x, heavy + x] for x in range(1, 8)]),
             "f": np.concatenate([np.stack([np.zeros(heavy, dtype=np.int64), z], axis=1),
                                    [[heavy + x, x] for x in range(1, 8)]]),
             "g": np.concatenate([np.stack([z, 3 * z + k], axis=1) for k in range(3)])}
    rounds = {}  # id -> each round's tickets, as the kernels left them
    run_task = kernels().run_task

    def recorded_task(*args):
        rounds[id(args[-1])] = args[-1]
        return run_task(*args)

    monkeypatch.setattr(kernels(), "run_task", recorded_task)
    shared = []
    for _ in range(5):  # a thread may start only once the other is done: then nothing waits
        parallel = herbrand.materialize(PATHS, facts, evaluator="native",
                                        backend=ParallelBackend(workers=2, min_rows=0))
        shared = [t for t in rounds.values() if t[L.ITEM_ID] > 0]
        if shared:
            break
    monkeypatch.undo()
    assert shared  # an item was offered and taken
    assert all(t[L.ACTIVE] == 0 and t[L.IDLE] == 0 and t[L.ITEM_LOCK] == 0 for t in shared)
    assert parallel["path"] == herbrand.materialize(PATHS, facts, evaluator="native")["path"]
    batch = herbrand.materialize(PATHS, facts, evaluator="relational")
    assert parallel["path"] == batch["path"] and len(batch["path"]) == 3 * heavy + 21
