"""The terms of a stratum's incremental joins, classed by how they move along an update's
iterations.

In an update, ΔX_i sums at every iteration i the terms of each rule's incremental join over
the previous epoch's values (the inputs, R_{i-1}) and the epoch's changes (the inputs' Δ,
ΔR_{i-1}); the circuit computes δ_i = ΔX_i - ΔX_{i-1}, the terms' change from one iteration to
the next. A term whose delta factors are all input changes moves along the iterations only
through the stratum relations it reads as old values, R_{i-1}. Reading one of them once, it is
linear in it: term(R_{i-1}) - term(R_{i-2}) = term(dR[i-1]), with dR[i-1] the rows the previous
epoch first derived at iteration i-1 (a slice of its trace), so its change is the term over one
slice (``InputTerms.changes``), where evaluating it over R_{i-1} reduced or indexed the whole
prefix and derived all its rows again at every iteration (on TC over graph10000,
``tc(x, y), Δe(y, z)``: a scan of up to 262k rows and 45k derivations sorted per iteration of a
1% insert). Reading none of them, it changes at iteration 0 only.

The other terms (driven by ΔR_{i-1}) are evaluated over R_{i-1} and ΔR_{i-1}, their change the
difference from their last value, except at an iteration whose ΔR_{i-1} equals ΔR_{i-2}: then
those reading R_{i-1} of at most one relation once (``single``) change by their value over the
slice (``sliced``), and those reading more (``multiple``) are evaluated again only if R_{i-1}
grew. (Evaluating one reading ΔR_{i-1} alone over ΔR_{i-1} - ΔR_{i-2} instead reads both
iterations' rows: on TC, whose ΔR_i hold different rows at each iteration, twice the rows.)

The slices are read together, in one evaluation per update: the term reads the trace's rows
(``tagged_rows``, under their own name, ``tagged_name``: the evaluator's kept indexes and the
circuit's kept selections of the growing prefix R_{i-1} are not replaced by them), each tagged
in a first column with the iteration i whose change it drives (i - 1 its slice), carried to
the head; its derivations are then split by tag (``split_by_tag``). Evaluating each slice
apart cost one evaluation's fixed part per iteration (on TC over graph10000, 0.27 ms of a 1%
update's 1.9 ms in these terms).

Before the iterations, each relation the input-driven terms read is reduced once, whole
(``kept_rows``): its trace's rows whose values, in the columns its literal shares with a
term's delta literals, occur in those deltas (a semi-join with every delta literal, one native
pass per shared column: ``member_kernels.matching``). A row left out joins no change, so the
terms over a slice's kept rows derive what they derived over the slice; an iteration whose
slice keeps no row evaluates nothing (on TC over graph10000, one fresh edge kept no row of the
262k, where each of the five slices was reduced and joined on its own). The terms read the kept
rows as they are, with no semi-join reduction of their own: it is by the term's smallest
literal, most often a delta the rows are kept by already (on TC over graph10000 it kept every
row: 0.36 ms of a 1% update for nothing). The sliced terms (``InputTerms.sliced``: those
reading R_{i-1} of one stratum relation once, driven by ΔR too) are read the same way while ΔR
repeats, since their deltas are then fixed: their rows are kept from the slice where the
repetition began (``kept_rows``' ``start``), and ``last_change`` tells the circuit when
neither kind can change any more.

Cost over an update: one scan of the trace per shared column of the input-driven terms,
then each term once over the kept rows of all slices, and one split of its derivations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.incremental.counting_merge import union
from herbrand.evaluators.incremental.counting_selections import (
    Constants,
    holding,
    integer_constants,
)
from herbrand.evaluators.incremental.dbsp.operators import LiftedEvaluation, LiftedRule, old_name
from herbrand.evaluators.incremental.dbsp.trace import Trace
from herbrand.evaluators.incremental.dbsp.zset import ZSet
from herbrand.evaluators.incremental.member_kernels import matching_rows
from herbrand.framework.storage import Relation
from herbrand.framework.syntax import Atom, Literal, Rule, Var
from herbrand.translators.join_ordering import DELTA_PREFIX

Term = tuple[tuple[int, ...], Rule]
# per delta literal of a term: its name, its integer constants and the (slice column, delta
# column) pairs of the variables it shares with the slice's literal
Shared = tuple[tuple[str, Constants, tuple[tuple[int, int], ...]], ...]


def tagged_name(relation: str) -> str:
    """The relation holding rows of ``relation``'s previous trace, each tagged in a first
    column with the iteration whose change it drives (``tagged_rows``)."""
    return "@tagged:" + relation


_TAG = Var("@iteration")


@dataclass(frozen=True)
class InputTerm:
    """One input-driven term of a stratum's rule: the rule's position among the stratum's
    rules, the stratum relation it reads as an old value (None: none) and the term, reading
    that relation's tagged rows (``tagged_name``) in place of its old value, their tag the
    first column of its head."""

    rule: int
    reads: str | None
    term: Term
    # per delta literal of the term, its constants and the (slice column, delta column) pairs
    # of the variables it shares with the slice's literal (none when the term reads no
    # stratum relation)
    shared: Shared = ()


class InputTerms:
    """The input-driven terms of a stratum's ``rules`` (see the module doc), found once."""

    def __init__(self, rules: Sequence[LiftedRule], relations: Sequence[str]):
        stratum = frozenset(relations)
        olds = {old_name(r): r for r in relations}
        found: list[InputTerm] = []
        others: list[list[Term]] = []
        for at, lifted in enumerate(rules):
            rest = []
            for chosen, rule in lifted.terms:
                reads = _reads(rule, olds)
                if len(reads) > 1 or any(lifted.factors[j].relation in stratum for j in chosen):
                    rest.append((chosen, rule))
                    continue
                found.append(_input_term(at, reads[0] if reads else None, chosen, rule))
            others.append(rest)
        self.terms = tuple(found)
        # per rule, the terms left to the circuit's evaluation over R_{i-1} and ΔR_{i-1}
        self.others = tuple(tuple(rest) for rest in others)
        # the stratum relations whose R_{i-1} those terms read (a prefix of the trace, copied
        # into a Relation per iteration): TC's read none
        self.read = frozenset(r for rest in others for _, rule in rest for r in _reads(rule, olds))
        # those terms split: the ones reading R_{i-1} of at most one relation once (linear in
        # it: while ΔR repeats, an iteration adds their value over the slice dR[i-1], the
        # ``sliced`` terms, read like input-driven ones), and the others (evaluated over
        # R_{i-1} again when it grew)
        self.single = tuple(tuple(t for t in rest if len(_reads(t[1], olds)) <= 1)
                            for rest in others)
        self.sliced = tuple(_input_term(at, r, chosen, rule)
                            for at, single in enumerate(self.single) for chosen, rule in single
                            for r in _reads(rule, olds))
        self.multiple = tuple(tuple(t for t in rest if len(_reads(t[1], olds)) > 1)
                              for rest in others)
        self.multiple_read = frozenset(r for rest in self.multiple for _, rule in rest
                                       for r in _reads(rule, olds))

    def changes(self, traces: Mapping[str, Trace], kept: Mapping[str, np.ndarray | None],
                evaluation: Callable[[Mapping[str, Relation]], LiftedEvaluation],
                rules: Sequence[LiftedRule]) -> dict[int, dict[str, ZSet]]:
        """Per iteration i, the change of the input-driven terms' sum from i - 1 to i, per
        head relation (none where it is empty): at 0 the terms reading no stratum relation,
        at i > 0 the others over dR[i-1] of the previous epoch's ``traces``, only its rows
        that ``kept_rows`` keeps (``kept``), all iterations in one evaluation
        (``evaluated``); ``evaluation(old)``: a LiftedEvaluation over ``old`` with the
        epoch's input changes. O(the terms' joins over the kept rows)."""
        return evaluated(self.terms, {r: tagged_rows(traces[r], kept[r])
                                      for r in {t.reads for t in self.terms} - {None}},
                         evaluation, rules)


