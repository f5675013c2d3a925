"""Pass: comparisons become Filters, and ``x = expr`` with ``x`` not yet held by a column
becomes a Map appending ``expr`` (or, for ``x = y``, names y's column x too).

A comparison is lowered once the columns hold all its variables; lowering repeats until no
comparison is ready, so a chain of assignments is lowered in dependency order. Comparisons with
a pending aggregate wait for ``aggregates_to_nodes``.

Before::

    Pending head=(x, d) columns={x: 0, v: 1} body=[d = (v * 2), v < 100]
      Scan value/2

After::

    Pending head=(x, d) columns={x: 0, v: 1, d: 2} body=[]
      Filter $1 < 100
        Map ($1 * 2)
          Scan value/2
"""

from __future__ import annotations

from herbrand.framework.syntax import BodyElement, Comparison, Var
from herbrand.translators.ir import Filter, Map, Plan
from herbrand.translators.pending import Pending, lower_elements


def comparisons_to_filters(plan: Plan) -> Plan:
    """Lower the comparisons of every Pending of ``plan`` whose values are known."""
    return lower_elements(plan, _lower)


def _lower(pending: Pending, element: BodyElement) -> Pending | None:
    if not isinstance(element, Comparison):
        return None
    if pending.is_bound(element.left) and pending.is_bound(element.right):
        child = Filter(pending.child, element.op, pending.expression(element.left),
                       pending.expression(element.right))
        return pending.lowered(element, child)
    if element.op != "=":
        return None
    for var, value in ((element.left, element.right), (element.right, element.left)):
        if isinstance(var, Var) and not pending.is_bound(var) and pending.is_bound(value):
            if isinstance(value, Var):
                return pending.lowered(element, pending.child,
                                       (var.name, pending.column_of[value.name]))
            child = Map(pending.child, pending.expression(value))
            return pending.lowered(element, child, (var.name, child.arity - 1))
    return None
