"""Hypothesis strategies for random stratified Datalog programs with facts.

``programs_with_facts()`` draws ``(program, facts)``: a few input relations ``e0, e1, ...`` with
small integer facts, and derived relations ``p0, p1, ...`` placed on levels. A rule's positive
atoms read input relations and derived relations of its own level or lower (so recursion and
mutual recursion occur); its negated atoms and aggregates read only strictly lower levels, so the
program is stratified by construction. Every rule is safe: comparisons, negations, aggregates
and heads use only variables bound by its positive atoms or by ``v = expr``; each arithmetic
binding is guarded by ``v >= 0, v <= ARITHMETIC_BOUND`` so that recursion through arithmetic
stays finite. With ``atom_expressions=True``, positive atoms may also hold ``v + 1`` or
``v - 1`` as arguments, over variables bound by any positive atom of the rule (the same one or a
later one included). Body elements come in a random order, to exercise the evaluators'
ordering.

Values stay small (``DOMAIN``) so that the brute-force oracle of ``herbrand.framework.testing``
runs in milliseconds per example.
"""

from __future__ import annotations

from hypothesis import strategies as st

from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    Atom,
    Column,
    Comparison,
    Const,
    Declaration,
    Literal,
    Program,
    Rule,
    Var,
    Wildcard,
)

DOMAIN = (0, 1, 2, 3)
ARITHMETIC_BOUND = 5
VARIABLES = tuple(Var(name) for name in ("x", "y", "z", "w"))
ARITHMETIC_OPS = ("+", "-", "*", "/", "%")
COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=")
AGGREGATE_FUNCTIONS = ("count", "sum", "min", "max")

constants = st.sampled_from(DOMAIN).map(Const)


def _declaration(name: str, arity: int) -> Declaration:
    return Declaration(name, tuple(Column(f"c{i}", "number") for i in range(arity)))


def _mostly_variables(pool: list[Var]):
    """A variable of ``pool`` seven times in ten, else a constant (or a wildcard)."""
    others = st.one_of(constants, st.just(Wildcard()))
    if not pool:
        return others
    return st.integers(0, 9).flatmap(lambda n: st.sampled_from(pool) if n < 7 else others)


@st.composite
def _atom(draw, relation: str, arity: int, allow_new: bool, bound: list[Var]) -> Atom:
    """An atom whose terms are mostly variables (new ones only if ``allow_new``), else
    constants and wildcards."""
    pool = list(VARIABLES) if allow_new else list(bound)
    return Atom(relation, tuple(draw(st.lists(_mostly_variables(pool),
                                              min_size=arity, max_size=arity))))


def _operand(bound: list[Var]):
    """A bound variable four times in five, else a constant."""
    return st.integers(0, 4).flatmap(lambda n: st.sampled_from(bound) if n else constants)


@st.composite
def _arithmetic_binding(draw, bound: list[Var], target: Var) -> list:
    """``target = a op b``, guarded to [0, ARITHMETIC_BOUND]."""
    expression = Arith(draw(st.sampled_from(ARITHMETIC_OPS)),
                       (draw(st.sampled_from(bound)), draw(_operand(bound))))
    return [Comparison("=", target, expression),
            Comparison(">=", target, Const(0)),
            Comparison("<=", target, Const(ARITHMETIC_BOUND))]


@st.composite
def _with_expression(draw, atom: Atom, bound: list[Var]) -> Atom:
    """``atom`` with its constants and wildcards possibly replaced by ``v + 1`` or ``v - 1``
    over variables that the rule's positive atoms bind."""
    def replace(term):
        if isinstance(term, Var) or not draw(st.booleans()):
            return term
        return Arith(draw(st.sampled_from(("+", "-"))), (draw(st.sampled_from(bound)), Const(1)))

    return Atom(atom.relation, tuple(replace(t) for t in atom.terms))


@st.composite
def _aggregate_binding(draw, lower: list[tuple[str, int]], bound: list[Var], target: Var):
    """``target = f v : { r(...) }`` over a lower relation, correlated through bound
    variables, or None when no lower relation has columns."""
    candidates = [(name, arity) for name, arity in lower if arity]
    if not candidates:
        return None
    name, arity = draw(st.sampled_from(candidates))
    local = Var("a")
    terms = list(draw(_atom(name, arity, False, bound)).terms)
    terms[draw(st.integers(0, arity - 1))] = local
    function = draw(st.sampled_from(AGGREGATE_FUNCTIONS))
    aggregate = Aggregate(function, None if function == "count" else local,
                          (Literal(Atom(name, tuple(terms))),))
    return Comparison("=", target, aggregate)


