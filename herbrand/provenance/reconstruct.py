"""Proof reconstruction: a minimal-height proof of a tuple of the model, by bounded search.

A tuple of height h > 0 was first derived in iteration h, from premises all of height < h. So
``reconstruct`` looks, for each rule of its relation, for a substitution that unifies the head
with the tuple and satisfies the body with every positive premise of height < h
(``Matcher.solve`` with ``below=h``), and keeps, over all rules, the one whose highest premise
is lowest (the first rule in program order on a tie). Then each premise is explained in turn,
breadth first, each tuple once (a shared subproof is one value), down to the facts (height 0:
an inline fact of the program, else a given fact). Heights strictly decrease along every path,
so the search ends; ``max_depth`` bounds it further: tuples first met that many levels below
the root are not reconstructed (their nodes say ``truncated``).

Cost: per reconstructed tuple, one ``solve`` per rule of its relation (index lookups, O(matches
log n) each), then O(1) Python per premise; the indexes are built once per relation and key.
"""

from __future__ import annotations

from collections import deque

from herbrand.framework.errors import EvaluationError
from herbrand.provenance.derivations import Derivations, Instance, Row
from herbrand.provenance.proofs import Proof, atom_text

Key = tuple[str, Row]


def reconstruct(derivations: Derivations, relation: str, row: Row,
                max_depth: int | None = None) -> Proof:
    """The proof of ``relation(row)`` (encoded values; the tuple must be in the model) of
    minimal height, reconstructed ``max_depth`` levels deep (None: to the facts)."""
    heights: dict[Key, int] = {}
    steps: dict[Key, tuple[int, Instance] | None] = {}
    queue = deque([((relation, tuple(row)), 0)])
    while queue:
        key, depth = queue.popleft()
        if key in heights:
            continue
        heights[key] = derivations.matcher.height(*key)
        if heights[key] == 0 or (max_depth is not None and depth >= max_depth):
            steps[key] = None
            continue
        steps[key] = _derivation(derivations, key, heights[key])
        queue.extend((premise, depth + 1) for premise in steps[key][1].premises)
    proofs: dict[Key, Proof] = {}
    for key in sorted(heights, key=heights.get):  # premises before their conclusions
        proofs[key] = _proof(derivations, key, heights[key], steps[key], proofs)
    return proofs[(relation, tuple(row))]


def _derivation(derivations: Derivations, key: Key, height: int) -> tuple[int, Instance]:
    """(rule index, instance) of a derivation of ``key`` from premises below ``height``, the
    one with the lowest highest premise."""
    relation, row = key
    best = None
    for index, rule in derivations.rules_of(relation):
        start = derivations.start(rule, row)
        if start is None:
            continue
        derivations.matcher.rule = rule
        matches = derivations.matcher.solve(derivations.body(rule), start, below=height)
        if len(matches):
            choice = int(matches.deepest.argmin())
            if best is None or matches.deepest[choice] < best[0]:
                best = (int(matches.deepest[choice]), index, rule, matches, choice)
    derivations.matcher.rule = None
    if best is None:
        raise EvaluationError(
            f"explain: no derivation of {atom_text(relation, derivations.decode(relation, row))}"
            f" from premises below height {height} (the recorded heights are inconsistent)")
    _, index, rule, matches, choice = best
    return index, derivations.instance(rule, matches, choice)


def _proof(derivations: Derivations, key: Key, height: int,
           step: tuple[int, Instance] | None, proofs: dict[Key, Proof]) -> Proof:
    relation, row = key
    values = derivations.decode(relation, row)
    if height == 0:
        fact = derivations.fact_of(relation, row)
        if fact is None:
            return Proof(relation, values, 0, "input")
        return Proof(relation, values, 0, "fact", fact[1], fact[0])
    if step is None:
        return Proof(relation, values, height, "rule", truncated=True)
    index, instance = step
    return Proof(relation, values, height, "rule", derivations.program.rules[index], index,
                 instance.body, tuple(proofs[p] for p in instance.premises),
                 instance.aggregates)
