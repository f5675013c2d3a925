"""An independent checker of explain's answers: the oracle of the property tests.

It knows nothing of how proofs are searched. Given the program, the model (decoded rows and
the recorded heights) and a Proof, it checks every node: a rule node's rule is the program's
rule at ``rule_index``, its ground body is an instance of that rule's body (unified term by
term, every variable one value, arithmetic re-evaluated with the scalar reference of
``herbrand.evaluators.arithmetic``), the head under that substitution is the node's tuple,
positive premises are in the model with smaller heights and are the premises' proofs, negated
atoms match no row of the model, comparisons hold (aggregate values recomputed by the
substitution evaluator), and every leaf is a given or an inline fact of height 0.
"""

from __future__ import annotations

from herbrand.evaluators.arithmetic import COMPARATORS, evaluate_ground_term
from herbrand.evaluators.substitution import SubstitutionEvaluator
from herbrand.framework.storage import Database
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    Atom,
    Comparison,
    Const,
    Literal,
    Rule,
    Var,
    Wildcard,
)
from herbrand.provenance.proofs import Proof


class ProofChecker:
    """Checks proofs against ``database`` (an encoded model) and its ``heights``."""

    def __init__(self, program, database: Database, heights, facts: dict):
        self.program = program
        self.database = database
        self.rows = {name: set(database.decoded_rows(name)) for name in database}
        self.height = {}
        for name in database:
            for row, height in zip(database.decoded_rows(name), heights[name], strict=True):
                self.height[(name, row)] = int(height)
        self.given = {(name, tuple(row)) for name, rows in facts.items() for row in rows}

    def check(self, proof: Proof) -> int:
        """Check every node of ``proof``; the number of nodes checked."""
        stack, checked = [proof], 0
        while stack:
            node = stack.pop()
            self.check_node(node)
            stack.extend(node.premises)
            checked += 1
        return checked

    def check_node(self, node: Proof) -> None:
        key = (node.relation, node.values)
        assert node.values in self.rows[node.relation], f"{node.atom} is not in the model"
        assert node.height == self.height[key], f"{node.atom}: height {node.height}, " \
                                                f"recorded {self.height[key]}"
        assert not node.truncated
        if node.source == "input":
            assert node.height == 0 and key in self.given, f"{node.atom} is not a given fact"
            return
        rule = self.program.rules[node.rule_index]
        assert rule == node.rule
        if node.source == "fact":
            assert rule.is_fact and node.height == 0
            values = tuple(evaluate_ground_term(t, SymbolTable()) for t in rule.head.terms)
            assert values == node.values
            return
        assert node.source == "rule" and not rule.is_fact and node.height > 0
        self.check_instance(node, rule)

    def check_instance(self, node: Proof, rule: Rule) -> None:
        assert len(node.body) == len(rule.body)
        binding: dict[Var, object] = {}
        deferred: list[tuple[object, object]] = []
        for pattern, ground in zip(rule.body, node.body, strict=True):
            _unify(pattern, ground, binding, deferred)
        for term, value in zip(rule.head.terms, node.values, strict=True):
            deferred.append((term, Const(value)))
        for pattern, ground in deferred:
            assert _value(pattern, binding) == _value(ground, binding), \
                f"{rule}: {pattern} is not {ground} under {binding}"
        premises = iter(node.premises)
        aggregates = iter(node.aggregates)
        for element in node.body:
            if isinstance(element, Literal) and not element.negated:
                values = tuple(t.value for t in element.atom.terms)
                premise = next(premises)
                assert (premise.relation, premise.values) == (element.atom.relation, values)
                assert premise.height < node.height, f"{premise.atom} is not below {node.atom}"
            elif isinstance(element, Literal):
                assert not any(_matches(element.atom, row)
                               for row in self.rows[element.atom.relation]), \
                    f"{element} has a match in the model"
            else:
                values = {}
                for side in (element.left, element.right):
                    if isinstance(side, Aggregate):
                        values[side] = self.aggregate(side)
                        assert next(aggregates).value == values[side]
                left = values.get(element.left)
                right = values.get(element.right)
                left = _value(element.left, {}) if left is None else left
                right = _value(element.right, {}) if right is None else right
                assert left is not None and right is not None
                assert COMPARATORS[element.op](left, right), f"{element} does not hold"
        assert next(premises, None) is None and next(aggregates, None) is None

    def aggregate(self, aggregate: Aggregate) -> int | None:
        """The aggregate's value (its injected variables already replaced by values), as the
        substitution evaluator computes it over the model."""
        rule = Rule(Atom("@check", (Var("@v"),)), (Comparison("=", Var("@v"), aggregate),))
        rows = SubstitutionEvaluator().evaluate([rule], self.database)["@check"].to_rows()
        return rows[0][0] if rows else None


def _unify(pattern, ground, binding: dict, deferred: list) -> None:
    """Bind the variables of ``pattern`` (a rule's term or element) to the constants of its
    instance ``ground``; an expression against a constant is checked later (``deferred``)."""
    if isinstance(pattern, Var) and isinstance(ground, Const):
        assert binding.setdefault(pattern, ground.value) == ground.value, \
            f"{pattern} is both {binding[pattern]} and {ground.value}"
    elif isinstance(pattern, Wildcard):
        return
    elif isinstance(pattern, Arith) and isinstance(ground, Const):
        deferred.append((pattern, ground))
    elif isinstance(pattern, Literal):
        assert isinstance(ground, Literal) and pattern.negated == ground.negated
        assert pattern.atom.relation == ground.atom.relation
        for p, g in zip(pattern.atom.terms, ground.atom.terms, strict=True):
            _unify(p, g, binding, deferred)
    elif isinstance(pattern, Comparison):
        assert isinstance(ground, Comparison) and pattern.op == ground.op
        _unify(pattern.left, ground.left, binding, deferred)
        _unify(pattern.right, ground.right, binding, deferred)
    elif isinstance(pattern, Arith):
        assert isinstance(ground, Arith) and pattern.op == ground.op
        for p, g in zip(pattern.args, ground.args, strict=True):
            _unify(p, g, binding, deferred)
    elif isinstance(pattern, Aggregate):
        assert isinstance(ground, Aggregate) and pattern.function == ground.function
        if pattern.target is not None:
            _unify(pattern.target, ground.target, binding, deferred)
        for p, g in zip(pattern.body, ground.body, strict=True):
            _unify(p, g, binding, deferred)
    else:  # a constant, or a variable local to an aggregate (left as it is)
        assert pattern == ground, f"{pattern} is not {ground}"


def _value(term, binding: dict):
    """The value of a term under ``binding`` (decoded values; symbols are strs)."""
    if isinstance(term, Var):
        return binding[term]
    if isinstance(term, Const):
        return term.value
    if isinstance(term, Arith):
        args = [_value(a, binding) for a in term.args]
        return evaluate_ground_term(Arith(term.op, tuple(Const(a) for a in args)),
                                    SymbolTable())
    raise AssertionError(f"no value for {term}")


def _matches(atom: Atom, row: tuple) -> bool:
    return all(isinstance(t, Wildcard) or t.value == v
               for t, v in zip(atom.terms, row, strict=True))
