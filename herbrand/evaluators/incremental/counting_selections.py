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
``@selected:<relation>:<column>=<value>,...`` (``join_ordering.selection_name``: join ordering
counts those constants as bound columns) with the other terms (rewrites cached per rule),
and gives the instance those relations: the rows of the relation holding those values,
without the constant columns (distinct, as the dropped columns are constant), so every rule
derives what it derived before, and joins probe the selection's index instead of scanning.
A relation's selections are kept with the rows they were taken from: when the relation is the
same, they are reused; when its rows start with those rows (it grew by appending: checked by
``growing.extends``: O(1) for the prefixes of one append-only buffer, else one vectorised
comparison of that prefix), only the appended rows are selected and appended to each selection
(``GrowingColumns``: no copy of what was selected before), and the relational evaluator's
index of each selection grows by them too (its O(1) ``extends``). Otherwise they are taken
again, O(n) each; selections that each fix one value of the same column share one pass over it
(on RDFS, the four of ``m``'s predicate column: one read of it instead of four).
Memory: the selections kept and the rows they were taken from, until ``release`` (an engine
releases them when an update ends).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from herbrand.evaluators.batch_joins import columns_at
from herbrand.evaluators.incremental.member_kernels import matching
from herbrand.evaluators.incremental.programs import with_body
from herbrand.framework.growing import GrowingColumns, extends
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Atom, Const, Literal, Rule
from herbrand.indexes.kernels import sort_unique
from herbrand.translators.join_ordering import selection_name

Constants = tuple[tuple[int, int], ...]


def selected_constants(literal: Literal) -> Constants:
    """The (column, value) constants of the selection that ``GrowingSelections`` reads
    ``literal`` through: none when the literal keeps its relation (negated, no integer
    constant, or nothing else)."""
    constants = () if literal.negated else integer_constants(literal.atom)
    return constants if len(constants) < literal.atom.arity else ()


def _selected_literal(literal: Literal) -> tuple[str, Constants, Literal] | None:
    """(selection name, its (column, value) constants, the rewritten literal), or None when
    the literal keeps its relation (``selected_constants``)."""
    constants = selected_constants(literal)
    if not constants:
        return None
    others = tuple(literal.atom.terms[column]
                   for column in other_columns(literal.atom.arity, constants))
    name = selection_name(literal.atom.relation, constants)
    return name, constants, Literal(Atom(name, others, literal.atom.location))


def integer_constants(atom: Atom) -> Constants:
    """The (column, value) of each integer constant of ``atom``, in column order."""
    return tuple((column, term.value) for column, term in enumerate(atom.terms)
                 if isinstance(term, Const) and isinstance(term.value, int))


def other_columns(arity: int, constants: Constants) -> list[int]:
    """The columns of an ``arity``-ary relation that hold none of ``constants``, in order."""
    fixed = {column for column, _ in constants}
    return [column for column in range(arity) if column not in fixed]


def holding(columns: np.ndarray, constants: Constants) -> np.ndarray:
    """Whether each row of (arity, n) ``columns`` holds the constants (a bool mask). O(n)."""
    mask = np.ones(columns.shape[1], dtype=bool)
    for column, value in constants:
        mask &= columns[column] == value
    return mask


# below this many rows, a column's distinct values are a Python set (``held``)
SMALL_BATCH = 1024


def held(batches: Mapping[str, np.ndarray], keys: Iterable[tuple[str, Constants]]
         ) -> dict[tuple[str, Constants], bool]:
    """For each (relation, constants) of ``keys``: whether a row of the relation's (arity, n)
    batch in ``batches`` holds the constants. One constant is looked up in its column's
    distinct values, found once per (relation, column): a Python set below ``SMALL_BATCH``
    rows (O(n), then O(1) per key: a one-fact update's 4 to 40 keys in about 1 us each, where
    a sort and a ``searchsorted`` per key took 3 to 5), else sorted (O(n log n), then
    O(log n) per key), where ``holding`` takes a pass per key (a 1% insert on RDFS over
    LUBM(1) checks 37 keys of one constant over about 640 changed triples); more constants
    take that pass."""
    values: dict[tuple[str, int], set | np.ndarray] = {}
    answers = {}
    for relation, constants in keys:
        if len(constants) != 1:
            answers[relation, constants] = bool(holding(batches[relation], constants).any())
            continue
        ((column, value),) = constants
        distinct = values.get((relation, column))
        if distinct is None:
            rows = batches[relation][column]
            distinct = values[relation, column] = (
                set(rows.tolist()) if len(rows) < SMALL_BATCH else sort_unique(rows[None, :])[0])
        if isinstance(distinct, set):
            answers[relation, constants] = value in distinct
        else:
            at = int(np.searchsorted(distinct, value))
            answers[relation, constants] = at < len(distinct) and int(distinct[at]) == value
    return answers


def selected_rows(columns: np.ndarray, constants: Constants) -> np.ndarray:
    """The rows of (arity, n) ``columns`` holding the constants, without their columns, as a
    new C-contiguous block. O(n): the selected rows taken whole (``batch_joins.columns_at``:
    a row at a time from a view of a growing buffer's rows, which a compress along the
    columns would first copy whole: RDFS over LUBM(1), the first selection of ``@U:m``'s
    126,615 rows took 1.8 ms, most of it faulting in that copy), then their other columns
    (3 columns, one constant: 4 us for one row where a compress per kept column took 6.5,
    39 us for 130,000 rows where it took 95)."""
    kept = other_columns(columns.shape[0], constants)
    return columns_at(columns, holding(columns, constants))[kept]


def _selected(columns: np.ndarray, wanted: Sequence[Constants]) -> dict[Constants, np.ndarray]:
    """``_select`` of each of ``wanted``; several that each fix one value of one column
    share one pass over it (``member_kernels.matching`` of their values, then a split of
    the few rows found), not a scan each. O(n) per pass."""
    out: dict[Constants, np.ndarray] = {}
    by_column: dict[int, list[Constants]] = {}
    for constants in dict.fromkeys(wanted):
        if len(constants) == 1:
            by_column.setdefault(constants[0][0], []).append(constants)
        else:
            out[constants] = selected_rows(columns, constants)
    for column, group in by_column.items():
        if len(group) == 1:
            out[group[0]] = selected_rows(columns, group[0])
            continue
        found = columns_at(columns,
                           matching(columns[column], np.array([c[0][1] for c in group])))
        for constants in group:
            out[constants] = selected_rows(found, constants)
    return out


class GrowingSelections:
    """The selections of the relations named in ``large`` (see the module doc), kept across
    calls of one engine."""

    def __init__(self, large: Collection[str]):
        self.large = frozenset(large)
        # rewrites by rule identity (hashing a rule walks it): id -> (rule, rewritten, uses)
        self._rules: dict[int, tuple[Rule, Rule, tuple[tuple[str, str, Constants], ...]]] = {}
        # relation -> (the rows its selections were taken from, constants -> selected rows)
        self._kept: dict[str, tuple[np.ndarray, dict[Constants, GrowingColumns]]] = {}

    def _rewritten(self, rule: Rule) -> tuple[Rule, tuple[tuple[str, str, Constants], ...]]:
        cached = self._rules.get(id(rule))
        if cached is not None and cached[0] is rule:
            return cached[1], cached[2]
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
        rewritten = with_body(rule, tuple(body)) if selections else rule
        self._rules[id(rule)] = (rule, rewritten, tuple(selections))
        return rewritten, tuple(selections)

    def _kept_for(self, name: str, relation: Relation) -> dict[Constants, GrowingColumns]:
        """The kept selections of ``relation`` (named ``name``): as they were when it is the
        same, each extended by its appended rows when it grew, none when it changed."""
        columns = relation.columns
        kept = self._kept.get(name)
        if kept is not None and kept[0] is columns:
            return kept[1]
        views: dict[Constants, GrowingColumns] = {}
        if kept is not None and extends(columns, kept[0]):
            source, views = kept
            tail = columns[:, source.shape[1]:]
            if tail.shape[1]:
                for constants, selected in _selected(tail, list(views)).items():
                    views[constants].append(selected)
        self._kept[name] = (columns, views)
        return views

    @property
    def nbytes(self) -> int:
        """The bytes held: the kept selections and the rows they were taken from. O(kept)."""
        return self.held_nbytes(())

    def held_nbytes(self, shared: Collection[str]) -> int:
        """The bytes held: the kept selections, and the rows they were taken from but those
        of the relations named in ``shared`` (held by their owner anyway). O(kept)."""
        return sum((0 if name in shared else source.nbytes)
                   + sum(view.nbytes for view in views.values())
                   for name, (source, views) in self._kept.items())

    def release(self, *, rewrites: bool = True) -> None:
        """Drop the kept selections (and the rows they were taken from), for an engine to call
        when an update ends, so that they hold no memory between updates; with ``rewrites``
        also the rules' rewrites (they hold no rows: an engine that applies the same rules
        in every update keeps them). O(1)."""
        self._kept.clear()
        if rewrites:
            self._rules.clear()

    def applied(self, rules: Sequence[Rule], instance: Database,
                given: Mapping[str, Callable[[Constants], Relation]] | None = None
                ) -> tuple[list[Rule], Database]:
        """``rules`` reading the selections, and ``instance`` with them. O(rules · body),
        plus per selected relation an O(n) comparison and per selection O(rows appended since
        the last call), or O(n) when its relation did not grow from the rows it was last
        taken from. ``given``: relation -> its selection of some constants, for relations
        whose caller keeps their selections (those are taken from it, nothing kept here)."""
        rewritten, views, wanted = [], {}, {}
        for rule in rules:
            new_rule, selections = self._rewritten(rule)
            rewritten.append(new_rule)
            for name, relation, constants in selections:
                if name not in views and given is not None and relation in given:
                    views[name] = given[relation](constants)
                elif name not in views:
                    views[name] = None
                    wanted.setdefault(relation, {})[name] = constants
        for relation, named in wanted.items():
            kept = self._kept_for(relation, instance[relation])
            missing = [constants for constants in named.values() if constants not in kept]
            for constants, selected in _selected(instance[relation].columns, missing).items():
                kept[constants] = GrowingColumns(selected,
                                                 selected.shape[1] + selected.shape[1] // 4)
            for name, constants in named.items():
                views[name] = Relation(kept[constants].columns, unique=True)
        return rewritten, (instance.with_relations(views) if views else instance)
