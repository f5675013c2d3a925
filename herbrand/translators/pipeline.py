"""Datalog rules to relational-algebra plans: the default pipeline of passes, and printing.

``translate_rule`` starts from ``Pending.of(rule)`` and applies each pass in turn; a pass is a
pure function ``plan -> plan``, which may also take keyword-only hints it declares by name, as
SQLGlot's optimizer rules do: ``sizes`` (relation name -> number of rows). Callers may pass
their own sequence of passes; the default one is the steps of Algorithm 1 of the
materialization study, extended to negation, comparisons, arithmetic and aggregates, then
optimisations:

    body_to_products                  positive atoms -> a product of Scans
    constants_to_selections           constants -> SelectByValue
    repeated_variables_to_selections  repeated variables -> SelectByColumns
    comparisons_to_filters            comparisons -> Filter; ``x = expr`` -> Map
    aggregates_to_nodes               aggregates -> Aggregate (and the comparisons on them)
    negation_to_antijoins             negated atoms -> Antijoin
    head_projection                   the head -> Project (and Map for head expressions)
    selections_to_joins               SelectByColumns over products -> Join keys
    order_joins                       join order: connected, delta, most bound, smallest
    push_down_selections              selections and filters as low as possible

>>> from herbrand.framework.parser import parse
>>> print(format_plan(translate_rule(parse("path(x, z) :- path(x, y), edge(y, z).").rules[0])))
Project [0, 3]
  Join left=[1] right=[0]
    Scan path/2
    Scan edge/2
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Collection, Mapping, Sequence

from herbrand.framework.analysis import rule_literals
from herbrand.framework.syntax import Atom, Literal, Program, Rule
from herbrand.translators.aggregates_to_nodes import LOWERING_PASSES
from herbrand.translators.ir import Plan, TranslationError, walk
from herbrand.translators.join_ordering import DELTA_PREFIX, order_joins
from herbrand.translators.pending import Pending
from herbrand.translators.selection_pushdown import push_down_selections
from herbrand.translators.selections_to_joins import selections_to_joins

Pass = Callable[..., Plan]

DEFAULT_PASSES: tuple[Pass, ...] = (
    *LOWERING_PASSES,
    selections_to_joins,
    order_joins,
    push_down_selections,
)


def translate_rule(
    rule: Rule,
    passes: Sequence[Pass] = DEFAULT_PASSES,
    *,
    delta: Collection[int] = frozenset(),
    sizes: Mapping[str, int] | None = None,
) -> Plan:
    """The plan of ``rule``: its output columns are the head's terms, in order.

    ``delta``: positions in ``rule.body`` of positive atoms that read their relation's delta
    (``DELTA_PREFIX + name``) instead: the rule's semi-naive variant. ``sizes`` is passed to the
    passes that take it, restricted to the relations the rule reads. Raises TranslationError naming the rule when it cannot be lowered
    (unsafe), ValueError when a ``delta`` position is not a positive atom. Cost: each pass is
    linear or quadratic in the size of the rule, the first time; the plan is kept
    (``_translated``), so a rule translated again with the same passes and the same order of
    its relations' sizes costs a walk of the rule and a look-up.
    """
    rule = delta_variant(rule, delta)
    passes = tuple(passes)
    return _translated(rule, passes, _sizes_key(rule, passes, sizes))


RANK_ONLY_PASSES = frozenset({order_joins})
"""Passes that only compare the ``sizes`` hint's values of a rule's relations with each other
(``order_joins`` breaks ties by the smaller relation): the same order of sizes, the same plan."""


def _sizes_key(rule: Rule, passes: tuple[Pass, ...], sizes: Mapping[str, int] | None
               ) -> tuple[tuple[str, float], ...] | None:
    """What of ``sizes`` the plan of ``rule`` depends on, as (relation, value) pairs: nothing
    when there is no hint or no pass takes it; when only ``RANK_ONLY_PASSES`` do, the rank of each of the
    rule's relations' sizes among theirs (an unknown size stays unbounded); else the sizes
    ``sizes`` gives of the rule's relations. Cost: linear in the size of the rule."""
    takers = [step for step in passes if "sizes" in _parameters(step)]
    if sizes is None or not takers:
        return None
    names = sorted({literal.atom.relation for literal, _ in rule_literals(rule)})
    if any(step not in RANK_ONLY_PASSES for step in takers):
        return tuple((name, sizes[name]) for name in names if name in sizes)
    values = [sizes.get(name, math.inf) for name in names]
    ranks = {value: rank for rank, value in enumerate(sorted(set(values) - {math.inf}))}
    return tuple((name, ranks.get(value, math.inf))
                 for name, value in zip(names, values, strict=True))


