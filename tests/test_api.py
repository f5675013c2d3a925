import numpy as np
import pytest

import herbrand
from herbrand import builtins
from herbrand.api import resolve_evaluator
from herbrand.framework.errors import EvaluationError, UndeclaredRelationError

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
    with pytest.raises(EvaluationError, match="does not use an index"):
        herbrand.materialize(TC, facts={"edge": [(1, 2)]}, evaluator="substitution",
                             index="btree")


def test_the_default_is_the_relational_evaluator_over_its_default_index():
    assert builtins.DEFAULT_EVALUATOR == "relational"
    assert resolve_evaluator(builtins.DEFAULT_EVALUATOR, None).index == "sorted_vector"


def test_every_fixpoint_gives_the_same_database():
    facts = {"edge": [(i, i + 1) for i in range(20)]}
    naive = herbrand.materialize(TC, facts=facts, fixpoint="naive")
    seminaive = herbrand.materialize(TC, facts=facts, fixpoint="seminaive")
    assert naive["path"] == seminaive["path"] and len(naive["path"]) == 210
