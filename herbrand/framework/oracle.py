"""The oracle: a deliberately naive model computation, and a brute-force model check.

``oracle_materialize`` computes the model over Python sets of decoded values (ints and strings),
written independently of every evaluator: for each stratum of ``analyse(program)``, apply every
rule by brute force (each positive atom scans its whole relation) until nothing new appears.
``check_model`` checks a result against the program by brute force: every rule satisfied, every
tuple supported, the inputs kept. Cost: exponential in rule length; for small test databases.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Iterator, Mapping

from herbrand.framework.analysis import analyse
from herbrand.framework.errors import EvaluationError
from herbrand.framework.storage import Database
from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    BodyElement,
    Comparison,
    Const,
    Literal,
    Program,
    Rule,
    Term,
    Var,
    Wildcard,
    element_terms,
    injected_variables,
    lift_atom_expressions,
    term_aggregates,
    term_variables,
)

Facts = Mapping[str, Iterable[tuple]]
Model = dict[str, set[tuple]]

# ---------------------------------------------------------------------------------------------
# The oracle: brute force over decoded values
# ---------------------------------------------------------------------------------------------


def _wrap(value: int) -> int:
    return (value + 2**63) % 2**64 - 2**63


def _truncating_division(a: int, b: int) -> int | None:
    if b == 0:
        return None
    quotient = a // b  # floor; move toward zero when inexact and negative
    return quotient + 1 if quotient < 0 and quotient * b != a else quotient


# The oracle's own reading of each operator; None (division by zero, negative exponent) makes
# the derivation fail, anything else is wrapped to 64 bits.
_OPERATORS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": _truncating_division,
    "%": lambda a, b: None if b == 0 else a - b * _truncating_division(a, b),
    "^": lambda a, b: None if b < 0 else pow(a, b, 2**64),
    "band": lambda a, b: a & b, "bor": lambda a, b: a | b, "bxor": lambda a, b: a ^ b,
    "bshl": lambda a, b: a << (b % 64), "bshr": lambda a, b: a >> (b % 64),
    "bshru": lambda a, b: (a % 2**64) >> (b % 64),
    "land": lambda a, b: int(bool(a) and bool(b)), "lor": lambda a, b: int(bool(a) or bool(b)),
    "lxor": lambda a, b: int(bool(a) ^ bool(b)),
    "neg": lambda a: -a, "bnot": lambda a: -a - 1, "lnot": lambda a: int(not a),
    "min": lambda *v: min(v), "max": lambda *v: max(v), "abs": abs,
}
_COMPARE = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
            ">": operator.gt, ">=": operator.ge}


@functools.lru_cache(maxsize=4096)
def _injected(aggregate: Aggregate, body: tuple, bound: frozenset) -> frozenset[Var]:
    return frozenset(injected_variables(aggregate, body, bound))


class _Oracle:
    """Brute-force solving of rule bodies over a model of decoded tuples.

    A substitution is a dict; besides variables it records, under ``("row", i)``, the tuple
    that the i-th body element (a positive atom) matched, so that distinct matches of an
    aggregate body tell its wildcards apart. ``context`` is the body being solved with the
    variables bound on entry: it decides the injected variables of its aggregates.
    """

    def __init__(self, model: Model):
        self.model = model

    def solutions(self, body: tuple[BodyElement, ...], start: dict) -> Iterator[dict]:
        body = lift_atom_expressions(body)
        context = (body, frozenset(start))
        yield from self._solve(tuple(enumerate(body)), start, context)

    def _solve(self, pending: tuple, subst: dict, context: tuple) -> Iterator[dict]:
        if not pending:
            yield subst
            return
        for k, (i, element) in enumerate(pending):
            if self._ready(element, subst, context):
                rest = pending[:k] + pending[k + 1:]
                for extended in self._extend(i, element, subst, context):
                    yield from self._solve(rest, extended, context)
                return
        raise AssertionError(f"oracle: no order binds the variables of {pending}")

    @staticmethod
    def _known(term: Term | None, known: Iterable, context: tuple) -> bool:
        known = set(known)
        return set(term_variables(term)) <= known and all(
            _injected(a, *context) <= known for a in term_aggregates(term))

    def _ready(self, element: BodyElement, subst: dict, context: tuple) -> bool:
        if isinstance(element, Literal) and not element.negated:
            return True  # its arguments are variables, constants and wildcards
        if isinstance(element, Comparison) and element.op == "=":
            for side, other in ((element.left, element.right), (element.right, element.left)):
                if isinstance(side, Var) and self._known(other, subst, context):
                    return True
        return all(isinstance(t, Wildcard) or self._known(t, subst, context)
                   for t in element_terms(element))

    def _extend(self, i: int, element: BodyElement, subst: dict, context) -> Iterator[dict]:
        if isinstance(element, Comparison):
            for side, other in ((element.left, element.right), (element.right, element.left)):
                if element.op == "=" and isinstance(side, Var) and side not in subst:
                    value = self.value(other, subst, context)
                    if value is not None:
                        yield {**subst, side: value}
                    return
            left = self.value(element.left, subst, context)
            right = self.value(element.right, subst, context)
            if left is None or right is None:
                return
            if element.op not in ("=", "!=") and (isinstance(left, str) or isinstance(right, str)):
                raise AssertionError(f"oracle: order comparison of symbols in {element}")
            if _COMPARE[element.op](left, right):
                yield subst
            return
        rows = self.model.get(element.atom.relation, ())
        if element.negated:
            if all(self._unify(element.atom.terms, row, subst, context) is None for row in rows):
                yield subst
            return
        for row in rows:
            match = self._unify(element.atom.terms, row, subst, context)
            if match is not None:
                yield {**match, ("row", i): row}

    def _unify(self, terms, row: tuple, subst: dict, context) -> dict | None:
        """``subst`` extended so that ``terms`` equal ``row``, or None."""
        subst = dict(subst)
        for term, value in zip(terms, row, strict=True):
            if isinstance(term, Wildcard):
                continue
            if isinstance(term, Var) and term not in subst:
                subst[term] = value
            elif self.value(term, subst, context) != value:
                return None
        return subst

    def value(self, term: Term | None, subst: dict, context: tuple):
        """The decoded value of a term under ``subst``; None when arithmetic fails."""
        if isinstance(term, Var):
            return subst[term]
        if isinstance(term, Const):
            return term.value
        if isinstance(term, Arith):
            args = [self.value(a, subst, context) for a in term.args]
            result = None if None in args else _OPERATORS[term.op](*args)
            return None if result is None else _wrap(result)
        if isinstance(term, Aggregate):
            return self._aggregate(term, subst, context)
        raise AssertionError(f"oracle: {term} has no value")

    def _aggregate(self, aggregate: Aggregate, subst: dict, context: tuple):
        if aggregate.function == "mean":
            raise EvaluationError("aggregate mean is not supported")
        start = {v: subst[v] for v in _injected(aggregate, *context)}
        matches = {frozenset(m.items()) for m in self.solutions(aggregate.body, start)}
        if aggregate.function == "count":
            return len(matches)
        inner = (aggregate.body, frozenset(start))
        values = [self.value(aggregate.target, dict(m), inner) for m in matches]
        values = [v for v in values if v is not None]
        if aggregate.function == "sum":
            return _wrap(sum(values))
        if not values:
            return None
        return min(values) if aggregate.function == "min" else max(values)

    def heads(self, rule: Rule) -> Iterator[tuple[tuple, dict]]:
        """Each head tuple the rule derives from the model, with its substitution."""
        context = (rule.body, frozenset())
        for subst in self.solutions(rule.body, {}):
            head = tuple(self.value(t, subst, context) for t in rule.head.terms)
            if None not in head:
                yield head, subst


def _initial_model(program: Program, facts: Facts) -> Model:
    model: Model = {d.name: set() for d in program.declarations}
    for name, rows in facts.items():
        model.setdefault(name, set()).update(map(tuple, rows))
    oracle = _Oracle(model)
    for fact in program.facts:
        for head, _ in oracle.heads(fact):
            model.setdefault(fact.head.relation, set()).add(head)
    return model


def oracle_materialize(program: Program, facts: Facts) -> Model:
    """The least (perfect) model of ``program`` over ``facts`` (relation -> decoded tuples):
    every declared relation -> its set of decoded tuples. Brute force and slow: O(n^k) per rule
    application for k body atoms over relations of n tuples; for small tests only."""
    model = _initial_model(program, facts)
    oracle = _Oracle(model)
    for stratum in analyse(program):
        while True:
            new = {(rule.head.relation, head)
                   for rule in stratum.rules for head, _ in oracle.heads(rule)}
            new = {(name, head) for name, head in new if head not in model[name]}
            if not new:
                break
            for name, head in new:
                model[name].add(head)
    return model


def _as_model(result: Database | Mapping[str, Iterable[tuple]]) -> Model:
    if isinstance(result, Database):
        return {name: set(result.decoded_rows(name)) for name in result}
    return {name: set(map(tuple, rows)) for name, rows in result.items()}


def check_model(program: Program, facts: Facts, result: Database | Mapping) -> None:
    """Assert that ``result`` (a Database or relation -> decoded tuples) is a supported model
    of ``program`` containing ``facts``: every declared relation present, every input and inline
    fact kept, every rule satisfied, every tuple an input or the head of a rule instance whose
    body holds in ``result``. AssertionError names the relation, tuple or rule at fault.
    Brute force, as ``oracle_materialize``."""
    model = _as_model(result)
    missing = [d.name for d in program.declarations if d.name not in model]
    assert not missing, f"relations {missing} are missing from the result"
    supported = _initial_model(program, facts)
    for name, rows in supported.items():
        lost = rows - model.get(name, set())
        assert not lost, f"input facts of {name} missing from the result: {sorted(lost)[:5]}"
    oracle = _Oracle(model)
    for rule in program.proper_rules:
        name = rule.head.relation
        for head, subst in oracle.heads(rule):
            bindings = {str(k): v for k, v in subst.items() if isinstance(k, Var)}
            assert head in model[name], (
                f"rule {rule} is not satisfied: with {bindings} it derives {name}{head}, "
                f"which is not in the result"
            )
            supported[name].add(head)
    for name, rows in model.items():
        unsupported = rows - supported.get(name, set())
        assert not unsupported, (
            f"tuples of {name} are neither inputs nor derived by a rule: {sorted(unsupported)[:5]}"
        )


