"""Pass: reorder the operands of every join region, most constrained first, never a cross
product where a join is possible.

A join region is a maximal subtree of Products, Joins and selections; its leaves are the
subplans below it (Scans, mostly). The leaves are chosen greedily, best first by:

1. sharing a column with the leaves already chosen (so a cross product happens only when no
   remaining leaf shares one);
2. reading a delta relation: a Scan of a relation named ``DELTA_PREFIX + name``, the tuples new
   in the last semi-naive iteration;
3. the most columns bound: equal to a chosen leaf's column, or selected by value (a Scan of
   a relation named by ``selection_name``, a relation's rows holding some constants without
   those columns, counts its constants as bound: they were selected by value before the
   plan);
4. the smallest size in the ``sizes`` hint (relation name -> rows; unknown counts as unbounded);
5. body order.

The leaves are rejoined left-deep: each joins those before it on every column equal to one of
theirs (column equalities are closed transitively, so ``a.x = b.x, a.x = c.x`` joins ``b`` and
``c`` on x). The region's other selections go back on top of it (``selection_pushdown`` moves
them down), then a Project restores the region's column order, merged into a parent Project.

Before (sizes={"big": 1000, "small": 10})::

    Project [0, 3]
      Join left=[1] right=[0]
        Scan big/2
        Scan small/2

After::

    Project [2, 1]
      Join left=[0] right=[1]
        Scan small/2
        Scan big/2
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from herbrand.translators.ir import (
    Join,
    Plan,
    Product,
    Project,
    Scan,
    SelectByColumns,
    SelectByValue,
    Selection,
    project,
)

DELTA_PREFIX = "@delta:"
"""The prefix of the name of the relation that holds a relation's tuples new in the last
semi-naive iteration (``@delta:path``); '@' cannot occur in a user relation name."""


SELECTION_PREFIX = "@selected:"
"""The prefix of the name of a relation that holds another's rows holding some constants,
without the constants' columns (``selection_name``)."""


def selection_name(relation: str, constants: tuple[tuple[int, int], ...]) -> str:
    """The name of the relation of ``relation``'s rows holding ``constants`` ((column, value)
    pairs, at least one), without those columns: join ordering counts its constants as bound
    columns, as it counts a selection by value of ``relation`` in the plan.

    >>> selection_name("@U:m", ((1, 4), (2, -3)))
    '@selected:@U:m:1=4,2=-3'
    """
    return SELECTION_PREFIX + relation + ":" + ",".join(f"{c}={v}" for c, v in constants)


def _selected_columns(name: str | None) -> int:
    """The number of constants a ``selection_name`` selected (0 for any other name)."""
    if name is None or not name.startswith(SELECTION_PREFIX):
        return 0
    return name.rsplit(":", 1)[1].count("=")


def order_joins(plan: Plan, *, sizes: Mapping[str, int] | None = None) -> Plan:
    """Reorder every join region of ``plan`` (see the module docstring).

    O(leaves² × arity) per region; the result has the same output columns as ``plan``.
    """
    sizes = sizes or {}

    def visit(node: Plan) -> Plan:
        if isinstance(node, (Product, Join, Selection)):
            region = _Region()
            region.add(node, 0)
            if len(region.leaves) > 1:
                return region.rebuild(visit, sizes)
        if not node.children:
            return node
        rebuilt = node.with_children(*map(visit, node.children))
        return project(rebuilt.child, rebuilt.outputs) if isinstance(rebuilt, Project) else rebuilt

    return visit(plan)


@dataclass
class _Region:
    """A join region flattened: leaves at their column offsets, column equalities and the other
    selections, all over the region's columns."""

    leaves: list[tuple[Plan, int]] = field(default_factory=list)
    equalities: list[tuple[int, int]] = field(default_factory=list)
    selections: list[Selection] = field(default_factory=list)

    def add(self, node: Plan, offset: int) -> None:
        if isinstance(node, (Product, Join)):
            width = node.left.arity
            self.add(node.left, offset)
            self.add(node.right, offset + width)
            if isinstance(node, Join):
                self.equalities += [(offset + left, offset + width + right)
                                    for left, right in zip(node.left_keys, node.right_keys,
                                                           strict=True)]
        elif isinstance(node, SelectByColumns):
            self.add(node.child, offset)
            self.equalities.append((offset + node.left, offset + node.right))
        elif isinstance(node, Selection):
            self.add(node.child, offset)
            self.selections.append(node.remap(lambda c: c + offset))
        else:
            self.leaves.append((node, offset))

    def classes(self) -> dict[int, int]:
        """Column -> the smallest column known equal to it (for the columns of equalities)."""
        parent: dict[int, int] = {}

        def find(column: int) -> int:
            while parent.get(column, column) != column:
                column = parent[column]
            return column

        for a, b in self.equalities:
            ra, rb = find(a), find(b)
            parent[max(ra, rb)] = min(ra, rb)
        return {c: find(c) for pair in self.equalities for c in pair}

    def order(self, classes: dict[int, int], sizes: Mapping[str, int]) -> list[int]:
        constant = {s.column for s in self.selections if isinstance(s, SelectByValue)}
        remaining, chosen, order = list(range(len(self.leaves))), set(), []

        def rank(index: int):
            leaf, offset = self.leaves[index]
            columns = range(offset, offset + leaf.arity)
            joined = sum(classes.get(c, c) in chosen for c in columns)
            name = leaf.relation if isinstance(leaf, Scan) else None
            bound = joined + sum(c in constant for c in columns) + _selected_columns(name)
            delta = name is not None and name.startswith(DELTA_PREFIX)
            return (joined == 0, not delta, -bound, sizes.get(name, math.inf), index)

        while remaining:
            best = min(remaining, key=rank)
            remaining.remove(best)
            order.append(best)
            leaf, offset = self.leaves[best]
            chosen |= {classes.get(c, c) for c in range(offset, offset + leaf.arity)}
        return order

    def rebuild(self, visit: Callable[[Plan], Plan], sizes: Mapping[str, int]) -> Plan:
        classes = self.classes()
        new_column: dict[int, int] = {}
        representative: dict[int, int] = {}
        plan: Plan | None = None
        equal_columns = []
        for index in self.order(classes, sizes):
            leaf, offset = self.leaves[index]
            base = 0 if plan is None else plan.arity
            left_keys, right_keys = [], []
            for i in range(leaf.arity):
                new_column[offset + i] = base + i
                known = representative.setdefault(classes.get(offset + i, offset + i), base + i)
                if known < base:
                    left_keys.append(known)
                    right_keys.append(i)
                elif known != base + i:
                    equal_columns.append((known, base + i))
            leaf = visit(leaf)
            if plan is None:
                plan = leaf
            elif left_keys:
                plan = Join(plan, leaf, tuple(left_keys), tuple(right_keys))
            else:
                plan = Product(plan, leaf)
        for left, right in equal_columns:
            plan = SelectByColumns(plan, left, right)
        for selection in self.selections:
            plan = selection.remap(new_column.__getitem__).with_children(plan)
        return project(plan, tuple(new_column[c] for c in range(plan.arity)))
