"""Translator plans lowered to the native interpreter's arrays: ``lower_rule`` and ``Program``.

A rule plan runs natively when it is a left-deep pipeline, which is what the translator's
join ordering produces: a first atom (a Scan, possibly a delta, or Unit), then joins, products
and antijoins whose right side is one atom (a Scan under selections by value or by column),
with selections, filters, maps and a final projection anywhere along the way. Each atom becomes
a *level* of nested loops:

    Project [0, 5]                              level 0: scan @delta:m (its delta range)
      Join left=[2] right=[0]                     code: $1 = 0
        SelectByValue $1 = 0                    level 1: probe m keyed on (0, 1) with ($2, 0)
          Scan @delta:m/3                       head: m($0, 0, $5)
        SelectByValue $1 = 0
          Scan m/3

A right atom's selections by value join its key (so the index is keyed on the join columns and
the selected ones; the probe reads a view index when ``index_of`` gives one, see ``IndexOf``),
a relation read as a delta (``@delta:r``) is relation r restricted to its
delta range, and a column that is a key takes its value from the key instead of a register.
Aggregates, unions and joins whose right side is not one atom are not lowered (``lower_rule``
returns None): the native evaluator runs those rules with the batch executor. Every function is
pure; the encoded values are frozen dataclasses and tuples. Cost: linear in the plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from herbrand.evaluators.native import layout as L
from herbrand.framework.syntax import Arith, Const
from herbrand.translators import ir
from herbrand.translators.join_ordering import DELTA_PREFIX

Source = tuple[str, int]
"""Where a value comes from: ("register", r) or ("constant", value)."""

Resolve = Callable[[str, int], tuple[int, bool]]
"""(relation name, arity it is read with) -> (relation id, whether it is read as a delta range
of that relation); raises the evaluator's error for a missing relation or another arity."""

IndexOf = Callable[[int, tuple[int, ...], bool], tuple[int, int]]
"""(relation id, key columns, whole) -> (level kind, index id): an index of that relation keyed
on them, probed by a ``PROBE`` level, a unique index (``UNIQUE_PROBE``) when the key is every
column once, or a view index (``VIEW_PROBE``) when ``whole`` (a join's probe of the whole
relation; False for a delta's or a negation's, which read hash indexes)."""


@dataclass(frozen=True)
class Level:
    """One loop of a rule: a unit pass, a scan of a relation (its delta range when ``ranged``)
    or a probe of ``index`` with the values ``key``; ``binds`` (column, register) pairs; then
    ``code`` (operations of ``layout``, operands as encoded ints and sources)."""

    kind: int
    relation: int = -1
    index: int = -1
    ranged: bool = False
    key: tuple[Source, ...] = ()
    binds: tuple[tuple[int, int], ...] = ()
    code: tuple = ()


@dataclass(frozen=True)
class NativeRule:
    """A rule lowered to levels, the head's sources and its register count."""

    levels: tuple[Level, ...]
    head: tuple[Source, ...]
    registers: int

    def indexes(self) -> tuple[int, ...]:
        """Every index the rule probes (its levels and its negations), once each."""
        found = [level.index for level in self.levels if level.kind in (L.PROBE, L.VIEW_PROBE,
                                                                      L.UNIQUE_PROBE)]
        for level in self.levels:
            found += [operation[1] for operation in level.code if operation[0] == L.OP_ABSENT]
        return tuple(dict.fromkeys(found))


class NotLowered(Exception):
    """The plan is not a left-deep pipeline the interpreter runs."""


@dataclass
class _Builder:
    """Levels and registers built while walking a plan; ``layout`` maps the current node's
    output columns to sources."""

    resolve: Resolve
    index_of: IndexOf
    levels: list[Level] = field(default_factory=list)
    registers: int = 0

    def register(self) -> int:
        self.registers += 1
        return self.registers - 1

    def add_code(self, *operation) -> None:
        if not self.levels:
            raise NotLowered("a condition before any atom")
        last = self.levels[-1]
        self.levels[-1] = Level(last.kind, last.relation, last.index, last.ranged, last.key,
                                last.binds, last.code + (operation,))


