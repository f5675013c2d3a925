"""The native evaluator over an index: tagged backings probed in the kernel through their
native views, others run by the batch executor."""

from __future__ import annotations

import numpy as np
import pytest

import herbrand
from herbrand.evaluators.native import layout as L
from herbrand.evaluators.native.evaluator import NativeEvaluator
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.errors import UnknownComponentError
from herbrand.workloads import ANDERSEN_PROGRAM

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
.decl far(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), tc(y, z).
far(x, y) :- e(x, _), e(y, _), !tc(x, y).
"""
# wide values: the sorted runs are not packed; a chain with a shortcut: keys repeat
FACTS = {"e": [(i, i + 1) for i in range(40)] + [(5, 2), (-3, 2**40), (2**40, 7)]}
VIEWS = ("sorted_vector", "spine", "open_hash")


@pytest.fixture(scope="module")
def reference():
    return herbrand.materialize(TC, FACTS, evaluator="substitution")


@pytest.mark.parametrize("index", VIEWS)
@pytest.mark.parametrize("backend", ["local", "parallel"])
def test_views_are_probed_in_the_kernel_and_agree(index, backend, reference):
    evaluator = NativeEvaluator(index=index)
    database = herbrand.materialize(TC, FACTS, evaluator=evaluator, backend=backend)
    for name in ("tc", "far"):
        assert database[name] == reference[name], name
    store = evaluator._store
    assert store.view_index.__name__ == type(next(iter(store._views.values())).backing).__name__
    views = [ix for ix in range(len(store._tables)) if store.ix_meta[ix, L.IX_UNIQUE] == L.VIEW]
    assert views and set(views) == set(store._views)
    tc = store.ids["tc"]
    backing = next(v.backing for ix, v in store._views.items()
                   if store.ix_meta[ix, L.IX_REL] == tc)
    assert len(backing) == store.size(tc)  # fed every row of the relation it serves


def test_spine_runs_are_all_walked_and_a_probe_resumes_across_growth():
    # many iterations: the spine of tc keeps several runs, and the head's storage grows
    # (NEED_ROW) in the middle of view probes, which resume where they were
    chain = {"e": [(i, i + 1) for i in range(120)]}
    evaluator = NativeEvaluator(index="spine")
    database = herbrand.materialize(TC.replace("far(x, y) :- e(x, _), e(y, _), !tc(x, y).",
                                               ""), chain, evaluator=evaluator)
    assert len(database["tc"]) == 120 * 121 // 2
    runs = [len(v.view.runs) for v in evaluator._store._views.values()]
    assert max(runs) > 1


def test_andersen_agrees_over_every_view():
    rng = np.random.default_rng(3)
    facts = {name: rng.integers(0, 60, size=(n, 2)) for name, n in
             [("addressOf", 80), ("assign", 60), ("load", 15), ("store", 15)]}
    expected = herbrand.materialize(ANDERSEN_PROGRAM, facts)["pointsTo"]
    for index in VIEWS:
        assert herbrand.materialize(ANDERSEN_PROGRAM, facts, evaluator="native",
                                    index=index)["pointsTo"] == expected, index


def test_an_index_without_a_view_runs_the_batch_executor(reference):
    evaluator = NativeEvaluator(index="hash")
    assert isinstance(evaluator.batch, RelationalEvaluator) and evaluator.batch.index == "hash"
    database = herbrand.materialize(TC, FACTS, evaluator=evaluator)
    assert database["tc"] == reference["tc"] and database["far"] == reference["far"]
    assert evaluator._store is None  # no native store: every rule ran on the batch executor


def test_the_index_is_a_hyperparameter_checked_by_name():
    assert NativeEvaluator.tags.uses_index and NativeEvaluator().index is None
    assert repr(NativeEvaluator(index="spine")) == "NativeEvaluator(index='spine', row_limit=None)"
    with pytest.raises(UnknownComponentError, match="unknown index 'nope'"):
        NativeEvaluator(index="nope")
    database = herbrand.materialize(TC, FACTS, evaluator="native", index="open_hash",
                                    fixpoint="naive")
    assert len(database["tc"]) > 40


def test_a_probe_keyed_twice_on_a_column_reads_a_hash_index():
    # a join column that a selection also fixes (Soufflé's access2): no backing's key
    # repeats a column, so that probe stays on the store's hash index; deltas and negations too
    from herbrand.evaluators.native.store import NativeStore
    from herbrand.framework.storage import Relation
    from herbrand.indexes.spine import SpineIndex

    store = NativeStore(SpineIndex)
    rel = store.add("b", Relation(np.array([[1, 2], [3, 4]])))
    assert store.probe(rel, (0, 1), True)[0] == L.VIEW_PROBE
    assert store.probe(rel, (1, 1), True)[0] == L.PROBE
    assert store.probe(rel, (0,), False)[0] == L.PROBE
    assert store.probe(rel, (0, 1), False)[0] == L.UNIQUE_PROBE  # every column: a unique index
    assert store.probe(rel, (0, 1), True) == store.probe(rel, (0, 1), True)  # made once
