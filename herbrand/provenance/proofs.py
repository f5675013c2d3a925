"""What ``explain`` returns: a ``Proof`` of a tuple of the model, or ``NotDerived``.

Both are immutable values (frozen dataclasses over the syntax's frozen values) with
``to_dict()`` (JSON-able) and a readable ``str``. A Proof is a tree; a subproof used twice is
one shared value, so walking it as a tree may meet it again. Printing is capped
(``render(max_depth, max_lines)``; ``str`` uses ``MAX_LINES`` and no depth limit), and so is
``to_dict`` (``max_depth``, ``max_nodes``): what is cut is said, never silently dropped.

A proof node is one of:

- ``source="rule"``: derived by ``rule`` (``rule_index`` is its position in
  ``Program.rules``) with the ground instance ``body`` of its body, in body order, and the
  ``premises``: the proofs of the positive atoms of ``body``, in body order. Negated atoms of
  ``body`` were absent from the model, its comparisons hold. An aggregate in ``body`` shows
  the values of the enclosing rule's variables it depends on, and its value is in
  ``aggregates``: its premises are the matches of the aggregate's body, a lower stratum, and
  they are not expanded. ``truncated`` is True when the node was not reconstructed (beyond
  ``explain``'s ``max_depth``): then ``rule`` and ``body`` are unknown (None and empty).
- ``source="fact"``: an inline fact of the program (``rule`` is that fact).
- ``source="input"``: a fact given to the program (``rule`` is None).

``height`` is the iteration of semi-naive evaluation (counted across strata) that first
derived the tuple, 0 for facts; every premise has a smaller height than its conclusion, so a
proof's height is the least any proof of the tuple can have.

Cost: ``str`` and ``to_dict`` walk the tree iteratively, O(printed nodes).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from herbrand.framework.syntax import (
    Aggregate,
    Atom,
    BodyElement,
    Const,
    Literal,
    Rule,
    element_aggregates,
)

MAX_LINES = 500  # lines ``str(proof)`` prints at most
MAX_NODES = 100_000  # nodes ``to_dict`` writes at most

Value = int | str


def atom_text(relation: str, values: tuple[Value, ...]) -> str:
    """``relation(v1, ..., vn)`` with symbols quoted, as in a program."""
    return str(Atom(relation, tuple(Const(v) for v in values)))


def _rule_text(rule: Rule, rule_index: int | None) -> str:
    where = f" at {rule.location}" if rule.location is not None else ""
    return f"#{rule_index + 1}{where}: {rule}" if rule_index is not None else f"{where}: {rule}"


def _rule_dict(rule: Rule | None, rule_index: int | None) -> dict | None:
    if rule is None:
        return None
    return {"index": rule_index, "text": str(rule),
            "location": None if rule.location is None else str(rule.location)}


@dataclass(frozen=True)
class AggregateValue:
    """An aggregate of a rule's body, its enclosing variables replaced by their values, and
    the value it took."""

    aggregate: Aggregate
    value: int

    def __str__(self) -> str:
        return f"{self.aggregate} = {self.value}"


@dataclass(frozen=True)
class Proof:
    """A derivation of ``relation(values)`` (see the module doc)."""

    relation: str
    values: tuple[Value, ...]
    height: int
    source: str  # "rule", "fact" or "input"
    rule: Rule | None = None
    rule_index: int | None = None
    body: tuple[BodyElement, ...] = ()
    premises: tuple[Proof, ...] = ()
    aggregates: tuple[AggregateValue, ...] = ()
    truncated: bool = False

    derived = True

    @property
    def atom(self) -> str:
        return atom_text(self.relation, self.values)

    def label(self) -> str:
        """The node's own line: the tuple, its height and where it comes from."""
        if self.source == "input":
            return f"{self.atom} [0] input fact"
        if self.source == "fact":
            return f"{self.atom} [0] fact {_rule_text(self.rule, self.rule_index)}"
        if self.truncated:
            return f"{self.atom} [{self.height}] (proof not reconstructed: below max depth)"
        return f"{self.atom} [{self.height}] rule {_rule_text(self.rule, self.rule_index)}"

    def children(self) -> Iterator[Proof | str]:
        """The body in order: the premises' proofs, and a line for each other element."""
        premises = iter(self.premises)
        aggregates = iter(self.aggregates)
        for element in self.body:
            if isinstance(element, Literal) and not element.negated:
                yield next(premises)
            elif isinstance(element, Literal):
                yield f"{element} absent"
            else:
                found = [next(aggregates) for _ in element_aggregates(element)]
                notes = "".join(f" (aggregate {a}; the matches of its body are not expanded)"
                                for a in found)
                yield f"{element} holds{notes}"

    def render(self, max_depth: int | None = None, max_lines: int | None = MAX_LINES) -> str:
        """The proof as an indented tree, one node a line (``tuple [height] rule ...``), cut
        below ``max_depth`` levels and after ``max_lines`` lines, saying so where it is."""
        lines: list[str] = []
        stack: list[tuple[Proof | str, int]] = [(self, 0)]
        nodes = 0
        while stack:
            item, depth = stack.pop()
            if max_lines is not None and len(lines) >= max_lines:
                rest = len(stack) + 1
                lines.append(f"... output cut at {max_lines} lines ({rest} more entries at "
                             f"least; use --max-depth or --json)")
                break
            indent = "  " * depth
            if isinstance(item, str):
                lines.append(indent + item)
                continue
            nodes += 1
            lines.append(indent + item.label())
            children = list(item.children())
            if children and max_depth is not None and depth >= max_depth:
                lines.append(f"{indent}  ... ({len(children)} body entries below depth "
                             f"{max_depth} not shown)")
                continue
            stack.extend((child, depth + 1) for child in reversed(children))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()

    def to_dict(self, max_depth: int | None = None, max_nodes: int = MAX_NODES) -> dict:
        """The proof as JSON-able dicts: ``relation``, ``tuple``, ``height``, ``source``,
        ``rule`` ({index, text, location} or None), ``body`` (texts), ``aggregates``
        ([{aggregate, value}]), ``premises`` (dicts), ``truncated``; the root also has
        ``derived: true``. A node below ``max_depth``, or past ``max_nodes`` nodes, has
        ``premises_cut: true`` and no premises."""
        root = self._node_dict()
        root["derived"] = True
        stack = [(self, root, 0)]
        written = 1
        while stack:
            proof, node, depth = stack.pop()
            if not proof.premises:
                continue
            if (max_depth is not None and depth >= max_depth) or written >= max_nodes:
                node["premises_cut"] = True
                continue
            for premise in proof.premises:
                child = premise._node_dict()
                node["premises"].append(child)
                stack.append((premise, child, depth + 1))
                written += 1
        return root

    def _node_dict(self) -> dict:
        return {
            "relation": self.relation, "tuple": list(self.values), "height": self.height,
            "source": self.source, "rule": _rule_dict(self.rule, self.rule_index),
            "body": [str(e) for e in self.body],
            "aggregates": [{"aggregate": str(a.aggregate), "value": a.value}
                           for a in self.aggregates],
            "premises": [], "truncated": self.truncated,
        }


