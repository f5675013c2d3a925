"""Pass: an aggregate term becomes an Aggregate node appending its value as a column.

An aggregate is lowered once the columns hold every variable it shares with the enclosing rule
(its correlation: its injected variables, see ``pending.aggregate_correlation``). Assignments and aggregates may depend on each other
(``y = x + 1, c = count : { r(y) }, d = c * 2``), so after each aggregate this pass lowers the
comparisons it made ready, with ``comparisons_to_filters``. Its body is lowered on its own, by ``LOWERING_PASSES``,
into a plan whose columns are the body's variables sorted by name, wildcards named apart, so
that its rows are the body's distinct matches; correlated variables the body does not bind
itself (used only in a comparison, a negation or the target) come from a projection of the
outer plan, the seed of the body. The Aggregate groups the body on the correlated variables and
reduces the target; the aggregate's term is replaced by the new column's variable.

Before::

    Pending head=(x, n) columns={x: 0} body=[n = count : { edge(x, _) }]
      Scan node/1

After::

    Pending head=(x, n) columns={x: 0, #1: 1, n: 1} body=[]
      Aggregate count child=[0] body=[1]
        Scan node/1
        Scan edge/2
"""

from __future__ import annotations

from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    Atom,
    BodyElement,
    Comparison,
    Literal,
    Term,
    Var,
    element_terms,
    term_aggregates,
)
from herbrand.translators import ir
from herbrand.translators.body_to_products import body_to_products
from herbrand.translators.comparisons_to_filters import comparisons_to_filters
from herbrand.translators.constants_to_selections import constants_to_selections
from herbrand.translators.head_projection import head_projection
from herbrand.translators.negation_to_antijoins import negation_to_antijoins
from herbrand.translators.pending import (
    Pending,
    aggregate_correlation,
    column_variable,
    level_variables,
    name_wildcards,
    to_expression,
)
from herbrand.translators.repeated_variables_to_selections import (
    repeated_variables_to_selections,
)


def aggregates_to_nodes(plan: ir.Plan) -> ir.Plan:
    """Lower the aggregates of every Pending of ``plan`` whose correlation is known.

    Raises TranslationError for an aggregate function outside ``ir.AGGREGATE_FUNCTIONS``
    (``mean`` yields a float) and for an aggregate body that cannot be lowered.
    """
    return ir.transform(plan, _lower_all)


def _lower_all(node: ir.Plan) -> ir.Plan:
    if not isinstance(node, Pending):
        return node
    while True:
        terms = [t for e in node.body for t in element_terms(e)] + list(node.head)
        ready = [a for t in terms for a in term_aggregates(t)
                 if all(v.name in node.column_of for v in aggregate_correlation(a, node.body, node.bound))]
        if not ready:
            return node
        node = comparisons_to_filters(_lower(node, ready[0]))


def _lower(pending: Pending, aggregate: Aggregate) -> Pending:
    if aggregate.function not in ir.AGGREGATE_FUNCTIONS:
        raise ir.TranslationError(
            f"aggregate {aggregate.function} is not supported (it yields a float)")
    columns = pending.column_of
    correlated = aggregate_correlation(aggregate, pending.body, pending.bound)
    body = name_wildcards(aggregate.body)
    bound_by_atoms = {t for e in body if isinstance(e, Literal) and not e.negated
                      for t in e.atom.terms if isinstance(t, Var)}
    seeded = [v for v in correlated if v not in bound_by_atoms]
    seed = (ir.project(pending.child, tuple(columns[v.name] for v in seeded)) if seeded
            else ir.Unit())
    head = tuple(sorted(level_variables(body) | set(seeded), key=lambda v: v.name))
    inner = Pending(seed, head, tuple((v.name, i) for i, v in enumerate(seeded)), body)
    for lowering in LOWERING_PASSES:
        inner = lowering(inner)
    position = {v.name: i for i, v in enumerate(head)}
    target = None
    if aggregate.target is not None:
        target = to_expression(aggregate.target, position)
    node = ir.Aggregate(pending.child, inner, tuple(columns[v.name] for v in correlated),
                        tuple(position[v.name] for v in correlated), aggregate.function, target)
    result = column_variable(node.arity - 1)
    return Pending(
        node,
        tuple(_replace(t, aggregate, result) for t in pending.head),
        pending.columns + ((result.name, node.arity - 1),),
        tuple(_replace_in_element(e, aggregate, result) for e in pending.body),
    )


def _replace(term: Term, old: Aggregate, new: Var) -> Term:
    if term == old:
        return new
    if isinstance(term, Arith):
        return Arith(term.op, tuple(_replace(a, old, new) for a in term.args))
    return term


def _replace_in_element(element: BodyElement, old: Aggregate, new: Var) -> BodyElement:
    if isinstance(element, Comparison):
        return Comparison(element.op, _replace(element.left, old, new),
                          _replace(element.right, old, new), element.location)
    atom = element.atom
    terms = tuple(_replace(t, old, new) for t in atom.terms)
    return Literal(Atom(atom.relation, terms, atom.location), element.negated)


LOWERING_PASSES = (
    body_to_products,
    constants_to_selections,
    repeated_variables_to_selections,
    comparisons_to_filters,
    aggregates_to_nodes,
    negation_to_antijoins,
    head_projection,
)
"""The passes that lower a rule, or an aggregate's body, to relational operators: the first
part of ``pipeline.DEFAULT_PASSES``."""