def lower_rule(plan: ir.Plan, resolve: Resolve, index_of: IndexOf) -> NativeRule | None:
    """``plan`` (symbols encoded) as a NativeRule, or None when the interpreter cannot run it
    (see the module doc). ``resolve`` gives relation ids, ``index_of`` index ids (it creates
    the indexes the rule needs)."""
    builder = _Builder(resolve, index_of)
    try:
        layout = _lower(plan, builder)
    except NotLowered:
        return None
    return NativeRule(tuple(builder.levels), tuple(layout), builder.registers)


def _lower(node: ir.Plan, b: _Builder) -> list[Source]:
    """Lower ``node``; the sources of its output columns."""
    if isinstance(node, ir.Unit):
        b.levels.append(Level(L.UNIT))
        return []
    if isinstance(node, ir.Scan) or _atom(node) is not None and not b.levels:
        return _first_atom(node, b)
    if isinstance(node, ir.SelectByValue):
        layout = _lower(node.child, b)
        b.add_code(L.OP_EQUAL, layout[node.column], ("constant", node.value))
        return layout
    if isinstance(node, ir.SelectByColumns):
        layout = _lower(node.child, b)
        b.add_code(L.OP_EQUAL, layout[node.left], layout[node.right])
        return layout
    if isinstance(node, ir.Filter):
        layout = _lower(node.child, b)
        b.add_code(L.OP_COMPARE, L.COMPARISON_CODES[node.op], _expression(node.left, layout),
                   _expression(node.right, layout))
        return layout
    if isinstance(node, ir.Map):
        layout = _lower(node.child, b)
        target = b.register()
        b.add_code(L.OP_MAP, target, _expression(node.expression, layout))
        return layout + [("register", target)]
    if isinstance(node, ir.Project):
        layout = _lower(node.child, b)
        return [("constant", o.value) if isinstance(o, Const) else layout[o]
                for o in node.outputs]
    if isinstance(node, ir.Join | ir.Product):
        left_keys = node.left_keys if isinstance(node, ir.Join) else ()
        right_keys = node.right_keys if isinstance(node, ir.Join) else ()
        layout = _lower(node.left, b)
        return layout + _probe(node.right, [layout[c] for c in left_keys], right_keys, b)
    if isinstance(node, ir.Antijoin):
        layout = _lower(node.left, b)
        _absent(node.right, [layout[c] for c in node.left_keys], node.right_keys, b)
        return layout
    raise NotLowered(type(node).__name__)


def _atom(node: ir.Plan) -> tuple[ir.Scan, list[ir.Selection]] | None:
    """A Scan under selections (by value, by column, filters: selection pushdown puts them on
    the atom they test): (the scan, the selections, outermost first), else None."""
    selections = []
    while isinstance(node, ir.Selection):
        selections.append(node)
        node = node.child
    return (node, selections) if isinstance(node, ir.Scan) else None


def _select(selection: ir.Selection, layout: list[Source], b: _Builder) -> None:
    """The code testing a selection over an atom's columns (``layout``)."""
    if isinstance(selection, ir.SelectByValue):
        b.add_code(L.OP_EQUAL, layout[selection.column], ("constant", selection.value))
    elif isinstance(selection, ir.SelectByColumns):
        b.add_code(L.OP_EQUAL, layout[selection.left], layout[selection.right])
    else:
        b.add_code(L.OP_COMPARE, L.COMPARISON_CODES[selection.op],
                   _expression(selection.left, layout), _expression(selection.right, layout))


def _relation(scan: ir.Scan, b: _Builder) -> tuple[int, bool]:
    return b.resolve(scan.relation, scan.arity)


def _first_atom(node: ir.Plan, b: _Builder) -> list[Source]:
    """The first level: a scan binding every column (selections become its code)."""
    scan, selections = _atom(node)
    rel, ranged = _relation(scan, b)
    registers = [b.register() for _ in range(scan.arity)]
    b.levels.append(Level(L.SCAN, rel, ranged=ranged,
                          binds=tuple((c, r) for c, r in enumerate(registers))))
    layout: list[Source] = [("register", r) for r in registers]
    for selection in reversed(selections):
        _select(selection, layout, b)
    return layout


