"""One stratum as a DBSP circuit over nested time (epoch, iteration).

Inside an epoch the stratum is the recursive circuit R_i = distinct(X_i), X_i = Π(R_{i-1})
(R_{-1} empty; Π the sum of the stratum's lifted rules over R and the stratum's inputs). Its
state (``Trace``, per relation) is the differentiated inner streams, integrated over all past
epochs:

- dR[i] = R_i - R_{i-1}: the rows first derived at iteration i. Stored without weights, as the
  relation's rows ordered by first iteration with ``offsets`` (R_i is a prefix of the rows);
- dX[i] = X_i - X_{i-1}: Z-sets of derivation counts, whose integral X_i the incremental
  distinct reads; stored as ``Counts``, per row the iterations where dX is non-zero with the
  running sum X_i there, so that X_i of a row is one lookup.

``bootstrap`` runs the circuit along iterations: dX[i] is the lifted join of the last
iteration's new rows dR[i-1] against R_{i-2} (semi-naive evaluation, with exact counts), and
dR[i] the incremental distinct of X_{i-1} under dX[i].

``update`` runs it along epochs, iteration by iteration: ΔX_i is the lifted join of the
epoch's changes (inputs, and ΔR_{i-1} of this stratum) against the previous epoch's values
(inputs, R_{i-1}), ΔR_i the incremental distinct of X_i under ΔX_i; the state then takes
dX[i] += ΔX_i - ΔX_{i-1} and dR[i] += ΔR_i - ΔR_{i-1} (the changes differentiated along
iterations). The loop computes δ_i = ΔX_i - ΔX_{i-1} itself, each group of terms' change
from the last iteration (``InputTerms``: an input-driven term's is its value over one slice of
the previous trace), and keeps one running sum ΔX_i = ΔX_{i-1} + δ_i for the distinct (δ_i's
summands and ΔX_{i-1} summed in one pass, ``zset.summed``); no stream is summed or
differentiated apart. It stops at the first iteration i where
ΔR_i = ΔR_{i-1} and the previous epoch's streams no longer move iteration i + 1
(``Trace.settled_from``): ΔX_{i+1} would equal ΔX_i, so both epochs have reached their
fixpoint. It stops there earlier when no term can change past i (the input-driven and the
sliced terms, below, keep no row of a later slice, the other terms read no R_{i-1} that grows
past i, the rule stream has ended) and no count of ΔX_i's rows changes after i
(``CountReads.settled``): ΔX and ΔR then hold at every later iteration (one fresh fact: TC
over graph10000 runs 2 iterations of 6, RDFS over LUBM(1) 2 of 4).

A rule change is an update too: the rules a stratum gains (or loses) add their derivations over
the previous epoch's R_{i-1} (or subtract them) to ΔX_i, replayed semi-naively over the trace.

Cost of an update: per iteration, the lifted join's terms (joins from the deltas) plus lookups
of the deltas' rows in the stored counts (one binary search each, but for the rows read at the
last iteration whose counts did not change since: ``count_reads``); the terms that only input
changes drive change by their value over the previous trace's slices (``input_terms``: all
the slices' kept rows in one evaluation per update, tagged by iteration);
then, per changed relation, O(n) to merge the moved rows into the trace, and the dX changes
added to the counts (to their recent changes, unsorted until read; O(N) amortised over the
updates whose changes wait above the entries, ``counts``). At an iteration whose ΔR repeats
the last one's, the other terms that read R_{i-1} of at most one relation once change by
their value over its slice dR[i-1] likewise (``InputTerms.sliced``), read as the input-driven
terms' are: over the rows of the slices that may join the repeated ΔR, kept once when the
repetition begins (``kept_rows`` from its slice on), and the rest are evaluated again only
when an R_{i-1} they read grew.
The old values' constant selections (a literal such as ``m(a, 1, b)`` over R_{i-1}) are
prefixes of the traces' kept selections, carried from trace to trace (``trace_selections``),
not taken again from each R_{i-1}.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import partial

import numpy as np

from herbrand.evaluators.incremental.counting_selections import (
    GrowingSelections,
    selected_constants,
)
from herbrand.evaluators.incremental.counting_semijoins import Semijoins
from herbrand.evaluators.incremental.dbsp.count_reads import CountReads
from herbrand.evaluators.incremental.dbsp.input_terms import (
    InputTerms,
    Term,
    evaluated,
    kept_rows,
    last_change,
    tagged_rows,
)
from herbrand.evaluators.incremental.dbsp.operators import (
    LiftedEvaluation,
    LiftedRule,
    accumulated,
    delta_name,
    negation_delta,
    old_name,
)
from herbrand.evaluators.incremental.dbsp.trace import Trace, rows_at
from herbrand.evaluators.incremental.dbsp.zset import ZSet, incremental_distinct, summed
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.framework.analysis import rule_literals
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Const, Literal


class StratumCircuit:
    """The circuit of one stratum (its lifted rules and relations), built once per stratum
    and run for its bootstrap and for each update (one run at a time)."""

    def __init__(self, rules: Sequence[LiftedRule], relations: Sequence[str],
                 arities: Mapping[str, int], evaluator: RelationalEvaluator,
                 semijoins: Semijoins | None = None):
        """``semijoins``: the engine's semi-join reductions (kept across its circuits, so
        that each rule is analysed once), or None."""
        self.rules = rules
        self.relations = tuple(relations)
        self.arities = arities
        self.evaluator = evaluator
        self.negated = tuple(dict.fromkeys(f for r in rules for f in r.factors if f.negated))
        # the old values grow along the iterations of one run: their constant selections are
        # kept and extended, and dropped when the run ends
        self.selections = GrowingSelections({old_name(lit.atom.relation) for r in rules
                                             for lit, _ in rule_literals(r.rule)})
        # the old values of the stratum's relations change in each iteration: a join reads
        # them reduced by its term's change (a scan) rather than through an index grown
        # again in every update, where one term alone reads them plainly (an index serves
        # every term that probes it; a reduction is one scan per term, and takes the name)
        self.semijoins = semijoins
        readers = Counter(lit.atom.relation for r in rules for _, term in r.terms
                          for lit in term.body if isinstance(lit, Literal) and not lit.negated
                          and not any(isinstance(t, Const) for t in lit.atom.terms))
        self.reducible = frozenset(old_name(r) for r in self.relations
                                   if readers[old_name(r)] == 1)
        self.inputs = InputTerms(rules, self.relations)
        # per stratum relation, the constant selections its old value is read through
        # (``Trace.selected``), made by the bootstrap for the first update
        self.selected = {r: tuple(dict.fromkeys(
            constants for rule in rules for lit, _ in rule_literals(rule.rule)
            if lit.atom.relation == r and (constants := selected_constants(lit))))
            for r in self.relations}
        self.reads: dict = {}  # the terms' analyses by rule identity (LiftedEvaluation's)

    def _evaluation(self, symbols: SymbolTable, old: Mapping[str, Relation],
                    deltas: Mapping[str, ZSet], traces: Mapping[str, Trace] | None = None,
                    i: int = 0) -> LiftedEvaluation:
        """A ``LiftedEvaluation`` over ``old`` and ``deltas`` with this circuit's evaluator,
        kept constant selections and semi-join reductions; with ``traces``, the old values
        of those relations are R_i and their selections the traces' (``Trace.selected``)."""
        selected = None if traces is None else {
            old_name(r): partial(trace.selected, i=i) for r, trace in traces.items()}
        return LiftedEvaluation(self.evaluator, symbols, old, deltas, self.selections,
                                self.semijoins, self.reducible, selected, self.reads)

    def _changes(self, lifted: LiftedEvaluation,
                 terms: Sequence[Sequence[Term]] | None = None) -> dict[str, ZSet]:
        """Each relation's change from its rules' terms (of ``terms[k]`` alone for the k-th
        rule when given; a rule given none is passed over)."""
        out = {r: ZSet.empty(self.arities[r]) for r in self.relations}
        for at, rule in enumerate(self.rules):
            if terms is None:
                out[rule.head] = out[rule.head] + lifted.change(rule)
            elif terms[at]:
                out[rule.head] = out[rule.head] + lifted.change(rule, terms[at])
        return out

    def bootstrap(self, inputs: Mapping[str, Relation], symbols) -> dict[str, Trace]:
        """Run the circuit along iterations from empty relations over ``inputs`` (every
        relation the stratum reads). Returns the traces, with the constant selections that
        updates read of them (``selected``) made."""
        try:
            traces = self._bootstrapped(inputs, symbols)
        finally:
            self.selections.release(rewrites=False)
        for r, trace in traces.items():
            trace.selections.take(trace.relation.columns, self.selected[r])
        return traces

    def _bootstrapped(self, inputs: Mapping[str, Relation], symbols) -> dict[str, Trace]:
        empty = {r: Relation.empty(self.arities[r]) for r in self.relations}
        start = self._evaluation(symbols, {**inputs, **empty}, {})
        x = {r: ZSet.empty(self.arities[r]) for r in self.relations}
        for rule in self.rules:
            x[rule.head] = x[rule.head] + start.full(rule)
        dx = {r: [x[r]] for r in self.relations}
        new = {r: x[r].distinct() for r in self.relations}
        found = {r: [new[r].columns] for r in self.relations}
        values = dict(empty)
        while any(len(n) for n in new.values()):
            step = self._evaluation(symbols, {**inputs, **values},
                                    {delta_name(r): ZSet.of_set(new[r].columns)
                                     for r in self.relations})
            values = {r: values[r].extend(new[r]) for r in self.relations}
            change = self._changes(step)
            for r in self.relations:
                before = accumulated(dx[r], change[r], len(dx[r]) - 1)
                dx[r].append(change[r])
                new[r] = incremental_distinct(before, change[r]).distinct()
                found[r].append(new[r].columns)
        return {r: Trace.of(np.concatenate(found[r], axis=1),
                            np.repeat(np.arange(len(found[r])),
                                      [b.shape[1] for b in found[r]]), dx[r])
                for r in self.relations}

    def update(self, traces: Mapping[str, Trace], old: Mapping[str, Relation],
               new: Mapping[str, Relation], input_changes: Mapping[str, ZSet],
               symbols, rule_changes: Sequence[tuple[LiftedRule, int]] = (),
               budget: int | None = None) -> tuple[dict[str, Trace], dict[str, ZSet]] | None:
        """One epoch: the stratum's inputs go from ``old`` to ``new`` (their changes as
        ``input_changes``), and each rule of ``rule_changes`` joins (weight +1) or leaves (-1)
        the stratum: ``self.rules`` are the rules after the change, and ``traces`` the state
        of the rules before it. Returns the new traces and each relation's change.

        A rule change is one more input Z-set of the circuit: ΔX_i gains the changed rule's
        derivations over the previous epoch's R_{i-1} times its weight (``_rule_stream``), so
        the cost is those derivations plus the propagation of what they change.

        ``budget``: give up (return None, nothing changed) once the changed rules' derivations
        exceed half of it, or they plus the rows of ΔR summed over iterations exceed it. ΔR_i
        is the whole difference of R_i between the epochs, so a change that grows R_i over
        many iterations (a recursive rule added to a shallow stratum) costs about depth ×
        change, more than a bootstrap."""
        try:
            return self._updated(traces, old, new, input_changes, symbols, rule_changes, budget)
        finally:
            self.selections.release(rewrites=False)

    def _updated(self, traces: Mapping[str, Trace], old: Mapping[str, Relation],
                 new: Mapping[str, Relation], input_changes: Mapping[str, ZSet], symbols,
                 rule_changes: Sequence[tuple[LiftedRule, int]], budget: int | None
                 ) -> tuple[dict[str, Trace], dict[str, ZSet]] | None:
        deltas = {delta_name(name): z for name, z in input_changes.items()}
        for factor in self.negated:
            if factor.relation in input_changes:
                deltas[factor.delta] = negation_delta(factor, old[factor.relation],
                                                      new[factor.relation])
        rule_stream, work = self._rule_stream(traces, old, rule_changes, symbols, budget)
        if rule_stream is None:
            return None
        settled_from = max(max(t.settled_from for t in traces.values()), len(rule_stream) - 1)
        reads = {r: CountReads(traces[r].counts) for r in self.relations}
        now = {r: ZSet.empty(self.arities[r]) for r in self.relations}  # ΔR_{i-1}
        x = dict(now)  # ΔX_{i-1}
        moved = dict(now)  # ΔR_{i-1} - ΔR_{i-2}
        dx_stream = {r: [] for r in self.relations}  # δ_i = ΔX_i - ΔX_{i-1}
        x_stream = {r: [] for r in self.relations}  # ΔX_i
        dr_stream = {r: [] for r in self.relations}  # ΔR_i - ΔR_{i-1}

        def over_kept(slices: Mapping[str, Relation],
                      changes: Mapping[str, ZSet] = deltas) -> LiftedEvaluation:
            """The evaluation over ``slices`` (tagged rows, ``tagged_rows``, of kept rows:
            ``kept_rows``) and ``changes``, not reducing the slices: they are semi-joined
            with the changes already."""
            return LiftedEvaluation(self.evaluator, symbols, {**old, **slices}, changes,
                                    self.selections, None, frozenset(slices),
                                    reads=self.reads)

        # the values at the last iteration of the terms left to the evaluation over R_{i-1}
        # and ΔR_{i-1} (``InputTerms.others``): those that read R_{i-1} of at most one
        # relation once (single) and the others (multiple). When ΔR repeats the last
        # iteration's, the single ones change by their value over the slices dR[i-1] (none
        # where the previous epoch's trace derived nothing first at i - 1), and the multiple
        # ones only if an R_{i-1} they read grew
        single = {r: ZSet.empty(self.arities[r]) for r in self.relations}
        multiple = dict(single)
        # the rows of the traces that the input-driven terms may join with these changes
        kept = kept_rows(self.inputs.terms, traces, deltas)
        # past this iteration, while ΔR repeats, no term changes but the sliced ones: the
        # input-driven terms read no kept row, no R_{i-1} that the multiple ones read grows,
        # the rule stream has ended
        quiet_from = max([last_change(traces, kept), len(rule_stream) - 1]
                         + [len(traces[r].offsets) for r in self.inputs.multiple_read])
        # while ΔR repeats, the rows of the traces' slices from where it began that the
        # sliced terms may join with it (None: not taken since ΔR last changed)
        tail: dict[str, np.ndarray | None] | None = None

        # per iteration, the input-driven terms' change (one evaluation for all)
        inputs = self.inputs.changes(traces, kept, over_kept, self.rules)
        i = 0
        while True:
            parts = {r: [] for r in self.relations}  # δ_i's summands
            _add(parts, inputs.get(i, {}))
            repeated = i > 0 and not any(len(m) for m in moved.values())
            grown = {r for r in self.inputs.read if rows_at(traces[r], i - 1).shape[1]}
            changed = {**deltas, **{delta_name(r): now[r] for r in self.relations}}
            if any(self.inputs.others) and (not repeated or grown & self.inputs.multiple_read):
                values = {r: traces[r].value(i - 1 if r in self.inputs.read else -1)
                          for r in self.relations}
                step = self._evaluation(symbols, {**old, **values}, changed,
                                        {r: traces[r] for r in self.inputs.read}, i - 1)
                if not repeated:
                    value = self._changes(step, self.inputs.single)
                    _add(parts, value, single)
                    single = value
                value = self._changes(step, self.inputs.multiple)
                _add(parts, value, multiple)
                multiple = value
            if repeated and grown:
                if tail is None:
                    tail = kept_rows(self.inputs.sliced, traces, changed, i - 1)
                wanted = [t for t in self.inputs.sliced if t.reads in grown]
                added = evaluated(wanted, {t.reads: tagged_rows(traces[t.reads], tail[t.reads],
                                                                i - 1, i) for t in wanted},
                                  partial(over_kept, changes=changed), self.rules).get(i, {})
                _add(parts, added)
                for r, value in added.items():
                    single[r] = single[r] + value
            if i < len(rule_stream):
                _add(parts, rule_stream[i])
            for r in self.relations:
                delta, x[r] = summed(x[r], parts[r])
                if reads[r].holds(x[r], i):  # ΔX_i and X_i of its rows as at i - 1
                    moved[r] = ZSet.empty(self.arities[r])
                else:
                    dr = incremental_distinct(reads[r].at(x[r], i), x[r])
                    moved[r], now[r] = dr - now[r], dr
                dx_stream[r].append(delta)
                x_stream[r].append(x[r])
                dr_stream[r].append(moved[r])
                work += len(now[r])
            if budget is not None and work > budget:
                return None
            if any(len(m) for m in moved.values()):
                tail = None
            elif i >= settled_from:
                break
            elif i >= quiet_from and all(reads[r].settled(x[r]) for r in self.relations):
                if tail is None:
                    tail = kept_rows(self.inputs.sliced, traces, {
                        **deltas, **{delta_name(r): now[r] for r in self.relations}}, i)
                if i >= last_change(traces, tail):
                    break
            i += 1
        result = {r: self._retraced(traces[r], dx_stream[r], x_stream[r], dr_stream[r])
                  for r in self.relations}
        return result, now

    def _rule_stream(self, traces: Mapping[str, Trace], old: Mapping[str, Relation],
                     rule_changes: Sequence[tuple[LiftedRule, int]], symbols,
                     budget: int | None) -> tuple[list[dict[str, ZSet]] | None, int]:
        """Per iteration i, the differentiated derivations of the changed rules (times their
        weights) over the previous epoch: Σ w · (r(R_{i-1}) - r(R_{i-2})), the semi-naive
        replay of the rules over the trace (each of their derivations is found once). Its
        running sum is the rules' share of X_i. Empty without rule changes; None once the
        derivations exceed half of ``budget`` (their propagation costs a multiple of them, so
        the change is given up early). Also returns the number of derivations."""
        if not rule_changes:
            return [], 0
        stream, work = [], 0
        depth = max(len(traces[r].offsets) for r in self.relations)
        for i in range(depth + 1):
            values = {r: traces[r].value(i - 2) for r in self.relations}
            news = {delta_name(r): ZSet.of_set(rows_at(traces[r], i - 1))
                    for r in self.relations}
            step = self._evaluation(symbols, {**old, **values}, news)
            out = {r: ZSet.empty(self.arities[r]) for r in self.relations}
            for lifted, weight in rule_changes:
                found = step.full(lifted) if i == 0 else step.change(lifted)
                out[lifted.head] = out[lifted.head] + (found if weight > 0 else -found)
                work += len(found)
            if budget is not None and 2 * work > budget:
                return None, work
            stream.append(out)
        return stream, work

    def _retraced(self, trace: Trace, dx_stream: list[ZSet], x_stream: list[ZSet],
                  moves: list[ZSet]) -> Trace:
        """The trace after an epoch whose changes, differentiated along the iterations, were
        ``dx_stream`` (ΔX_i - ΔX_{i-1}, whose running sums are ``x_stream``) and ``moves``
        (ΔR_i - ΔR_{i-1})."""
        counts = trace.counts.plus(dx_stream, x_stream)
        if not any(len(m) for m in moves):
            return trace.with_counts(counts)
        left, left_at = _by_iteration(moves, ZSet.negative)
        joined, joined_at = _by_iteration(moves, ZSet.positive)
        # a row that joins an iteration and existed has left its old one: ``left`` holds it
        return trace.moved(left, left_at, joined, joined_at, counts)


def _add(into: dict[str, list[ZSet]], change: Mapping[str, ZSet],
         less: Mapping[str, ZSet] | None = None) -> None:
    """Add ``change`` (less ``less``) to the summands ``into``, relation by relation (empty
    ones passed over)."""
    for r, value in change.items():
        if len(value):
            into[r].append(value)
        if less is not None and len(less[r]):
            into[r].append(-less[r])


def _by_iteration(moves: Sequence[ZSet], part: Callable[[ZSet], np.ndarray]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``part`` takes of each iteration's Z-set of ``moves`` in one block, and the
    iteration of each (sorted by iteration, then as each Z-set's rows are: in the traces'
    order); iterations without moves are passed over."""
    blocks = {j: part(m) for j, m in enumerate(moves) if len(m)}
    return (np.concatenate(list(blocks.values()), axis=1),
            np.repeat(np.fromiter(blocks, dtype=np.int64, count=len(blocks)),
                      [b.shape[1] for b in blocks.values()]))
