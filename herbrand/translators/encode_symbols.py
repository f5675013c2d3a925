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

    For fully lowered plans (no Pending node). O(nodes).
    """

    def encode(value):
        if isinstance(value, Const) and isinstance(value.value, str):
            return Const(symbols.intern(value.value))
        if isinstance(value, Arith):
            return Arith(value.op, tuple(map(encode, value.args)))
        if isinstance(value, tuple):
            return tuple(map(encode, value))
        return value

    def rewrite(node: Plan) -> Plan:
        if isinstance(node, SelectByValue) and isinstance(node.value, str):
            return dataclasses.replace(node, value=symbols.intern(node.value))
        fields = _CONSTANT_FIELDS.get(type(node), ())
        return dataclasses.replace(node, **{f: encode(getattr(node, f)) for f in fields})

    return transform(plan, rewrite)


# The fields of each node type that may hold constants (besides SelectByValue.value).
_CONSTANT_FIELDS: dict[type, tuple[str, ...]] = {
    Filter: ("left", "right"), Map: ("expression",), Project: ("outputs",), Aggregate: ("target",),
}
