"""Rules every pass is checked on, the relations they read, and a strategy of databases.

Values stay in a small domain so that the reference interpreter and the brute-force evaluation
of ``test_preservation`` run in milliseconds.
"""

from __future__ import annotations

from hypothesis import strategies as st

from herbrand.framework.parser import parse
from herbrand.framework.syntax import Rule

DOMAIN = (0, 1, 2, 3)
ARITIES = {"edge": 2, "path": 2, "par": 2, "sg": 2, "node": 1, "value": 2, "flag": 0}

RULES = {
    "tc_base": "path(x, y) :- edge(x, y).",
    "tc": "path(x, z) :- path(x, y), edge(y, z).",
    "same_generation": "sg(x, y) :- par(x, p), sg(p, q), par(y, q).",
    "constants": "r(x) :- edge(x, 1), edge(1, x).",
    "head_constant": "r(x, 7) :- edge(x, 2).",
    "repeated_variable": "loop(x) :- edge(x, x).",
    "triangle": "tri(x, y, z) :- edge(x, y), edge(y, z), edge(z, x).",
    "cross_product": "pairs(x, y) :- node(x), node(y).",
    "variable_equality": "r(x, y) :- node(x), node(y), x = y.",
    "negation": "unreached(x, y) :- node(x), node(y), !path(x, y), x != y.",
    "negation_constant_wildcard": "r(x) :- node(x), !edge(x, _), !path(2, x).",
    "negation_repeated": "r(x) :- node(x), !edge(x, x).",
    "comparisons": "lt(x, y) :- edge(x, y), x < y, y <= 2.",
    "arithmetic": "double(x, d) :- value(x, v), d = v * 2, v < 3.",
    "assignment_chain": "r(x, z) :- node(x), y = x + 1, z = y * y, z != 4.",
    "head_arithmetic": "succ(x, x + 1) :- node(x).",
    "arithmetic_in_atom": "r(x) :- edge(x, y), edge(y, x + 1).",
    "arithmetic_in_negation": "r(x) :- node(x), !node(x + 1).",
    "division": "r(x, y / x) :- edge(x, y).",
    "no_positive_atom": "r(x) :- x = 3.",
    "count": "degree(x, n) :- node(x), n = count : { edge(x, _) }.",
    "sum_wildcards": "s(n) :- n = sum y : { edge(_, y) }.",
    "max_of_nothing": "m(x, y) :- node(x), y = max z : { edge(x, z) }.",
    "min_two_atoms": "m(x, y) :- node(x), y = min z : { edge(x, w), edge(w, z) }.",
    "correlated_comparison": "w(n, c) :- node(n), c = count : { node(m), m < n }.",
    "aggregate_comparison": "big(x) :- node(x), x < count : { edge(_, _) }.",
    "aggregate_with_negation": "r(x, c) :- node(x), c = count : { edge(x, y), !path(y, x) }.",
    "nested_aggregate": "r(x, c) :- node(x), c = count : { edge(x, y), y < max z : { edge(z, _) } }.",
    "head_aggregate": "total(sum y : { edge(_, y) }) :- flag().",
    "two_aggregates": "r(x, a + b) :- node(x), a = count : { edge(x, _) }, b = sum y : { path(x, y) }.",
    "nullary_head": "flag() :- edge(x, x).",
    "nullary_body": "r(x) :- node(x), flag().",
    "nullary_negated": "r(x) :- node(x), !flag().",
    "symbols": 'r(x, "a") :- edge(x, _), !path(x, 3).',
}


def rule(name: str) -> Rule:
    (parsed,) = parse(RULES[name]).rules
    return parsed


def rows(arity: int):
    return st.sets(st.tuples(*[st.sampled_from(DOMAIN)] * arity), max_size=1 if arity == 0 else 7)


databases = st.fixed_dictionaries({name: rows(arity) for name, arity in ARITIES.items()})
