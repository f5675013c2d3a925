"""A brute-force evaluation of one rule, independent of the translators: enumerate every
combination of rows of the body's positive atoms, keep those that satisfy the rest of the body,
and apply the head. An aggregate ranges over the satisfying combinations of its own body, its
correlated variables fixed (each combination is one distinct match). Arithmetic is the
substitution evaluator's. For tiny data only: the cost is the product of the relation sizes.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping

from herbrand.evaluators.arithmetic import COMPARATORS, OPERATORS
from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    BodyElement,
    Comparison,
    Const,
    Literal,
    Rule,
    Term,
    Var,
    Wildcard,
    injected_variables,
    term_aggregates,
    term_variables,
)

Database = Mapping[str, set[tuple]]
Env = dict[Var, object]
# The body being matched and the variables bound on entry: they decide which variables of its
# aggregates are correlated (``syntax.injected_variables``, as in Soufflé).
Scope = tuple[tuple[BodyElement, ...], frozenset[Var]]


def brute_force(rule: Rule, db: Database) -> set[tuple]:
    """The head rows ``rule`` derives from ``db``."""
    scope: Scope = (rule.body, frozenset())
    out = set()
    for env in _matches(rule.body, db, {}, scope):
        values = tuple(_value(t, env, db, scope) for t in rule.head.terms)
        if None not in values:
            out.add(values)
    return out


def _matches(body, db: Database, env: Env, scope: Scope) -> Iterator[Env]:
    """One extension of ``env`` per satisfying combination of positive-atom rows."""
    atoms = [e.atom for e in body if isinstance(e, Literal) and not e.negated]
    rest = [e for e in body if not (isinstance(e, Literal) and not e.negated)]
    for combination in itertools.product(*(sorted(db.get(a.relation, ()), key=repr)
                                           for a in atoms)):
        bound, checks, consistent = dict(env), list(rest), True
        for atom, row in zip(atoms, combination, strict=True):
            for term, value in zip(atom.terms, row, strict=True):
                if isinstance(term, Var):
                    consistent &= bound.setdefault(term, value) == value
                elif not isinstance(term, Wildcard):
                    checks.append(Comparison("=", term, Const(value)))
        if consistent:
            final = _satisfy(checks, bound, db, scope)
            if final is not None:
                yield final


def _satisfy(checks: list[BodyElement], env: Env, db: Database, scope: Scope) -> Env | None:
    """``env`` extended to satisfy every check (in any order they can be decided), or None."""
    while checks:
        for check in checks:
            decided = _decide(check, env, db, scope)
            if decided is not None:
                break
        else:
            raise AssertionError(f"unsafe: cannot decide {checks}")
        if decided is False:
            return None
        env = decided
        checks = [c for c in checks if c is not check]
    return env


def _known(term: Term, env: Env, scope: Scope) -> bool:
    return (not isinstance(term, Wildcard) and set(term_variables(term)) <= env.keys()
            and all(injected_variables(a, *scope) <= env.keys()
                    for a in term_aggregates(term)))


def _decide(check: BodyElement, env: Env, db: Database, scope: Scope) -> Env | bool | None:
    """``env`` (maybe extended) if ``check`` holds, False if not, None if undecidable yet."""
    if isinstance(check, Comparison):
        if _known(check.left, env, scope) and _known(check.right, env, scope):
            a, b = _value(check.left, env, db, scope), _value(check.right, env, db, scope)
            return env if a is not None and b is not None and COMPARATORS[check.op](a, b) else False
        for var, other in ((check.left, check.right), (check.right, check.left)):
            if check.op == "=" and isinstance(var, Var) and var not in env \
                    and _known(other, env, scope):
                value = _value(other, env, db, scope)
                return False if value is None else {**env, var: value}
        return None
    terms = check.atom.terms
    if not all(isinstance(t, Wildcard) or _known(t, env, scope) for t in terms):
        return None
    wanted = [None if isinstance(t, Wildcard) else _value(t, env, db, scope) for t in terms]
    found = any(all(w is None or w == v for w, v in zip(wanted, row, strict=True))
                for row in db.get(check.atom.relation, ()))
    return False if found else env


def _value(term: Term, env: Env, db: Database, scope: Scope) -> object:
    if isinstance(term, Var):
        return env[term]
    if isinstance(term, Const):
        return term.value
    if isinstance(term, Arith):
        args = [_value(a, env, db, scope) for a in term.args]
        return None if None in args else OPERATORS[term.op](*args)
    assert isinstance(term, Aggregate), term
    correlated = injected_variables(term, *scope)
    inner_scope = (term.body, frozenset(correlated))
    matches = list(_matches(term.body, db, {v: env[v] for v in correlated}, inner_scope))
    if term.function == "count":
        return len(matches)
    values = [v for m in matches if (v := _value(term.target, m, db, inner_scope)) is not None]
    if term.function == "sum":
        return sum(values)
    return (min if term.function == "min" else max)(values) if values else None
