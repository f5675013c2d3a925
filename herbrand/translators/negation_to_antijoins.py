"""Pass: a negated atom becomes an Antijoin, once the columns hold all its variables.

Variables become keys, wildcards are not keys, constants become selections on the right side,
and an expression becomes a Map on the left side whose column is a key.

Before::

    Pending head=(x, y) columns={x: 0, y: 1} body=[!path(x, y), !blocked(x, 3, _)]
      Product
        Scan node/1
        Scan node/1

After::

    Pending head=(x, y) columns={x: 0, y: 1} body=[]
      Antijoin left=[0] right=[0]
        Antijoin left=[0, 1] right=[0, 1]
          Product
            Scan node/1
            Scan node/1
          Scan path/2
        SelectByValue $1 = 3
          Scan blocked/3
"""

from __future__ import annotations

from herbrand.framework.syntax import BodyElement, Const, Literal, Var, Wildcard
from herbrand.translators.ir import Antijoin, Map, Plan, Scan, SelectByValue
from herbrand.translators.pending import Pending, lower_elements


def negation_to_antijoins(plan: Plan) -> Plan:
    """Lower the negated atoms of every Pending of ``plan`` whose values are known."""
    return lower_elements(plan, _lower)


def _lower(pending: Pending, element: BodyElement) -> Pending | None:
    if not isinstance(element, Literal) or not element.negated:
        return None
    terms = element.atom.terms
    if not all(isinstance(t, Wildcard) or pending.is_bound(t) for t in terms):
        return None
    left, right = pending.child, Scan(element.atom.relation, element.atom.arity)
    left_keys, right_keys = [], []
    for column, term in enumerate(terms):
        if isinstance(term, Const):
            right = SelectByValue(right, column, term.value)
        elif isinstance(term, Var):
            left_keys.append(pending.column_of[term.name])
            right_keys.append(column)
        elif not isinstance(term, Wildcard):
            left = Map(left, pending.expression(term))
            left_keys.append(left.arity - 1)
            right_keys.append(column)
    return pending.lowered(element, Antijoin(left, right, tuple(left_keys), tuple(right_keys)))
