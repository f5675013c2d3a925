"""The plan IR: values, children as data, arity, traversal, construction helpers, encoding."""

from __future__ import annotations

import pytest

from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Arith, Const
from herbrand.translators.encode_symbols import encode_symbols
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
    Union,
    Unit,
    expression_columns,
    product,
    project,
    remap_expression,
    transform,
    walk,
)

A, B = Scan("a", 2), Scan("b", 1)
PLUS = Arith("+", (ColumnRef(0), Const(1)))
NODES = [
    (Unit(), 0),
    (A, 2),
    (SelectByValue(A, 1, "x"), 2),
    (SelectByColumns(A, 0, 1), 2),
    (Filter(A, "<", ColumnRef(0), PLUS), 2),
    (Map(A, PLUS), 3),
    (Project(A, (1, Const(5), 1)), 3),
    (Product(A, B), 3),
    (Join(A, B, (0,), (0,)), 3),
    (Antijoin(A, B, (1,), (0,)), 2),
    (Aggregate(A, B, (0,), (0,), "sum", ColumnRef(0)), 3),
    (Union((B, Project(A, (0,)), B)), 1),
]


@pytest.mark.parametrize(("node", "arity"), NODES, ids=lambda n: type(n).__name__)
def test_arity_children_and_rebuilding(node, arity):
    assert node.arity == arity
    assert node.with_children(*node.children) == node
    assert hash(node) == hash(node.with_children(*node.children))
    assert len(node.children) == sum(
        len(v) if isinstance(v, tuple) else 1 for v in (getattr(node, f) for f in node.child_fields))


def test_with_children_replaces_in_order():
    c = Scan("c", 1)
    assert Union((A, B)).with_children(B, c) == Union((B, c))
    assert Join(A, B, (0,), (0,)).with_children(B, A) == Join(B, A, (0,), (0,))


def test_walk_is_pre_order_with_depths():
    plan = Project(Join(A, SelectByValue(B, 0, 1), (0,), (0,)), (0,))
    assert [(type(n).__name__, d) for n, d in walk(plan)] == [
        ("Project", 0), ("Join", 1), ("Scan", 2), ("SelectByValue", 2), ("Scan", 3)]


def test_transform_is_post_order_and_keeps_unchanged_subtrees():
    plan = Product(SelectByValue(A, 0, 1), B)
    seen = []
    assert transform(plan, lambda n: seen.append(type(n).__name__) or n) is plan
    assert seen == ["Scan", "SelectByValue", "Scan", "Product"]
    renamed = transform(plan, lambda n: Scan("z", n.arity) if n == B else n)
    assert renamed == Product(SelectByValue(A, 0, 1), Scan("z", 1))
    assert renamed.left is plan.left


def test_product_and_project_helpers():
    assert product(Unit(), A) is A and product(A, Unit()) is A
    assert product(A, B) == Product(A, B)
    assert project(A, (0, 1)) is A
    assert project(A, (1, 0)) == Project(A, (1, 0))
    assert project(Project(A, (1, 0, Const(3))), (2, 1)) == Project(A, (Const(3), 0))
    assert project(Project(A, (1, 0)), (1, 0)) is A


def test_expressions():
    expression = Arith("*", (ColumnRef(2), Arith("neg", (ColumnRef(0),))))
    assert sorted(expression_columns(expression)) == [0, 2]
    assert remap_expression(expression, lambda c: c + 1) == Arith(
        "*", (ColumnRef(3), Arith("neg", (ColumnRef(1),))))
    assert str(expression) == "($2 * -($0))"


def test_selections_report_and_remap_their_columns():
    for selection in (SelectByValue(A, 1, 0), SelectByColumns(A, 0, 1),
                      Filter(A, "<", ColumnRef(0), PLUS)):
        moved = selection.remap(lambda c: c + 10)
        assert moved.columns == frozenset(c + 10 for c in selection.columns)
        assert moved.child is selection.child


def test_encode_symbols_replaces_symbol_constants_only():
    symbols = SymbolTable(["b"])
    plan = Aggregate(
        Map(Filter(SelectByValue(Scan("r", 2), 0, "a"), "!=", ColumnRef(1), Const("b")),
            Arith("max", (ColumnRef(0), Const(7)))),
        Project(Scan("s", 1), (0, Const("c"))), (0,), (0,), "min", Const("b"))
    encoded = encode_symbols(plan, symbols)
    a, c = symbols.lookup("a"), symbols.lookup("c")
    assert encoded == Aggregate(
        Map(Filter(SelectByValue(Scan("r", 2), 0, a), "!=", ColumnRef(1), Const(0)),
            Arith("max", (ColumnRef(0), Const(7)))),
        Project(Scan("s", 1), (0, Const(c))), (0,), (0,), "min", Const(0))
    assert encode_symbols(encoded, symbols) == encoded


def test_encode_symbols_keeps_the_nodes_without_symbol_constants():
    symbols = SymbolTable()
    integers = Project(Map(Filter(A, "<", ColumnRef(1), Const(3)), PLUS), (0, Const(4), 2))
    assert encode_symbols(integers, symbols) is integers
    plan = Join(integers, Project(B, (0, Const("x"))), (0,), (0,))
    encoded = encode_symbols(plan, symbols)
    assert encoded.left is integers and encoded.right.outputs == (0, Const(symbols.lookup("x")))


def test_encode_symbols_of_a_plan_again_with_another_table():
    # a plan without symbol constants is itself again for any table (remembered by identity);
    # one with them is encoded by each table it is given
    integers = Project(Map(Filter(A, "<", ColumnRef(1), Const(3)), PLUS), (0, Const(4), 2))
    assert encode_symbols(integers, SymbolTable()) is integers
    assert encode_symbols(integers, SymbolTable(["z"])) is integers
    plan = Project(B, (0, Const("x")))
    first, second = SymbolTable(), SymbolTable(["y", "w"])
    assert encode_symbols(plan, first).outputs == (0, Const(first.lookup("x")))
    assert encode_symbols(plan, second).outputs == (0, Const(second.lookup("x")))
    assert encode_symbols(plan, first).outputs == (0, Const(0))
    assert second.lookup("x") == 2
