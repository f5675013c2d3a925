"""``NativeEvaluator(row_limit=...)``: a stratum that derives more rows is stopped with its
buffers grown no further, one within the limit runs as without it (``arrays``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import herbrand
from herbrand.evaluators.fixpoint import SemiNaiveFixpoint, Threads
from herbrand.evaluators.native import layout
from herbrand.evaluators.native.arrays import NativeArrays
from herbrand.evaluators.native.evaluator import NativeEvaluator
from herbrand.evaluators.native.store import NativeStore
from herbrand.framework.errors import RowLimitError
from herbrand.framework.syntax import Program

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""
CHAIN = {"e": [(i, i + 1) for i in range(300)]}  # tc: 300 * 301 / 2 = 45,150 rows
PRODUCT = """
.decl a(x: number)
.decl b(y: number)
.decl p(x: number, y: number)
p(x, y) :- a(x), b(y).
"""
SQUARE = {"a": [(i,) for i in range(300)], "b": [(i,) for i in range(300)]}  # p: 90,000
MUTUAL = """
.decl e(x: number, y: number)
.decl odd(x: number, y: number)
.decl even(x: number, y: number)
odd(x, y) :- e(x, y).
even(x, z) :- odd(x, y), e(y, z).
odd(x, z) :- even(x, y), e(y, z).
"""


def _run(program: str, facts: dict, evaluator: NativeEvaluator,
         threads: Threads | None = None) -> herbrand.Database:
    parsed = herbrand.parse(program)
    given = herbrand.materialize(Program(declarations=parsed.declarations), facts=facts)
    return SemiNaiveFixpoint(evaluator, threads=threads).materialize(parsed, given)


@pytest.fixture
def largest(monkeypatch) -> list[int]:
    """The most rows any relation's buffer was given room for, from now on."""
    capacities = [0]
    set_buffer = NativeArrays._set_buffer

    def spied(arrays, rel, buffer):
        capacities[0] = max(capacities[0], len(buffer))
        set_buffer(arrays, rel, buffer)

    monkeypatch.setattr(NativeArrays, "_set_buffer", spied)
    return capacities


@pytest.mark.parametrize(("program", "facts", "derived"), [
    (TC, CHAIN, 45_150), (PRODUCT, SQUARE, 90_000), (MUTUAL, CHAIN, 45_150)])
def test_a_stratum_within_the_limit_runs_as_without_one(program, facts, derived):
    unlimited = _run(program, facts, NativeEvaluator())
    limited = _run(program, facts, NativeEvaluator(row_limit=derived))
    for name in herbrand.parse(program).declaration_of:
        assert limited[name] == unlimited[name], name
    assert sum(len(limited[name]) for name in limited if name not in facts) == derived


@pytest.mark.parametrize(("program", "facts"), [
    (TC, CHAIN), (PRODUCT, SQUARE)])  # recursive passes; a first pass of one kernel call
def test_a_stratum_over_the_limit_stops_with_its_buffers_grown_no_further(program, facts,
                                                                          largest):
    evaluator = NativeEvaluator(row_limit=5_000)
    with pytest.raises(RowLimitError, match="derives over 5,000 rows"):
        _run(program, facts, evaluator)
    # the derived relation's buffer: at most the limit and the kernel's held-back rows
    assert 5_000 < largest[0] <= 5_000 + layout.PENDING_MAX
    assert evaluator._store is None  # dropped: the evaluator runs the next program afresh
    assert set(_run(TC, {"e": [(1, 2), (2, 3)]}, evaluator).decoded_rows("tc")) == {
        (1, 2), (2, 3), (1, 3)}


def test_relations_growing_together_stop_within_the_limit_each(largest):
    with pytest.raises(RowLimitError):
        _run(MUTUAL, CHAIN, NativeEvaluator(row_limit=5_000))
    assert largest[0] <= 5_000 + layout.PENDING_MAX


def test_threads_inserting_together_stop_at_the_limit(largest, monkeypatch):
    nodes = 1_200  # each first level this large is shared out among the threads
    facts = {"a": [(i,) for i in range(nodes)], "b": [(i,) for i in range(nodes)]}
    shared = []
    run_shared = NativeStore.run_shared
    monkeypatch.setattr(NativeStore, "run_shared",
                        lambda store, *args: shared.append(1) or run_shared(store, *args))
    with ThreadPoolExecutor(2) as pool:
        threads = Threads(pool, 2, min_rows=1_000)
        with pytest.raises(RowLimitError):
            _run(PRODUCT, facts, NativeEvaluator(row_limit=50_000), threads)
        assert shared and largest[0] <= 50_000 + layout.PENDING_MAX
        shared.clear()
        within = _run(PRODUCT, facts, NativeEvaluator(row_limit=nodes * nodes), threads)
    assert shared and len(within["p"]) == nodes * nodes
    assert np.unique(within["p"].rows, axis=0).shape[0] == nodes * nodes
