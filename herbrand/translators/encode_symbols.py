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

# the plans found to hold no symbol constant, by identity (plans are immutable, and
# ``pipeline.translate_rule`` keeps its plans, so the same objects come back); bounded
_PLAIN: dict[int, Plan] = {}
_PLAIN_LIMIT = 4096


def encode_symbols(plan: Plan, symbols: SymbolTable) -> Plan:
    """``plan`` with every symbol constant replaced by its id in ``symbols`` (interned if new).

    For fully lowered plans (no Pending node). O(nodes); a node without a symbol constant is
    kept as it is, not copied (a plan without any is returned itself: most plans of integer
    programs, which incremental engines encode per rule and per engine). A plan found to
    hold none is remembered (``_PLAIN``), so encoding it again, with any table, is O(1): an
    engine encodes each of its plans once (on RDFS LUBM(1), about 13 us a plan, 1.3 ms of a
    counting bootstrap).
    """
    if _PLAIN.get(id(plan)) is plan:
        return plan
    encoded = _encoded(plan, symbols)
    if encoded is plan:
        if len(_PLAIN) >= _PLAIN_LIMIT:
            _PLAIN.clear()
        _PLAIN[id(plan)] = plan
    return encoded


def _encoded(plan: Plan, symbols: SymbolTable) -> Plan:
    """``plan`` encoded (``encode_symbols``), by a walk of it."""

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
