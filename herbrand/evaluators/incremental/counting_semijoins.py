"""Semi-join reductions of the relations that change along an update's iterations, before a
rule's evaluation.

The counting engines evaluate, in every iteration of an update, variants that join a small
change with relations that differ from one iteration to the next (the tuples first derived in
the last iteration, the prefixes X_{k-1} of the states, the old values of a DBSP trace). The
relational evaluator joins through an index of the large side keyed on the join columns, and
such an index cannot be kept across iterations: it is built again, a sort of the relation,
in every iteration of every update however small the change (on TC over graph10000, about a
third of an update that inserts one fresh fact).

``Semijoins.applied(rules, instance, reducible)`` rewrites each rule whose smallest positive
literal (the seed) shares variables with a positive literal over a relation of ``reducible``
at least ``ratio`` times larger, and without constants: that literal reads
``@semi<n>.<position>:<relation>`` instead, the rows of the relation whose values in the
shared columns occur in the seed's columns of those variables (a table of the seed's values
when their range is narrow, else a binary search of each value among them: O(n + range) or
O(n log m), nothing of the relation sorted). A row filtered out joins no seed
row, so every rule derives what it derived before, with the same multiplicities; the join
then indexes the few rows left. Literals with constants are left to the kept constant
selections (``counting_selections``), relations not in ``reducible`` (fixed during the update)
to the evaluator's kept indexes. Rewrites are cached per rule (by identity, for the engine's
lifetime: its variants are planned once) and set of filtered literals, so the evaluator's
plans keep hitting.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from herbrand.evaluators.incremental.programs import renamed, with_body
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Literal, Rule, Var, Wildcard

SEMI_PREFIX = "@semi"

# (position of the filtered literal, its (column, seed column) pairs per shared variable)
Filter = tuple[int, tuple[tuple[int, int], ...]]


def _members(values: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` occurs in the (small) ``seed``: a lookup in a table of the
    seed's value range when it spans at most 4n values (O(n + range)), else a binary search
    of each among the seed's distinct values (O(n log m)); ``values`` is never sorted
    (``np.isin`` sorts both when the range is wide)."""
    distinct = np.unique(seed)
    if not len(distinct):
        return np.zeros(len(values), dtype=bool)
    low, high = int(distinct[0]), int(distinct[-1])
    if high - low <= 4 * len(values):
        table = np.zeros(high - low + 1, dtype=bool)
        table[distinct - low] = True
        inside = (values >= low) & (values <= high)
        found = np.zeros(len(values), dtype=bool)
        found[inside] = table[values[inside] - low]
        return found
    at = np.minimum(np.searchsorted(distinct, values), len(distinct) - 1)
    return distinct[at] == values


class Semijoins:
    """Semi-join reductions (see the module doc), a filtered relation taken when it is
    ``ratio`` times larger than the seed."""

    def __init__(self, ratio: int = 16):
        self.ratio = ratio
        # id(rule) -> (rule, serial number, its positive literals: (position, relation,
        # constant-free, first column of each variable)), analysed once per rule
        self._rules: dict[int, tuple[Rule, int, tuple]] = {}
        self._rewrites: dict[tuple[int, tuple[int, ...]], Rule] = {}

    def _analysed(self, rule: Rule) -> tuple[Rule, int, tuple]:
        kept = self._rules.get(id(rule))
        if kept is None or kept[0] is not rule:
            literals = []
            for i, element in enumerate(rule.body):
                if isinstance(element, Literal) and not element.negated:
                    columns: dict[Var, int] = {}
                    for column, term in enumerate(element.atom.terms):
                        if isinstance(term, Var):
                            columns.setdefault(term, column)
                    plain = all(isinstance(t, Var | Wildcard) for t in element.atom.terms)
                    literals.append((i, element.atom.relation, plain, columns))
            kept = (rule, len(self._rules), tuple(literals))
            self._rules[id(rule)] = kept
        return kept

    def _filters(self, literals: tuple, instance: Database,
                 reducible: Collection[str]) -> tuple[int, list[Filter]]:
        """(the seed's position, the literals to filter) of a rule's analysed positive
        ``literals`` over ``instance``."""
        if len(literals) < 2 or not any(plain and relation in reducible
                                        for _, relation, plain, _ in literals):
            return -1, []
        sizes = [len(instance[relation]) for _, relation, _, _ in literals]
        least = min(range(len(literals)), key=sizes.__getitem__)
        seed_at, _, _, seed_columns = literals[least]
        filters = []
        for (i, relation, plain, columns), size in zip(literals, sizes, strict=True):
            if (i == seed_at or not plain or relation not in reducible
                    or size < self.ratio * max(sizes[least], 1)):
                continue
            shared = tuple((column, seed_columns[term]) for term, column in columns.items()
                           if term in seed_columns)
            if shared:
                filters.append((i, shared))
        return seed_at, filters

    def applied(self, rules: Sequence[Rule], instance: Database,
                reducible: Collection[str]) -> tuple[list[Rule], Database]:
        """``rules`` reading the reduced relations, and ``instance`` with them. O(rules ·
        body) plus, per shared variable of each filtered literal, O(n) or O(n log m) for n
        rows of its relation and m of the seed (``_members``)."""
        rewritten, views = [], {}
        for rule in rules:
            _, serial, literals = self._analysed(rule)
            seed_at, filters = self._filters(literals, instance, reducible)
            if not filters:
                rewritten.append(rule)
                continue
            seed = instance[rule.body[seed_at].atom.relation].columns
            for i, shared in filters:
                rows = instance[rule.body[i].atom.relation].columns
                keep = _members(rows[shared[0][0]], seed[shared[0][1]])
                for column, seed_column in shared[1:]:
                    keep &= _members(rows[column], seed[seed_column])
                views[f"{SEMI_PREFIX}{serial}.{i}:{rule.body[i].atom.relation}"] = Relation(
                    np.compress(keep, rows, axis=1), unique=True)
            key = (serial, tuple(i for i, _ in filters))
            if key not in self._rewrites:
                body = list(rule.body)
                for i, _ in filters:
                    body[i] = renamed(body[i], f"{SEMI_PREFIX}{serial}.{i}:"
                                               f"{body[i].atom.relation}")
                self._rewrites[key] = with_body(rule, tuple(body))
            rewritten.append(self._rewrites[key])
        return rewritten, (instance.with_relations(views) if views else instance)
