"""Plan expressions (``ir.ColumnRef``, ``Const``, ``Arith``) as Spark Columns, with the exact
int64 semantics of the local evaluators.

A failed operation (division or modulo by zero, a negative exponent) is SQL NULL, and NULL
propagates through every operator and comparison, so ``Map`` drops the row by filtering NULLs
and ``Filter`` drops it because a NULL condition is not true: the "failed derivation" of
``herbrand.evaluators.arithmetic``. The other semantics rely on Spark's non-ANSI integer
arithmetic (``session.RUN_SETTINGS`` turns ANSI mode off for a run): ``+ - *`` and ``neg``
wrap to 64 bits, ``div`` truncates toward zero, ``%`` takes the dividend's sign, shifts count
modulo 64. ``^`` is exponentiation by squaring over the 64 bits of the exponent, all in
wrapping multiplications (Spark's ``pow`` is floating point). Building a Column is O(size of
the expression); evaluation is Spark's, per row, in the JVM.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from herbrand.framework.errors import EvaluationError
from herbrand.framework.syntax import Arith, Const
from herbrand.translators import ir


def column_name(index: int) -> str:
    """The name of column ``index`` in every DataFrame of the backend."""
    return f"c{index}"


def _long(value: int) -> Column:
    return F.lit(value).cast("long")


def _sql(function: str) -> Callable[..., Column]:
    return lambda *args: F.call_function(function, *args)


def _unless_zero(operation: Callable[[Column, Column], Column]) -> Callable[[Column, Column], Column]:
    return lambda a, b: F.when(b != 0, operation(a, b))


def _flag(condition: Column) -> Column:
    return condition.cast("long")


def _power(base: Column, exponent: Column) -> Column:
    """``base ^ exponent`` wrapped to 64 bits; NULL for a negative exponent."""
    start = F.struct(_long(1).alias("r"), base.alias("s"))

    def square(accumulated: Column, bit: Column) -> Column:
        taken = F.call_function("shiftright", exponent, bit).bitwiseAND(1) == 1
        result = F.when(taken, accumulated["r"] * accumulated["s"]).otherwise(accumulated["r"])
        return F.struct(result.alias("r"), (accumulated["s"] * accumulated["s"]).alias("s"))

    product = F.aggregate(F.sequence(F.lit(0), F.lit(63)), start, square, lambda acc: acc["r"])
    return F.when(exponent >= 0, product)


def _shift(function: str) -> Callable[[Column, Column], Column]:
    return lambda a, b: F.call_function(function, a, b.bitwiseAND(63).cast("int"))


OPERATORS: dict[str, Callable[..., Column]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _unless_zero(_sql("div")),
    "%": _unless_zero(lambda a, b: a % b),
    "^": _power,
    "band": lambda a, b: a.bitwiseAND(b),
    "bor": lambda a, b: a.bitwiseOR(b),
    "bxor": lambda a, b: a.bitwiseXOR(b),
    "bshl": _shift("shiftleft"),
    "bshr": _shift("shiftright"),
    "bshru": _shift("shiftrightunsigned"),
    "land": lambda a, b: _flag((a != 0) & (b != 0)),
    "lor": lambda a, b: _flag((a != 0) | (b != 0)),
    "lxor": lambda a, b: _flag((a != 0) != (b != 0)),
    "neg": lambda a: -a,
    "bnot": F.bitwise_not,
    "lnot": lambda a: _flag(a == 0),
    "min": F.least,
    "max": F.greatest,
    "abs": F.abs,
}
"""Operator name (``herbrand.framework.syntax``) -> function of Columns; the Spark versions of
``herbrand.evaluators.arithmetic.OPERATORS``."""

COMPARATORS: dict[str, Callable[[Column, Column], Column]] = {
    "=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


def expression_column(expression: ir.Expr) -> Column:
    """The Column computing ``expression`` over a frame's columns c0, c1, ...: NULL where an
    operation fails. Raises EvaluationError for an operator without a Spark version."""
    if isinstance(expression, ir.ColumnRef):
        return F.col(column_name(expression.index))
    if isinstance(expression, Const):
        value = expression.value
        return _long(value) if isinstance(value, int) else F.lit(value)
    if isinstance(expression, Arith):
        operator = OPERATORS.get(expression.op)
        if operator is None:
            raise EvaluationError(f"operator {expression.op} has no Spark version")
        return operator(*map(expression_column, expression.args))
    raise EvaluationError(f"cannot evaluate {expression} over columns")


def comparison_column(op: str, left: ir.Expr, right: ir.Expr) -> Column:
    """The condition ``left op right`` (NULL, so not true, where either side fails)."""
    comparator = COMPARATORS.get(op)
    if comparator is None:
        raise EvaluationError(f"unknown comparison {op}")
    return comparator(expression_column(left), expression_column(right))
