"""Relations <-> typed DataFrames: a round trip keeps rows, symbols and nullary truth."""

from __future__ import annotations

import numpy as np

from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.spark_backend.frames import (
    empty_frame,
    frame_relation,
    frame_schema,
    relation_frame,
)


def test_round_trip_with_symbols(spark):
    symbols = SymbolTable(["x"])
    ids = symbols.intern_many(["b", "ä ü", "b"])
    relation = Relation(np.array([[1, -(2**63), 3], ids]))
    frame = relation_frame(spark, relation, ("number", "symbol"), symbols)
    assert frame.schema == frame_schema(("number", "symbol"))
    assert sorted(map(tuple, frame.collect())) == [(-(2**63), "ä ü"), (1, "b"), (3, "b")]
    fresh = SymbolTable()
    back = frame_relation(frame, ("number", "symbol"), fresh)
    decoded = {(n, fresh.symbol(s)) for n, s in back.to_rows()}
    assert decoded == {(1, "b"), (-(2**63), "ä ü"), (3, "b")}


def test_nullary_and_empty_relations(spark):
    symbols = SymbolTable()
    true = Relation(np.zeros((0, 1), dtype=np.int64))
    for relation in (true, Relation.empty(0)):
        back = frame_relation(relation_frame(spark, relation, (), symbols), (), symbols)
        assert len(back) == len(relation) and back.arity == 0
    empty = empty_frame(spark, ("symbol", "number"))
    assert empty.count() == 0
    assert [f.dataType for f in empty.schema] == [
        f.dataType for f in frame_schema(("symbol", "number"))]
    assert len(frame_relation(empty, ("symbol", "number"), symbols)) == 0
