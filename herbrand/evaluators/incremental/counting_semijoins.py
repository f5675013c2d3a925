"""Semi-join reductions of the relations that change along an update's iterations, before a
rule's evaluation.

The counting engines evaluate, in every iteration of an update, variants that join a small
change with relations that differ from one iteration to the next (the tuples first derived in
the last iteration, the prefixes X_{k-1} of the states, the old values of a DBSP trace). The
relational evaluator joins through an index of the large side keyed on the join columns, and
such an index cannot be kept across iterations: it is built again, a sort of the relation,
in every iteration of every update however small the change (on TC over graph10000, about a
third of an update that inserts one fresh fact).

``Semijoins.reduced(rules, instance, reducible)`` finds, for each rule, its smallest positive
literal (the seed) and the positive literals of variables over a relation of ``reducible`` at
least ``ratio`` times larger that share variables with it and are the rule's only reads of
that relation; each such relation is replaced, for that rule, by its rows whose values in the
shared columns occur in the seed's columns of those variables (a table of the seed's values
when their range is narrow, else a binary search of each value among them: O(n + range) or
O(n log m), nothing of the relation sorted). A row filtered out joins no seed row, so every
rule derives what it derived before, with the same multiplicities; the join then indexes the
few rows left. With ``constants``, literals with constants are reduced too, and the rule
selects the constants from the reduced rows (selecting them from a whole delta is a scan of
it per rule: on RDFS LUBM(1), most of an update that inserts one fresh triple); else they are
left to the kept constant selections (``counting_selections``). The rules come back to be
evaluated in one call over one instance: a rule reads its reductions under names of their
own (``reduction_name``: rules reducing a relation alike share one reduction; the rewrite is
made once per rule and reductions, so the evaluator plans it once), and a rule with an empty
reduction is left out (it derives nothing: on RDFS LUBM(1), a third of the reduced rules of a
1% update). Relations not in ``reducible`` (fixed during the update) are left to the
evaluator's kept indexes.
Each rule is analysed once (kept by identity for the engine's lifetime: its variants are
planned once), on its first ``reduced`` or ahead by ``analyse``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence

import numpy as np

from herbrand.evaluators.incremental.member_kernels import matching_rows, sorted_matching
from herbrand.evaluators.incremental.programs import renamed, with_body
from herbrand.framework.analysis import rule_literals
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Const, Literal, Rule, Var, Wildcard
from herbrand.indexes.kernels import sort_unique

SEMIJOIN_PREFIX = "@semijoin:"

# (the filtered relation, its (column, seed column) pairs per shared variable)
Filter = tuple[str, tuple[tuple[int, int], ...]]


def _ranges(first: np.ndarray, seed: np.ndarray) -> np.ndarray | None:
    """The positions of the rows whose value in the ascending ``first`` column occurs in
    ``seed``, ascending: a galloping search per distinct seed value and a walk of its rows
    (``member_kernels.sorted_matching``, O(u log(n / u) + output)); None when the seed has so
    many distinct values that a scan is cheaper. The distinct values by a sort
    (``kernels.sort_unique``; ``np.unique``'s hash took 33 against 5 us for 1,000 values)."""
    distinct = sort_unique(seed[None, :])[0]
    if 16 * len(distinct) > len(first):
        return None
    return sorted_matching(first, distinct)


# up to this many seed rows, ``_outside`` compares Python ints (a one-fact update's seed:
# about 1 us a column, where the vectorised comparison takes about 5)
FEW_SEED_ROWS = 8


def _outside(bounds: np.ndarray, seed: np.ndarray,
             shared: tuple[tuple[int, int], ...]) -> bool:
    """Whether, for some (column, seed column) pair of ``shared``, every value of that column
    of the (arity', m) ``seed`` is outside the (2, arity) ``bounds`` of the column (its lows
    and highs). O(m) per pair."""
    for column, seed_column in shared:
        low, high = bounds[:, column].tolist()
        values = seed[seed_column]
        if len(values) <= FEW_SEED_ROWS:
            inside = any(low <= value <= high for value in values.tolist())
        else:
            inside = bool(((values >= low) & (values <= high)).any())
        if not inside:
            return True
    return False


def _gathered(rows: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The columns of the (arity, n) ``rows`` at ``positions``, a C-ordered block: one gather
    per column (``np.take`` of a block that is not C-contiguous, such as a delta's slice of a
    relation, first copies the whole block: 36 us for 100,000 triples to take one row).
    O(arity · len(positions))."""
    out = np.empty((rows.shape[0], len(positions)), dtype=rows.dtype)
    for values, column in zip(rows, out, strict=True):
        np.take(values, positions, out=column)
    return out


class Semijoins:
    """Semi-join reductions (see the module doc), a filtered relation taken when it is
    ``ratio`` times larger than the seed; its literals with constants too when
    ``constants`` (for an engine whose kept constant selections do not read the reducible
    relations: a reduction would take their place). With ``ordered``, the caller's
    reducible relations hold their rows in lexicographic order, so a filter on the first
    column searches it (``_ranges``) instead of scanning it."""

    def __init__(self, ratio: int = 16, constants: bool = False, ordered: bool = False):
        self.ratio = ratio
        self.constants = constants
        self.ordered = ordered
        self._reducible_terms = (Var, Wildcard, Const) if constants else (Var, Wildcard)
        # id(rule) -> (rule, its positive literals: (relation, reducible (variables and
        # constants only), first column of each variable), or () when no relation may be
        # replaced), analysed once per rule
        self._rules: dict[int, tuple[Rule, tuple]] = {}
        # id(rule) -> (rule, (seed, filters) -> the rule reading those reductions)
        self._readings: dict[int, tuple[Rule, dict[tuple, Rule]]] = {}

    def analyse(self, rules: Iterable[Rule]) -> None:
        """Analyse ``rules`` ahead of their first ``reduced`` (an engine's bootstrap: on
        RDFS LUBM(1), about 0.1 ms of the first 1% update, 29 variants). O(rules · body)."""
        for rule in rules:
            self._analysed(rule)

    def _analysed(self, rule: Rule) -> tuple:
        kept = self._rules.get(id(rule))
        if kept is None or kept[0] is not rule:
            literals = []
            for element in rule.body:
                if isinstance(element, Literal) and not element.negated:
                    columns: dict[Var, int] = {}
                    for column, term in enumerate(element.atom.terms):
                        if isinstance(term, Var):
                            columns.setdefault(term, column)
                    plain = all(isinstance(t, self._reducible_terms)
                                for t in element.atom.terms)
                    literals.append((element.atom.relation, plain, columns))
            reads = Counter(literal.atom.relation for literal, _ in rule_literals(rule))
            # a relation read once in the rule can be replaced under its own name
            literals = [(relation, plain and reads[relation] == 1, columns)
                        for relation, plain, columns in literals]
            kept = (rule, tuple(literals) if len(literals) >= 2 else ())
            self._rules[id(rule)] = kept
        return kept[1]

    def _filters(self, literals: tuple, instance: Database,
                 reducible: Collection[str]) -> tuple[str, list[Filter]]:
        """(the seed's relation, the relations to filter) of a rule's analysed positive
        ``literals`` over ``instance``. O(literals), about 1 us a literal: an update asks
        this of every rule it reduces (on RDFS LUBM(1), 12 rules per one-fact update)."""
        for relation, plain, _ in literals:
            if plain and relation in reducible:
                break
        else:
            return "", []
        sizes = [len(instance[relation]) for relation, _, _ in literals]
        least = sizes.index(min(sizes))  # the first smallest
        seed, _, seed_columns = literals[least]
        threshold = self.ratio * max(sizes[least], 1)
        filters = []
        for at, (relation, plain, columns) in enumerate(literals):
            if (plain and sizes[at] >= threshold and at != least
                    and relation in reducible):
                shared = tuple((column, seed_columns[term]) for term, column in columns.items()
                               if term in seed_columns)
                if shared:
                    filters.append((relation, shared))
        return seed, filters

    def reduced(self, rules: Sequence[Rule], instance: Database, reducible: Collection[str],
                bounds: Callable[[str], np.ndarray | None] | None = None
                ) -> tuple[list[Rule], Database]:
        """``rules`` and ``instance`` to evaluate in one call: each rule with reductions
        rewritten to read them (``_reading``), the rules with an empty reduction left out
        (they derive nothing), and ``instance`` with the reductions added under their names.
        O(rules · body) plus, per shared variable of each distinct reduction (relation, seed,
        columns), O(n) or O(n log m) for n rows of the relation and m of the seed
        (``member_kernels.matching``), or O(u log(n / u) + output) for u distinct seed values
        by search (``ordered``); O(m) when ``bounds`` gives a (2, arity) range of the
        relation's columns (lows, highs: a range that holds each of its values, or None)
        outside which a shared column's seed values all lie (the reduction is empty: an
        update's fresh constants)."""
        kept: list[Rule] = []
        taken: dict[str, Relation] = {}  # the reductions of this call by name, shared by rules
        for rule in rules:
            literals = self._analysed(rule)
            seed_name, filters = (self._filters(literals, instance, reducible) if literals
                                  else ("", []))
            if not filters:
                kept.append(rule)
                continue
            seed = instance[seed_name].columns
            empty = False
            for relation, shared in filters:
                name = reduction_name(relation, seed_name, shared)
                if name not in taken:
                    rows = instance[relation].columns
                    known = bounds(relation) if bounds is not None else None
                    taken[name] = Relation(
                        rows[:, :0] if known is not None and _outside(known, seed, shared)
                        else self._reduction(rows, seed, shared), unique=True)
                empty = empty or not len(taken[name])
            if not empty:
                kept.append(self._reading(rule, seed_name, filters))
        return kept, (instance.with_relations(taken) if taken else instance)

    def _reduction(self, rows: np.ndarray, seed: np.ndarray,
                   shared: tuple[tuple[int, int], ...]) -> np.ndarray:
        """The ``rows`` whose values in the shared columns occur in the ``seed``'s: the
        rows of the first column's values found by search when the rows are ordered and it
        is shared (``_ranges``), the other columns checked on those, one native pass each
        (``member_kernels.matching_rows``), and one gather of the rows kept (``_gathered``)."""
        at = None
        if self.ordered and shared[0][0] == 0 and rows.shape[1]:
            at = _ranges(rows[0], seed[shared[0][1]])
        if at is not None:
            shared = shared[1:]
        positions = matching_rows(rows, seed, shared, at)
        return rows if positions is None else _gathered(rows, positions)

    def _reading(self, rule: Rule, seed: str, filters: list[Filter]) -> Rule:
        """``rule`` with its literals over the filtered relations reading their reductions by
        ``seed`` (``reduction_name``), made once per rule and reductions (the evaluator then
        plans it once)."""
        key = (seed, tuple(filters))
        variants = self._readings.setdefault(id(rule), (rule, {}))
        if variants[0] is not rule:
            variants = self._readings[id(rule)] = (rule, {})
        reading = variants[1].get(key)
        if reading is None:
            names = {relation: reduction_name(relation, seed, shared)
                     for relation, shared in filters}
            reading = variants[1][key] = with_body(rule, tuple(
                renamed(e, names[e.atom.relation])
                if isinstance(e, Literal) and not e.negated and e.atom.relation in names
                else e for e in rule.body))
        return reading


def reduction_name(relation: str, seed: str, shared: tuple[tuple[int, int], ...]) -> str:
    """The name of ``relation`` reduced by ``seed`` on the ``shared`` (column, seed column)
    pairs, as the rules read it: ``@semijoin:<seed>/<column>=<seed column>,...:<relation>``."""
    columns = ",".join(f"{column}={seed_column}" for column, seed_column in shared)
    return f"{SEMIJOIN_PREFIX}{seed}/{columns}:{relation}"
