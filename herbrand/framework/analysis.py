"""Static analysis of a Program: declarations, arities, types, safety, stratification.

``analyse(program)`` runs every check and returns the strata in evaluation order::

    .decl e(x: number, y: number)          e is a base relation: in no stratum
    .decl t(x: number, y: number)
    .decl u(x: number, y: number)
    t(x, y) :- e(x, y).                     stratum 0: (t,), recursive
    t(x, z) :- t(x, y), e(y, z).
    u(x, y) :- e(x, _), e(_, y), !t(x, y).  stratum 1: (u,), not recursive

The checks, in the order they run (the first failure is raised):

1. each relation is declared once, with distinct column names (RedefinitionError), and
   directives name declared relations (UndeclaredRelationError);
2. for each rule and fact in source order (``check_rule``): every atom's relation is declared
   (UndeclaredRelationError) with the atom's arity (ArityError); types agree (HerbrandTypeError,
   see ``type_checking``); the rule is safe (UnsafeRuleError);
3. no negation or aggregation through recursion (StratificationError).

Every message is one line naming the location (``file:line:col``), the rule and the relation or
variable at fault. Cost: linear in the size of the program (aggregate nesting depth taken as a
constant).
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import chain
from typing import TypeVar

from herbrand.framework.errors import (
    ArityError,
    RedefinitionError,
    SourceLocation,
    StratificationError,
    UndeclaredRelationError,
    UnsafeRuleError,
)
from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    Atom,
    BodyElement,
    Comparison,
    Const,
    Declaration,
    Literal,
    Program,
    Rule,
    Term,
    Var,
    Wildcard,
    body_variables,
    element_terms,
    element_variables,
    injected_variables,
    term_aggregates,
    term_variables,
)
from herbrand.framework.type_checking import (
    location_text,
    variable_types,
)

__all__ = [
    "AGGREGATE",
    "NEGATIVE",
    "POSITIVE",
    "Stratum",
    "analyse",
    "check_rule",
    "dependency_graph",
    "rule_literals",
    "strongly_connected_components",
    "suggestion",
    "variable_types",
]

POSITIVE = "positive"
NEGATIVE = "negative"
AGGREGATE = "aggregate"  # inside an aggregate's body, negated or not


@dataclass(frozen=True)
class Stratum:
    """One strongly connected component of the dependency graph, in evaluation order.

    ``index``: the position of the stratum in evaluation order, from 0.
    ``relations``: the relations whose rules are evaluated here (the heads of ``rules``), in
    order of first appearance as the head of a rule.
    ``rules``: the proper rules (non-empty body) with a head in ``relations``, in source order.
    ``recursive``: True when some rule's body uses (outside negation and aggregates, which must
    refer to lower strata) a relation of this stratum.
    """

    index: int
    relations: tuple[str, ...]
    rules: tuple[Rule, ...]
    recursive: bool


def analyse(program: Program) -> tuple[Stratum, ...]:
    """Check ``program`` and return its strata in evaluation order.

    Every relation a stratum's rules use is either one of its own relations, a relation of an
    earlier stratum, or a base relation (one with only facts or ``.input``, in no stratum).
    Independent strata come in the order of a depth-first search from the rule heads in order
    of first appearance, so the result is deterministic.

    Raises RedefinitionError, UndeclaredRelationError, ArityError, HerbrandTypeError,
    UnsafeRuleError or StratificationError (see the module docstring). Cost: linear in the size
    of the program.
    """
    _check_declarations(program)
    for directive in program.directives:
        if directive.relation not in program.declaration_of:
            raise UndeclaredRelationError(
                f"{location_text(directive.location)}: .{directive.kind} names undeclared "
                f"relation {directive.relation}{suggestion(directive.relation, program)}"
            )
    for rule in program.rules:
        check_rule(rule, program)
    return _strata(program)


def _check_declarations(program: Program) -> None:
    """Each relation declared once (Soufflé reports a redefinition even with the same
    signature), each declaration's column names distinct."""
    first: dict[str, Declaration] = {}
    for declaration in program.declarations:
        earlier = first.setdefault(declaration.name, declaration)
        if earlier is not declaration:
            raise RedefinitionError(
                f"{location_text(declaration.location)}: relation {declaration.name} is "
                f"declared twice (first at {location_text(earlier.location)})")
        names = [column.name for column in declaration.columns]
        repeated = next((name for name in names if names.count(name) > 1), None)
        if repeated is not None:
            raise RedefinitionError(
                f"{location_text(declaration.location)}: relation {declaration.name} names "
                f"column {repeated} twice")