@functools.lru_cache(maxsize=4096)
def _translated(rule: Rule, passes: tuple[Pass, ...],
                sizes_key: tuple[tuple[str, float], ...] | None) -> Plan:
    """The plan of ``rule`` (a delta variant already) through ``passes``, kept: plans are
    immutable, and a rule is translated again each time a stratum is run (a recompute, an
    engine's Bootstrap, every Spark pass); translating takes about 0.4 ms a rule. The passes
    that take the ``sizes`` hint get ``sizes_key`` as a mapping."""
    hints = {"sizes": None if sizes_key is None else dict(sizes_key)}
    plan: Plan = Pending.of(rule)
    try:
        for step in passes:
            plan = step(plan, **{k: v for k, v in hints.items() if k in _parameters(step)})
    except TranslationError as error:
        where = f" at {rule.location}" if rule.location else ""
        raise TranslationError(f"rule {rule}{where}: {error}") from None
    return plan


@functools.lru_cache(maxsize=256)  # passes are module constants; bounded for closures
def _parameters(step: Pass) -> frozenset[str]:
    """The parameter names of a pass (``inspect.signature`` costs about 20 us a call: a fifth
    of translating a rule, which the native evaluator does for every rule of every run)."""
    return frozenset(inspect.signature(step).parameters)


def delta_variant(rule: Rule, delta: Collection[int]) -> Rule:
    """``rule`` with the positive atoms at body positions ``delta`` reading their deltas."""
    body = list(rule.body)
    for position in delta:
        element = body[position] if 0 <= position < len(body) else None
        if not isinstance(element, Literal) or element.negated:
            raise ValueError(f"body element {position} of {rule} is not a positive atom")
        atom = element.atom
        body[position] = Literal(Atom(DELTA_PREFIX + atom.relation, atom.terms, atom.location))
    return Rule(rule.head, tuple(body), rule.location)


def translate_program(
    program: Program,
    passes: Sequence[Pass] = DEFAULT_PASSES,
    *,
    sizes: Mapping[str, int] | None = None,
) -> dict[Rule, Plan]:
    """The plan of every proper rule (non-empty body) of ``program``, in source order."""
    return {rule: translate_rule(rule, passes, sizes=sizes) for rule in program.proper_rules}


def format_plan(plan: Plan, indent: int = 0) -> str:
    """``plan`` as an indented tree, one node per line, children below their parent."""
    return "\n".join("  " * (indent + depth) + node.label() for node, depth in walk(plan))


def explain_program(program: Program, passes: Sequence[Pass] = DEFAULT_PASSES) -> str:
    """For every proper rule of ``program`` (checked by ``analyse``), in source order: the
    rule, its plan and, when it reads a relation of its own recursive stratum, the plan of each
    semi-naive delta variant; then each recursive stratum's pivot (``pivots``), or that it has
    none. What ``herbrand translate`` prints."""
    from herbrand.framework.analysis import analyse
    from herbrand.translators.pivots import find_pivot

    strata = analyse(program)
    recursive = {r: s.relations for s in strata if s.recursive for r in s.relations}
    blocks = []
    for rule in program.proper_rules:
        lines = [str(rule), format_plan(translate_rule(rule, passes), 1)]
        for position, element in enumerate(rule.body):
            if (isinstance(element, Literal) and not element.negated
                    and element.atom.relation in recursive.get(rule.head.relation, ())):
                lines.append(f"  delta variant, {element.atom} reads "
                             f"{DELTA_PREFIX}{element.atom.relation}:")
                lines.append(format_plan(translate_rule(rule, passes, delta={position}), 2))
        blocks.append("\n".join(lines))
    pivots = [f"recursive stratum {', '.join(s.relations)}: "
              + (f"pivot {pivot}" if (pivot := find_pivot(s)) is not None else "no pivot")
              for s in strata if s.recursive]
    if pivots:
        blocks.append("\n".join(pivots))
    return "\n\n".join(blocks) + "\n"
