"""Spark arithmetic equals the scalar reference (herbrand.evaluators.arithmetic) on edge cases."""

from __future__ import annotations

from pyspark.sql import functions as F

from herbrand.evaluators.arithmetic import OPERATORS
from herbrand.framework.syntax import Arith, Const
from herbrand.spark_backend.expressions import comparison_column, expression_column
from herbrand.spark_backend.session import run_settings
from herbrand.translators.ir import ColumnRef

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
PAIRS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (5, 0), (0, 5), (3, -1), (2, 63), (-1, 4), (3, 70),
         (INT64_MAX, 1), (INT64_MIN, -1), (INT64_MIN, 1), (INT64_MAX, INT64_MAX)]
UNARY = ("neg", "bnot", "lnot", "abs")


def _arguments(op: str):
    return (ColumnRef(0),) if op in UNARY else (ColumnRef(0), ColumnRef(1))


def test_every_operator_matches_the_scalar_reference(spark):
    frame = spark.createDataFrame(PAIRS, "c0 long, c1 long")
    operators = sorted(OPERATORS)
    with run_settings(spark):
        rows = frame.select("c0", "c1", *(
            expression_column(Arith(op, _arguments(op))).alias(f"r{i}")
            for i, op in enumerate(operators))).collect()
    for row in rows:
        a, b = row[0], row[1]
        for i, op in enumerate(operators):
            expected = OPERATORS[op](a) if op in UNARY else OPERATORS[op](a, b)
            assert row[2 + i] == expected, (op, a, b)


def test_a_failed_operation_fails_the_comparison(spark):
    frame = spark.createDataFrame([(1, 0), (4, 2)], "c0 long, c1 long")
    quotient = Arith("/", (ColumnRef(0), ColumnRef(1)))
    with run_settings(spark):
        kept = frame.filter(comparison_column("!=", quotient, Const(99))).collect()
        negated = frame.filter(~comparison_column("=", quotient, Const(99))).collect()
    assert [tuple(r) for r in kept] == [(4, 2)]
    assert [tuple(r) for r in negated] == [(4, 2)]


def test_symbol_constants_stay_strings(spark):
    frame = spark.createDataFrame([("a",), ("b",)], "c0 string")
    kept = frame.filter(F.col("c0") == expression_column(Const("b"))).collect()
    assert [r[0] for r in kept] == ["b"]
