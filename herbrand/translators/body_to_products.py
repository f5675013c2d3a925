"""Pass: the positive atoms of a body become a product of Scans (Algorithm 1,
toIncompleteExpression).

Each positive atom appends a Scan to the Pending's child, left-deep, in body order. A variable's
first occurrence names its column; any other term at a column (a constant, a repeated variable,
an expression) names the column ``#<column>`` and adds its condition to the body, for the next
passes to lower. Wildcards name nothing; an atom of wildcards only (``c(_, _)``) only asks
whether its relation has a row, so it becomes the nullary projection ``Project [] (Scan c/2)``.

Before::

    Pending head=(x, z) columns={} body=[path(x, y), edge(y, z)]
      Unit

After::

    Pending head=(x, z) columns={x: 0, y: 1, #2: 2, z: 3} body=[y = #2]
      Product
        Scan path/2
        Scan edge/2
"""

from __future__ import annotations

from herbrand.framework.syntax import Comparison, Literal, Var, Wildcard
from herbrand.translators.ir import Plan, Scan, product, project, transform
from herbrand.translators.pending import Pending, column_variable


def body_to_products(plan: Plan) -> Plan:
    """Lower the positive atoms of every Pending of ``plan``. O(terms)."""
    return transform(plan, _lower)


def _lower(node: Plan) -> Plan:
    if not isinstance(node, Pending):
        return node
    child, columns, conditions, rest = node.child, node.column_of, [], []
    for element in node.body:
        if not isinstance(element, Literal) or element.negated:
            rest.append(element)
            continue
        offset = child.arity
        scan = Scan(element.atom.relation, element.atom.arity)
        if all(isinstance(t, Wildcard) for t in element.atom.terms):
            scan = project(scan, ())
        child = product(child, scan)
        for column, term in enumerate(element.atom.terms, start=offset):
            if isinstance(term, Wildcard):
                continue
            if isinstance(term, Var) and term.name not in columns:
                columns[term.name] = column
                continue
            name = column_variable(column)
            columns[name.name] = column
            conditions.append(Comparison("=", term, name) if isinstance(term, Var)
                              else Comparison("=", name, term))
    if child is node.child:
        return node
    return Pending(child, node.head, tuple(columns.items()), (*conditions, *rest))
