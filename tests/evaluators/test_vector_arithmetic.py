"""The vectorised arithmetic against the scalar reference (``arithmetic.OPERATORS``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.evaluators.arithmetic import OPERATORS
from herbrand.evaluators.vector_arithmetic import vector_operation

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
OPERANDS = st.sampled_from([0, 1, -1, 2, -2, 3, -7, 7, 63, 64, 65, INT64_MIN, INT64_MAX,
                            INT64_MIN + 1, 2**32, -(2**32)]) | st.integers(INT64_MIN, INT64_MAX)
BINARY = [op for op in OPERATORS if op not in ("neg", "bnot", "lnot", "abs")]


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from(BINARY), a=st.lists(OPERANDS, min_size=1, max_size=8),
       data=st.data())
def test_vector_operations_match_the_scalar_table(op, a, data):
    b = data.draw(st.lists(OPERANDS, min_size=len(a), max_size=len(a)))
    if op == "^":
        b = [v % 70 - 2 for v in b]
    values, valid = vector_operation(op, [np.array(a, dtype=np.int64),
                                          np.array(b, dtype=np.int64)])
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        expected = OPERATORS[op](x, y)
        ok = True if valid is None else bool(valid[i])
        assert ok == (expected is not None), (op, x, y)
        if expected is not None:
            assert int(values[i]) == expected, (op, x, y)


@pytest.mark.parametrize("op", ["neg", "bnot", "lnot", "abs"])
def test_unary_operations_match_the_scalar_table(op):
    a = [0, 1, -1, 5, -5, INT64_MIN, INT64_MAX]
    values, valid = vector_operation(op, [np.array(a, dtype=np.int64)])
    assert valid is None
    assert [int(v) for v in values] == [OPERATORS[op](x) for x in a]
