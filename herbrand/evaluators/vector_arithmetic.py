"""Vectorised arithmetic and comparisons over numpy batches, with the semantics of
``arithmetic`` (Soufflé's): a value is a (values, valid) pair, valid None when every row is
valid, a row whose operation fails (division by zero, a negative exponent) invalid. Used by the
relational evaluator's Map, Filter and Aggregate nodes and by provenance matching. O(n)
vectorised per operation; an operator without a numpy version falls back to the scalar one row
by row."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from herbrand.evaluators.arithmetic import COMPARATORS, OPERATORS
from herbrand.framework.errors import EvaluationError
from herbrand.framework.syntax import Arith, Const
from herbrand.translators import ir

Vector = tuple[np.ndarray, "np.ndarray | None"]


def _and(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None:
        return b
    return a if b is None else a & b


def _divide(a: np.ndarray, b: np.ndarray) -> Vector:
    valid = b != 0
    safe = np.where(valid & (b != -1), b, 1)
    quotient = np.floor_divide(a, safe)
    # floor -> truncation toward zero: step up where the division was inexact and negative
    quotient += ((quotient * safe != a) & ((a < 0) != (safe < 0))).astype(np.int64)
    return np.where(b == -1, -a, quotient), valid


def _modulo(a: np.ndarray, b: np.ndarray) -> Vector:
    valid = b != 0
    safe = np.where(valid & (b != -1), b, 1)
    return np.where(b == -1, 0, np.fmod(a, safe)), valid


def _power(a: np.ndarray, b: np.ndarray) -> Vector:
    valid = b >= 0
    return np.power(a, np.where(valid, b, 0)), valid


def _bool(mask: np.ndarray) -> np.ndarray:
    return mask.astype(np.int64)


def _unsigned_shift(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.view(np.uint64) >> (b & 63).astype(np.uint64)).view(np.int64)


# Operator name -> function of int64 arrays returning (values, valid mask or None); the numpy
# versions of ``substitution.OPERATORS`` (which remains the scalar reference).
VECTOR_OPERATORS = {
    "+": lambda a, b: (a + b, None),
    "-": lambda a, b: (a - b, None),
    "*": lambda a, b: (a * b, None),
    "/": _divide,
    "%": _modulo,
    "^": _power,
    "band": lambda a, b: (a & b, None),
    "bor": lambda a, b: (a | b, None),
    "bxor": lambda a, b: (a ^ b, None),
    "bshl": lambda a, b: (np.left_shift(a, b & 63), None),
    "bshr": lambda a, b: (np.right_shift(a, b & 63), None),
    "bshru": lambda a, b: (_unsigned_shift(a, b), None),
    "land": lambda a, b: (_bool((a != 0) & (b != 0)), None),
    "lor": lambda a, b: (_bool((a != 0) | (b != 0)), None),
    "lxor": lambda a, b: (_bool((a != 0) != (b != 0)), None),
    "neg": lambda a: (-a, None),
    "bnot": lambda a: (~a, None),
    "lnot": lambda a: (_bool(a == 0), None),
    "min": lambda *args: (np.minimum.reduce(args), None),
    "max": lambda *args: (np.maximum.reduce(args), None),
    "abs": lambda a: (np.abs(a), None),
}

VECTOR_COMPARATORS = {
    "=": np.equal, "!=": np.not_equal, "<": np.less,
    "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
}


def vector_operation(op: str, args: Sequence[np.ndarray]) -> Vector:
    """``op`` applied row-wise to int64 arrays: (values, valid mask or None). Operators without
    a numpy version fall back to ``substitution.OPERATORS`` row by row."""
    with np.errstate(all="ignore"):
        function = VECTOR_OPERATORS.get(op)
        if function is not None:
            values, valid = function(*args)
            return np.asarray(values, dtype=np.int64), valid
    scalar = OPERATORS[op]
    results = [scalar(*map(int, row)) for row in zip(*args, strict=True)]
    valid = np.array([r is not None for r in results], dtype=bool)
    values = np.array([0 if r is None else r for r in results], dtype=np.int64)
    return values, valid


def vector_value(expression: ir.Expr, batch: np.ndarray) -> Vector:
    """The value of ``expression`` for every row of ``batch``: (values, valid mask or None)."""
    n = batch.shape[1]
    if isinstance(expression, ir.ColumnRef):
        return batch[expression.index], None
    if isinstance(expression, Const):
        return np.full(n, expression.value, dtype=np.int64), None
    if isinstance(expression, Arith):
        values, valid = [], None
        for argument in expression.args:
            value, ok = vector_value(argument, batch)
            values.append(value)
            valid = _and(valid, ok)
        result, ok = vector_operation(expression.op, values)
        return result, _and(valid, ok)
    raise EvaluationError(f"cannot evaluate {expression} over columns")


def vector_compare(op: str, left: ir.Expr, right: ir.Expr, batch: np.ndarray) -> np.ndarray:
    """The rows of ``batch`` where ``left op right`` holds (a failed side fails the row)."""
    if op not in COMPARATORS:
        raise EvaluationError(f"unknown comparison {op}")
    a, valid_a = vector_value(left, batch)
    b, valid_b = vector_value(right, batch)
    mask = VECTOR_COMPARATORS[op](a, b)
    valid = _and(valid_a, valid_b)
    return mask if valid is None else mask & valid
