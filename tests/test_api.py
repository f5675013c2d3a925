import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import herbrand
from herbrand import builtins
from herbrand.api import default_evaluator, resolve_evaluator
from herbrand.framework.errors import (
    ArityError,
    HerbrandSyntaxError,
    HerbrandTypeError,
    ProgramFileError,
    UndeclaredRelationError,
    UsageError,
)

TC = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""


def test_materialize_from_text_tuples_and_arrays_agree():
    by_tuples = herbrand.materialize(TC, facts={"edge": [(1, 2), (2, 3)]})
    by_array = herbrand.materialize(TC, facts={"edge": np.array([[1, 2], [2, 3]])})
    assert sorted(by_tuples.decoded_rows("path")) == [(1, 2), (1, 3), (2, 3)]
    assert by_tuples["path"] == by_array["path"]


def test_parse_accepts_a_path(tmp_path):
    path = tmp_path / "tc.dl"
    path.write_text(TC)
    assert herbrand.parse(path) == herbrand.parse(str(path)) == herbrand.parse(TC)


def test_facts_for_an_undeclared_relation_are_an_error():
    with pytest.raises(UndeclaredRelationError, match="'nope'"):
        herbrand.materialize(TC, facts={"nope": [(1,)]})


def test_index_with_an_evaluator_that_takes_none_is_an_error():
    with pytest.raises(UsageError, match="does not use an index"):
        herbrand.materialize(TC, facts={"edge": [(1, 2)]}, evaluator="substitution",
                             index="btree")


def test_the_default_is_the_native_executor_and_the_batch_one_with_an_index():
    assert default_evaluator(None) == builtins.DEFAULT_EVALUATOR == "native"
    assert resolve_evaluator(default_evaluator(None), None).tags.runs_strata
    assert default_evaluator("spine") == "relational"
    assert resolve_evaluator(default_evaluator("spine"), "spine").index == "spine"
    assert resolve_evaluator("relational", None).index == "sorted_vector"


def test_every_fixpoint_gives_the_same_database():
    facts = {"edge": [(i, i + 1) for i in range(20)]}
    naive = herbrand.materialize(TC, facts=facts, fixpoint="naive")
    seminaive = herbrand.materialize(TC, facts=facts, fixpoint="seminaive")
    assert naive["path"] == seminaive["path"] and len(naive["path"]) == 210


# -- facts: stored exactly or rejected -----------------------------------------------------------


def _one_line_error(error, call, *names):
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert "\n" not in message and all(name in message for name in names), message
    return message


@pytest.mark.parametrize("rows", [
    np.array([[1.5, 2.9]]), np.array([[np.nan, 1.0]]), np.array([[np.inf, 1.0]]),
    np.array([[1e19, 1.0]]), np.array([[1.0, 2.0]]), np.array([[True, False]]),
    np.array([[2**64 - 1, 1]], dtype=np.uint64), pd.DataFrame({"a": [1.0], "b": [2]}),
    pa.table({"a": [1], "b": [2.5]}), [(1, 2**63)], [(1, 2.0)],
])
def test_facts_that_cannot_be_stored_exactly_are_type_errors(rows):
    _one_line_error(HerbrandTypeError, lambda: herbrand.materialize(TC, facts={"edge": rows}),
                    "relation edge", "column")


@pytest.mark.parametrize("rows", [np.array([1, 2, 3, 4]), np.zeros((2, 3), dtype=np.int64),
                                  pd.DataFrame({"a": [1]}), [(1, 2, 3)]])
def test_facts_of_another_shape_are_arity_errors(rows):
    _one_line_error(ArityError, lambda: herbrand.materialize(TC, facts={"edge": rows}),
                    "relation edge")


@pytest.mark.parametrize("rows", [None, (1, 2), "12", b"12", {"a": 1}, [1, 2]])
def test_facts_that_are_not_rows_are_type_errors(rows):
    _one_line_error(HerbrandTypeError, lambda: herbrand.materialize(TC, facts={"edge": rows}),
                    "relation edge")


def test_facts_as_uint_arrays_arrow_tables_and_nullable_frames():
    expected = [(1, 2), (1, 3), (2, 3)]
    for rows in (np.array([[1, 2], [2, 3]], dtype=np.uint64),
                 pa.table({"x": [1, 2], "y": [2, 3]}),
                 pd.DataFrame({"x": pd.array([1, 2], dtype="Int64"), "y": [2, 3]})):
        assert sorted(herbrand.materialize(TC, facts={"edge": rows}).decoded_rows("path")) \
            == expected


