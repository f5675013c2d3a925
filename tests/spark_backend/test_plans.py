"""Plans as DataFrames equal the reference interpreter on the nodes' edge cases."""

from __future__ import annotations

import pytest

from herbrand.framework.syntax import Arith, Const
from herbrand.spark_backend.frames import empty_frame
from herbrand.spark_backend.plans import PlanFrames
from herbrand.spark_backend.session import run_settings
from herbrand.translators import interpreter, ir

R = ir.Scan("r", 2)
EMPTY = ir.Scan("empty", 1)
PLANS = {
    "join": ir.Join(R, R, (1,), (0,)),
    "product": ir.Product(ir.Unit(), R),
    "antijoin_without_keys_nonempty": ir.Antijoin(R, R, (), ()),
    "antijoin_without_keys_empty": ir.Antijoin(R, EMPTY, (), ()),
    "antijoin": ir.Antijoin(R, R, (1,), (0,)),
    "count_without_keys_of_nothing": ir.Aggregate(ir.Unit(), EMPTY, (), (), "count", None),
    "sum_without_keys_of_nothing": ir.Aggregate(ir.Unit(), EMPTY, (), (), "sum",
                                                ir.ColumnRef(0)),
    "min_without_keys_of_nothing": ir.Aggregate(ir.Unit(), EMPTY, (), (), "min",
                                                ir.ColumnRef(0)),
    "max_by_key": ir.Aggregate(R, R, (0,), (0,), "max", ir.ColumnRef(1)),
    "sum_of_failed_targets": ir.Aggregate(R, R, (0,), (0,), "sum",
                                          Arith("/", (Const(10), ir.ColumnRef(1)))),
    "map_drops_failures": ir.Map(R, Arith("%", (ir.ColumnRef(0), ir.ColumnRef(1)))),
    "project_constants": ir.Project(R, (1, Const("k"), Const(7))),
    "union": ir.Union((R, ir.Project(R, (1, 0)))),
    "select": ir.SelectByColumns(ir.SelectByValue(ir.Product(R, R), 0, 1), 1, 2),
}
ROWS = {"r": {(1, 2), (2, 0), (1, 3), (3, 1)}, "empty": set()}


@pytest.mark.parametrize("name", PLANS)
def test_plan_matches_the_interpreter(spark, name):
    frames = {"r": spark.createDataFrame(sorted(ROWS["r"]), "c0 long, c1 long"),
              "empty": empty_frame(spark, ("number",))}
    with run_settings(spark):
        frame = PlanFrames(spark, frames, {"r": 4, "empty": 0}, broadcast_rows=2).frame(
            PLANS[name])
        rows = {tuple(row) for row in frame.collect()}
    assert rows == interpreter.evaluate(PLANS[name], ROWS)
