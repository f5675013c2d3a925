"""``MagicSetsEvaluator``: the TopDownEvaluator that answers a goal by magic sets.

``query(program, database, goal)`` rewrites ``program`` for ``goal``
(``herbrand.translators.magic_sets``), materializes the rewrite bottom-up with the configured
rule evaluator, fixpoint and backend, and selects the rows of the goal's answer relation that
match the goal (its constants, and equal values where a variable repeats). Relations the
rewrite cannot adorn without breaking stratification are materialized whole inside the same run
(``MagicRewrite.fallbacks``); the answer is the same as a selection over the full
materialization, at the cost of what the goal needs.
"""

from __future__ import annotations

import numpy as np

from herbrand import builtins
from herbrand.framework.contracts import (
    Backend,
    FixpointEvaluator,
    RuleEvaluator,
    TopDownEvaluator,
)
from herbrand.framework.registry import BACKENDS, FIXPOINTS
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Atom, Const, Program, Var
from herbrand.translators.magic_sets import MagicRewrite, magic_sets


class MagicSetsEvaluator(TopDownEvaluator):
    """Answers a goal by the magic-sets rewrite, materialized with ``evaluator`` under
    ``fixpoint`` (a FixpointEvaluator class; default semi-naive) on ``backend`` (default
    local). Cost: the bottom-up cost of the rewritten program, which holds what the goal
    needs (plus the relations it materializes whole), then O(answer rows) for the selection.
    """

    def __init__(self, evaluator: RuleEvaluator,
                 fixpoint: type[FixpointEvaluator] | None = None,
                 backend: Backend | None = None):
        self.evaluator = evaluator
        self.fixpoint = fixpoint
        self.backend = backend
        self.last_rewrite: MagicRewrite | None = None

    def query(self, program: Program, database: Database, goal: Atom) -> Relation:
        """The rows of ``goal.relation`` that match ``goal``, encoded with
        ``database.symbols``. ``program`` must pass ``analyse`` and ``goal`` ``check_goal``;
        ``database`` holds the input rows. ``last_rewrite`` keeps the rewrite it ran."""
        given = [name for name in database if len(database[name])]
        rewrite = magic_sets(program, (goal,), given=given)
        self.last_rewrite = rewrite
        fixpoint = self.fixpoint or FIXPOINTS.get(builtins.DEFAULT_FIXPOINT)
        backend = self.backend or BACKENDS.get(builtins.DEFAULT_BACKEND)()
        result, _ = backend.materialize(rewrite.program, database, evaluator=self.evaluator,
                                        fixpoint=fixpoint)
        return select_goal(result[rewrite.answer(goal)], goal, result.symbols)


def select_goal(relation: Relation, goal: Atom, symbols: SymbolTable) -> Relation:
    """The rows of ``relation`` that match ``goal``: equal to each constant (a symbol
    encoded by ``symbols``; one it does not hold matches nothing) and equal where a variable
    repeats. Vectorised: O(rows x arguments)."""
    keep = np.ones(len(relation), dtype=bool)
    first: dict[Var, int] = {}
    for position, term in enumerate(goal.terms):
        column = relation.column(position)
        if isinstance(term, Const):
            value = symbols.lookup(term.value) if isinstance(term.value, str) else term.value
            if value is None:
                return Relation.empty(relation.arity)
            keep &= column == value
        elif isinstance(term, Var):
            earlier = first.setdefault(term, position)
            if earlier != position:
                keep &= column == relation.column(earlier)
    if keep.all():
        return relation
    return Relation(relation.columns[:, keep], unique=True)
