"""Constant selections of relations that stay fixed while rules are applied to them many times.

The relational evaluator runs a positive atom with constant terms, such as ``m(x, 0, y)``, as a
scan of the whole relation filtered by value: O(n) per rule application, however small the
delta the rule starts from. An engine that applies rules many times over relations that do not
change in between (the rounds of ``backward_forward``) can instead materialize each distinct
selection once, as a relation of the remaining columns, and let the rules read that.

``select_constants(rules, fixed)`` rewrites every positive body literal (outside aggregates)
over a relation of ``fixed`` that has integer constants and at least one other term into a
literal over ``@select:<relation>:<column>=<value>,...`` with the other terms, and returns the
rewritten rules with ``fixed`` extended by those relations. The rows of such a relation are
exactly the relation's rows holding those values, without the constant columns, so every rule
derives what it derived before. Cost: O(n) per distinct selection, once; the views are
ordinary Relations (their rows are distinct: the dropped columns are constant). With a
``KeptSelections``, an engine keeps the views across updates and carries them by each update's
changes (``advance``), so a selection costs O(change) instead of a scan per update.

    >>> from herbrand.framework.parser import parse
    >>> rule, = parse(".decl m(a: number, b: number, c: number)\\n"
    ...                "m(x, 0, z) :- m(x, 0, y), m(y, 0, z).").rules
    >>> fixed = Database({"m": Relation.from_rows([(1, 0, 2), (2, 0, 3), (1, 5, 3)])})
    >>> (rewritten,), views = select_constants([rule], fixed)
    >>> str(rewritten.body[0].atom.relation), sorted(views["@select:m:1=0"].to_rows())
    ('@select:m:1=0', [(1, 2), (2, 3)])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from herbrand.evaluators.incremental.changes import without
from herbrand.evaluators.incremental.programs import with_body
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Atom, Const, Literal, Rule

SELECT_PREFIX = "@select:"


def _selection(literal: Literal) -> tuple[tuple[tuple[int, int], ...], tuple]:
    """((column, value) of each integer constant, the other terms) of a literal's atom."""
    constants, others = [], []
    for column, term in enumerate(literal.atom.terms):
        if isinstance(term, Const) and isinstance(term.value, int):
            constants.append((column, term.value))
        else:
            others.append(term)
    return tuple(constants), tuple(others)


def _view(relation: Relation, constants: tuple[tuple[int, int], ...]) -> Relation:
    """The rows of ``relation`` with those values, without those columns. O(n)."""
    columns = relation.columns
    mask = np.ones(columns.shape[1], dtype=bool)
    for column, value in constants:
        mask &= columns[column] == value
    kept = [c for c in range(columns.shape[0]) if c not in dict(constants)]
    return Relation(columns[kept][:, mask], unique=True)


class KeptSelections:
    """Selections kept across an engine's updates: per selection name, the rows of the
    relation it was taken from and the view, carried from one update to the next by the
    relation's changes (``advance``) instead of a scan of the relation (O(n) per selection
    and update). Memory: the views kept."""

    def __init__(self) -> None:
        # selection name -> (relation name, constants, source columns, view)
        self._views: dict[str, tuple[str, tuple[tuple[int, int], ...], np.ndarray,
                                     Relation]] = {}

    def view(self, name: str, relation_name: str, relation: Relation,
             constants: tuple[tuple[int, int], ...]) -> Relation:
        """The selection of ``relation``: the kept one when taken from these very rows, else
        a scan (O(n)), kept."""
        kept = self._views.get(name)
        if kept is not None and kept[2] is relation.columns:
            return kept[3]
        view = _view(relation, constants)
        self._views[name] = (relation_name, constants, relation.columns, view)
        return view

    def advance(self, old: Database, new: Database, added: Mapping[str, Relation],
                removed: Mapping[str, Relation],
                evaluator: RelationalEvaluator | None = None) -> None:
        """Carry each view taken from ``old``'s relation to ``new``'s: unchanged when the
        relation is the same, else the view without the selected ``removed`` rows and with
        the selected ``added`` ones (``evaluator``'s indexes of the view told of the change);
        views of other rows are dropped. O(changed rows + the views of changed relations)."""
        for name, (relation_name, constants, source, view) in list(self._views.items()):
            before, after = old.get(relation_name), new.get(relation_name)
            if before is None or after is None or before.columns is not source:
                del self._views[name]
                continue
            if after is before:
                continue
            gone = _view(removed.get(relation_name, Relation.empty(before.arity)), constants)
            fresh = _view(added.get(relation_name, Relation.empty(before.arity)), constants)
            moved = without(view, gone).extend(fresh)
            if evaluator is not None:
                evaluator.relation_changed(name, view, moved, gone.columns, fresh.columns)
            self._views[name] = (relation_name, constants, after.columns, moved)

    @property
    def nbytes(self) -> int:
        """Bytes of the kept views. O(views)."""
        return sum(kept[3].nbytes for kept in self._views.values())


def select_constants(rules: Sequence[Rule], fixed: Database,
                     kept: KeptSelections | None = None) -> tuple[tuple[Rule, ...], Database]:
    """The rules reading constant selections of ``fixed``'s relations, and ``fixed`` with
    those selections (see the module doc), taken from ``kept`` when given. O(rules · body)
    plus O(n) per distinct selection not kept."""
    views: dict[str, Relation] = {}
    rewritten = []
    for rule in rules:
        body = []
        for element in rule.body:
            if (isinstance(element, Literal) and not element.negated
                    and element.atom.relation in fixed):
                constants, others = _selection(element)
                if constants and others:
                    relation = element.atom.relation
                    name = SELECT_PREFIX + relation + ":" + ",".join(
                        f"{column}={value}" for column, value in constants)
                    if name not in views:
                        views[name] = (_view(fixed[relation], constants) if kept is None else
                                       kept.view(name, relation, fixed[relation], constants))
                    element = Literal(Atom(name, others, element.atom.location))
            body.append(element)
        rewritten.append(with_body(rule, tuple(body)))
    return tuple(rewritten), (fixed.with_relations(views) if views else fixed)