@st.composite
def _rule(draw, head: tuple[str, int], positive: list[tuple[str, int]],
          lower: list[tuple[str, int]], max_body: int, atom_expressions: bool) -> Rule:
    atoms = [draw(_atom(name, arity, True, []))
             for name, arity in draw(st.lists(st.sampled_from(positive),
                                              min_size=1, max_size=max_body))]
    bound = sorted({t for a in atoms for t in a.terms if isinstance(t, Var)}, key=str)
    if atom_expressions and bound and draw(st.integers(0, 3)) == 0:
        atoms = [draw(_with_expression(a, bound)) for a in atoms]
    body: list = [Literal(a) for a in atoms]
    if bound and draw(st.booleans()):
        target = Var("v")
        body += draw(_arithmetic_binding(bound, target))
        bound.append(target)
    if bound and draw(st.integers(0, 3)) == 0:
        binding = draw(_aggregate_binding(lower, bound, Var("g")))
        if binding is not None:
            body.append(binding)
            bound.append(Var("g"))
    if bound:
        for _ in range(draw(st.sampled_from((0, 0, 1, 2)))):
            body.append(Comparison(draw(st.sampled_from(COMPARISON_OPS)),
                                   draw(st.sampled_from(bound)), draw(_operand(bound))))
    if lower and draw(st.booleans()):
        name, arity = draw(st.sampled_from(lower))
        body.append(Literal(draw(_atom(name, arity, False, bound)), negated=True))
    name, arity = head
    head_terms = draw(st.lists(_operand(bound) if bound else constants,
                               min_size=arity, max_size=arity))
    return Rule(Atom(name, tuple(head_terms)), tuple(draw(st.permutations(body))))


@st.composite
def programs_with_facts(
    draw, max_inputs: int = 3, max_derived: int = 4, max_rules: int = 3, max_body: int = 3,
    atom_expressions: bool = False,
) -> tuple[Program, dict[str, list[tuple[int, ...]]]]:
    """A random stratified program (see the module docstring) and facts for its inputs."""
    inputs = [(f"e{i}", draw(st.integers(1, 2))) for i in range(draw(st.integers(1, max_inputs)))]
    count = draw(st.integers(1, max_derived))
    levels = sorted(draw(st.lists(st.integers(1, count), min_size=count, max_size=count)))
    derived = [(f"p{i}", draw(st.sampled_from((0, 1, 1, 2, 2, 2)))) for i in range(count)]
    level_of = dict.fromkeys((name for name, _ in inputs), 0)
    level_of.update({name: level for (name, _), level in zip(derived, levels, strict=True)})
    relations = inputs + derived
    rules = []
    for head in derived:
        positive = [r for r in relations if level_of[r[0]] <= level_of[head[0]]]
        lower = [r for r in relations if level_of[r[0]] < level_of[head[0]]]
        for _ in range(draw(st.integers(1, max_rules))):
            rules.append(draw(_rule(head, positive, lower, max_body, atom_expressions)))
        if draw(st.integers(0, 4)) == 0:
            name, arity = head
            terms = draw(st.lists(constants, min_size=arity, max_size=arity))
            rules.append(Rule(Atom(name, tuple(terms))))
    facts = {
        name: draw(st.lists(st.tuples(*[st.sampled_from(DOMAIN)] * arity), min_size=1, max_size=8))
        for name, arity in inputs
    }
    program = Program(tuple(_declaration(name, arity) for name, arity in relations),
                      tuple(rules))
    return program, facts


@st.composite
def programs_with_updates(
    draw, max_updates: int = 4, **program_options
) -> tuple[Program, dict[str, list[tuple[int, ...]]], list[tuple[dict, dict]]]:
    """``programs_with_facts(**program_options)`` plus a sequence of (insert, delete) updates
    of its input relations: deletes mostly of facts present at that point (so facts deep in
    recursion go), inserts of any rows of ``DOMAIN``, and sometimes the same row in both."""
    program, facts = draw(programs_with_facts(**program_options))
    arities = {d.name: d.arity for d in program.declarations if d.name in facts}
    current = {name: set(rows) for name, rows in facts.items()}
    updates = []
    for _ in range(draw(st.integers(1, max_updates))):
        insert, delete = {}, {}
        for name in draw(st.lists(st.sampled_from(sorted(arities)), min_size=1, unique=True)):
            rows = st.tuples(*[st.sampled_from(DOMAIN)] * arities[name])
            present = sorted(current[name])
            removed = draw(st.lists(st.sampled_from(present), max_size=3)) if present else []
            removed += draw(st.lists(rows, max_size=1))
            added = draw(st.lists(rows, max_size=3))
            if removed and draw(st.booleans()):
                added.append(removed[0])
            insert[name], delete[name] = added, removed
            current[name] = (current[name] - set(removed)) | set(added)
        updates.append((insert, delete))
    return program, facts, updates