def _keyed(node: ir.Plan, values: list[Source], right_keys: tuple[int, ...],
           b: _Builder) -> tuple[ir.Scan, int, bool, list[int], list[Source], list]:
    """A right atom's relation, key columns and key values (join keys, then the columns its
    selections fix to a value), and its other selections (by column, filters)."""
    atom = _atom(node)
    if atom is None:
        raise NotLowered("the right side of a join is not one atom")
    scan, selections = atom
    rel, ranged = _relation(scan, b)
    columns, key = list(right_keys), list(values)
    others = []
    for selection in reversed(selections):
        if isinstance(selection, ir.SelectByValue):
            columns.append(selection.column)
            key.append(("constant", selection.value))
        else:
            others.append(selection)
    return scan, rel, ranged, columns, key, others


def _probe(node: ir.Plan, values: list[Source], right_keys: tuple[int, ...],
           b: _Builder) -> list[Source]:
    """A level probing the right atom ``node`` with ``values`` on ``right_keys`` (a scan of it
    when there is no key); the sources of its columns."""
    scan, rel, ranged, columns, key, others = _keyed(node, values, right_keys, b)
    layout: list[Source | None] = [None] * scan.arity
    for column, value in zip(columns, key, strict=True):
        if layout[column] is None:
            layout[column] = value
    binds = []
    for column in range(scan.arity):
        if layout[column] is None:
            register = b.register()
            binds.append((column, register))
            layout[column] = ("register", register)
    if columns:
        kind, index = b.index_of(rel, tuple(columns), not ranged)
        level = Level(kind, rel, index, ranged, tuple(key), tuple(binds))
    else:
        level = Level(L.SCAN, rel, ranged=ranged, binds=tuple(binds))
    b.levels.append(level)
    for column, value in zip(columns, key, strict=True):
        if layout[column] != value:  # a column that is a key twice: both values must agree
            b.add_code(L.OP_EQUAL, layout[column], value)
    for selection in others:
        _select(selection, layout, b)
    return layout


def _absent(node: ir.Plan, values: list[Source], right_keys: tuple[int, ...],
            b: _Builder) -> None:
    """Negation: the code that fails when the right atom has a row matching the key."""
    scan, rel, ranged, columns, key, others = _keyed(node, values, right_keys, b)
    if others or ranged:
        raise NotLowered("a negated atom with repeated variables or over a delta")
    if columns:
        b.add_code(L.OP_ABSENT, b.index_of(rel, tuple(columns), False)[1], tuple(key))
    else:
        b.add_code(L.OP_EMPTY, rel)


def _expression(expression: ir.Expr, layout: list[Source]) -> tuple:
    """An expression as postfix tokens over sources: ("source", s) and ("operator", op, n)."""
    if isinstance(expression, ir.ColumnRef):
        return (("source", layout[expression.index]),)
    if isinstance(expression, Const):
        return (("source", ("constant", expression.value)),)
    if isinstance(expression, Arith):
        if expression.op not in L.OPERATOR_CODES:
            raise NotLowered(f"operator {expression.op}")
        tokens: tuple = ()
        for argument in expression.args:
            tokens += _expression(argument, layout)
        return tokens + (("operator", L.OPERATOR_CODES[expression.op], len(expression.args)),)
    raise NotLowered(f"expression {expression}")


# ---------------------------------------------------------------------------------------------
# Programs: rules as the arrays of ``kernels``
# ---------------------------------------------------------------------------------------------


