"""Scalar int64 arithmetic and comparisons with Soufflé's semantics, shared by the evaluators.

Results wrap to signed 64 bits; ``/`` truncates toward zero and ``%`` takes the sign of the
dividend (C semantics); division or modulo by zero and a negative exponent fail (None: no
derivation); shift counts are taken modulo 64. Every operation is O(1) on 64-bit operands.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

from herbrand.framework.errors import EvaluationError
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Arith, Const, Term

_MASK64 = (1 << 64) - 1
_SIGN64 = 1 << 63


def wrap64(value: int) -> int:
    """``value`` reduced to a signed 64-bit integer (two's complement wrap-around)."""
    return ((value + _SIGN64) & _MASK64) - _SIGN64


def _divide(a: int, b: int) -> int | None:
    if b == 0:
        return None
    quotient = abs(a) // abs(b)
    return wrap64(quotient if (a < 0) == (b < 0) else -quotient)


def _modulo(a: int, b: int) -> int | None:
    if b == 0:
        return None
    remainder = abs(a) % abs(b)
    return remainder if a >= 0 else -remainder


def _power(a: int, b: int) -> int | None:
    return None if b < 0 else wrap64(pow(a, b, 1 << 64))


OPERATORS: dict[str, Callable[..., int | None]] = {
    "+": lambda a, b: wrap64(a + b),
    "-": lambda a, b: wrap64(a - b),
    "*": lambda a, b: wrap64(a * b),
    "/": _divide,
    "%": _modulo,
    "^": _power,
    "band": lambda a, b: a & b,
    "bor": lambda a, b: a | b,
    "bxor": lambda a, b: a ^ b,
    "bshl": lambda a, b: wrap64(a << (b & 63)),
    "bshr": lambda a, b: a >> (b & 63),
    "bshru": lambda a, b: wrap64((a & _MASK64) >> (b & 63)),
    "land": lambda a, b: int(a != 0 and b != 0),
    "lor": lambda a, b: int(a != 0 or b != 0),
    "lxor": lambda a, b: int((a != 0) != (b != 0)),
    "neg": lambda a: wrap64(-a),
    "bnot": lambda a: ~a,
    "lnot": lambda a: int(a == 0),
    "min": lambda *values: min(values),
    "max": lambda *values: max(values),
    "abs": lambda a: wrap64(abs(a)),
}
"""Operator name (see ``herbrand.framework.syntax``) -> function of int64 values returning the
int64 result, or None when the operation fails (division by zero, negative exponent)."""

COMPARATORS: dict[str, Callable[[int, int], bool]] = {
    "=": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def apply_operator(op: str, values: Sequence[int]) -> int | None:
    """The int64 result of ``op`` on ``values``, or None when the operation fails. O(1) for
    64-bit operands (``^`` is O(log exponent))."""
    return OPERATORS[op](*values)


def evaluate_ground_term(term: Term, symbols: SymbolTable) -> int | None:
    """The int64 value of a ground term: a constant (symbols interned in ``symbols``) or
    arithmetic on constants; None when the arithmetic fails. EvaluationError for anything else.

    >>> evaluate_ground_term(Arith("/", (Const(-7), Const(2))), SymbolTable())
    -3
    """
    if isinstance(term, Const):
        return symbols.intern(term.value) if isinstance(term.value, str) else term.value
    if isinstance(term, Arith):
        values = [evaluate_ground_term(arg, symbols) for arg in term.args]
        return None if None in values else apply_operator(term.op, values)
    raise EvaluationError(f"{term} is not a ground term")
