"""Pass: a Pending whose body is fully lowered becomes a Project of its head (Algorithm 1,
projectHead); head expressions become Map columns first, head constants Project constants.

Before::

    Pending head=(x, 1, (y + 1)) columns={x: 0, y: 1} body=[]
      Scan r/2

After::

    Project [0, const 1, 2]
      Map ($1 + 1)
        Scan r/2

Raises TranslationError when something is left pending (a variable that nothing binds, or a
negated atom, comparison or aggregate over such variables) or the head uses an unbound variable.
"""

from __future__ import annotations

from herbrand.framework.syntax import Const, Var
from herbrand.translators.ir import Map, Plan, TranslationError, project, transform
from herbrand.translators.pending import Pending


def head_projection(plan: Plan) -> Plan:
    """Replace every Pending of ``plan`` by the projection of its head."""
    return transform(plan, _project)


def _project(node: Plan) -> Plan:
    if not isinstance(node, Pending):
        return node
    if node.body:
        unbound = node.unbound_variables()
        reason = f"variables {', '.join(unbound)} are never bound" if unbound else "unsupported"
        raise TranslationError(f"cannot lower {', '.join(map(str, node.body))}: {reason}")
    child, outputs = node.child, []
    for term in node.head:
        if not node.is_bound(term):
            raise TranslationError(f"head term {term} is not bound by the body")
        if isinstance(term, Const):
            outputs.append(term)
        elif isinstance(term, Var):
            outputs.append(node.column_of[term.name])
        else:
            child = Map(child, node.expression(term))
            outputs.append(child.arity - 1)
    return project(child, tuple(outputs))
