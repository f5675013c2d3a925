"""Pass: selections by column over products become joins (Algorithm 1, productToJoin).

Each SelectByColumns sinks to the lowest Product or Join whose two sides hold its two columns
and becomes a key pair there, turning a Product into a Join; one whose columns lie in a single
relation sinks onto it. Other selections stay where they are (see ``selection_pushdown``).

Before::

    Project [0, 3]
      SelectByColumns $1 = $2
        Product
          Scan path/2
          Scan edge/2

After::

    Project [0, 3]
      Join left=[1] right=[0]
        Scan path/2
        Scan edge/2
"""

from __future__ import annotations

from herbrand.translators.ir import Plan, SelectByColumns, transform
from herbrand.translators.selection_pushdown import sink


def selections_to_joins(plan: Plan) -> Plan:
    """Turn the column equalities of ``plan`` into join keys. O(nodes × depth)."""
    return transform(plan, lambda node: sink(node) if isinstance(node, SelectByColumns) else node)
