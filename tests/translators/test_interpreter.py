"""The reference interpreter, node by node, on hand-made relations."""

from __future__ import annotations

import pytest

from herbrand.framework.parser import parse
from herbrand.framework.syntax import Arith, Const
from herbrand.translators.interpreter import evaluate
from herbrand.translators.ir import (
    Aggregate,
    Antijoin,
    ColumnRef,
    Filter,
    Join,
    Map,
    Product,
    Project,
    Scan,
    SelectByColumns,
    SelectByValue,
    TranslationError,
    Union,
    Unit,
)
from herbrand.translators.pending import Pending

R = {"e": {(1, 2), (2, 3), (3, 3)}, "n": {(1,), (2,), (4,)}, "z": set(), "f": {()}}
E, N = Scan("e", 2), Scan("n", 1)


@pytest.mark.parametrize(("plan", "rows"), [
    (Unit(), {()}),
    (Scan("missing", 3), set()),
    (SelectByValue(E, 1, 3), {(2, 3), (3, 3)}),
    (SelectByColumns(E, 0, 1), {(3, 3)}),
    (Filter(E, "<", ColumnRef(0), Arith("-", (ColumnRef(1), Const(0)))), {(1, 2), (2, 3)}),
    (Filter(E, "=", Arith("/", (ColumnRef(0), Const(0))), ColumnRef(0)), set()),
    (Map(N, Arith("*", (ColumnRef(0), Const(2)))), {(1, 2), (2, 4), (4, 8)}),
    (Map(N, Arith("/", (Const(4), Arith("-", (ColumnRef(0), Const(2)))))), {(1, -4), (4, 2)}),
    (Project(E, (1, Const("k"))), {(2, "k"), (3, "k")}),
    (Product(N, Scan("f", 0)), {(1,), (2,), (4,)}),
    (Product(N, Scan("z", 0)), set()),
    (Join(N, E, (0,), (0,)), {(1, 1, 2), (2, 2, 3)}),
    (Join(E, E, (1, 1), (0, 1)), {(2, 3, 3, 3), (3, 3, 3, 3)}),
    (Antijoin(N, E, (0,), (1,)), {(1,), (4,)}),
    (Antijoin(N, Scan("f", 0), (), ()), set()),
    (Antijoin(N, Scan("z", 0), (), ()), {(1,), (2,), (4,)}),
    (Aggregate(N, E, (0,), (0,), "count", None), {(1, 1), (2, 1), (4, 0)}),
    (Aggregate(N, E, (0,), (0,), "sum", ColumnRef(1)), {(1, 2), (2, 3), (4, 0)}),
    (Aggregate(N, E, (0,), (0,), "max", ColumnRef(1)), {(1, 2), (2, 3)}),
    (Aggregate(N, E, (), (), "min", ColumnRef(1)), {(1, 2), (2, 2), (4, 2)}),
    (Union((N, Project(E, (1,)))), {(1,), (2,), (3,), (4,)}),
], ids=lambda p: type(p).__name__ if not isinstance(p, set) else "")
def test_nodes(plan, rows):
    assert evaluate(plan, R) == rows


def pending(text: str) -> Pending:
    return Pending.of(parse(text).rules[0])


def test_pending_is_the_rule():
    assert evaluate(pending("p(x, z) :- e(x, y), e(y, z)."), R) == {(1, 3), (2, 3), (3, 3)}
    assert evaluate(pending("p(y) :- n(x), y = x + 1, !n(y)."), R) == {(3,), (5,)}
    assert evaluate(pending("p(x, c) :- n(x), c = count : { e(x, _) }."), R) == {
        (1, 1), (2, 1), (4, 0)}
    assert evaluate(pending("p(s) :- s = sum y : { e(_, y) }."), R) == {(8,)}


def test_pending_with_unbound_variables_raises():
    with pytest.raises(TranslationError, match="unbound"):
        evaluate(pending("p(x) :- n(x), y < x."), R)


def test_relation_of_another_arity_raises():
    with pytest.raises(ValueError, match="arity"):
        evaluate(Scan("e", 3), R)