@pytest.mark.parametrize("facts", [[(1, 2)], ("edge", [(1, 2)]), {1: [(1, 2)]}])
def test_facts_must_be_a_mapping_of_relation_names(facts):
    for call in (herbrand.materialize, herbrand.incremental,
                 lambda p, f: herbrand.load_database(herbrand.parse(p), f)):
        _one_line_error(UsageError, lambda call=call: call(TC, facts), "facts")


# -- programs: text or file, by the argument's type ----------------------------------------------


def test_parse_takes_bytes_as_program_text():
    program = herbrand.parse(b'.decl s(x: symbol)\ns("caf\xc3\xa9").\ns("\xff").')
    assert [str(rule) for rule in program.rules] == ['s("café").', 's("\udcff").']


@pytest.mark.parametrize("argument", [None, 3, ["a(1)."], bytearray(b"")])
def test_parse_of_another_type_is_a_usage_error(argument):
    _one_line_error(UsageError, lambda: herbrand.parse(argument), "parse(text_or_path)",
                    type(argument).__name__)
    _one_line_error(UsageError, lambda: herbrand.materialize(argument), "materialize(program)")
    _one_line_error(UsageError, lambda: herbrand.incremental(argument), "incremental(program)")


def test_a_one_line_str_ending_in_dl_names_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tc.dl").write_text(TC)
    assert herbrand.parse("  tc.dl \n") == herbrand.parse(TC)
    for call in (herbrand.parse, herbrand.materialize, herbrand.incremental):
        _one_line_error(ProgramFileError, lambda call=call: call("missing.dl"), "missing.dl")
    _one_line_error(ProgramFileError, lambda: herbrand.parse(tmp_path / "missing"), "missing")
    _one_line_error(ProgramFileError, lambda: herbrand.parse(str(tmp_path) + "/.dl"), ".dl")


def test_other_strs_are_program_text_whatever_is_on_disk(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a(1).").write_text(TC)
    assert herbrand.parse(".decl a(x: number)\na(1).").rules
    as_text = herbrand.parse("a(1).")  # a file of that name exists, but this is text
    assert not as_text.declarations and len(as_text.rules) == 1
    with pytest.raises(HerbrandSyntaxError):
        herbrand.parse("tc.dl\nmore.dl")  # two lines: text
    assert len(herbrand.parse(".decl a(x: number)\n// in.dl").declarations) == 1


# -- column names ---------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["local", "parallel"])
def test_results_name_their_columns_as_declared(backend):
    program = ".decl e(src: number, dst: number)\n.decl r(from: number, to: number)\n" \
              "r(x, y) :- e(x, y)."
    db = herbrand.materialize(program, facts={"e": [(1, 2)]}, backend=backend)
    assert list(db.to_pandas("r").columns) == ["from", "to"]
    assert list(db.to_pandas("e").columns) == ["src", "dst"]
    loaded = herbrand.load_database(herbrand.parse(program), {"e": [(1, 2)]})
    assert loaded.column_names("e") == ("src", "dst")


@pytest.mark.parametrize("choice", [{"evaluator": "substitution"}, {"fixpoint": "naive"},
                                    {"index": "hash"}])
def test_a_backend_that_runs_its_own_plans_refuses_an_evaluator_choice(choice):
    pytest.importorskip("pyspark")
    with pytest.raises(UsageError, match=f"{next(iter(choice))}= does not go with backend "
                                         f"SparkBackend") as raised:
        herbrand.materialize(".decl e(x: number)\n", backend="spark", **choice)
    assert "\n" not in str(raised.value)


def test_compare_returns_a_frame_with_the_documented_columns():
    from herbrand.reports.comparison import COLUMNS

    program = TC + ".input edge\n.output path\n"
    table = herbrand.compare(program, facts={"edge": [(1, 2), (2, 3)]},
                             configurations=["native", "relational/btree"], repeat=1)
    assert list(table.columns) == list(COLUMNS)
    assert list(table["configuration"]) == ["native", "relational/btree"]
    assert list(table["status"]) == ["ok", "ok"] and list(table["tuples"]) == [3, 3]
    with pytest.raises(UsageError, match="configuration 'relational/btre': unknown index"):
        herbrand.compare(program, configurations=["relational/btre"])
    with pytest.raises(UsageError, match="facts given for 'path', which is no .input"):
        herbrand.compare(program, facts={"path": [(1, 2)]})