class Program:
    """NativeRules with their head relations, encoded as the tuple of int64 arrays that the
    kernels take (``layout.P_*`` fields). Rule i of the program is ``rules[i]``."""

    def __init__(self, rules: list[tuple[NativeRule, int, int]]):
        """``rules``: (rule, head relation id, id of the head relation's dedup index)."""
        self.rules = rules
        self._sources: list[int] = []
        self._constants: dict[int, int] = {}
        fields: dict[int, list[int]] = {f: [] for f in range(L.PROGRAM_FIELDS)}
        fields[L.P_RULE_LEVELS].append(0)
        fields[L.P_RULE_INDEXES].append(0)
        for rule, head, dedup in rules:
            fields[L.P_RULE_HEAD].append(head)
            fields[L.P_RULE_DEDUP].append(dedup)
            fields[L.P_RULE_HEAD_SOURCES] += [len(self._sources), len(rule.head)]
            self._sources += [self._source(s) for s in rule.head]
            fields[L.P_RULE_REGISTERS].append(rule.registers)
            indexes = rule.indexes()
            fields[L.P_RULE_INDEX_LIST] += indexes
            fields[L.P_RULE_INDEXES].append(len(fields[L.P_RULE_INDEX_LIST]))
            for level in rule.levels:
                self._level(level, fields)
            fields[L.P_RULE_LEVELS].append(len(fields[L.P_LEVEL_KIND]))
        fields[L.P_SOURCES] = self._sources
        constants = [0] * len(self._constants)
        for value, position in self._constants.items():
            constants[position] = value
        fields[L.P_CONSTANTS] = constants
        self.arrays = tuple(np.asarray(fields[f] or [0], dtype=np.int64)
                            for f in range(L.PROGRAM_FIELDS))
        levels = int(np.diff(self.arrays[L.P_RULE_LEVELS]).max(initial=0))
        self._scratch = (max(fields[L.P_RULE_REGISTERS], default=0),  # registers
                         # head tuples held before inserting, and their hashes
                         L.PENDING_MAX * (max(fields[L.P_RULE_HEAD_SOURCES][1::2], default=0)
                                          + 1),
                         levels, levels, L.MAX_STACK, L.MAX_STACK,  # cursors, stops, key, stack
                         levels)  # parts (a view probe's run)

    def scratch(self) -> tuple[np.ndarray, ...]:
        """New scratch arrays for ``kernels.run``, each sized for the program's largest rule:
        registers, head tuples, cursors and stops (one per level), a key, an expression stack,
        parts (one per level)."""
        return tuple(np.zeros(max(1, n), dtype=np.int64) for n in self._scratch)

    def _source(self, source: Source) -> int:
        kind, value = source
        if kind == "register":
            return value
        position = self._constants.setdefault(int(value), len(self._constants))
        return -position - 1

    def _sources_of(self, sources) -> tuple[int, int]:
        """Append ``sources`` to the sources array: (offset, count)."""
        offset = len(self._sources)
        self._sources += [self._source(s) for s in sources]
        return offset, len(sources)

    def _level(self, level: Level, fields: dict[int, list[int]]) -> None:
        fields[L.P_LEVEL_KIND].append(level.kind)
        fields[L.P_LEVEL_REL].append(level.relation)
        fields[L.P_LEVEL_INDEX].append(level.index)
        fields[L.P_LEVEL_RANGE].append(int(level.ranged))
        fields[L.P_LEVEL_KEYS] += self._sources_of(level.key)
        fields[L.P_LEVEL_BINDS] += [len(fields[L.P_BIND_COLUMN]), len(level.binds)]
        for column, register in level.binds:
            fields[L.P_BIND_COLUMN].append(column)
            fields[L.P_BIND_REGISTER].append(register)
        code = fields[L.P_CODE]
        start = len(code)
        for operation in level.code:
            code += self._operation(operation, fields)
        fields[L.P_LEVEL_CODE] += [start, len(code) - start]

    def _operation(self, operation: tuple, fields: dict[int, list[int]]) -> list[int]:
        op = operation[0]
        if op == L.OP_EQUAL:
            return [op, self._sources_of((operation[1],))[0],
                    self._sources_of((operation[2],))[0]]
        if op == L.OP_COMPARE and len(operation[2]) == len(operation[3]) == 1:
            # both sides a plain value: compared without the expression stack
            return [L.OP_COMPARE_SOURCES, operation[1],
                    self._sources_of((operation[2][0][1],))[0],
                    self._sources_of((operation[3][0][1],))[0]]
        if op == L.OP_COMPARE:
            return [op, operation[1], self._expression(operation[2], fields),
                    self._expression(operation[3], fields)]
        if op == L.OP_MAP:
            return [op, operation[1], self._expression(operation[2], fields)]
        if op == L.OP_ABSENT:
            return [op, operation[1], *self._sources_of(operation[2])]
        return list(operation)  # OP_EMPTY, OP_FAIL

    def _expression(self, tokens: tuple, fields: dict[int, list[int]]) -> int:
        expressions = fields[L.P_EXPRESSIONS]
        start = len(expressions)
        for token in tokens:
            if token[0] == "source":
                expressions += [L.E_SOURCE, self._sources_of((token[1],))[0]]
            else:
                expressions += [L.E_OPERATOR, token[1], token[2]]
        expressions.append(L.E_END)
        return start


def delta_relation(name: str) -> tuple[str, bool]:
    """(the relation a name reads, whether it reads its delta): ``@delta:r`` -> ("r", True)."""
    if name.startswith(DELTA_PREFIX):
        return name[len(DELTA_PREFIX):], True
    return name, False
