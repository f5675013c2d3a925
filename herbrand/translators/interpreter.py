"""A reference interpreter of plans over Python sets: obviously correct, not fast.

``evaluate(plan, relations)`` is the set of rows of ``plan`` over ``relations`` (name -> rows as
tuples; a missing relation is empty). Every node is evaluated straight from its definition in
``herbrand.translators.ir``; joins, antijoins and aggregates group the right side (the body)
by its key columns first. A Pending node is evaluated as the rule it stands for: each child row
is extended by a search over the pending body elements, taking at each step the first element
whose inputs are known, as the substitution evaluator does.

Values are Python ints and strs as the relations hold them (symbols are not encoded).
Arithmetic follows the evaluators: results wrap to signed 64 bits, ``/`` truncates toward zero,
``%`` takes the dividend's sign, and a division by zero or a negative exponent fails and drops
the row. Cost: a Product of n and m rows is O(n·m); a Join O(n + m + output); a Pending
node O(child rows × the product of the sizes of its pending atoms).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Iterator, Mapping

from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    Atom,
    BodyElement,
    Comparison,
    Const,
    Term,
    Var,
    Wildcard,
    term_aggregates,
    term_variables,
)
from herbrand.translators import ir
from herbrand.translators.pending import (
    Pending,
    aggregate_correlation,
    level_variables,
    name_wildcards,
)

Row = tuple
Env = dict[Var, object]
# The body being solved and the variables bound on entry: they decide the correlation of its
# aggregates (``pending.aggregate_correlation``).
Scope = tuple[tuple[BodyElement, ...], frozenset[Var]]
_MASK, _SIGN = (1 << 64) - 1, 1 << 63


def _divide(a: int, b: int) -> int | None:
    return None if b == 0 else abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)


def _modulo(a: int, b: int) -> int | None:
    return None if b == 0 else abs(a) % abs(b) * (1 if a >= 0 else -1)


OPERATORS: dict[str, Callable[..., int | None]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": _divide, "%": _modulo,
    "^": lambda a, b: None if b < 0 else a**b,
    "band": operator.and_, "bor": operator.or_, "bxor": operator.xor,
    "bshl": lambda a, b: a << (b & 63), "bshr": lambda a, b: a >> (b & 63),
    "bshru": lambda a, b: (a & (1 << 64) - 1) >> (b & 63),
    "land": lambda a, b: int(bool(a) and bool(b)), "lor": lambda a, b: int(bool(a) or bool(b)),
    "lxor": lambda a, b: int(bool(a) != bool(b)),
    "neg": operator.neg, "bnot": operator.invert, "lnot": lambda a: int(not a),
    "min": min, "max": max, "abs": abs,
}
COMPARATORS: dict[str, Callable[[object, object], bool]] = {
    "=": operator.eq, "!=": operator.ne, "<": operator.lt,
    "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


def calculate(term: Term | ir.Expr, read: Callable[[object], object]) -> object:
    """The value of a term or expression, ``read`` giving that of each variable, column or
    aggregate in it; None when some operation fails."""
    if isinstance(term, Const):
        return term.value
    if isinstance(term, Arith):
        args = [calculate(a, read) for a in term.args]
        result = None if None in args else OPERATORS[term.op](*args)
        return None if result is None else ((result + _SIGN) & _MASK) - _SIGN
    return read(term)


def reduce(function: str, values: list) -> object:
    """``function`` (``ir.AGGREGATE_FUNCTIONS``) of the target values of the distinct matches
    (None for a match whose target failed; ``count`` counts every match)."""
    if function == "count":
        return len(values)
    values = [v for v in values if v is not None]
    if function == "sum":
        return sum(values)
    if function not in ("min", "max"):
        raise ValueError(f"aggregate {function} is not supported")
    return (min if function == "min" else max)(values) if values else None


def evaluate(plan: ir.Plan, relations: Mapping[str, Iterable[Row]]) -> set[Row]:
    """The rows of ``plan`` over ``relations``."""
    return _Interpreter(relations).rows(plan)


class _Interpreter:
    def __init__(self, relations: Mapping[str, Iterable[Row]]):
        self.relations = {name: set(map(tuple, rows)) for name, rows in relations.items()}

    def rows(self, node: ir.Plan) -> set[Row]:
        return getattr(self, "_" + type(node).__name__)(node)

    def _Unit(self, node: ir.Unit) -> set[Row]:
        return {()}

    def _Scan(self, node: ir.Scan) -> set[Row]:
        rows = self.relations.get(node.relation, set())
        if any(len(row) != node.arity for row in rows):
            raise ValueError(f"{node.relation} has rows of another arity than {node.arity}")
        return rows

    def _SelectByValue(self, node: ir.SelectByValue) -> set[Row]:
        return {r for r in self.rows(node.child) if r[node.column] == node.value}

    def _SelectByColumns(self, node: ir.SelectByColumns) -> set[Row]:
        return {r for r in self.rows(node.child) if r[node.left] == r[node.right]}

    def _Filter(self, node: ir.Filter) -> set[Row]:
        return {r for r in self.rows(node.child)
                if _compare(node.op, _value(node.left, r), _value(node.right, r))}

    def _Map(self, node: ir.Map) -> set[Row]:
        out = ((r, _value(node.expression, r)) for r in self.rows(node.child))
        return {r + (v,) for r, v in out if v is not None}

    def _Project(self, node: ir.Project) -> set[Row]:
        return {tuple(o.value if isinstance(o, Const) else r[o] for o in node.outputs)
                for r in self.rows(node.child)}

    def _Product(self, node: ir.Product) -> set[Row]:
        return {a + b for a in self.rows(node.left) for b in self.rows(node.right)}

    def _Join(self, node: ir.Join) -> set[Row]:
        right = _group(self.rows(node.right), node.right_keys)
        return {a + b for a in self.rows(node.left) for b in right.get(_key(a, node.left_keys), ())}

    def _Antijoin(self, node: ir.Antijoin) -> set[Row]:
        right = _group(self.rows(node.right), node.right_keys)
        return {a for a in self.rows(node.left) if _key(a, node.left_keys) not in right}

    def _Aggregate(self, node: ir.Aggregate) -> set[Row]:
        groups, out = _group(self.rows(node.body), node.body_keys), set()
        for row in self.rows(node.child):
            group = groups.get(_key(row, node.child_keys), [])
            targets = group if node.target is None else [_value(node.target, b) for b in group]
            value = reduce(node.function, targets)
            if value is not None:
                out.add(row + (value,))
        return out

    def _Union(self, node: ir.Union) -> set[Row]:
        return set().union(*map(self.rows, node.inputs))

    # -- Pending: the rule semantics ----------------------------------------------------------

    def _Pending(self, node: Pending) -> set[Row]:
        out, scope = set(), (node.body, node.bound)
        for row in self.rows(node.child):
            start = {Var(name): row[column] for name, column in node.columns}
            for env in self.solve(node.body, start, scope):
                values = tuple(self.term(t, env, scope) for t in node.head)
                if None not in values:
                    out.add(values)
        return out

    def solve(self, body: tuple[BodyElement, ...], env: Env, scope: Scope) -> Iterator[Env]:
        """Every extension of ``env`` to a match of ``body``."""
        if not body:
            yield env
            return
        for position, element in enumerate(body):
            extensions = self.step(element, env, scope)
            if extensions is not None:
                rest = body[:position] + body[position + 1:]
                for extended in extensions:
                    yield from self.solve(rest, extended, scope)
                return
        raise ir.TranslationError(f"cannot evaluate {', '.join(map(str, body))}: unbound")

    def step(self, element: BodyElement, env: Env, scope: Scope) -> list[Env] | None:
        """The extensions of ``env`` satisfying ``element``; None if its inputs are unknown."""

        def known(term: Term) -> bool:
            correlations = (aggregate_correlation(a, *scope) for a in term_aggregates(term))
            return (not isinstance(term, Wildcard) and set(term_variables(term)) <= env.keys()
                    and all(set(c) <= env.keys() for c in correlations))

        if isinstance(element, Comparison):
            left, right = element.left, element.right
            if known(left) and known(right):
                a, b = self.term(left, env, scope), self.term(right, env, scope)
                return [env] if _compare(element.op, a, b) else []
            for var, other in ((left, right), (right, left)):
                if element.op == "=" and isinstance(var, Var) and var not in env and known(other):
                    value = self.term(other, env, scope)
                    return [] if value is None else [{**env, var: value}]
            return None
        atom = element.atom
        free = Wildcard if element.negated else (Var, Wildcard)
        if not all(isinstance(t, free) or known(t) for t in atom.terms):
            return None
        if element.negated:
            matched = any(self.match(atom, row, env, scope) is not None
                          for row in self._atom_rows(atom))
            return [] if matched else [env]
        found = (self.match(atom, row, env, scope) for row in self._atom_rows(atom))
        return [extended for extended in found if extended is not None]

    def _atom_rows(self, atom: Atom) -> set[Row]:
        return self._Scan(ir.Scan(atom.relation, atom.arity))

    def match(self, atom: Atom, row: Row, env: Env, scope: Scope) -> Env | None:
        """``env`` extended so that ``atom`` equals ``row``, or None if it cannot be."""
        env = dict(env)
        for term, value in zip(atom.terms, row, strict=True):
            if isinstance(term, Var) and term not in env:
                env[term] = value
            elif not isinstance(term, Wildcard) and self.term(term, env, scope) != value:
                return None
        return env

    def term(self, term: Term, env: Env, scope: Scope) -> object:
        def read(leaf: Term) -> object:
            return self.aggregate(leaf, env, scope) if isinstance(leaf, Aggregate) else env[leaf]

        return calculate(term, read)

    def aggregate(self, aggregate: Aggregate, env: Env, scope: Scope) -> object:
        correlated = aggregate_correlation(aggregate, *scope)
        body = name_wildcards(aggregate.body)
        inner_variables = set(correlated) | level_variables(body)
        inner_scope = (body, frozenset(correlated))
        start = {v: env[v] for v in correlated}
        matches = {frozenset((v, m[v]) for v in inner_variables) for m in
                   self.solve(body, start, inner_scope)}
        if aggregate.target is None:
            return reduce(aggregate.function, list(matches))
        return reduce(aggregate.function,
                      [self.term(aggregate.target, dict(m), inner_scope) for m in matches])


def _value(expression: ir.Expr | None, row: Row) -> object:
    return calculate(expression, lambda column: row[column.index])


def _compare(op: str, a: object, b: object) -> bool:
    return a is not None and b is not None and COMPARATORS[op](a, b)


def _key(row: Row, columns: tuple[int, ...]) -> tuple:
    return tuple(row[c] for c in columns)


def _group(rows: set[Row], columns: tuple[int, ...]) -> dict[tuple, list[Row]]:
    """The rows by their values at ``columns``."""
    groups: dict[tuple, list[Row]] = {}
    for row in rows:
        groups.setdefault(_key(row, columns), []).append(row)
    return groups