def evaluated(wanted: Sequence[InputTerm], tagged: Mapping[str, Relation],
              evaluation: Callable[[Mapping[str, Relation]], LiftedEvaluation],
              rules: Sequence[LiftedRule]) -> dict[int, dict[str, ZSet]]:
    """Per iteration, the sum of the terms ``wanted`` over the tagged rows ``tagged``
    (``tagged_rows``) of the relations they read, per head relation (none where it is
    empty): each term's derivations go to the iterations of the rows they read, a term
    reading no stratum relation's to 0. One evaluation of each term over all the rows: the
    derivations come in the rows' order, so they are split by slicing (by a stable radix
    sort of the tags otherwise), and consolidated per iteration (``ZSet.of``); a term over no
    row is not evaluated. O(the terms' joins over the rows)."""
    wanted = [t for t in wanted if t.reads is None or len(tagged[t.reads])]
    if not wanted:
        return {}
    step = evaluation({tagged_name(r): rows for r, rows in tagged.items()})
    bags: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
    out: dict[int, dict[str, ZSet]] = {}
    for t in wanted:
        lifted = rules[t.rule]
        if t.reads is None:
            value = step.change(lifted, (t.term,))
            if len(value):
                into = out.setdefault(0, {})
                into[lifted.head] = into[lifted.head] + value if lifted.head in into else value
            continue
        found = step.bag(lifted, (t.term,), tags=1)
        if found is not None:
            rows, weights = found
            bags.setdefault(lifted.head, []).append((rows[0], rows[1:], weights))
    for head, parts in bags.items():  # (tags from 1 on: the untagged terms' 0 is apart)
        found = (parts[0] if len(parts) == 1 else
                 (np.concatenate(p, axis=-1) for p in zip(*parts, strict=True)))
        for at, value in split_by_tag(*found).items():
            out.setdefault(at, {})[head] = value
    return out


