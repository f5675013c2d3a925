"""herbrand.incremental and Materialization: validation, decoded changes, stats, rules,
atomicity."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import herbrand
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.errors import (
    ArityError,
    HerbrandTypeError,
    UndeclaredRelationError,
    UnknownComponentError,
    UpdateError,
)
from herbrand.framework.registry import INCREMENTAL_ENGINES
from herbrand.framework.syntax import SYMBOL

PROGRAM = """
.decl edge(x: symbol, y: symbol)
.decl weight(x: symbol, w: number)
.decl path(x: symbol, y: symbol)
.decl heavy(x: symbol)
.output path
.output heavy
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
heavy(x) :- weight(x, w), w > 10.
edge("z", "z").
"""
OWN_ENGINES = ("recompute", "dred", "counting")


@pytest.fixture(params=OWN_ENGINES)
def materialization(request):
    return herbrand.incremental(PROGRAM, facts={"edge": [("a", "b"), ("b", "c")]},
                                engine=request.param)


def test_changes_cover_every_output_relation(materialization):
    changes = materialization.update(insert={"edge": [("c", "d")]}, delete={"edge": [("a", "b")]})
    assert set(changes.relations) == {"path", "heavy"}
    assert changes["path"].added == {("c", "d"), ("b", "d")}
    assert changes["path"].removed == {("a", "b"), ("a", "c")}
    assert changes["heavy"].added == changes["heavy"].removed == frozenset()
    assert materialization.relation("path") == {("b", "c"), ("c", "d"), ("b", "d"), ("z", "z")}


def test_without_outputs_changes_cover_every_relation():
    m = herbrand.incremental(".decl a(x: number)\n.decl b(x: number)\nb(x) :- a(x).",
                             facts={"a": [(1,)]})
    assert set(m.update(insert={"a": [(2,)]}).relations) == {"a", "b"}


def test_rows_as_arrays_and_frames(materialization):
    symbols = materialization.database.symbols
    a, b = symbols.intern("a"), symbols.intern("b")
    materialization.update(delete={"edge": np.array([[a, b]])})
    materialization.update(insert={"weight": pd.DataFrame({"x": ["q"], "w": [11]})})
    assert materialization.relation("heavy") == {("q",)}
    assert ("a", "b") not in materialization.relation("edge")


@pytest.mark.parametrize(("insert", "error", "message"), [
    ({"nope": [(1,)]}, UndeclaredRelationError, "nope"),
    ({"path": [("a", "q")]}, UpdateError, "path is derived"),
    ({"edge": [("a",)]}, ArityError, "relation edge"),
    ({"weight": [("a", "heavy")]}, HerbrandTypeError, "relation weight"),
])
def test_invalid_updates_change_nothing(materialization, insert, error, message):
    before = {name: materialization.relation(name) for name in ("edge", "path", "weight")}
    with pytest.raises(error, match=message):
        materialization.update(insert={"edge": [("x", "y")], **insert})
    assert {name: materialization.relation(name) for name in before} == before


def test_inline_facts_of_inputs_cannot_be_deleted(materialization):
    changes = materialization.update(delete={"edge": [("z", "z")]})
    assert changes.size == 0 and ("z", "z") in materialization.relation("edge")


@pytest.mark.parametrize("engine", OWN_ENGINES)
def test_a_fault_mid_update_leaves_the_materialization_as_it_was(monkeypatch, engine):
    m = herbrand.incremental(PROGRAM, facts={"edge": [("a", "b"), ("b", "c")]}, engine=engine)
    before = {name: m.relation(name) for name in ("edge", "path")}
    strategy = m.stats().strategy

    def fail(self, rules, instance):
        raise RuntimeError("injected")

    monkeypatch.setattr(RelationalEvaluator, "derive", fail)
    with pytest.raises(RuntimeError, match="injected"):
        m.update(insert={"edge": [("c", "a")]}, delete={"edge": [("a", "b")]})
    monkeypatch.undo()
    assert {name: m.relation(name) for name in before} == before
    assert m.stats().strategy == strategy
    assert m.update(insert={"edge": [("c", "a")]})["path"].added


def test_stats_report_strategy_time_and_sizes(materialization):
    materialization.update(insert={"edge": [("c", "d")]})
    stats = materialization.stats()
    assert stats.strategy in OWN_ENGINES
    assert stats.seconds >= 0 and stats.tuples == sum(map(len, materialization.database.values()))
    assert stats.bytes == 16 * stats.tuples
    assert stats.state_tuples >= 0 and stats.state_bytes >= 0


def test_rule_changes_on_an_engine_without_dynamic_rules_name_the_ones_that_have_them(
        materialization):
    supporting = [n for n in INCREMENTAL_ENGINES.names()
                  if INCREMENTAL_ENGINES.get(n).tags.dynamic_rules]
    with pytest.raises(UpdateError, match="needs an engine with dynamic rules") as raised:
        materialization.add_rules('path(x, x) :- edge(x, _).')
    assert all(name in str(raised.value) for name in supporting)
    with pytest.raises(UpdateError):
        materialization.remove_rules(list(materialization.program.proper_rules[:1]))


def test_unknown_relation_is_an_error_when_read(materialization):
    with pytest.raises(UndeclaredRelationError, match="nope"):
        materialization.relation("nope")


def test_engine_options_are_checked():
    with pytest.raises(UnknownComponentError, match="no option 'speed'"):
        herbrand.incremental(PROGRAM, engine="dred", speed=3)
    with pytest.raises(UnknownComponentError, match="unknown incremental engine"):
        herbrand.incremental(PROGRAM, engine="nope")
    m = herbrand.incremental(PROGRAM, engine="dred", index="hash")
    assert repr(m.engine) == "DRedEngine(index='hash')"
    assert m.database.types["edge"] == (SYMBOL, SYMBOL)
