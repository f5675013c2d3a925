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
changes (``KeptSelections.changed``), so a selection costs O(change) instead of a scan.

    >>> from herbrand.framework.parser import parse
    >>> rule, = parse(".decl m(a: number, b: number, c: number)\\n"
    ...                "m(x, 0, z) :- m(x, 0, y), m(y, 0, z).").rules
    >>> fixed = Database({"m": Relation.from_rows([(1, 0, 2), (2, 0, 3), (1, 5, 3)])})
    >>> (rewritten,), views = select_constants([rule], fixed)
    >>> str(rewritten.body[0].atom.relation), sorted(views["@select:m:1=0"].to_rows())
    ('@select:m:1=0', [(1, 2), (2, 3)])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.incremental.counting_selections import selected_rows
from herbrand.evaluators.incremental.programs import with_body
from herbrand.evaluators.incremental.relation_sets import RelationSet
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
    """The rows of ``relation`` with those values, without those columns
    (``counting_selections.selected_rows``). O(n)."""
    return Relation(selected_rows(relation.columns, constants), unique=True)


class KeptSelections:
    """Selections of an engine's state relations kept across rule applications and updates:
    per selection, the rows of the relation it was taken from and the view (with its hash
    table, a ``RelationSet``), carried along each change of that relation the engine reports
    (``changed``) instead of a scan of the relation (O(n) per selection and application).
    Only relations whose names are not reserved (no '@': the state, not the changes) are
    kept. Memory: the views kept and their tables."""

    def __init__(self, evaluator: RelationalEvaluator | None = None) -> None:
        self._evaluator = evaluator  # told of each view's change, so its indexes follow
        # relation name -> selection name -> (constants, source columns, view, and the source
        # and view before the last change: an update reads the old state as well as the new)
        self._views: dict[str, dict[str, tuple]] = {}

    @staticmethod
    def keeps(relation_name: str) -> bool:
        """Whether selections of this relation are kept (a state relation, not a change)."""
        return not relation_name.startswith("@")

    def view(self, name: str, relation_name: str, relation: Relation,
             constants: tuple[tuple[int, int], ...]) -> Relation:
        """The selection ``name`` of ``relation``: the kept one when taken from these very
        rows (or from those before the relation's last change), else a scan (O(n)), kept."""
        views = self._views.setdefault(relation_name, {})
        kept = views.get(name)
        if kept is not None and kept[1] is relation.columns:
            return kept[2].relation
        if kept is not None and kept[3] is relation.columns:
            return kept[4]
        view = RelationSet(_view(relation, constants))
        views[name] = (constants, relation.columns, view, None, None)
        return view.relation

    def changed(self, relation_name: str, before: Relation, after: Relation,
                removed: np.ndarray, added: np.ndarray) -> None:
        """``after`` is ``before`` without the rows ``removed`` and with ``added`` (both
        (arity, m) batches): the views taken from ``before`` follow (their selected rows out
        and in, through their tables; the view of ``before`` stays readable until the next
        change), the others of the relation are dropped. O(m) per view, plus O(m) expected
        and the copy of each view that changes."""
        views = self._views.get(relation_name)
        if not views or after is before:
            return
        for name, (constants, source, view, _, _) in list(views.items()):
            if source is not before.columns:
                del views[name]
                continue
            # a batch holding none of the selection's rows leaves its view as it is: no probe
            gone, fresh = selected_rows(removed, constants), selected_rows(added, constants)
            shrunk, gone = view.remove(gone) if gone.shape[1] else (view, gone)
            grown, fresh = shrunk.insert(fresh) if fresh.shape[1] else (shrunk, fresh)
            if self._evaluator is not None and grown is not view:
                self._evaluator.relation_changed(name, view.relation, grown.relation, gone,
                                                 fresh)
            views[name] = (constants, after.columns, grown, source, view.relation)

    @property
    def nbytes(self) -> int:
        """Bytes of the kept views and their tables. O(views)."""
        return sum(kept[2].relation.nbytes + kept[2].nbytes
                   + (kept[4].nbytes if kept[4] is not None else 0)
                   for views in self._views.values() for kept in views.values())


@dataclass(frozen=True)
class Selection:
    """A constant selection a rewritten rule reads: the relation ``name`` holding the rows of
    ``relation`` with the values ``constants`` ((column, value) pairs), without those
    columns."""

    name: str
    relation: str
    constants: tuple[tuple[int, int], ...]

    def view(self, fixed: Database, kept: KeptSelections | None = None) -> Relation:
        """Its rows over ``fixed``: the kept view (``kept``), or a scan. O(n) unless kept."""
        relation = fixed[self.relation]
        return (_view(relation, self.constants) if kept is None else
                kept.view(self.name, self.relation, relation, self.constants))


def selecting(rules: Sequence[Rule], selected: Callable[[str], bool]
              ) -> tuple[tuple[Rule, ...], tuple[Selection, ...]]:
    """The rules with their positive body literals (outside aggregates) over the relations
    ``selected`` accepts, with integer constants and another term, reading constant
    selections instead (see the module doc), and those selections, each once: the rewrite
    alone, for a caller that reads the selections of many states through the same rules
    (``with_selections``). O(rules · body)."""
    selections: dict[str, Selection] = {}
    rewritten = []
    for rule in rules:
        body = []
        for element in rule.body:
            if (isinstance(element, Literal) and not element.negated
                    and selected(element.atom.relation)):
                constants, others = _selection(element)
                if constants and others:
                    relation = element.atom.relation
                    name = SELECT_PREFIX + relation + ":" + ",".join(
                        f"{column}={value}" for column, value in constants)
                    selections.setdefault(name, Selection(name, relation, constants))
                    element = Literal(Atom(name, others, element.atom.location))
            body.append(element)
        rewritten.append(with_body(rule, tuple(body)))
    return tuple(rewritten), tuple(selections.values())


def with_selections(fixed: Database, selections: Sequence[Selection],
                    kept: KeptSelections | None = None) -> Database:
    """``fixed`` with the relations of ``selections`` (their views kept in ``kept``, if
    given). O(n) per selection not kept."""
    if not selections:
        return fixed
    return fixed.with_relations({s.name: s.view(fixed, kept) for s in selections})


def select_constants(rules: Sequence[Rule], fixed: Database,
                     kept: KeptSelections | None = None) -> tuple[tuple[Rule, ...], Database]:
    """The rules reading constant selections of ``fixed``'s relations, and ``fixed`` with
    those selections (see the module doc). With ``kept``, only the relations it keeps are
    selected, their views taken from it. O(rules · body) plus O(n) per distinct selection
    not kept."""
    rewritten, selections = selecting(
        rules, lambda name: name in fixed and (kept is None or kept.keeps(name)))
    return rewritten, with_selections(fixed, selections, kept)
