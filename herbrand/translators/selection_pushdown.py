"""Pass: every selection (SelectByValue, SelectByColumns, Filter) moves as far down the plan as
its columns allow: into the side of a Product or Join that holds all of them, through a Project
(renumbered), below a Map or Aggregate that it does not read the new column of, into the left
of an Antijoin, and below other selections. A column equality across the two sides of a Product
or Join becomes a join key there (Algorithm 1, productToJoin); other conditions across both
sides stay above it, unless reading the other side's column of a join key instead (equal in
every joined row) puts it on one side.

Before::

    Project [0, 3]
      Filter $3 != $1
        Filter $0 < 2
          Join left=[1] right=[0]
            Scan edge/2
            Scan edge/2

After (``$1`` equals ``$2`` in every joined row)::

    Project [0, 3]
      Join left=[1] right=[0]
        Filter $0 < 2
          Scan edge/2
        Filter $1 != $0
          Scan edge/2
"""

from __future__ import annotations

from herbrand.framework.syntax import Const
from herbrand.translators.ir import (
    Aggregate,
    Antijoin,
    Join,
    Map,
    Plan,
    Product,
    Project,
    SelectByColumns,
    Selection,
    transform,
)


def push_down_selections(plan: Plan) -> Plan:
    """Move every selection of ``plan`` as low as it goes. O(nodes × depth)."""
    return transform(plan, lambda node: sink(node) if isinstance(node, Selection) else node)


def sink(selection: Selection) -> Plan:
    """``selection`` over its child, with the selection moved as low as it goes."""
    return _below(selection, selection.child) or selection


def place(selection: Selection, child: Plan) -> Plan:
    """The condition of ``selection`` applied to ``child``, as low in it as it goes."""
    return _below(selection, child) or selection.with_children(child)


def _below(selection: Selection, child: Plan) -> Plan | None:
    """``child`` with the selection moved strictly inside it, or None if it cannot be."""
    columns = selection.columns
    if not columns:
        return None
    if isinstance(child, (Product, Join)):
        return _into_sides(selection, child)
    if isinstance(child, Selection):
        below = _below(selection, child.child)
        return None if below is None else child.with_children(below)
    if isinstance(child, Project):
        outputs = child.outputs
        if any(isinstance(outputs[c], Const) for c in columns):
            return None
        return child.with_children(place(selection.remap(outputs.__getitem__), child.child))
    if isinstance(child, Antijoin):
        return child.with_children(place(selection, child.left), child.right)
    if isinstance(child, (Map, Aggregate)) and child.arity - 1 not in columns:
        first, *rest = child.children
        return child.with_children(place(selection, first), *rest)
    return None


def _into_sides(selection: Selection, child: Product | Join) -> Plan | None:
    columns, width = selection.columns, child.left.arity
    if max(columns) < width:
        return child.with_children(place(selection, child.left), child.right)
    if min(columns) >= width:
        shifted = selection.remap(lambda c: c - width)
        return child.with_children(child.left, place(shifted, child.right))
    if isinstance(selection, SelectByColumns):
        left, right = sorted(columns)
        keys = (child.left_keys, child.right_keys) if isinstance(child, Join) else ((), ())
        return Join(child.left, child.right, (*keys[0], left), (*keys[1], right - width))
    if isinstance(child, Join):
        pairs = list(zip(child.left_keys, (width + r for r in child.right_keys), strict=True))
        for equal in ({r: left for left, r in pairs}, dict(pairs)):
            moved = selection.remap(lambda c, equal=equal: equal.get(c, c))
            if max(moved.columns) < width or min(moved.columns) >= width:
                return _into_sides(moved, child)
    return None
