"""Pass: ``u = v`` with both variables held by columns (a variable repeated in the body)
becomes a SelectByColumns (Algorithm 1, equalityToSelection).

Before::

    Pending head=(x, z) columns={x: 0, y: 1, #2: 2, z: 3} body=[y = #2]
      Product
        Scan path/2
        Scan edge/2

After::

    Pending head=(x, z) columns={x: 0, y: 1, #2: 2, z: 3} body=[]
      SelectByColumns $1 = $2
        Product
          Scan path/2
          Scan edge/2
"""

from __future__ import annotations

from herbrand.framework.syntax import BodyElement, Comparison, Var
from herbrand.translators.ir import Plan, SelectByColumns
from herbrand.translators.pending import Pending, lower_elements


def repeated_variables_to_selections(plan: Plan) -> Plan:
    """Lower the variable-equals-variable comparisons of every Pending of ``plan``."""
    return lower_elements(plan, _lower)


def _lower(pending: Pending, element: BodyElement) -> Pending | None:
    if not isinstance(element, Comparison) or element.op != "=":
        return None
    left, right, columns = element.left, element.right, pending.column_of
    if not (isinstance(left, Var) and isinstance(right, Var)
            and left.name in columns and right.name in columns):
        return None
    return pending.lowered(element, SelectByColumns(pending.child, columns[left.name],
                                                    columns[right.name]))
