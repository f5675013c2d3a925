"""Shared helpers of the engine tests: a recording rule evaluator and small programs."""

from __future__ import annotations

from herbrand.framework.syntax import Literal

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""

CONSTANT_ATOMS = """
.decl t(s: number, p: number, o: number)
.decl m(s: number, p: number, o: number)
m(s, p, o) :- t(s, p, o).
m(x, 0, z) :- m(x, 0, y), m(y, 0, z).
m(z, 4, y) :- m(x, 0, y), m(z, 4, x).
"""
"""Recursive rules whose body atoms hold constants (RDFS's shape): read through selections."""


def record_rules(monkeypatch, engine) -> list:
    """Every rule the engine's relational evaluator runs from now on, in order."""
    evaluated = []
    evaluator = engine._evaluator
    original = evaluator.derive

    def derive(rules, instance):
        evaluated.extend(rules)
        return original(rules, instance)

    monkeypatch.setattr(evaluator, "derive", derive)
    return evaluated


def reads_a_delta(rule) -> bool:
    """Whether the rule's first body literal reads an engine-internal ('@') relation."""
    first = rule.body[0]
    return isinstance(first, Literal) and first.atom.relation.startswith("@")



def record_index_builds(monkeypatch, engine) -> list:
    """The (relation, key) of every index the engine's relational evaluator builds from now
    on (an index kept from before, or told of a change, is not built again)."""
    built = []
    evaluator = engine._evaluator
    original = evaluator.relation_index

    def relation_index(name, relation, key):
        kept = evaluator._indexes.get((name, key))
        index = original(name, relation, key)
        if kept is None or kept.index is not index:
            built.append((name, key))
        return index

    monkeypatch.setattr(evaluator, "relation_index", relation_index)
    return built
