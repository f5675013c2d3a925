"""Matching rule bodies against a model with heights, a set of substitutions at a time.

A ``Matches`` holds substitutions column-wise: one int64 row of values per variable, one column
per substitution, plus, per substitution, the largest height of the positive premises matched
so far. A ``Matcher`` extends Matches by one body element at a time (``apply``) with numpy
operations over whole batches:

- a positive atom joins with its relation through a ``ColumnIndex`` on the atom's constant and
  bound positions, binding its new variables; with ``below=h`` only rows of height < h match;
- a negated atom drops the substitutions for which its relation holds a matching row;
- a comparison filters, or binds ``x`` in ``x = expr`` (or ``expr = x``) when ``x`` is new;
- an aggregate is evaluated once per distinct value of its injected variables
  (``syntax.injected_variables``), over the distinct matches of its body, each wildcard a
  distinct anonymous variable (the semantics of the evaluators; ``mean`` is refused).

Bodies are first ``prepare``d: each wildcard of a positive atom becomes a fresh variable (so a
proof can name the row it matched) and expression arguments of positive atoms are lifted into
equalities (``syntax.lift_atom_expressions``). ``solve`` runs a whole prepared body in a greedy
order: filters and bindings as soon as their variables are bound, else the positive atom with
the most bound positions. This is explain's search, not a fast path: each step costs
O(substitutions log n) and a Python loop runs per distinct group of an aggregate. A step that
would hold more than ``MAX_MATCHES`` substitutions raises EvaluationError naming the rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.arithmetic import evaluate_ground_term
from herbrand.evaluators.vector_arithmetic import VECTOR_COMPARATORS, vector_operation
from herbrand.framework.errors import EvaluationError
from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    Atom,
    BodyElement,
    Comparison,
    Const,
    Literal,
    Rule,
    Term,
    Var,
    Wildcard,
    element_aggregates,
    element_terms,
    injected_variables,
    lift_atom_expressions,
    term_aggregates,
    term_variables,
)
from herbrand.provenance.heights import HeightedModel
from herbrand.provenance.lookup import ColumnIndex

MAX_MATCHES = 5_000_000  # substitutions one step may hold: beyond, the search gives up
WILDCARD_PREFIX = "@w"  # variables standing for the wildcards of positive atoms
TARGET = Var("@target")  # an aggregate's target value inside its body

Vector = tuple[np.ndarray, "np.ndarray | None"]  # values, and the mask of valid ones (None: all)


@dataclass(frozen=True)
class Matches:
    """Substitutions: ``values[i]`` holds the value of ``variables[i]`` in each of them;
    ``deepest`` the largest height of the positive premises each has matched (0: none)."""

    variables: tuple[Var, ...]
    values: np.ndarray
    deepest: np.ndarray

    @classmethod
    def one(cls, bindings: Mapping[Var, int] | None = None) -> Matches:
        """The single substitution ``bindings`` (default: the empty one)."""
        bindings = bindings or {}
        values = np.array([[v] for v in bindings.values()], dtype=np.int64).reshape(-1, 1)
        return cls(tuple(bindings), values, np.zeros(1, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.deepest)

    def column(self, var: Var) -> np.ndarray:
        return self.values[self.variables.index(var)]

    def take(self, selection: np.ndarray) -> Matches:
        """The substitutions at ``selection`` (positions or a mask)."""
        return Matches(self.variables, self.values[:, selection], self.deepest[selection])

    def bind(self, var: Var, values: np.ndarray) -> Matches:
        return Matches(self.variables + (var,), np.vstack([self.values, values[None, :]]),
                       self.deepest)

    def project(self, keep: Iterable[Var]) -> Matches:
        """The distinct substitutions restricted to the variables of ``keep`` (each keeps the
        smallest ``deepest`` of those it merges). O(m log m)."""
        kept = tuple(v for v in self.variables if v in set(keep))
        values = self.values[[self.variables.index(v) for v in kept]]
        if not len(self):
            return Matches(kept, values, self.deepest)
        order = np.argsort(self.deepest, kind="stable")
        _, first = np.unique(values[:, order], axis=1, return_index=True)
        chosen = np.sort(order[first])
        return Matches(kept, values[:, chosen], self.deepest[chosen])

    def single(self, var: Var) -> int | None:
        """The value of ``var`` when every substitution gives it the same one, else None."""
        if var not in self.variables or not len(self):
            return None
        column = self.column(var)
        return int(column[0]) if (column == column[0]).all() else None


@dataclass(frozen=True)
class PreparedBody:
    """A body ready to match: ``elements`` with wildcards of positive atoms named and
    expression arguments lifted; ``origins[i]`` the position in the given body that
    ``elements[i]`` comes from; ``injected`` the injected variables of each aggregate."""

    elements: tuple[BodyElement, ...]
    origins: tuple[int, ...]
    injected: Mapping[Aggregate, frozenset[Var]]


def name_wildcards(body: Sequence[BodyElement], prefix: str = WILDCARD_PREFIX
                   ) -> tuple[BodyElement, ...]:
    """``body`` with the k-th wildcard of its positive atoms replaced by ``Var(prefix + k)``
    (names users cannot write). O(size of the body)."""
    count = 0

    def fresh(term: Term) -> Term:
        nonlocal count
        if not isinstance(term, Wildcard):
            return term
        count += 1
        return Var(f"{prefix}{count}")

    return tuple(
        Literal(Atom(e.atom.relation, tuple(map(fresh, e.atom.terms)), e.atom.location))
        if isinstance(e, Literal) and not e.negated else e
        for e in body
    )


def prepare(body: Sequence[BodyElement], bound: Iterable[Var] = ()) -> PreparedBody:
    """``body`` (with wildcards already named, ``name_wildcards``) lifted, with the origin
    of each element and the injected variables of its aggregates given ``bound`` (those of an
    enclosing scope). O(size of the body)."""
    lifted = lift_atom_expressions(tuple(body))
    origins = list(range(len(body)))
    for equality in lifted[len(body):]:  # each lifted equality comes from the atom holding it
        fresh = equality.left
        origins.append(next(i for i, e in enumerate(lifted[:len(body)])
                            if isinstance(e, Literal) and fresh in e.atom.terms))
    aggregates = [a for e in lifted for a in element_aggregates(e)]
    injected = {a: frozenset(injected_variables(a, lifted, bound)) for a in aggregates}
    return PreparedBody(lifted, tuple(origins), injected)


class Matcher:
    """Matches bodies against ``model`` (see the module doc); keeps its ColumnIndexes and
    prepared aggregate bodies for later calls. ``rule`` names the rule in errors."""

    def __init__(self, model: HeightedModel):
        self.model = model
        self.symbols = model.database.symbols
        self._indexes: dict[tuple[str, tuple[int, ...]], ColumnIndex] = {}
        self._aggregates: dict[tuple[Aggregate, frozenset[Var]], PreparedBody] = {}
        self.rule: Rule | None = None

    # -- the model -------------------------------------------------------------------------------

    def index(self, relation: str, positions: tuple[int, ...]) -> ColumnIndex:
        """The ColumnIndex of ``relation`` on ``positions``, built on first use."""
        key = (relation, positions)
        if key not in self._indexes:
            self._indexes[key] = ColumnIndex(self.model.database[relation].columns, positions)
        return self._indexes[key]

    def height(self, relation: str, row: Sequence[int]) -> int | None:
        """The height of ``row`` (encoded values) in ``relation``, None when it is absent."""
        probe = np.array(row, dtype=np.int64).reshape(len(row), 1)
        _, rows = self.index(relation, tuple(range(len(row)))).lookup(probe)
        return int(self.model.heights[relation][rows[0]]) if len(rows) else None

    def encode(self, const: Const) -> int:
        return evaluate_ground_term(const, self.symbols)

    # -- order -----------------------------------------------------------------------------------

    def ready(self, element: BodyElement, bound: set[Var], injected) -> bool:
        """Whether ``element`` can be applied to substitutions binding ``bound``."""
        if isinstance(element, Literal):
            return not element.negated or all(self._evaluable(t, bound, injected)
                                              for t in element.atom.terms)
        return self._binding(element, bound, injected) is not None or all(
            self._evaluable(t, bound, injected) for t in element_terms(element))

    def _evaluable(self, term: Term, bound: set[Var], injected) -> bool:
        if isinstance(term, Wildcard):
            return True
        return set(term_variables(term)) <= bound and all(
            injected[a] <= bound for a in term_aggregates(term))

    def _binding(self, comparison: Comparison, bound: set[Var], injected
                 ) -> tuple[Var, Term] | None:
        """(x, expr) when ``comparison`` binds the new variable x to an evaluable expr."""
        if comparison.op != "=":
            return None
        for var, other in ((comparison.left, comparison.right),
                           (comparison.right, comparison.left)):
            if (isinstance(var, Var) and var not in bound
                    and self._evaluable(other, bound, injected)):
                return var, other
        return None

    def _next(self, remaining: list[BodyElement], bound: set[Var], injected) -> BodyElement:
        """The first ready filter, negation or binding, else the positive atom with the most
        constant or bound positions (the first of those)."""
        for element in remaining:
            if not (isinstance(element, Literal) and not element.negated) and self.ready(
                    element, bound, injected):
                return element
        atoms = [e for e in remaining if isinstance(e, Literal) and not e.negated]
        if not atoms:
            raise self._error(f"cannot order {', '.join(map(str, remaining))}")
        return max(atoms, key=lambda e: sum(not isinstance(t, Var) or t in bound
                                            for t in e.atom.terms))

    # -- matching --------------------------------------------------------------------------------

    def solve(self, body: PreparedBody, matches: Matches, below: int | None = None) -> Matches:
        """Every extension of ``matches`` satisfying ``body`` (greedy order), positive atoms
        matching only rows of height < ``below`` when given."""
        remaining = list(body.elements)
        while remaining and len(matches):
            element = self._next(remaining, set(matches.variables), body.injected)
            remaining.remove(element)
            matches = self.apply(element, matches, body.injected, below)
        return matches

    def apply(self, element: BodyElement, matches: Matches, injected,
              below: int | None = None) -> Matches:
        """``matches`` extended by (or filtered through) one ready element."""
        if isinstance(element, Comparison):
            binding = self._binding(element, set(matches.variables), injected)
            if binding is not None:
                var, expression = binding
                values, valid = self.values(expression, matches, injected)
                bound = matches.bind(var, values)
                return bound if valid is None else bound.take(valid)
            left, valid_left = self.values(element.left, matches, injected)
            right, valid_right = self.values(element.right, matches, injected)
            keep = VECTOR_COMPARATORS[element.op](left, right)
            for valid in (valid_left, valid_right):
                if valid is not None:
                    keep &= valid
            return matches.take(keep)
        if element.negated:
            return self._absent(element.atom, matches, injected)
        return self._join(element.atom, matches, below)

    def _join(self, atom: Atom, matches: Matches, below: int | None) -> Matches:
        relation = self.model.database[atom.relation]
        heights = self.model.heights[atom.relation]
        bound = set(matches.variables)
        keys, probes, new, first = [], [], [], {}
        checks = []
        for position, term in enumerate(atom.terms):
            if isinstance(term, Var) and term not in bound:
                if term in first:
                    checks.append((first[term], position))
                else:
                    first[term] = position
                    new.append(position)
            else:
                keys.append(position)
                probes.append(matches.column(term) if isinstance(term, Var)
                              else np.full(len(matches), self.encode(term), dtype=np.int64))
        probe = (np.vstack(probes) if probes
                 else np.zeros((0, len(matches)), dtype=np.int64))
        owners, rows = self.index(atom.relation, tuple(keys)).lookup(probe)
        keep = np.ones(len(rows), dtype=bool) if below is None else heights[rows] < below
        for i, j in checks:
            keep &= relation.columns[i][rows] == relation.columns[j][rows]
        owners, rows = owners[keep], rows[keep]
        if len(rows) > MAX_MATCHES:
            raise self._error(f"{atom} has more than {MAX_MATCHES:,} matches to explore")
        values = np.vstack([matches.values[:, owners], relation.columns[new][:, rows]])
        deepest = np.maximum(matches.deepest[owners], heights[rows])
        return Matches(matches.variables + tuple(first), values, deepest)

    def _absent(self, atom: Atom, matches: Matches, injected) -> Matches:
        positions = tuple(i for i, t in enumerate(atom.terms) if not isinstance(t, Wildcard))
        probes, ok = [], np.ones(len(matches), dtype=bool)
        for i in positions:
            values, valid = self.values(atom.terms[i], matches, injected)
            probes.append(values)
            if valid is not None:
                ok &= valid
        probe = (np.vstack(probes) if probes
                 else np.zeros((0, len(matches)), dtype=np.int64))
        owners, _ = self.index(atom.relation, positions).lookup(probe)
        ok[owners] = False
        return matches.take(ok)

    # -- values ----------------------------------------------------------------------------------

    def values(self, term: Term, matches: Matches, injected) -> Vector:
        """The value of ``term`` in each substitution, and which are valid (a failed
        operation, or a ``min``/``max`` of nothing, is not)."""
        if isinstance(term, Var):
            return matches.column(term), None
        if isinstance(term, Const):
            return np.full(len(matches), self.encode(term), dtype=np.int64), None
        if isinstance(term, Arith):
            arguments, valid = [], None
            for argument in term.args:
                values, ok = self.values(argument, matches, injected)
                arguments.append(values)
                valid = ok if valid is None else (valid if ok is None else valid & ok)
            values, ok = vector_operation(term.op, arguments)
            return values, ok if valid is None else (valid if ok is None else valid & ok)
        if isinstance(term, Aggregate):
            return self._aggregate(term, matches, injected[term])
        raise self._error(f"{term} cannot be used as a value")

    def _aggregate(self, aggregate: Aggregate, matches: Matches, injected: frozenset[Var]
                   ) -> Vector:
        """The aggregate's value per substitution: computed once per distinct value of its
        injected variables (a Python loop over those groups)."""
        if aggregate.function == "mean":
            raise self._error("aggregate mean yields a float, which herbrand does not support")
        outer = tuple(v for v in matches.variables if v in injected)
        body = self._aggregate_body(aggregate, injected)
        block = matches.values[[matches.variables.index(v) for v in outer]]
        if not len(matches):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        groups, inverse = np.unique(block, axis=1, return_inverse=True)
        values = np.zeros(groups.shape[1], dtype=np.int64)
        valid = np.ones(groups.shape[1], dtype=bool)
        for g in range(groups.shape[1]):
            start = Matches(outer, groups[:, g:g + 1], np.zeros(1, dtype=np.int64))
            found = self.solve(body, start)
            if not len(found):  # the search stopped early: TARGET may be unbound
                valid[g] = aggregate.function in ("count", "sum")
                continue
            distinct = np.unique(found.values, axis=1)
            if aggregate.function == "count":
                values[g] = distinct.shape[1]
                continue
            target = distinct[found.variables.index(TARGET)]
            if aggregate.function == "sum":
                values[g] = target.sum(dtype=np.int64)
            else:
                values[g] = target.min() if aggregate.function == "min" else target.max()
        inverse = inverse.ravel()
        return values[inverse], valid[inverse]

    def _aggregate_body(self, aggregate: Aggregate, injected: frozenset[Var]) -> PreparedBody:
        key = (aggregate, injected)
        if key not in self._aggregates:
            body = name_wildcards(aggregate.body, "@a")
            if aggregate.target is not None:
                body += (Comparison("=", TARGET, aggregate.target),)
            self._aggregates[key] = prepare(body, injected)
        return self._aggregates[key]

    def _error(self, message: str) -> EvaluationError:
        if self.rule is None:
            return EvaluationError(f"explain: {message}")
        where = f" at {self.rule.location}" if self.rule.location else ""
        return EvaluationError(f"explain: rule {self.rule}{where}: {message}")
