"""herbrand.incremental and Materialization: validation, decoded changes, stats, rules,
atomicity."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import herbrand
from herbrand.evaluators.native.evaluator import NativeEvaluator
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.errors import (
    ArityError,
    HerbrandTypeError,
    UndeclaredRelationError,
    UnknownComponentError,
    UpdateError,
    UsageError,
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
OWN_ENGINES = ("recompute", "dred", "bf", "counting")


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

    def fail(self, *arguments):
        raise RuntimeError("injected")

    monkeypatch.setattr(RelationalEvaluator, "derive", fail)
    monkeypatch.setattr(NativeEvaluator, "run_stratum", fail)  # recompute's whole strata
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
    assert repr(m.engine) == "DRedEngine(index='hash', prepare=True)"
    assert m.database.types["edge"] == (SYMBOL, SYMBOL)


# -- every rejected update changes nothing -------------------------------------------------------


def _snapshot(m):
    """Everything an update could change: every relation's rows, the symbols, the program."""
    database = m.database
    return ({name: database[name].to_set() for name in database}, len(database.symbols),
            m.program)


def _rejected(m, error, call, *names):
    before = _snapshot(m)
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert "\n" not in message and all(name in message for name in names), message
    assert _snapshot(m) == before
    return message


@pytest.mark.parametrize(("relation", "rows", "error", "names"), [
    ("weight", np.array([["q", "1.5"]]), HerbrandTypeError, ["column 2"]),
    ("weight", pd.DataFrame({"x": ["q"], "w": [1.5]}), HerbrandTypeError, ["column 2"]),
    ("weight", pd.DataFrame({"x": ["q", None], "w": [1, 2]}), HerbrandTypeError,
     ["row 2 column 1"]),
    ("weight", pa.table({"x": ["q"], "w": [2.0]}), HerbrandTypeError, ["column 2"]),
    ("weight", [("q", 2**64)], HerbrandTypeError, ["row 1 column 2"]),
    ("weight", np.array([[0, 2**64 - 1]], dtype=np.uint64), HerbrandTypeError, ["column 2"]),
    ("edge", np.array([[0, 99]]), HerbrandTypeError, ["row 1 column 2", "SymbolTable"]),
    ("edge", np.array([0, 1]), ArityError, ["reshape"]),
    ("edge", None, HerbrandTypeError, []),
    ("edge", ("q", "r"), HerbrandTypeError, ["[('q', 'r')]"]),
    ("edge", "qr", HerbrandTypeError, []),
    ("edge", {"q": "r"}, HerbrandTypeError, []),
    ("edge", [("q", "r"), "qr"], HerbrandTypeError, ["row 2"]),
])
@pytest.mark.parametrize("kind", ["insert", "delete"])
def test_rows_that_cannot_be_stored_exactly_change_nothing(materialization, relation, rows,
                                                            error, names, kind):
    valid = {"edge": [("new", "newer")]}  # checked first, never interned
    _rejected(materialization, error,
              lambda: materialization.update(**{kind: {**valid, relation: rows}}),
              f"relation {relation}", *names)


@pytest.mark.parametrize("argument", [("edge", [("a", "b")]), [("edge", [("a", "b")])],
                                      {1: [("a", "b")]}])
@pytest.mark.parametrize("kind", ["insert", "delete"])
def test_insert_and_delete_must_be_mappings_of_relation_names(materialization, argument, kind):
    _rejected(materialization, UsageError, lambda: materialization.update(**{kind: argument}),
              f"update({kind}=...)")


def test_updates_take_str_arrays_and_arrow_tables(materialization):
    materialization.update(insert={"edge": np.array([["c", "d"]]),
                                   "weight": pa.table({"x": ["q"], "w": [11]})})
    assert ("a", "d") in materialization.relation("path")
    assert materialization.relation("heavy") == {("q",)}


def test_the_database_names_columns_as_declared(materialization):
    assert list(materialization.database.to_pandas("weight").columns) == ["x", "w"]
    materialization.update(insert={"edge": [("c", "d")]})
    assert list(materialization.database.to_pandas("path").columns) == ["x", "y"]


# -- rule changes ---------------------------------------------------------------------------------