@dataclass(frozen=True)
class RuleFailure:
    """Why one rule does not derive the tuple: its head does not unify with it (``element``
    None), or ``element`` (at ``position`` in the rule's body) is the first body element, left
    to right, with no match given the bindings so far. ``reason`` says which in words, showing
    the element with each variable that has one value in every match so far replaced by it."""

    rule: Rule
    rule_index: int
    reason: str
    element: BodyElement | None = None
    position: int | None = None

    def __str__(self) -> str:
        return f"  rule {_rule_text(self.rule, self.rule_index)}\n    {self.reason}"

    def to_dict(self) -> dict:
        return {**_rule_dict(self.rule, self.rule_index), "reason": self.reason,
                "element": None if self.element is None else str(self.element),
                "position": self.position}


@dataclass(frozen=True)
class NotDerived:
    """``relation(values)`` is not in the model: it is not among the facts (given or inline),
    and each rule of ``relation`` fails as its ``RuleFailure`` says (none for a relation no
    rule derives)."""

    relation: str
    values: tuple[Value, ...]
    failures: tuple[RuleFailure, ...] = ()

    derived = False

    @property
    def atom(self) -> str:
        return atom_text(self.relation, self.values)

    def __str__(self) -> str:
        lines = [f"{self.atom} is not derived: it is not among the facts"]
        if not self.failures:
            lines[0] += f", and no rule derives {self.relation}"
        lines += [str(failure) for failure in self.failures]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """``derived: false``, ``relation``, ``tuple``, and ``rules``: for each rule of the
        relation, its index, text, location, ``reason``, the failing ``element`` and its
        ``position`` in the body (None when the head does not unify)."""
        return {"derived": False, "relation": self.relation, "tuple": list(self.values),
                "rules": [failure.to_dict() for failure in self.failures]}
