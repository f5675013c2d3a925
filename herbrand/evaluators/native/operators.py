"""Arithmetic for the native interpreter, as ``herbrand.evaluators.arithmetic`` defines it:
64-bit wrap-around, ``/`` truncating toward zero, ``%`` with the dividend's sign, division by
zero and negative exponents failing the derivation, shift counts modulo 64. Postfix
expressions run on a small stack; comparisons by code (``layout.COMPARISON_CODES``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from herbrand.evaluators.native.layout import (
    E_END,
    E_SOURCE,
)


@njit(inline="always")
def _truncating_divide(a, b):
    if b == -1:
        return -a
    q = a // b
    if q * b != a and (a < 0) != (b < 0):
        q += 1
    return q

@njit(inline="always")
def _remainder(a, b):
    if b == -1:
        return 0
    return a - _truncating_divide(a, b) * b

@njit(inline="always")
def _power(a, b):
    result = 1
    base = a
    while b > 0:
        if b & 1:
            result *= base
        base *= base
        b >>= 1
    return result

@njit(inline="always")
def _apply(op, stack, top, count):
    """Apply operator ``op`` to the ``count`` values on top of ``stack``; (new top, ok)."""
    if count == 1:
        a = stack[top - 1]
        if op == 16:
            stack[top - 1] = -a
        elif op == 17:
            stack[top - 1] = ~a
        elif op == 18:
            stack[top - 1] = 1 if a == 0 else 0
        elif op == 21:
            stack[top - 1] = -a if a < 0 else a
        # min and max of one value are the value
        return top, True
    if op == 19 or op == 20:
        best = stack[top - count]
        for j in range(top - count + 1, top):
            v = stack[j]
            if (op == 19 and v < best) or (op == 20 and v > best):
                best = v
        top -= count - 1
        stack[top - 1] = best
        return top, True
    a, b = stack[top - 2], stack[top - 1]
    top -= 1
    if op == 1:
        r = a + b
    elif op == 2:
        r = a - b
    elif op == 3:
        r = a * b
    elif op == 4:
        if b == 0:
            return top, False
        r = _truncating_divide(a, b)
    elif op == 5:
        if b == 0:
            return top, False
        r = _remainder(a, b)
    elif op == 6:
        if b < 0:
            return top, False
        r = _power(a, b)
    elif op == 7:
        r = a & b
    elif op == 8:
        r = a | b
    elif op == 9:
        r = a ^ b
    elif op == 10:
        r = a << (b & 63)
    elif op == 11:
        r = a >> (b & 63)
    elif op == 12:
        r = np.int64(np.uint64(a) >> np.uint64(b & 63))
    elif op == 13:
        r = 1 if a != 0 and b != 0 else 0
    elif op == 14:
        r = 1 if a != 0 or b != 0 else 0
    else:  # 15: lxor
        r = 1 if (a != 0) != (b != 0) else 0
    stack[top - 1] = r
    return top, True

@njit(inline="always")
def _source(sources, constants, registers, s):
    code = sources[s]
    return registers[code] if code >= 0 else constants[-code - 1]

@njit(inline="always")
def _fill_key(sources, constants, first, width, registers, key, at=0):
    """``key[at:at + width]`` := the values of sources ``first``, ... (a probe's key, a
    head)."""
    for j in range(width):
        key[at + j] = _source(sources, constants, registers, first + j)

@njit(inline="always")
def _evaluate(expressions, start, sources, constants, registers, stack):
    """The value of the postfix expression at ``expressions[start:]``; (value, ok)."""
    top = 0
    i = start
    while True:
        token = expressions[i]
        if token == E_END:
            return stack[0], True
        if token == E_SOURCE:
            stack[top] = _source(sources, constants, registers, expressions[i + 1])
            top += 1
            i += 2
        else:
            top, ok = _apply(expressions[i + 1], stack, top, expressions[i + 2])
            if not ok:
                return 0, False
            i += 3

@njit(inline="always")
def _compare(comparison, a, b):
    if comparison == 0:
        return a == b
    if comparison == 1:
        return a != b
    if comparison == 2:
        return a < b
    if comparison == 3:
        return a <= b
    if comparison == 4:
        return a > b
    return a >= b