def split_by_tag(tags: np.ndarray, rows: np.ndarray, weights: np.ndarray) -> dict[int, ZSet]:
    """A bag of ``rows`` (arity, n) with ``weights`` consolidated per tag (non-negative ints,
    one per row), for the tags that hold a row, in their order. Tags ascending (as the
    derivations over tagged rows mostly come) are split by slicing; others first by a stable
    radix sort (numpy's, on the narrowest unsigned type of the tags). O(n + the sort of
    each part's rows, ``ZSet.of``)."""
    if not (tags[1:] >= tags[:-1]).all():
        order = np.argsort(tags.astype(np.min_scalar_type(tags.max())), kind="stable")
        tags, rows, weights = tags[order], rows[:, order], weights[order]
    first, last = int(tags[0]), int(tags[-1])
    bounds = np.searchsorted(tags, np.arange(first, last + 2))
    return {at: ZSet.of(rows[:, lo:hi], weights[lo:hi])
            for at, lo, hi in zip(range(first, last + 1), bounds[:-1], bounds[1:], strict=True)
            if hi > lo}


def kept_rows(terms: Sequence[InputTerm], traces: Mapping[str, Trace],
              deltas: Mapping[str, ZSet], start: int = 0) -> dict[str, np.ndarray | None]:
    """Per stratum relation that ``terms`` read, the ascending positions in its trace
    (``traces``), among the rows of the slices from ``start`` on, of the rows that may join
    the changes ``deltas`` (delta name -> Z-set) in one of those terms: a row is kept for a
    term when its values in the columns shared with each of the term's delta literals occur
    in that delta's rows holding the delta literal's constants (a term with an unchanged
    delta, or none of whose rows holds them, keeps none); None (every row) when a term shares
    no column with its deltas. O(n) per shared column for the n rows from ``start``
    (``matching``), once per distinct (relation, ``InputTerm.shared``)."""
    kept: dict[str, np.ndarray | None] = {}
    seen = set()
    for t in terms:
        if (t.reads is None or (t.reads in kept and kept[t.reads] is None)
                or (t.reads, t.shared) in seen):
            continue
        seen.add((t.reads, t.shared))
        trace = traces[t.reads]
        offsets = trace.offsets
        first = int(offsets[min(start, len(offsets)) - 1]) if start > 0 and len(offsets) else 0
        positions = _joining(trace.relation.columns[:, first:], t.shared, deltas)
        if positions is not None:
            positions = positions + first
        before = kept.get(t.reads)
        kept[t.reads] = (positions if positions is None or before is None
                         else union(before, positions))
    return kept


def last_change(traces: Mapping[str, Trace], kept: Mapping[str, np.ndarray | None]) -> int:
    """The last iteration at which terms over the slices of ``kept``'s rows (``kept_rows``)
    can change: 0 when it keeps no row, else 1 + the last iteration of the previous epoch's
    traces (``traces``) whose slice holds one. O(relations)."""
    last = 0
    for r, positions in kept.items():
        offsets = traces[r].offsets
        if positions is None:
            last = max(last, len(offsets))
        elif len(positions):
            last = max(last, int(np.searchsorted(offsets, positions[-1], side="right")) + 1)
    return last


_NONE = np.zeros(0, dtype=np.int64)


