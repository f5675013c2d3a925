"""The relational-algebra plan IR: immutable, hashable trees of frozen dataclasses.

Every node declares its children as data (``child_fields``, the names of its plan-valued fields)
and its output ``arity``; output columns are numbered from 0. ``walk`` and ``transform`` traverse
any plan, so a rewrite pass handles only the node types it cares about. Nodes and their output
columns:

    Unit()                                      none; exactly one (empty) row
    Scan(relation, arity)                       the relation's columns
    SelectByValue(child, column, value)         child's; rows with child[column] == value
    SelectByColumns(child, left, right)         child's; rows with child[left] == child[right]
    Filter(child, op, left, right)              child's; rows where ``left op right`` holds
    Map(child, expression)                      child's, then the expression's value
    Project(child, outputs)                     one per output: a child column index or a Const
    Product(left, right)                        left's, then right's
    Join(left, right, left_keys, right_keys)    left's, then right's; pairs equal on the keys
    Antijoin(left, right, left_keys, right_keys) left's; left rows with no right row equal on keys
    Aggregate(child, body, child_keys, body_keys, function, target)
                                                child's, then the aggregate's value
    Union(inputs)                               the inputs' (all of one arity)
    Pending(...)                                a rule part-way through lowering (pending.py)

Expressions (``Expr``) are terms over columns: ``ColumnRef(i)``, and ``syntax.Const`` and
``syntax.Arith`` (operator names of ``herbrand.framework.syntax``) whose arguments are
expressions. Every plan is a set of rows: operators never produce duplicates.

Values: constants keep the syntax's values, an int for a number and a str for a symbol. An
evaluator that stores symbols as ids of a Database's SymbolTable runs
``encode_symbols.encode_symbols(plan, database.symbols)`` once before running the plan.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from herbrand.framework.errors import HerbrandAnalysisError
from herbrand.framework.syntax import Arith, Const

AGGREGATE_FUNCTIONS = ("count", "sum", "min", "max")


class TranslationError(HerbrandAnalysisError):
    """A rule that cannot be lowered to relational algebra (a variable is never bound)."""


# ---------------------------------------------------------------------------------------------
# Expressions over columns
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ColumnRef:
    """The value of column ``index`` of the row at hand."""

    index: int

    def __str__(self) -> str:
        return f"${self.index}"


Expr = ColumnRef | Const | Arith


def expression_columns(expression: Expr | None) -> Iterator[int]:
    """The column indexes an expression reads."""
    if isinstance(expression, ColumnRef):
        yield expression.index
    elif isinstance(expression, Arith):
        for arg in expression.args:
            yield from expression_columns(arg)


def remap_expression(expression: Expr, column: Callable[[int], int]) -> Expr:
    """``expression`` with every column i read as ``column(i)``."""
    if isinstance(expression, ColumnRef):
        return ColumnRef(column(expression.index))
    if isinstance(expression, Arith):
        return Arith(expression.op, tuple(remap_expression(a, column) for a in expression.args))
    return expression


def _columns(indexes) -> str:
    return "[" + ", ".join(map(str, indexes)) + "]"


# ---------------------------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------------------------


class Node:
    """Base of plan nodes: children as data, ``arity``, and a one-line ``label`` for printing.

    A child field holds a plan, or a tuple of plans (``Union.inputs``).
    """

    child_fields: ClassVar[tuple[str, ...]] = ()
    arity: int  # the number of output columns: a field or a property of each node type

    @property
    def children(self) -> tuple[Plan, ...]:
        out: list[Plan] = []
        for name in self.child_fields:
            value = getattr(self, name)
            out.extend(value if isinstance(value, tuple) else (value,))
        return tuple(out)

    def with_children(self, *children: Plan) -> Plan:
        """The same node over ``children`` (in the order of ``children``)."""
        changes, rest = {}, list(children)
        for name in self.child_fields:
            if isinstance(getattr(self, name), tuple):
                count = len(getattr(self, name))
                changes[name], rest = tuple(rest[:count]), rest[count:]
            else:
                changes[name] = rest.pop(0)
        return dataclasses.replace(self, **changes)

    def label(self) -> str:
        return type(self).__name__


@dataclass(frozen=True)
class Unit(Node):
    """The relation with one empty row: the input of a body without positive atoms."""

    arity: ClassVar[int] = 0


@dataclass(frozen=True)
class Scan(Node):
    """Every row of ``relation``."""

    relation: str
    arity: int

    def label(self) -> str:
        return f"Scan {self.relation}/{self.arity}"


class Selection(Node):
    """A node keeping the child rows that satisfy a condition on their columns."""

    child_fields = ("child",)

    @property
    def arity(self) -> int:
        return self.child.arity

    @property
    def columns(self) -> frozenset[int]:
        """The columns the condition reads."""
        raise NotImplementedError

    def remap(self, column: Callable[[int], int]) -> Selection:
        """The same condition with every column i read as ``column(i)`` (same child)."""
        raise NotImplementedError


@dataclass(frozen=True)
class SelectByValue(Selection):
    child: Plan
    column: int
    value: int | str

    @property
    def columns(self) -> frozenset[int]:
        return frozenset({self.column})

    def remap(self, column: Callable[[int], int]) -> Selection:
        return dataclasses.replace(self, column=column(self.column))

    def label(self) -> str:
        return f"SelectByValue ${self.column} = {Const(self.value)}"


@dataclass(frozen=True)
class SelectByColumns(Selection):
    child: Plan
    left: int
    right: int

    @property
    def columns(self) -> frozenset[int]:
        return frozenset({self.left, self.right})

    def remap(self, column: Callable[[int], int]) -> Selection:
        return dataclasses.replace(self, left=column(self.left), right=column(self.right))

    def label(self) -> str:
        return f"SelectByColumns ${self.left} = ${self.right}"


@dataclass(frozen=True)
class Filter(Selection):
    """Rows where ``left op right``, op in ``syntax.COMPARISON_OPS``; a row whose expression
    fails (division by zero) is dropped."""

    child: Plan
    op: str
    left: Expr
    right: Expr

    @property
    def columns(self) -> frozenset[int]:
        return frozenset(expression_columns(self.left)) | frozenset(expression_columns(self.right))

    def remap(self, column: Callable[[int], int]) -> Selection:
        return dataclasses.replace(self, left=remap_expression(self.left, column),
                                   right=remap_expression(self.right, column))

    def label(self) -> str:
        return f"Filter {self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class Map(Node):
    """Appends ``expression``'s value to each row; rows where it fails are dropped."""

    child: Plan
    expression: Expr
    child_fields = ("child",)

    @property
    def arity(self) -> int:
        return self.child.arity + 1

    def label(self) -> str:
        return f"Map {self.expression}"


