"""Pass: ``v = constant`` with ``v`` held by a column becomes a SelectByValue (Algorithm 1,
constantToSelection).

Before::

    Pending head=(x) columns={x: 0, #1: 1} body=[#1 = 5]
      Scan r/2

After::

    Pending head=(x) columns={x: 0, #1: 1} body=[]
      SelectByValue $1 = 5
        Scan r/2
"""

from __future__ import annotations

from herbrand.framework.syntax import BodyElement, Comparison, Const, Var
from herbrand.translators.ir import Plan, SelectByValue
from herbrand.translators.pending import Pending, lower_elements


def constants_to_selections(plan: Plan) -> Plan:
    """Lower the variable-equals-constant comparisons of every Pending of ``plan``."""
    return lower_elements(plan, _lower)


def _lower(pending: Pending, element: BodyElement) -> Pending | None:
    if not isinstance(element, Comparison) or element.op != "=":
        return None
    columns = pending.column_of
    for var, value in ((element.left, element.right), (element.right, element.left)):
        if isinstance(var, Var) and isinstance(value, Const) and var.name in columns:
            return pending.lowered(element, SelectByValue(pending.child, columns[var.name],
                                                          value.value))
    return None
