"""One relational-algebra plan (``herbrand.translators.ir``) as one Spark DataFrame.

Every frame has the columns c0..c{k-1} of the node's output, typed long (numbers) or string
(symbols). Node by node:

- Scan: the relation's frame; Unit: one row, no columns.
- SelectByValue, SelectByColumns, Filter: ``filter``; Map: a new column, rows where it is NULL
  (a failed operation, see ``expressions``) dropped.
- Project: ``select`` of columns and literals.
- Product: ``crossJoin``; Join: an inner equi-join, the right side broadcast when it is a Scan
  of a relation with at most ``broadcast_rows`` rows (the static side of a recursive rule:
  the delta is then never shuffled for the join).
- Antijoin: a ``left_anti`` join (no keys: the left rows when the right side is empty).
- Aggregate: the body deduplicated, grouped by its keys (``groupBy``/``agg``), then joined to the
  child rows: a left join with 0 for no group under ``count`` and ``sum``, an inner one under
  ``min`` and ``max``.
- Union: ``union`` of the inputs (duplicates are removed where the fixpoint adds rows).

Building a frame is O(plan size) on the driver; the cost of running it is Spark's: a shuffle
per non-broadcast join, antijoin and aggregate.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from herbrand.framework.errors import ArityError, EvaluationError
from herbrand.framework.syntax import Const
from herbrand.spark_backend.expressions import (
    column_name,
    comparison_column,
    expression_column,
)
from herbrand.translators import ir

_VALUE = "value"


def _shifted(frame: DataFrame, offset: int) -> DataFrame:
    """``frame`` with column ci renamed c{i + offset} (one call to the JVM)."""
    return frame.toDF(*(column_name(i + offset) for i in range(len(frame.columns))))


def _all(conditions: list[Column]) -> Column | None:
    """The conjunction of ``conditions``; None for none."""
    return reduce(lambda a, b: a & b, conditions) if conditions else None


def _key_condition(left: DataFrame, right: DataFrame, left_keys, right_keys,
                   offset: int) -> Column | None:
    """Equality of the keys, the right frame's columns being shifted by ``offset``."""
    return _all([left[column_name(a)] == right[column_name(b + offset)]
                 for a, b in zip(left_keys, right_keys, strict=True)])


def _output_column(output: int | Const, position: int) -> Column:
    """Column ``position`` of a projection: a literal, or the child's column ``output``,
    renamed unless it keeps its name (an alias of a column to its own name is a new attribute
    to Spark, and a checkpoint's layout then names an attribute the checkpoint does not
    output, which hides the layout from later plans)."""
    if isinstance(output, Const):
        return expression_column(output).alias(column_name(position))
    column = F.col(column_name(output))
    return column if output == position else column.alias(column_name(position))


