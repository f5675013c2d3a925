"""Why not: for a tuple that is not in the model, where each rule of its relation fails.

For each proper rule of the relation, in program order: if a constant or a repeated variable
of the head disagrees with the tuple, the head does not unify. Otherwise the body is matched
left to right from the head's bindings, as a set of substitutions, binding variables as it
goes: each element in turn joins (a positive atom) or, once its variables are bound, filters
(a comparison, a negated atom, an expression of the head; ``x = expr`` binds x as soon as expr
is bound, and an element waiting for its variables is applied as soon as they are). The first
element after which no substitution is left is the one named. Substitutions are projected on
the variables still needed and deduplicated after each step, so the set stays as small as the
remaining body allows; a step beyond ``matching.MAX_MATCHES`` raises EvaluationError.

Cost: per rule, one join or filter per element over the substitutions so far (numpy), plus
O(n log n) once per relation and key to build the indexes.
"""

from __future__ import annotations

from herbrand.framework.errors import EvaluationError
from herbrand.framework.syntax import Literal, Rule, Var, element_aggregates, element_variables
from herbrand.provenance.derivations import Derivations, Row, substitute
from herbrand.provenance.matching import Matches, PreparedBody
from herbrand.provenance.proofs import NotDerived, RuleFailure, atom_text


def why_not(derivations: Derivations, relation: str, row: Row) -> NotDerived:
    """Why ``relation(row)`` (encoded values, a tuple not in the model) is not derived."""
    values = derivations.decode(relation, row)
    failures = []
    for index, rule in derivations.rules_of(relation):
        start = derivations.start(rule, row)
        if start is None:
            failures.append(RuleFailure(
                rule, index, f"its head {rule.head} does not unify with "
                             f"{atom_text(relation, values)}"))
            continue
        derivations.matcher.rule = rule
        try:
            failures.append(_first_failure(derivations, rule, index, start,
                                           atom_text(relation, values)))
        finally:
            derivations.matcher.rule = None
    return NotDerived(relation, values, tuple(failures))


def _first_failure(derivations: Derivations, rule: Rule, index: int, matches: Matches,
                   goal: str) -> RuleFailure:
    """The RuleFailure of the first element, left to right, that leaves no substitution."""
    body = derivations.body(rule)
    head_checks = [i for i, origin in enumerate(body.origins) if origin >= len(rule.body)]
    pending = list(head_checks)
    for position in range(len(rule.body)):
        pending += [i for i, origin in enumerate(body.origins) if origin == position]
        while (ready := _next_ready(derivations, body, pending, matches)) is not None:
            pending.remove(ready)
            after = derivations.matcher.apply(body.elements[ready], matches, body.injected)
            if not len(after):
                return _failure(derivations, rule, index, body.origins[ready], matches, goal)
            matches = after.project(_live(body, pending, position))
    raise EvaluationError(f"explain: every element of rule {rule} matches for {goal}, yet it "
                          f"is not in the model (the recorded model is inconsistent)")


def _next_ready(derivations: Derivations, body: PreparedBody, pending: list[int],
                matches: Matches) -> int | None:
    """The first pending element whose variables ``matches`` binds, if any."""
    bound = set(matches.variables)
    return next((i for i in pending
                 if derivations.matcher.ready(body.elements[i], bound, body.injected)), None)


def _live(body: PreparedBody, pending: list[int], position: int) -> set[Var]:
    """The variables that elements not applied yet (pending, or of a later origin) read,
    the injected variables of their aggregates included."""
    live: set[Var] = set()
    for i in [i for i, origin in enumerate(body.origins) if origin > position] + pending:
        element = body.elements[i]
        live.update(element_variables(element))
        for aggregate in element_aggregates(element):
            live.update(body.injected[aggregate])
    return live


def _failure(derivations: Derivations, rule: Rule, index: int, origin: int, matches: Matches,
             goal: str) -> RuleFailure:
    """The RuleFailure naming the element at ``origin`` of the body (or the head), shown
    with the variables that have one value in every substitution of ``matches``."""
    if origin >= len(rule.body):
        return RuleFailure(rule, index, f"no match of the body gives its head {rule.head} the "
                                        f"value {goal}")
    single = {var: value for var in matches.variables
              if not var.name.startswith("@") and (value := matches.single(var)) is not None}
    element = rule.body[origin]
    shown = substitute(element, derivations.shown(rule, single),
                       derivations.body(rule).injected)
    if isinstance(element, Literal) and not element.negated:
        reason = f"no match for {shown} (body element {origin + 1})"
    elif isinstance(element, Literal):
        reason = f"{shown} fails: the atom holds for every match so far (body element " \
                 f"{origin + 1})"
    else:
        reason = f"{shown} is false for every match so far (body element {origin + 1})"
    return RuleFailure(rule, index, reason, element, origin)