def tagged_rows(trace: Trace, kept: np.ndarray | None, first: int = 0,
                stop: int | None = None) -> Relation:
    """The rows of ``trace``'s slices dR[first], ..., dR[stop - 1] (to its last when
    ``stop`` is None; only those at the ascending positions ``kept`` when given), in its
    order, each with j + 1 in a first column for dR[j]: the iteration at which a term over it
    changes. O(depth log k + the rows taken)."""
    offsets, columns = trace.offsets, trace.relation.columns
    if kept is not None and not len(kept):
        return Relation(np.zeros((columns.shape[0] + 1, 0), dtype=np.int64), unique=True)
    stop = len(offsets) if stop is None else min(stop, len(offsets))
    first = min(max(first, 0), stop)
    edges = np.concatenate(([0], offsets[:stop]))[first:]  # the slices' starts, the last end
    if kept is not None:
        edges = np.searchsorted(kept, edges)
    lo, hi = int(edges[0]), int(edges[-1])
    out = np.empty((columns.shape[0] + 1, hi - lo), dtype=np.int64)
    out[0] = np.repeat(np.arange(first + 1, stop + 1), edges[1:] - edges[:-1])
    if kept is None:
        out[1:] = columns[:, lo:hi]
    else:
        np.take(columns, kept[lo:hi], axis=1, out=out[1:], mode="clip")  # (in range)
    return Relation(out, unique=True)


def _input_term(at: int, read: str | None, chosen: tuple[int, ...], rule: Rule) -> InputTerm:
    """The term (``chosen``, ``rule``) of the ``at``-th rule reading the tagged rows of
    ``read`` (None: no stratum relation) in place of its old value."""
    if read is None:
        return InputTerm(at, read, (chosen, rule))
    return InputTerm(at, read, (chosen, _tagged(rule, read)), _shared(rule, old_name(read)))


def _shared(rule: Rule, name: str) -> Shared:
    """Per delta literal of ``rule``, its name, its integer constants and the (column of the
    literal over ``name``, column of the delta literal) pairs of the variables they share
    (the first column of each)."""
    (atom,) = [e.atom for e in rule.body if isinstance(e, Literal) and e.atom.relation == name]
    columns: dict[Var, int] = {}
    for column, term in enumerate(atom.terms):
        if isinstance(term, Var):
            columns.setdefault(term, column)
    out = []
    for e in rule.body:
        if isinstance(e, Literal) and e.atom.relation.startswith(DELTA_PREFIX):
            pairs: dict[Var, tuple[int, int]] = {}
            for column, term in enumerate(e.atom.terms):
                if isinstance(term, Var) and term in columns:
                    pairs.setdefault(term, (columns[term], column))
            out.append((e.atom.relation, integer_constants(e.atom), tuple(pairs.values())))
    return tuple(out)


def _joining(columns: np.ndarray, shared: Shared, deltas: Mapping[str, ZSet]
             ) -> np.ndarray | None:
    """The ascending positions of the (arity, n) ``columns`` whose values in each delta
    literal's shared columns occur in that delta's rows holding its constants
    (``InputTerm.shared``): none when a delta is unchanged or no row of it holds them, None
    (all) when no column is shared. One ``matching`` pass per pair, over the rows kept so far
    (``matching_rows``)."""
    positions = None
    for name, constants, pairs in shared:
        delta = deltas.get(name)
        if delta is None or not len(delta):
            return _NONE
        rows = delta.rows
        if constants:
            rows = rows[:, holding(rows, constants)]
            if not rows.shape[1]:
                return _NONE
        positions = matching_rows(columns, rows, pairs, positions)
    return positions


def _reads(rule: Rule, olds: Mapping[str, str]) -> list[str]:
    """The stratum relations whose old values (``olds``: old name -> relation) ``rule`` reads,
    once per literal."""
    return [olds[e.atom.relation] for e in rule.body
            if isinstance(e, Literal) and e.atom.relation in olds]


def _tagged(rule: Rule, relation: str) -> Rule:
    """``rule`` reading the tagged rows of ``relation`` in place of its old value, the tag
    the first column of its head."""
    body = tuple(Literal(Atom(tagged_name(relation), (_TAG, *e.atom.terms)))
                 if isinstance(e, Literal) and e.atom.relation == old_name(relation) else e
                 for e in rule.body)
    return Rule(Atom(rule.head.relation, (_TAG, *rule.head.terms)), body, rule.location)
