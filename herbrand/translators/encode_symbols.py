"""Symbol constants of a plan to the ids of a Database's SymbolTable.

Plans keep symbol constants as strings (``SelectByValue $1 = "alice"``); an evaluator that
stores every value as an int64 encodes a plan once, with the SymbolTable of the Database it
runs on, before running it.
"""

from __future__ import annotations

import dataclasses

from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Arith, Const
from herbrand.translators.ir import Aggregate, Filter, Map, Plan, Project, SelectByValue, transform


def encode_symbols(plan: Plan, symbols: SymbolTable) -> Plan:
    """``plan`` with every symbol constant replaced by its id in ``symbols`` (interned if new).

    For fully lowered plans (no Pending node). O(nodes); a node without a symbol constant is
    kept as it is, not copied (a plan without any is returned itself: most plans of integer
    programs, which incremental engines encode per rule and per engine).
    """

    def encode(value):
        if isinstance(value, Const) and isinstance(value.value, str):
            return Const(symbols.intern(value.value))
        if isinstance(value, Arith):
            args = encoded(value.args)
            return value if args is value.args else Arith(value.op, args)
        if isinstance(value, tuple):
            return encoded(value)
        return value

    def encoded(values: tuple) -> tuple:
        """``values`` encoded: the same tuple when none of them changes."""
        out = tuple(map(encode, values))
        return values if all(new is old for new, old in zip(out, values, strict=True)) else out

    def rewrite(node: Plan) -> Plan:
        if isinstance(node, SelectByValue) and isinstance(node.value, str):
            return dataclasses.replace(node, value=symbols.intern(node.value))
        changes = {}
        for field in _CONSTANT_FIELDS.get(type(node), ()):
            value = getattr(node, field)
            new = encode(value)
            if new is not value:
                changes[field] = new
        return dataclasses.replace(node, **changes) if changes else node

    return transform(plan, rewrite)


# The fields of each node type that may hold constants (besides SelectByValue.value).
_CONSTANT_FIELDS: dict[type, tuple[str, ...]] = {
    Filter: ("left", "right"), Map: ("expression",), Project: ("outputs",), Aggregate: ("target",),
}
