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
shared columns occur in the seed's columns of those variables (``np.isin``: O(n) by a table
for a small value range, O((n + m) log(n + m)) otherwise). A row filtered out joins no seed
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


class Semijoins:
    """Semi-join reductions (see the module doc), a filtered relation taken when it is
    ``ratio`` times larger than the seed."""

    def __init__(self, ratio: int = 16):
        self.ratio = ratio
        self._serials: dict[int, tuple[Rule, int]] = {}  # id(rule) -> (rule, serial number)
        self._rewrites: dict[tuple[int, tuple[int, ...]], Rule] = {}

    def _serial(self, rule: Rule) -> int:
        kept = self._serials.get(id(rule))
        if kept is None or kept[0] is not rule:
            kept = (rule, len(self._serials))
            self._serials[id(rule)] = kept
        return kept[1]

    def _filters(self, rule: Rule, instance: Database,
                 reducible: Collection[str]) -> tuple[int, list[Filter]]:
        """(the seed's position, the literals to filter) of ``rule`` over ``instance``."""
        literals = [(i, e) for i, e in enumerate(rule.body)
                    if isinstance(e, Literal) and not e.negated]
        if len(literals) < 2:
            return -1, []
        sizes = {i: len(instance[e.atom.relation]) for i, e in literals}
        seed_at, seed = min(literals, key=lambda pair: sizes[pair[0]])
        seed_columns: dict[Var, int] = {}
        for column, term in enumerate(seed.atom.terms):
            if isinstance(term, Var):
                seed_columns.setdefault(term, column)
        filters = []
        for i, literal in literals:
            if (i == seed_at or literal.atom.relation not in reducible
                    or sizes[i] < self.ratio * max(sizes[seed_at], 1)
                    or not all(isinstance(t, Var | Wildcard) for t in literal.atom.terms)):
                continue
            shared = tuple((column, seed_columns[term])
                           for column, term in enumerate(literal.atom.terms)
                           if isinstance(term, Var) and term in seed_columns)
            if shared:
                filters.append((i, shared))
        return seed_at, filters

    def applied(self, rules: Sequence[Rule], instance: Database,
                reducible: Collection[str]) -> tuple[list[Rule], Database]:
        """``rules`` reading the reduced relations, and ``instance`` with them. O(rules ·
        body) plus an ``np.isin`` per shared variable of each filtered literal."""
        rewritten, views = [], {}
        for rule in rules:
            seed_at, filters = self._filters(rule, instance, reducible)
            if not filters:
                rewritten.append(rule)
                continue
            serial = self._serial(rule)
            seed = instance[rule.body[seed_at].atom.relation].columns
            for i, shared in filters:
                rows = instance[rule.body[i].atom.relation].columns
                keep = np.isin(rows[shared[0][0]], seed[shared[0][1]])
                for column, seed_column in shared[1:]:
                    keep &= np.isin(rows[column], seed[seed_column])
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
