"""The saturation of the backward/forward step with its lower literals cut to the rows that can
derive a checked head (``NearHeads``): a semi-join by the head, before the join.

``saturate`` (``backward_forward``) keeps only the derived heads that are checked facts (in C).
A derivation of ``tc(x, z) :- @proved:tc(x, y), e(y, z)`` uses an ``e`` row whose ``z`` is the
head's second value, so only the ``e`` rows whose ``z`` some checked ``tc`` fact holds in its
second column can derive a checked head. On TC over graph10000 (a 1% delete: 44k checked facts,
all ``tc(_, z)`` for the 87 targets of the deleted edges at first) this leaves 464k of the 1.3M
derivations that the saturation made and then filtered by C.

A literal is cut when it is positive, over a relation outside the stratum, its deltas and P (a
lower relation, new: the step never changes it), without constants, and holds a head variable;
its rule reads the cut rows under ``@near<rule>.<literal>:<relation>``. A cut keeps every row
whose columns holding head variables all hold values that C's rows hold in those head columns:
a superset of the rows a checked head's derivation uses, so the saturation proves the same
facts. C only grows within a step, so a cut only grows: its new rows are appended, and the
evaluator extends its index of the cut instead of rebuilding it (``relation_index``).

Cost: a rule is cut only in a round from ``MIN_DELTA`` newly proved facts or more, and only
while its lower relations hold at most as many rows as C holds facts of its head (else it reads
them whole, as before); then, once per step and cut relation, a sort of each cut column
(O(n log n)), and per round O(new C rows) hash inserts of their values plus O(log n + k) to
find the k rows the new values admit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.fixpoint import delta_name
from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.instance_rules import PROVED
from herbrand.evaluators.incremental.programs import renamed, with_body
from herbrand.evaluators.row_sets import RowSet
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Literal, Rule, Var, Wildcard
from herbrand.indexes.kernels import expand_ranges

NEAR = "@near"


@dataclass(frozen=True)
class Cut:
    """A cut literal: its ``relation``, the ``name`` its rule reads the cut under, and pairs
    (literal column, head column) of the columns that hold head variables."""

    relation: str
    name: str
    columns: tuple[tuple[int, int], ...]


def cut_rule(rule: Rule, number: int, relations: Sequence[str]) -> tuple[Rule, tuple[Cut, ...]]:
    """``rule`` with its cut literals (see the module doc) reading their cuts, and the cuts;
    ``rule`` itself and no cuts when none applies. O(body length)."""
    step = {*relations, *(delta_name(n) for n in relations), *(PROVED + n for n in relations)}
    head_columns: dict[Var, int] = {}
    for column, term in enumerate(rule.head.terms):
        if isinstance(term, Var):
            head_columns.setdefault(term, column)
    body, cuts = [], []
    for position, element in enumerate(rule.body):
        if (isinstance(element, Literal) and not element.negated
                and element.atom.relation not in step
                and all(isinstance(t, (Var, Wildcard)) for t in element.atom.terms)):
            columns = tuple((k, head_columns[t]) for k, t in enumerate(element.atom.terms)
                            if isinstance(t, Var) and t in head_columns)
            if columns:
                name = f"{NEAR}{number}.{position}:{element.atom.relation}"
                cuts.append(Cut(element.atom.relation, name, columns))
                element = renamed(element, name)
        body.append(element)
    return (with_body(rule, tuple(body)), tuple(cuts)) if cuts else (rule, ())


class NearHeads:
    """The saturation rules of one step and their cuts, kept as C grows. ``rules``: the
    saturation rules (as the step runs them); ``relations``: the stratum's."""

    # A round from fewer newly proved facts reads its relations whole (``backward_forward``
    # does not ask): it derives few rows anyway, while growing the cuts costs about 60 us a
    # round before the evaluator extends its index of them (measured on a 1% delete of
    # Andersen over 1,000 variables: 411 rounds, nearly all from a few facts, 24 ms of cuts)
    MIN_DELTA = 1024

    def __init__(self, rules: Sequence[Rule], relations: Sequence[str]):
        self._rules = tuple(rules)
        made = [cut_rule(rule, number, relations) for number, rule in enumerate(rules)]
        self.cut_rules = tuple(rule for rule, cuts in made if cuts)  # to prepare their plans
        self._made = made
        self._cuts: dict[str, CutRows] = {}

    def rules(self, facts: Mapping[str, CheckedFacts], lower: Database
              ) -> tuple[list[Rule], dict[str, Relation]]:
        """The rules to run now (each cut one while its cut pays, see the module doc) and the
        cut relations they read, over the checked facts ``facts`` and the relations ``lower``.
        For a saturation round from at least ``MIN_DELTA`` newly proved facts."""
        rules, reads = [], {}
        for rule, (cut, cuts) in zip(self._rules, self._made, strict=True):
            head = facts[rule.head.relation]
            if not cuts or sum(len(lower[c.relation]) for c in cuts) > head.checked_count:
                rules.append(rule)
                continue
            rules.append(cut)
            for c in cuts:
                rows = self._cuts.get(c.name)
                if rows is None:
                    rows = self._cuts[c.name] = CutRows(lower[c.relation], c.columns)
                reads[c.name] = rows.grown(head.checked_rows())
        return rules, reads


class CutRows:
    """The cut of one relation, grown as C grows: the relation's rows sorted by each cut
    column, the C values seen per column, the rows admitted so far (``taken``, a mask over
    the relation's rows) and their relation (in admission order)."""

    def __init__(self, relation: Relation, columns: tuple[tuple[int, int], ...]):
        self._columns = columns
        self._all = relation.columns
        self._orders = [np.argsort(self._all[k], kind="stable") for k, _ in columns]
        self._sorted = [self._all[k][order] for (k, _), order in zip(columns, self._orders,
                                                                     strict=True)]
        self._values = [RowSet(np.zeros((1, 0), dtype=np.int64)) for _ in columns]
        self.taken = np.zeros(self._all.shape[1], dtype=bool)
        self._seen = 0  # C rows whose values are in _values
        self.relation = Relation(self._all[:, :0], unique=True)

    def admit(self, checked: np.ndarray) -> np.ndarray:
        """Admit the rows that C's growth to ``checked`` (its rows in checking order, earlier
        calls' rows a prefix) admits (setting ``taken``); their positions, ascending.
        O(new C rows + log n + rows admitted)."""
        new = checked[:, self._seen:]
        self._seen = checked.shape[1]
        admitted = []
        for (_, head_column), order, values, known in zip(
                self._columns, self._orders, self._sorted, self._values, strict=True):
            fresh = known.insert(new[head_column:head_column + 1])[0]
            lo = np.searchsorted(values, fresh, "left")
            _, at = expand_ranges(lo, np.searchsorted(values, fresh, "right"))
            admitted.append(order[at])
        rows = np.concatenate(admitted) if len(admitted) > 1 else admitted[0]
        if len(self._columns) > 1:
            rows = np.unique(rows)
            for (k, _), known in zip(self._columns, self._values, strict=True):
                rows = rows[known.contains(self._all[k:k + 1, rows])]
        rows = np.sort(rows[~self.taken[rows]])
        self.taken[rows] = True
        return rows

    def grown(self, checked: np.ndarray) -> Relation:
        """The cut after C grew to ``checked`` (``admit``). O(new C rows + log n + rows
        admitted), plus the copy of the cut when it grows."""
        rows = self.admit(checked)
        if len(rows):
            self.relation = Relation(np.concatenate(
                [self.relation.columns, self._all[:, rows]], axis=1), unique=True)
        return self.relation
