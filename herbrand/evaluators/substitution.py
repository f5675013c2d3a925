"""The substitution-based rule evaluator (Infer): the reference every other evaluator is checked
against.

For each rule, substitutions (variable -> int64 value) are extended literal by literal, then
applied to the head. Expression arguments of positive atoms are first lifted into equalities
(``t(x - 1)`` becomes ``t(@e0), @e0 = x - 1``). The body is then ordered greedily and
deterministically: at each step the first remaining comparison, negation or aggregate whose
variables are all bound is taken (``x = expr`` counts as soon as ``expr`` is bound: it binds
``x``), otherwise the first positive atom in body order. Positive atoms and negations are looked
up in hash indexes ``{key tuple -> list of rows}`` on their bound positions, built lazily and
cached by relation name (see IndexCache).

A substitution is held as a tuple of values, one per variable in the order the variables were
bound (the plan fixes that order statically), so extending one is a tuple concatenation; the dict
``Var -> value`` it stands for is ``dict(zip(bound_variables, values))``.

Values are int64: numbers as themselves, symbols as ids of ``instance.symbols`` (so ``=`` and
``!=`` on symbols compare ids). Arithmetic wraps to signed 64 bits; ``/`` truncates toward zero
and ``%`` takes the sign of the dividend (C and Soufflé semantics); division or modulo by zero
and a negative exponent make the substitution fail (no derivation). Shift counts are taken
modulo 64 (the x86-64 reading of C's undefined cases).

An aggregate is evaluated once its injected variables (``syntax.injected_variables``, as
Soufflé decides them) are bound, with them fixed; it ranges over the distinct matches of its
body, each wildcard a distinct anonymous variable. ``count`` and ``sum`` of nothing are 0;
``min`` and ``max`` of nothing make the substitution fail; ``mean`` yields a float in Soufflé and
is rejected with an EvaluationError naming the rule.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from itertools import chain

import numpy as np

from herbrand.evaluators.arithmetic import COMPARATORS, OPERATORS, evaluate_ground_term, wrap64
from herbrand.framework.contracts import EvaluatorTags, RuleEvaluator
from herbrand.framework.errors import ArityError, EvaluationError
from herbrand.framework.growing import extends
from herbrand.framework.storage import Database, Relation
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
    element_terms,
    element_variables,
    injected_variables,
    lift_atom_expressions,
    term_aggregates,
    term_variables,
)

Substitution = tuple[int, ...]
Step = Callable[[list[Substitution]], list[Substitution]]
TermFunction = Callable[[Substitution], "int | None"]

# ---------------------------------------------------------------------------------------------
# Hash indexes
# ---------------------------------------------------------------------------------------------


def _tuple_getter(positions: Sequence[int]) -> Callable[[tuple], tuple]:
    """A function taking the values at ``positions`` of a tuple, always as a tuple."""
    if len(positions) == 1:
        (position,) = positions
        return lambda row: (row[position],)
    if not positions:
        return lambda row: ()
    return operator.itemgetter(*positions)


class IndexCache:
    """Hash indexes ``{values at positions -> list of rows}`` of the relations an evaluator
    reads, kept per relation name and positions.

    For each (name, positions) the cache keeps the last relation indexed (its columns array)
    and the index. Asked for the same relation again it answers in O(1). Asked for a relation
    that extends the last one, i.e. whose rows start with the last one's rows (as
    ``Relation.union`` guarantees for the full relations of a fixpoint), it indexes only the
    new rows: O(new rows) after an O(n) vectorised prefix check. Otherwise it rebuilds, O(n).
    Indexes live as long as the cache, or until ``clear()``.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, tuple[int, ...]], tuple[np.ndarray, dict]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drop every index (and the references to the indexed relations' arrays)."""
        self._entries.clear()

    def index(
        self, name: str, relation: Relation, positions: tuple[int, ...]
    ) -> dict[tuple, list[tuple]]:
        """The rows of ``relation`` (named ``name``) grouped by their values at ``positions``.
        The result is valid until the next call for the same name and positions."""
        key = (name, positions)
        columns = relation.columns
        entry = self._entries.get(key)
        if entry is not None and entry[0] is columns:
            return entry[1]
        if entry is not None and extends(columns, entry[0]):
            index, start = entry[1], entry[0].shape[1]
        else:
            index, start = {}, 0
        _add_rows(index, columns[:, start:], positions)
        self._entries[key] = (columns, index)
        return index


def _add_rows(index: dict[tuple, list[tuple]], block: np.ndarray, positions: tuple[int, ...]
              ) -> None:
    """Add the rows of an (arity, n) block to ``index``; no key is made for no rows."""
    arity, n = block.shape
    rows = list(zip(*block.tolist(), strict=True)) if arity else [()] * n
    key_of = _tuple_getter(positions)
    for row in rows:
        key = key_of(row)
        bucket = index.get(key)
        if bucket is None:
            index[key] = [row]
        else:
            bucket.append(row)


# ---------------------------------------------------------------------------------------------
# Compilation of a rule into steps over lists of substitutions
# ---------------------------------------------------------------------------------------------


Injected = Mapping[Aggregate, set[Var]]


def _injected(body: Sequence[BodyElement], bound: Sequence[Var], more: Sequence[Term] = ()
              ) -> dict[Aggregate, set[Var]]:
    """The injected variables of each aggregate of ``body`` (and of the terms ``more``)."""
    terms = chain(chain.from_iterable(element_terms(e) for e in body), more)
    return {a: injected_variables(a, tuple(body), bound)
            for t in terms for a in term_aggregates(t)}


class _Compiler:
    """Turns rules into steps for one ``evaluate`` call (relations and symbols of ``instance``).

    ``injected`` maps each aggregate of the body being compiled to its injected variables
    (``herbrand.framework.syntax.injected_variables``): the aggregate is evaluated once they
    are bound, with them fixed; its other variables are local.
    """

    def __init__(self, instance: Database, cache: IndexCache):
        self.instance = instance
        self.cache = cache
        self.rule: Rule | None = None
        self._fresh = 0

    def error(self, message: str) -> EvaluationError:
        where = f" at {self.rule.location}" if self.rule.location else ""
        return EvaluationError(f"rule {self.rule}{where}: {message}")

    # -- rules and bodies ----------------------------------------------------------------------

    def rule_rows(self, rule: Rule) -> list[tuple[int, ...]]:
        """The head rows of every substitution satisfying the body of ``rule``."""
        self.rule = rule
        steps, scope, injected = self.body(rule.body, [], rule.head.terms)
        head = self.row_function(rule.head.terms, scope, injected)
        substitutions: list[Substitution] = [()]
        for step in steps:
            substitutions = step(substitutions)
            if not substitutions:
                return []
        rows = (head(s) for s in substitutions)
        return [row for row in rows if row is not None]

    def body(
        self, body: tuple[BodyElement, ...], scope: list[Var], more: Sequence[Term] = ()
    ) -> tuple[list[Step], list[Var], Injected]:
        """Steps evaluating ``body`` over substitutions binding ``scope``, the scope after, and
        the injected variables of the aggregates of the body and of the terms ``more``.
        Expressions in positive atoms are first lifted into equalities
        (``lift_atom_expressions``), so every positive atom can be evaluated at any point."""
        body = lift_atom_expressions(body)
        injected = _injected(body, scope, more)
        scope = list(scope)
        remaining = list(body)
        steps = []
        while remaining:
            element = self.next_element(remaining, set(scope), injected)
            remaining.remove(element)
            steps.append(self.step(element, scope, injected))
        return steps, scope, injected

    def next_element(
        self, remaining: list[BodyElement], bound: set[Var], injected: Injected
    ) -> BodyElement:
        """The first evaluable filter or binding, else the first positive atom."""
        for element in remaining:
            if isinstance(element, Comparison):
                if self.binding_side(element, bound, injected) is not None or all(
                    self.evaluable(t, bound, injected) for t in element_terms(element)
                ):
                    return element
            elif element.negated and all(
                self.evaluable(t, bound, injected) for t in element.atom.terms
            ):
                return element
        for element in remaining:
            if isinstance(element, Literal) and not element.negated:
                return element
        unbound = sorted({v.name for e in remaining for v in element_variables(e)} - {
            v.name for v in bound})
        raise self.error(
            f"cannot order {', '.join(map(str, remaining))}: "
            f"variables {', '.join(unbound) or '(none)'} are never bound by a positive atom"
        )

    @staticmethod
    def evaluable(term: Term, bound: set[Var], injected: Injected) -> bool:
        if isinstance(term, Wildcard):
            return True
        if not set(term_variables(term)) <= bound:
            return False
        return all(injected[a] <= bound for a in term_aggregates(term))

    def binding_side(
        self, comparison: Comparison, bound: set[Var], injected: Injected
    ) -> tuple[Var, Term] | None:
        """(x, expr) when ``comparison`` is ``x = expr`` or ``expr = x`` with x unbound and expr
        evaluable."""
        if comparison.op != "=":
            return None
        for var, other in ((comparison.left, comparison.right),
                           (comparison.right, comparison.left)):
            if isinstance(var, Var) and var not in bound and self.evaluable(other, bound, injected):
                return var, other
        return None

    # -- steps ---------------------------------------------------------------------------------

    def step(self, element: BodyElement, scope: list[Var], injected: Injected) -> Step:
        """The step for ``element``; appends the variables it binds to ``scope``."""
        if isinstance(element, Comparison):
            binding = self.binding_side(element, set(scope), injected)
            if binding is not None:
                var, expression = binding
                value = self.term(expression, scope, injected)
                scope.append(var)
                return lambda subs: [s + (v,) for s in subs if (v := value(s)) is not None]
            return self.comparison_step(element, scope, injected)
        if element.negated:
            return self.negation_step(element.atom, scope, injected)
        return self.atom_step(element.atom, scope, injected)

    def comparison_step(self, comparison: Comparison, scope: list[Var], injected: Injected
                        ) -> Step:
        left = self.term(comparison.left, scope, injected)
        right = self.term(comparison.right, scope, injected)
        compare = COMPARATORS[comparison.op]

        def holds(s: Substitution) -> bool:
            a = left(s)
            if a is None:
                return False
            b = right(s)
            return b is not None and compare(a, b)

        return lambda subs: [s for s in subs if holds(s)]

    def negation_step(self, atom: Atom, scope: list[Var], injected: Injected) -> Step:
        relation = self.relation(atom)
        positions = tuple(i for i, t in enumerate(atom.terms) if not isinstance(t, Wildcard))
        key_of = self.key_function([atom.terms[i] for i in positions], scope, injected)
        cache = self.cache

        def run(subs: list[Substitution]) -> list[Substitution]:
            index = cache.index(atom.relation, relation, positions)
            return [s for s in subs if (k := key_of(s)) is not None and k not in index]

        return run

    def atom_step(self, atom: Atom, scope: list[Var], injected: Injected) -> Step:
        """Lookup on the positions of constants and bound variables, binding the new variables
        (a repeated new variable is checked equal at its later positions). An atom that binds
        nothing is an existence test, and substitutions that differ only in what wildcards
        matched are merged, so that ``a(_), b(_)`` costs no product."""
        relation = self.relation(atom)
        bound = set(scope)
        key_positions, new_positions, checks, first = [], [], [], {}
        for position, term in enumerate(atom.terms):
            if isinstance(term, Wildcard):
                continue
            if isinstance(term, Var) and term not in bound:
                if term in first:
                    checks.append((first[term], position))
                else:
                    first[term] = position
                    new_positions.append(position)
            else:
                key_positions.append(position)
        key_positions = tuple(key_positions)
        key_of = self.key_function([atom.terms[i] for i in key_positions], scope, injected)
        take = _tuple_getter(new_positions)
        scope.extend(first)
        cache = self.cache
        projects = any(isinstance(t, Wildcard) for t in atom.terms)

        def exists(subs: list[Substitution]) -> list[Substitution]:
            index = cache.index(atom.relation, relation, key_positions)
            return [s for s in subs if index.get(key_of(s))]

        def run(subs: list[Substitution]) -> list[Substitution]:
            index = cache.index(atom.relation, relation, key_positions)
            out: list[Substitution] = []
            for s in subs:
                bucket = index.get(key_of(s))
                if bucket:
                    if checks:
                        bucket = [r for r in bucket if all(r[i] == r[j] for i, j in checks)]
                    out.extend([s + take(r) for r in bucket])
            return list(dict.fromkeys(out)) if projects else out

        return run if new_positions else exists

    def relation(self, atom: Atom) -> Relation:
        try:
            relation = self.instance[atom.relation]
        except KeyError:
            raise self.error(f"relation {atom.relation!r} is not in the instance") from None
        if relation.arity != atom.arity:
            raise ArityError(
                f"rule {self.rule}: {atom} has arity {atom.arity}, "
                f"relation {atom.relation!r} has arity {relation.arity}"
            )
        return relation

    # -- terms ---------------------------------------------------------------------------------

    def key_function(
        self, terms: Sequence[Term], scope: list[Var], injected: Injected
    ) -> Callable[[Substitution], tuple | None]:
        """A function of a substitution giving the values of ``terms`` (None if one fails)."""
        if all(isinstance(t, Var) for t in terms):
            return _tuple_getter([scope.index(t) for t in terms])
        if all(isinstance(t, (Var, Const)) for t in terms):
            slots = [scope.index(t) if isinstance(t, Var) else None for t in terms]
            constants = [None if isinstance(t, Var) else self.constant(t) for t in terms]
            parts = list(zip(slots, constants, strict=True))
            return lambda s: tuple(c if i is None else s[i] for i, c in parts)
        functions = [self.term(t, scope, injected) for t in terms]

        def key(s: Substitution) -> tuple | None:
            values = tuple(f(s) for f in functions)
            return None if None in values else values

        return key

    def row_function(
        self, terms: Sequence[Term], scope: list[Var], injected: Injected
    ) -> Callable[[Substitution], tuple | None]:
        for term in terms:
            if isinstance(term, Wildcard):
                raise self.error("a head cannot contain _")
            if not self.evaluable(term, set(scope), injected):
                missing = sorted(v.name for v in term_variables(term) if v not in scope)
                raise self.error(f"head {term} uses variables not bound by the body: "
                                 f"{', '.join(missing) or 'those of its aggregate'}")
        return self.key_function(terms, scope, injected)

    def constant(self, const: Const) -> int:
        return evaluate_ground_term(const, self.instance.symbols)

    def term(self, term: Term, scope: list[Var], injected: Injected) -> TermFunction:
        """A function of a substitution giving the value of ``term`` (None when it fails)."""
        if isinstance(term, Var):
            return operator.itemgetter(scope.index(term))
        if isinstance(term, Const):
            value = self.constant(term)
            return lambda s: value
        if isinstance(term, Arith):
            function = OPERATORS[term.op]
            args = [self.term(a, scope, injected) for a in term.args]
            if len(args) == 2:
                first, second = args

                def binary(s: Substitution) -> int | None:
                    a, b = first(s), second(s)
                    return None if a is None or b is None else function(a, b)

                return binary

            def call(s: Substitution) -> int | None:
                values = [f(s) for f in args]
                return None if None in values else function(*values)

            return call
        if isinstance(term, Aggregate):
            return self.aggregate(term, scope, injected)
        raise self.error(f"{term} cannot be used as a value")

    def aggregate(self, aggregate: Aggregate, scope: list[Var], injected: Injected
                  ) -> TermFunction:
        """The aggregate's value given the substitution's values of its injected variables,
        memoised per distinct injected values for this evaluate call."""
        if aggregate.function == "mean":
            raise self.error("aggregate mean yields a float, which herbrand does not support")
        body = self.anonymise(aggregate.body)
        target = Var("@target")
        if aggregate.target is not None:
            body += (Comparison("=", target, aggregate.target),)
        correlated = [v for v in scope if v in injected[aggregate]]
        steps, inner_scope, _ = self.body(body, correlated)
        outer_key = _tuple_getter([scope.index(v) for v in correlated])
        function = aggregate.function
        target_slot = inner_scope.index(target) if aggregate.target is not None else None
        memo: dict[tuple, int | None] = {}

        def compute(key: tuple) -> int | None:
            substitutions = [key]
            for step in steps:
                substitutions = step(substitutions)
            matches = set(substitutions)
            if function == "count":
                return len(matches)
            values = [m[target_slot] for m in matches]
            if function == "sum":
                return wrap64(sum(values))
            if not values:
                return None
            return min(values) if function == "min" else max(values)

        def value(s: Substitution) -> int | None:
            key = outer_key(s)
            if key not in memo:
                memo[key] = compute(key)
            return memo[key]

        return value

    def anonymise(self, body: tuple[BodyElement, ...]) -> tuple[BodyElement, ...]:
        """``body`` with each wildcard of a positive atom replaced by a fresh variable, so that
        distinct matches of an aggregate body tell its wildcards apart."""

        def fresh(term: Term) -> Term:
            if not isinstance(term, Wildcard):
                return term
            self._fresh += 1
            return Var(f"@anon{self._fresh}")

        return tuple(
            Literal(Atom(e.atom.relation, tuple(map(fresh, e.atom.terms)), e.atom.location))
            if isinstance(e, Literal) and not e.negated else e
            for e in body
        )


class SubstitutionEvaluator(RuleEvaluator):
    """The Infer rule evaluator (see the module docstring for order and semantics).

    Cost per rule: the sum over its body steps of the substitutions entering the step, times the
    matching rows per lookup, all in Python; plus O(n) to index each relation the first time it
    is read on a given set of bound positions, or O(new rows) when it grew by a union since the
    last call (see IndexCache). Not safe for concurrent use of one instance.
    """

    tags = EvaluatorTags(negation=True, arithmetic=True, aggregates=True, uses_index=False)

    def __init__(self) -> None:
        self._cache = IndexCache()

    def evaluate(self, rules: Sequence[Rule], instance: Database) -> dict[str, Relation]:
        """Every head row derivable by one application of ``rules`` to ``instance``, by head
        relation (a relation with no derivation maps to an empty Relation).

        Raises EvaluationError naming the rule for a body that cannot be ordered (unsafe), a
        relation missing from the instance, or a ``mean`` aggregate; ArityError for an atom whose
        arity differs from its relation's.
        """
        compiler = _Compiler(instance, self._cache)
        derived: dict[str, dict[tuple, None]] = {}
        arities: dict[str, int] = {}
        for rule in rules:
            name = rule.head.relation
            if arities.setdefault(name, rule.head.arity) != rule.head.arity:
                raise ArityError(f"rule {rule}: head arity differs from another rule's for {name}")
            rows = derived.setdefault(name, {})
            rows.update(dict.fromkeys(compiler.rule_rows(rule)))
        return {name: Relation.from_rows(list(rows), arities[name])
                for name, rows in derived.items()}
