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

A slice is read under its own name (``slice_name``): the evaluator's kept indexes and the
circuit's kept selections of the growing prefix R_{i-1} are not replaced by it.

Cost over an update: each input-driven term over each row of the previous epoch's trace once
(a scan of the slices for a semi-join reduction, or one index build each).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from herbrand.evaluators.incremental.dbsp.operators import LiftedEvaluation, LiftedRule, old_name
from herbrand.evaluators.incremental.dbsp.zset import ZSet
from herbrand.evaluators.incremental.programs import renamed, with_body
from herbrand.framework.storage import Relation
from herbrand.framework.syntax import Literal, Rule

Term = tuple[tuple[int, ...], Rule]


def slice_name(relation: str) -> str:
    """The relation holding one iteration's slice of ``relation``'s previous trace."""
    return "@slice:" + relation


@dataclass(frozen=True)
class InputTerm:
    """One input-driven term of a stratum's rule: the rule's position among the stratum's
    rules, the stratum relation it reads as an old value (None: none) and the term, reading
    that relation's slice under ``slice_name`` in place of its old value."""

    rule: int
    reads: str | None
    term: Term


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
                read = reads[0] if reads else None
                found.append(InputTerm(at, read, (chosen, _sliced(rule, read))))
            others.append(rest)
        self.terms = tuple(found)
        # per rule, the terms left to the circuit's evaluation over R_{i-1} and ΔR_{i-1}
        self.others = tuple(tuple(rest) for rest in others)
        # the stratum relations whose R_{i-1} those terms read (a prefix of the trace, copied
        # into a Relation per iteration): TC's read none
        self.read = frozenset(r for rest in others for _, rule in rest for r in _reads(rule, olds))
        # those terms split: the ones reading R_{i-1} of at most one relation once (linear in
        # it: while ΔR repeats, an iteration adds their value over the slice dR[i-1], the
        # ``sliced`` rules), and the others (evaluated over R_{i-1} again when it grew)
        self.single = tuple(tuple(t for t in rest if len(_reads(t[1], olds)) <= 1)
                            for rest in others)
        self.sliced = tuple(tuple((r, (chosen, _sliced(rule, r))) for chosen, rule in single
                                  for r in _reads(rule, olds)) for single in self.single)
        self.multiple = tuple(tuple(t for t in rest if len(_reads(t[1], olds)) > 1)
                              for rest in others)
        self.multiple_read = frozenset(r for rest in self.multiple for _, rule in rest
                                       for r in _reads(rule, olds))

    def changes(self, i: int, slices: Callable[[str, int], Relation],
                evaluation: Callable[[Mapping[str, Relation]], LiftedEvaluation],
                rules: Sequence[LiftedRule]) -> dict[str, ZSet]:
        """The change of the input-driven terms' sum from iteration i - 1 to ``i``, per head
        relation (none where it is empty): at 0 the terms reading no stratum relation, at
        i > 0 the others over dR[i-1]. ``slices(r, j)``: dR[j] of the previous epoch's trace
        of ``r``; ``evaluation(old)``: a LiftedEvaluation over ``old`` with the epoch's input
        changes. O(the terms' joins over the slices)."""
        wanted = [t for t in self.terms if (t.reads is None) == (i == 0)]
        parts = {r: slices(r, i - 1) for r in {t.reads for t in wanted} - {None}}
        wanted = [t for t in wanted if t.reads is None or len(parts[t.reads])]
        if not wanted:
            return {}
        step = evaluation({slice_name(r): part for r, part in parts.items()})
        out: dict[str, ZSet] = {}
        for t in wanted:
            head = rules[t.rule].head
            value = step.change(rules[t.rule], (t.term,))
            out[head] = out[head] + value if head in out else value
        return out


def _reads(rule: Rule, olds: Mapping[str, str]) -> list[str]:
    """The stratum relations whose old values (``olds``: old name -> relation) ``rule`` reads,
    once per literal."""
    return [olds[e.atom.relation] for e in rule.body
            if isinstance(e, Literal) and e.atom.relation in olds]


def _sliced(rule: Rule, relation: str | None) -> Rule:
    """``rule`` reading the slice of ``relation`` in place of its old value (None: itself)."""
    if relation is None:
        return rule
    return with_body(rule, tuple(
        renamed(e, slice_name(relation))
        if isinstance(e, Literal) and e.atom.relation == old_name(relation) else e
        for e in rule.body))