class PlanFrames:
    """Builds the DataFrame of plans over ``frames`` (relation name -> frame of its rows).

    ``sizes`` (relation name -> rows) decides which Scans are broadcast: those with at most
    ``broadcast_rows`` rows (negative: none). ``rule`` names the rule in errors.
    """

    def __init__(self, session: SparkSession, frames: Mapping[str, DataFrame],
                 sizes: Mapping[str, int], broadcast_rows: int, rule: object = None):
        self.session = session
        self.frames = frames
        self.sizes = sizes
        self.broadcast_rows = broadcast_rows
        self.rule = rule

    def error(self, message: str) -> EvaluationError:
        return EvaluationError(f"rule {self.rule}: {message}" if self.rule else message)

    def frame(self, node: ir.Plan) -> DataFrame:
        """The rows of ``node`` as a DataFrame (lazy: nothing runs until an action)."""
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"cannot run plan node {node.label()} on Spark")
        return method(node)

    def _Unit(self, node: ir.Unit) -> DataFrame:
        return self.session.range(1).select()

    def _Scan(self, node: ir.Scan) -> DataFrame:
        frame = self.frames.get(node.relation)
        if frame is None:
            raise self.error(f"relation {node.relation} is not in the instance")
        if len(frame.columns) != node.arity:
            raise ArityError(f"rule {self.rule}: {node.relation} has arity {len(frame.columns)}, "
                             f"used with arity {node.arity}")
        return frame

    def _SelectByValue(self, node: ir.SelectByValue) -> DataFrame:
        return self.frame(node.child).filter(
            F.col(column_name(node.column)) == expression_column(Const(node.value)))

    def _SelectByColumns(self, node: ir.SelectByColumns) -> DataFrame:
        return self.frame(node.child).filter(
            F.col(column_name(node.left)) == F.col(column_name(node.right)))

    def _Filter(self, node: ir.Filter) -> DataFrame:
        return self.frame(node.child).filter(comparison_column(node.op, node.left, node.right))

    def _Map(self, node: ir.Map) -> DataFrame:
        name = column_name(node.child.arity)
        mapped = self.frame(node.child).withColumn(name, expression_column(node.expression))
        return mapped.filter(F.col(name).isNotNull())

    def _Project(self, node: ir.Project) -> DataFrame:
        child = self.frame(node.child)
        return child.select(*(_output_column(output, i) for i, output in enumerate(node.outputs)))

    def _Product(self, node: ir.Product) -> DataFrame:
        left = self.frame(node.left)
        return left.crossJoin(_shifted(self.frame(node.right), node.left.arity))

    def _right_side(self, node: ir.Join | ir.Antijoin, offset: int) -> DataFrame:
        right = _shifted(self.frame(node.right), offset)
        small = (isinstance(node.right, ir.Scan)
                 and self.sizes.get(node.right.relation, self.broadcast_rows + 1)
                 <= self.broadcast_rows)
        return F.broadcast(right) if small else right

    def _Join(self, node: ir.Join) -> DataFrame:
        left = self.frame(node.left)
        right = self._right_side(node, node.left.arity)
        condition = _key_condition(left, right, node.left_keys, node.right_keys,
                                   node.left.arity)
        return left.crossJoin(right) if condition is None else left.join(right, condition)

    def _Antijoin(self, node: ir.Antijoin) -> DataFrame:
        left = self.frame(node.left)
        right = self._right_side(node, node.left.arity)
        condition = _key_condition(left, right, node.left_keys, node.right_keys,
                                   node.left.arity)
        if condition is None:
            return left.join(right.select().limit(1), how="left_anti")
        return left.join(right, condition, how="left_anti")

    def _Aggregate(self, node: ir.Aggregate) -> DataFrame:
        if node.function not in ir.AGGREGATE_FUNCTIONS:
            raise self.error(f"aggregate {node.function} is not supported")
        child = self.frame(node.child)
        body = self.frame(node.body).distinct()
        keys = [F.col(column_name(k)).alias(f"g{i}") for i, k in enumerate(node.body_keys)]
        if node.function == "count":
            groups = body.groupBy(*keys).agg(F.count(F.lit(1)).alias(_VALUE))
        else:
            target = body.select(*keys, expression_column(node.target).alias("target"))
            reduction = {"sum": F.sum, "min": F.min, "max": F.max}[node.function]
            groups = (target.filter(F.col("target").isNotNull())
                      .groupBy(*(f"g{i}" for i in range(len(keys))))
                      .agg(reduction("target").alias(_VALUE)))
        condition = _all([child[column_name(c)] == groups[f"g{i}"]
                           for i, c in enumerate(node.child_keys)])
        joined = (child.crossJoin(groups) if condition is None
                  else child.join(groups, condition, how="left"))
        value = F.col(_VALUE)
        if node.function in ("count", "sum"):
            value = F.coalesce(value, F.lit(0).cast("long"))
        else:
            joined = joined.filter(value.isNotNull())
        return joined.select(*child.columns, value.cast("long").alias(column_name(node.child.arity)))

    def _Union(self, node: ir.Union) -> DataFrame:
        return reduce(DataFrame.union, (self.frame(i) for i in node.inputs))