def check_rule(rule: Rule, program: Program) -> None:
    """Check one rule or fact against the declarations of ``program``.

    Its relations must be declared with the atoms' arities, its types must agree and it must
    be safe (a fact must be ground). Raises UndeclaredRelationError, ArityError,
    HerbrandTypeError or UnsafeRuleError. Cost: linear in the size of the rule.
    """
    for atom in chain((rule.head,), (literal.atom for literal, _ in rule_literals(rule))):
        _check_atom(atom, rule, program)
    if rule.is_fact and _is_typed_ground_fact(rule.head, program):
        return  # the common case of inline facts, checked without the general machinery
    variable_types(rule, program)
    _check_safety(rule)


def rule_literals(rule: Rule) -> Iterator[tuple[Literal, bool]]:
    """Every body literal of ``rule``, with True when it sits inside an aggregate's body.

    Aggregates are searched wherever they occur (body atoms, comparisons, arithmetic, the head,
    other aggregates). Cost: linear in the size of the rule.
    """
    yield from _body_literals(rule.body, False)
    for term in rule.head.terms:
        yield from _term_literals(term)


def _body_literals(
    body: tuple[BodyElement, ...], in_aggregate: bool
) -> Iterator[tuple[Literal, bool]]:
    for element in body:
        if isinstance(element, Literal):
            yield element, in_aggregate
        for term in element_terms(element):
            yield from _term_literals(term)


def _term_literals(term: Term | None) -> Iterator[tuple[Literal, bool]]:
    for aggregate in term_aggregates(term):
        yield from _body_literals(aggregate.body, True)
        yield from _term_literals(aggregate.target)


# ---------------------------------------------------------------------------------------------
# Declarations and arities
# ---------------------------------------------------------------------------------------------


def _is_typed_ground_fact(head: Atom, program: Program) -> bool:
    columns = program.declaration_of[head.relation].columns
    return all(
        isinstance(term, Const) and term.type == column.type
        for term, column in zip(head.terms, columns, strict=True)
    )


def _check_atom(atom: Atom, rule: Rule, program: Program) -> None:
    declaration = program.declaration_of.get(atom.relation)
    if declaration is not None and declaration.arity == atom.arity:
        return
    location = location_text(atom.location, rule.location)
    if declaration is None:
        raise UndeclaredRelationError(
            f"{location}: undeclared relation {atom.relation}"
            f"{suggestion(atom.relation, program)}, in {_kind(rule)}: {rule}"
        )
    raise ArityError(
        f"{location}: {atom.relation} has {atom.arity} argument(s) here but "
        f"{declaration.arity} in its declaration at {location_text(declaration.location)}, "
        f"in {_kind(rule)}: {rule}"
    )