@pytest.fixture
def dynamic():
    program = PROGRAM + ".decl spare(x: symbol, y: symbol)\n.decl seeded(x: symbol)\n" \
                        "seeded(\"s\").\n.decl listed(x: symbol)\n.input listed\n"
    return herbrand.incremental(program, facts={"edge": [("a", "b"), ("b", "c")]},
                                engine="dbsp")


@pytest.mark.parametrize(("text", "names"), [
    (".decl q(x: symbol)\nq(x) :- edge(x, _).", ["<add_rules>:1:", "declare q"]),
    (".input spare\nspare(x, y) :- edge(x, y).", ["<add_rules>:1:", ".input spare"]),
    (".output path", [".output path"]),
])
def test_add_rules_takes_rules_only(dynamic, text, names):
    _rejected(dynamic, UsageError, lambda: dynamic.add_rules(text), "add_rules takes rules only",
              *names)


@pytest.mark.parametrize(("text", "relation"), [
    ("edge(x, x) :- edge(x, _).", "edge"),  # holds facts given by the user
    ('path(x, y) :- edge(x, y).\nedge("p", "q").', "edge"),  # a fact is a rule too
    ("seeded(x) :- edge(x, _).", "seeded"),  # holds inline facts
    ("listed(x) :- edge(x, _).", "listed"),  # has .input
    ("weight(x, 1) :- edge(x, _).", "weight"),  # has neither, but holds rows
])
def test_add_rules_cannot_derive_an_input_relation(dynamic, text, relation):
    if relation == "weight":
        dynamic.update(insert={"weight": [("a", 3)]})
    message = _rejected(dynamic, UpdateError, lambda: dynamic.add_rules(text),
                        f"input relation {relation}", "<add_rules>:")
    assert message.startswith("<add_rules>:")
    dynamic.update(insert={relation: []})  # still an input relation


def test_a_declared_relation_without_facts_may_become_derived(dynamic):
    changes = dynamic.add_rules('spare(x, y) :- edge(x, y).\npath("p", "q").')
    assert changes["path"].added == {("p", "q")}
    assert dynamic.relation("spare") == {("a", "b"), ("b", "c"), ("z", "z")}
    with pytest.raises(UpdateError, match="spare is derived"):
        dynamic.update(insert={"spare": [("x", "y")]})


def test_add_rules_with_rule_values_and_a_wrong_argument(dynamic):
    rule = herbrand.parse("spare(x, y) :- edge(y, x).").rules[0]
    dynamic.add_rules([rule])
    assert ("b", "a") in dynamic.relation("spare")
    _rejected(dynamic, UsageError, lambda: dynamic.add_rules(None), "add_rules(rules)")
    _rejected(dynamic, UsageError, lambda: dynamic.add_rules(["spare(x, y) :- edge(x, y)."]),
              "add_rules(rules)")


def test_remove_rules_of_a_rule_not_in_the_program_names_it(dynamic):
    _rejected(dynamic, UpdateError, lambda: dynamic.remove_rules("path(x, x) :- edge(x, _)."),
              "<remove_rules>:1:1", "path(x, x) :- edge(x, _).", "not in the program")
    rule = herbrand.parse("path(y, x) :- edge(x, y).").rules[0]
    _rejected(dynamic, UpdateError, lambda: dynamic.remove_rules([rule]),
              "path(y, x) :- edge(x, y).")


def test_remove_rules_removes_one_occurrence_per_rule(dynamic):
    dynamic.add_rules("spare(x, y) :- edge(x, y).\nspare(x, y) :- edge(x, y).")
    dynamic.remove_rules("spare(x, y) :- edge(x, y).")
    assert dynamic.relation("spare") == {("a", "b"), ("b", "c"), ("z", "z")}
    assert sum(str(r) == "spare(x, y) :- edge(x, y)." for r in dynamic.program.rules) == 1
    dynamic.remove_rules("spare(x, y) :- edge(x, y).")
    assert dynamic.relation("spare") == frozenset()
    _rejected(dynamic, UpdateError, lambda: dynamic.remove_rules("spare(x, y) :- edge(x, y)."),
              "not in the program")
