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