def suggestion(name: str, program: Program) -> str:
    """`` (did you mean X?)`` naming the declared relation closest to ``name``, or ``""``."""
    close = difflib.get_close_matches(name, list(program.declaration_of), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _kind(rule: Rule) -> str:
    return "fact" if rule.is_fact else "rule"


# ---------------------------------------------------------------------------------------------
# Safety
# ---------------------------------------------------------------------------------------------


def _check_safety(rule: Rule) -> None:
    """Every variable that must have a value is bound by a positive atom (see the module doc).

    A variable is bound by a positive body atom that has it as an argument, or by ``x = expr``
    (or ``expr = x``) once the variables of ``expr`` are bound; ``x = count : {...}`` binds x
    once the aggregate's injected variables are bound. The head, negated atoms, comparisons,
    arithmetic arguments and aggregates (their injected variables and their target) use only
    bound variables; an aggregate's body is checked the same way, starting from its injected
    variables (``syntax.injected_variables``: those the enclosing body binds without the
    aggregate's value, outside its target; its other variables are local to it, as in Soufflé).
    Wildcards may not appear in heads, comparisons or arithmetic.
    """
    head = rule.head
    location = head.location or rule.location
    if any(_has_wildcard(term) for term in head.terms):
        raise _unsafe(rule, location, "wildcard _ in the head")
    bound = _bound_variables(rule.body, set())
    for term in head.terms:
        if rule.is_fact and (var := next(term_variables(term), None)) is not None:
            raise _unsafe(rule, location, "facts must be ground: variable ", var)
        for var in term_variables(term):
            if var not in bound and (cause := _unbound_cause(var, rule.body, bound)):
                raise _unsafe(rule, cause[1].location or location, "variable ", cause[0],
                              " in the comparison ", cause[1], " is not bound by a positive atom")
        _require(term_variables(term), bound, rule, location, "the head")
        for aggregate in term_aggregates(term):
            _check_aggregate(aggregate, rule.body, set(), bound, rule, location)
    _check_body(rule.body, set(), bound, rule)


def _unbound_cause(var: Var, body: tuple[BodyElement, ...],
                   bound: set[Var]) -> tuple[Var, Comparison] | None:
    """Why the unbound ``var`` has no value when an equality ``var = expr`` meant to give it
    one: the first unbound variable of ``expr``, followed through further equalities to one
    that nothing binds, with the equality it sits in (so ``f(y) :- e(x), y = z + 1.`` names
    ``z``, not ``y``). None when no equality mentions ``var`` or the equalities form a
    cycle. Linear in the body per step."""
    cause, seen = None, {var}
    while True:
        found = next(((other, element) for element in body
                      if isinstance(element, Comparison) and element.op == "="
                      for target, source in ((element.left, element.right),
                                             (element.right, element.left))
                      if target == var
                      for other in term_variables(source) if other not in bound), None)
        if found is None:
            return cause
        if found[0] in seen:
            return None  # equalities in a cycle: no variable is the cause, the head's is
        cause = found
        var = found[0]
        seen.add(var)


def _check_body(
    body: tuple[BodyElement, ...], injected: set[Var], bound: set[Var], rule: Rule
) -> None:
    """Check ``body``, into which ``injected`` are injected and which binds ``bound``."""
    for element in body:
        location = element.location or rule.location
        if isinstance(element, Comparison):
            if _has_wildcard(element.left) or _has_wildcard(element.right):
                raise _unsafe(rule, location, "wildcard _ in the comparison ", element)
            _require(element_variables(element), bound, rule, location, "the comparison ", element)
        else:
            what = "the negated atom " if element.negated else "the atom "
            for term in element.atom.terms:
                if isinstance(term, Var) and not element.negated:
                    continue  # binds
                if isinstance(term, Arith) and _has_wildcard(term):
                    raise _unsafe(rule, location, "wildcard _ in the expression ", term)
                _require(term_variables(term), bound, rule, location, what, element)
        for term in element_terms(element):
            for aggregate in term_aggregates(term):
                _check_aggregate(aggregate, body, injected, bound, rule, location)


def _check_aggregate(
    aggregate: Aggregate,
    body: tuple[BodyElement, ...],
    injected: set[Var],
    bound: set[Var],
    rule: Rule,
    location: SourceLocation | None,
) -> None:
    """Check ``aggregate`` of ``body`` (into which ``injected`` are injected, binding
    ``bound``). The aggregate's body starts from the aggregate's own injected variables."""
    own_injected = injected_variables(aggregate, body, injected)
    inner_variables = chain(body_variables(aggregate.body), term_variables(aggregate.target))
    correlated = [var for var in dict.fromkeys(inner_variables) if var in own_injected]
    _require(correlated, bound, rule, location, "the aggregate ", aggregate)
    if aggregate.target is not None and _has_wildcard(aggregate.target):
        raise _unsafe(rule, location, "wildcard _ as the target of ", aggregate)
    inner_bound = _bound_variables(aggregate.body, own_injected)
    target = term_variables(aggregate.target)
    _require(target, inner_bound, rule, location, "the target of ", aggregate)
    for nested in term_aggregates(aggregate.target):
        _check_aggregate(nested, aggregate.body, own_injected, inner_bound, rule, location)
    _check_body(aggregate.body, own_injected, inner_bound, rule)


def _require(
    variables: Iterable[Var],
    bound: set[Var],
    rule: Rule,
    location: SourceLocation | None,
    *what: object,
) -> None:
    """Raise UnsafeRuleError for the first of ``variables`` not in ``bound``.

    ``what`` names the place (its pieces are joined with str() only on error).
    """
    for var in variables:
        if var not in bound:
            raise _unsafe(
                rule, location, "variable ", var, " in ", *what, " is not bound by a positive atom"
            )


def _unsafe(rule: Rule, location: SourceLocation | None, *message: object) -> UnsafeRuleError:
    text = "".join(map(str, message))
    return UnsafeRuleError(f"{location_text(location)}: {text}, in {_kind(rule)}: {rule}")


def _bound_variables(body: tuple[BodyElement, ...], bound_outside: set[Var]) -> set[Var]:
    """The variables bound in ``body`` given those injected into it (``bound_outside``); an
    aggregate's value binds once its injected variables are bound.

    Equalities ``x = expr`` propagate with a counter of unbound variables per candidate, so the
    cost is linear in the size of the body.
    """
    bound = set(bound_outside)
    for element in body:
        if isinstance(element, Literal) and not element.negated:
            bound.update(term for term in element.atom.terms if isinstance(term, Var))
    targets: list[Var] = []
    missing: list[int] = []
    waiting: dict[Var, list[int]] = {}
    for element in body:
        if not (isinstance(element, Comparison) and element.op == "="):
            continue
        for target, source in ((element.left, element.right), (element.right, element.left)):
            if not isinstance(target, Var) or target in bound or _has_wildcard(source):
                continue
            needed = set(term_variables(source)) - bound
            for aggregate in term_aggregates(source):
                injected = injected_variables(aggregate, body, bound_outside)
                needed.update(v for v in injected if v not in bound)
            for var in needed:
                waiting.setdefault(var, []).append(len(targets))
            targets.append(target)
            missing.append(len(needed))
    ready = [target for target, count in zip(targets, missing, strict=True) if count == 0]
    while ready:
        var = ready.pop()
        if var in bound:
            continue
        bound.add(var)
        for candidate in waiting.pop(var, ()):
            missing[candidate] -= 1
            if missing[candidate] == 0:
                ready.append(targets[candidate])
    return bound


def _has_wildcard(term: Term | None) -> bool:
    """True when ``term`` is a wildcard or an arithmetic expression over one."""
    if isinstance(term, Wildcard):
        return True
    return isinstance(term, Arith) and any(_has_wildcard(arg) for arg in term.args)


# ---------------------------------------------------------------------------------------------
# Dependency graph, components, strata
# ---------------------------------------------------------------------------------------------


def dependency_graph(program: Program) -> dict[str, set[tuple[str, str]]]:
    """Head relation -> the (body relation, polarity) pairs its proper rules use.

    Polarity is POSITIVE, NEGATIVE (a negated literal) or AGGREGATE (a literal inside an
    aggregate's body). Keys are the heads of proper rules in order of first appearance; facts
    add no edges. Cost: linear in the size of the program.
    """
    return {head: set(edges) for head, edges in _ordered_dependencies(program).items()}


def _ordered_dependencies(program: Program) -> dict[str, dict[tuple[str, str], None]]:
    """``dependency_graph`` with edges in order of first appearance (for determinism)."""
    graph: dict[str, dict[tuple[str, str], None]] = {}
    for rule in program.proper_rules:
        edges = graph.setdefault(rule.head.relation, {})
        for literal, in_aggregate in rule_literals(rule):
            edges[literal.atom.relation, _polarity(literal, in_aggregate)] = None
    return graph


def _polarity(literal: Literal, in_aggregate: bool) -> str:
    if in_aggregate:
        return AGGREGATE
    return NEGATIVE if literal.negated else POSITIVE


Node = TypeVar("Node", bound=Hashable)


def strongly_connected_components(graph: Mapping[Node, Iterable[Node]]) -> list[tuple[Node, ...]]:
    """The strongly connected components of ``graph`` (node -> successors), dependencies first.

    Every component comes after every component reachable from it. Nodes that appear only as
    successors are nodes without successors. Components are found by an iterative Tarjan
    search from the keys in iteration order, so the result is deterministic when the mapping and
    its successor iterables are; each component lists its nodes in discovery order.
    Cost: linear in nodes plus edges.
    """
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    stack: list[Node] = []
    on_stack: set[Node] = set()
    components: list[tuple[Node, ...]] = []

    def discover(node: Node) -> tuple[Node, Iterator[Node]]:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        return node, iter(graph.get(node, ()))

    for root in graph:
        if root in index:
            continue
        work = [discover(root)]
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    work.append(discover(successor))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[Node] = []
                    while not component or component[-1] != node:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                    components.append(tuple(reversed(component)))
    return components


def _strata(program: Program) -> tuple[Stratum, ...]:
    dependencies = _ordered_dependencies(program)
    successors = {head: [body for body, _ in edges] for head, edges in dependencies.items()}
    components = strongly_connected_components(successors)
    component_of = {relation: i for i, component in enumerate(components) for relation in component}
    _check_stratification(program, successors, component_of)

    relations: dict[int, list[str]] = {}
    for head in dependencies:  # heads in order of first appearance
        relations.setdefault(component_of[head], []).append(head)
    rules: dict[int, list[Rule]] = {}
    recursive: set[int] = set()
    for rule in program.proper_rules:
        component = component_of[rule.head.relation]
        rules.setdefault(component, []).append(rule)
        if any(
            not literal.negated and not in_aggregate
            and component_of[literal.atom.relation] == component
            for literal, in_aggregate in rule_literals(rule)
        ):
            recursive.add(component)
    order = [i for i in range(len(components)) if i in relations]  # dependencies first
    return tuple(
        Stratum(
            index=position,
            relations=tuple(relations[component]),
            rules=tuple(rules[component]),
            recursive=component in recursive,
        )
        for position, component in enumerate(order)
    )


def _check_stratification(
    program: Program, successors: dict[str, list[str]], component_of: dict[str, int]
) -> None:
    """Raise StratificationError for a negative or aggregate edge inside one component."""
    for rule in program.proper_rules:
        head = rule.head.relation
        for literal, in_aggregate in rule_literals(rule):
            used = literal.atom.relation
            if not (literal.negated or in_aggregate) or component_of[used] != component_of[head]:
                continue
            cycle = " -> ".join(_cycle(head, used, successors, component_of))
            kind = "aggregation" if in_aggregate else "negation"
            raise StratificationError(
                f"{kind} through recursion: {cycle} (rule at "
                f"{location_text(rule.location, rule.head.location)}: {rule})"
            )


def _cycle(
    head: str, used: str, successors: dict[str, list[str]], component_of: dict[str, int]
) -> list[str]:
    """A shortest cycle ``head -> used -> ... -> head`` inside their component (by BFS)."""
    if used == head:
        return [head, head]
    component = component_of[head]
    came_from = {used: used}
    queue = deque([used])
    while head not in came_from:  # a path exists: both are in one component
        node = queue.popleft()
        for successor in successors.get(node, ()):
            if successor not in came_from and component_of[successor] == component:
                came_from[successor] = node
                queue.append(successor)
    path = [head]
    while path[-1] != used:
        path.append(came_from[path[-1]])
    return [head, *reversed(path)]
