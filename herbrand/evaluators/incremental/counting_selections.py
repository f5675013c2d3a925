"""Constant selections of the large relations an incremental engine's variants read, kept and
extended across rule applications as those relations grow.

The relational evaluator runs a body atom with constants, such as ``m(z, 4, x)`` in a join, as
a scan of the whole relation filtered by value, then a sort join: O(n) per application,
however small the change the variant starts from. The counting engines apply their variants
once per iteration to relations that only grow along the iterations of an update (the new
state so far, prefixes of the old state, the old values of a DBSP trace), so over an update
these scans cost O(n) per iteration and per variant (RDFS over LUBM(1): 4.3M rows scanned for
a 1% insert of 1,000 facts).

``GrowingSelections(large)`` rewrites each positive body literal over a relation named in
``large`` that has integer constants and other terms into a literal over
``@selected:<relation>:<column>=<value>,...`` with the other terms (rewrites cached per rule),
and gives the instance those relations: the rows of the relation holding those values,
without the constant columns (distinct, as the dropped columns are constant), so every rule
derives what it derived before, and joins probe the selection's index instead of scanning.
A selection is kept with the rows it was taken from: when the relation is the same, it is
reused; when the relation's rows start with those rows (it grew by appending: checked by one
vectorised comparison of that prefix), only the appended rows are selected, and the relational
evaluator's index of the selection grows by them too. Otherwise it is taken again, O(n).
Memory: the selections kept and the rows they were taken from, until ``release`` (an engine
releases them when an update ends).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from herbrand.evaluators.incremental.programs import with_body
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Atom, Const, Literal, Rule

SELECTED_PREFIX = "@selected:"

Constants = tuple[tuple[int, int], ...]


def _selected_literal(literal: Literal) -> tuple[str, Constants, Literal] | None:
    """(selection name, its (column, value) constants, the rewritten literal), or None when
    the literal keeps its relation (negated, no integer constant, or nothing else)."""
    if literal.negated:
        return None
    terms = literal.atom.terms
    constants = tuple((column, term.value) for column, term in enumerate(terms)
                      if isinstance(term, Const) and isinstance(term.value, int))
    others = tuple(term for term in terms
                   if not (isinstance(term, Const) and isinstance(term.value, int)))
    if not constants or not others:
        return None
    name = SELECTED_PREFIX + literal.atom.relation + ":" + ",".join(
        f"{column}={value}" for column, value in constants)
    return name, constants, Literal(Atom(name, others, literal.atom.location))


def _select(columns: np.ndarray, constants: Constants) -> np.ndarray:
    """The rows of (arity, n) ``columns`` holding the constants, without their columns. O(n)."""
    mask = np.ones(columns.shape[1], dtype=bool)
    for column, value in constants:
        mask &= columns[column] == value
    fixed = dict(constants)
    return columns[[c for c in range(columns.shape[0]) if c not in fixed]][:, mask]


class GrowingSelections:
    """The selections of the relations named in ``large`` (see the module doc), kept across
    calls of one engine."""

    def __init__(self, large: Collection[str]):
        self.large = frozenset(large)
        self._rules: dict[Rule, tuple[Rule, tuple[tuple[str, str, Constants], ...]]] = {}
        # selection name -> (the relation's rows it was taken from, the selected rows)
        self._kept: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def _rewritten(self, rule: Rule) -> tuple[Rule, tuple[tuple[str, str, Constants], ...]]:
        cached = self._rules.get(rule)
        if cached is not None:
            return cached
        body, selections = [], []
        for element in rule.body:
            selected = (_selected_literal(element) if isinstance(element, Literal)
                        and element.atom.relation in self.large else None)
            if selected is None:
                body.append(element)
            else:
                name, constants, literal = selected
                body.append(literal)
                selections.append((name, element.atom.relation, constants))
        result = (with_body(rule, tuple(body)) if selections else rule), tuple(selections)
        self._rules[rule] = result
        return result

    def _selection(self, name: str, relation: Relation, constants: Constants) -> Relation:
        columns = relation.columns
        kept = self._kept.get(name)
        if kept is not None and kept[0] is columns:
            return Relation(kept[1], unique=True)
        start, view = 0, None
        if kept is not None:
            source, view = kept
            n = source.shape[1]
            if n <= columns.shape[1] and np.array_equal(columns[:, :n], source):
                start = n
        tail = _select(columns[:, start:], constants)
        selected = np.concatenate([view, tail], axis=1) if start and tail.shape[1] else (
            view if start else tail)
        self._kept[name] = (columns, selected)
        return Relation(selected, unique=True)

    @property
    def nbytes(self) -> int:
        """The bytes held: the kept selections and the rows they were taken from. O(kept)."""
        return sum(source.nbytes + view.nbytes for source, view in self._kept.values())

    def release(self) -> None:
        """Drop the kept selections (and the rows they were taken from), for an engine to call
        when an update ends, so that they hold no memory between updates. O(1)."""
        self._kept.clear()

    def applied(self, rules: Sequence[Rule], instance: Database
                ) -> tuple[list[Rule], Database]:
        """``rules`` reading the selections, and ``instance`` with them. O(rules · body),
        plus per selection O(rows appended since the last call) and an O(n) comparison, or
        O(n) when its relation did not grow from the rows it was last taken from."""
        rewritten, views = [], {}
        for rule in rules:
            new_rule, selections = self._rewritten(rule)
            rewritten.append(new_rule)
            for name, relation, constants in selections:
                if name not in views:
                    views[name] = self._selection(name, instance[relation], constants)
        return rewritten, (instance.with_relations(views) if views else instance)