@dataclass(frozen=True)
class Project(Node):
    """Each output column is a child column (an int) or a constant; a computed value (a head
    expression) is a column that a Map below appends."""

    child: Plan
    outputs: tuple[int | Const, ...]
    child_fields = ("child",)

    @property
    def arity(self) -> int:
        return len(self.outputs)

    def label(self) -> str:
        shown = [f"const {o}" if isinstance(o, Const) else str(o) for o in self.outputs]
        return f"Project [{', '.join(shown)}]"


@dataclass(frozen=True)
class Product(Node):
    left: Plan
    right: Plan
    child_fields = ("left", "right")

    @property
    def arity(self) -> int:
        return self.left.arity + self.right.arity


@dataclass(frozen=True)
class Join(Node):
    """Pairs of rows with ``left[left_keys[i]] == right[right_keys[i]]`` for every i."""

    left: Plan
    right: Plan
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    child_fields = ("left", "right")

    @property
    def arity(self) -> int:
        return self.left.arity + self.right.arity

    def label(self) -> str:
        return f"Join left={_columns(self.left_keys)} right={_columns(self.right_keys)}"


@dataclass(frozen=True)
class Antijoin(Node):
    """The left rows that no right row equals on the keys (negation; no keys: right is empty)."""

    left: Plan
    right: Plan
    left_keys: tuple[int, ...]
    right_keys: tuple[int, ...]
    child_fields = ("left", "right")

    @property
    def arity(self) -> int:
        return self.left.arity

    def label(self) -> str:
        return f"Antijoin left={_columns(self.left_keys)} right={_columns(self.right_keys)}"


@dataclass(frozen=True)
class Aggregate(Node):
    """Appends to each child row r the reduction by ``function`` of ``target`` over the body rows
    b with ``b[body_keys] == r[child_keys]`` (the correlation).

    ``count`` ignores ``target`` (None) and counts those rows; ``sum`` adds the target's values
    over them (0 for none); ``min`` and ``max`` drop r when there are none. Body rows where the
    target fails are left out. Vectorised: group the body by ``body_keys``, reduce each group's
    target column, then join the child with the groups on the keys.
    """

    child: Plan
    body: Plan
    child_keys: tuple[int, ...]
    body_keys: tuple[int, ...]
    function: str
    target: Expr | None
    child_fields = ("child", "body")

    @property
    def arity(self) -> int:
        return self.child.arity + 1

    def label(self) -> str:
        reduced = self.function if self.target is None else f"{self.function} {self.target}"
        return (f"Aggregate {reduced} child={_columns(self.child_keys)} "
                f"body={_columns(self.body_keys)}")


@dataclass(frozen=True)
class Union(Node):
    inputs: tuple[Plan, ...]
    child_fields = ("inputs",)

    @property
    def arity(self) -> int:
        return self.inputs[0].arity


Plan = Node

# ---------------------------------------------------------------------------------------------
# Traversal and construction
# ---------------------------------------------------------------------------------------------


def walk(plan: Plan, depth: int = 0) -> Iterator[tuple[Plan, int]]:
    """Every node of ``plan`` with its depth, pre-order (a node before its children)."""
    yield plan, depth
    for child in plan.children:
        yield from walk(child, depth + 1)


def transform(plan: Plan, rewrite: Callable[[Plan], Plan]) -> Plan:
    """Post-order rewrite: ``rewrite`` sees each node after its children were rewritten.

    Unchanged subtrees are kept as they are (no copy). O(nodes) calls of ``rewrite``.
    """
    children = plan.children
    rewritten = tuple(transform(child, rewrite) for child in children)
    if any(new is not old for new, old in zip(rewritten, children, strict=True)):
        plan = plan.with_children(*rewritten)
    return rewrite(plan)


def product(left: Plan, right: Plan) -> Plan:
    """``left`` × ``right``, where Unit is the identity."""
    if isinstance(left, Unit):
        return right
    return left if isinstance(right, Unit) else Product(left, right)


def project(child: Plan, outputs: tuple[int | Const, ...]) -> Plan:
    """``Project(child, outputs)``, merged into a Project child, and omitted when it keeps
    every column in order."""
    if isinstance(child, Project):
        inner = child.outputs
        outputs = tuple(o if isinstance(o, Const) else inner[o] for o in outputs)
        child = child.child
    if outputs == tuple(range(child.arity)):
        return child
    return Project(child, outputs)
