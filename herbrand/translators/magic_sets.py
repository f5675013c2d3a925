"""The magic-sets transformation: a program specialised to answer given goals.

``magic_sets(program, goals)`` returns a ``MagicRewrite`` whose ``program`` derives, for each
goal, the rows of the goal's relation that the goal asks for (and possibly more: the answer is
a selection over the goal's ``answer`` relation), computing only what those rows need::

    .decl e(x: number, y: number)              .decl e(x: number, y: number)
    .decl tc(x: number, y: number)             .decl tc_bf(x: number, y: number)
    .input e                                   .decl magic_tc_bf(x: number)
    tc(x, y) :- e(x, y).           goal        .input e
    tc(x, z) :- e(x, y), tc(y, z). tc(1, _)    magic_tc_bf(1).
                                   ------>     tc_bf(x, y) :- magic_tc_bf(x), e(x, y).
                                               magic_tc_bf(y) :- magic_tc_bf(x), e(x, y).
                                               tc_bf(x, z) :- magic_tc_bf(x), e(x, y), tc_bf(y, z).

How:

- Adornments: a goal's constants are bound (``b``), its other arguments free (``f``). Each
  derived relation called with a bound argument gets an adorned copy ``<rel>_<adornment>``
  whose rules are the relation's rules guarded by its magic relation ``magic_<rel>_<adornment>``
  (the bound values asked for); ``herbrand.translators.sips`` decides, left to right, which
  arguments of each body atom are bound. A relation called with every argument free keeps its
  name and its whole contents (its rules are kept with their bodies adorned), so an output
  relation asked for whole is still itself. Input (EDB) relations are never adorned.
- Magic rules: for each adorned body atom, ``magic_<callee>(its bound arguments) :-`` the
  magic guard, the atoms to its left, and the comparisons and negations over variables they
  bind. A goal's constants become a magic fact.
- Supplementary relations (``sup_...``): where the part of a body left of an adorned atom
  already holds another adorned atom, it is materialized once as a supplementary relation (of
  the variables still needed) that the magic rule and the rest of the rule read, instead of
  being joined again for each (generalized supplementary magic sets, applied only where a
  prefix goes through a derived relation). A prefix of magic guard and input atoms is joined
  again instead: those joins are index probes, cheaper than materializing every prefix tuple
  (on same-generation, every rule has a single derived atom and the result is plain magic
  sets).
- Stratification: a derived relation negated or inside an aggregate anywhere in the slice
  (the relations the goals reach), and everything it depends on, is not adorned but
  materialized whole with its original rules; ``fallbacks`` says which and why. Adorned
  relations then depend on whole ones, never the reverse, so the result is stratified when
  the program is, and the answers never change.
- Only the relations the goals reach are kept. Generated names never collide with declared
  ones (a ``_`` is appended until they are new) and are plain identifiers; variables the
  rewrite introduces start with ``_m``, likewise made unique per rule.
- Termination: a binding computed by arithmetic only from head-bound variables is not
  passed on (see ``sips``), so magic relations stay finite when the program's model is.
- ``given``: relations whose rows may also come from the database (``.input`` ones always):
  when such a relation has rules and is adorned, ``<rel>_a(v) :- magic_<rel>_a(..), <rel>(v)``
  carries those rows over.

Cost: linear in the size of the program times the number of adornments per relation (at most
2^arity, in practice a few).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace

from herbrand.framework.analysis import rule_literals
from herbrand.framework.syntax import (
    Aggregate,
    Arith,
    Atom,
    BodyElement,
    Column,
    Comparison,
    Const,
    Declaration,
    Literal,
    Program,
    Rule,
    Term,
    Var,
    body_variables,
    element_terms,
    element_variables,
    lift_atom_expressions,
    term_aggregates,
    term_variables,
)
from herbrand.framework.type_checking import location_text, variable_types
from herbrand.translators.sips import BOUND, FREE, adorn_body

MAGIC_TRANSFORM = "magic-transform"


@dataclass(frozen=True)
class Fallback:
    """A relation materialized whole rather than adorned, and why (a readable sentence)."""

    relation: str
    reason: str

    def __str__(self) -> str:
        return f"{self.relation}: {self.reason}"


@dataclass(frozen=True)
class MagicRewrite:
    """What ``magic_sets`` returns: the transformed ``program``; for each goal (in order) the
    relation holding its answers (``answers``: goal's matching rows are a selection over it);
    the relations materialized whole and why (``fallbacks``)."""

    program: Program
    goals: tuple[Atom, ...]
    answers: tuple[str, ...]
    fallbacks: tuple[Fallback, ...]

    def answer(self, goal: Atom) -> str:
        """The relation whose rows matching ``goal`` answer it (``goal`` one of ``goals``)."""
        return self.answers[self.goals.index(goal)]

    def explain(self) -> str:
        """The goals, the fallbacks (as ``//`` comments) and the program, as text."""
        lines = [f"// goal {goal}: answered from {answer}"
                 for goal, answer in zip(self.goals, self.answers, strict=True)]
        lines += [f"// materialized whole: {fallback}" for fallback in self.fallbacks]
        return "\n".join(lines) + "\n" + str(self.program)


def magic_sets(program: Program, goals: Sequence[Atom], *,
               adornable: Collection[str] | None = None,
               given: Collection[str] = ()) -> MagicRewrite:
    """``program`` specialised to answer ``goals`` (see the module doc). ``program`` must pass
    ``analyse`` and each goal name a declared relation with its arity (arguments: constants,
    variables, wildcards). ``adornable``: the relations that may be adorned (None: all); the
    others are only ever called with every argument free. ``given``: relations whose rows may
    also come from the database besides ``.input`` (see the module doc). Pure; O(program)."""
    return _Rewriter(program, adornable, set(given) | set(program.inputs)).rewrite(tuple(goals))


def goal_adornment(goal: Atom) -> str:
    """``b`` for each constant argument of ``goal``, ``f`` for the others."""
    return "".join(BOUND if isinstance(t, Const) else FREE for t in goal.terms)


class _Rewriter:
    """One run of the transformation (mutable bookkeeping; the results are frozen values)."""

    def __init__(self, program: Program, adornable: Collection[str] | None,
                 given: set[str]):
        self.program = program
        self.adornable = None if adornable is None else frozenset(adornable)
        self.given = given
        self.rules_of: dict[str, list[Rule]] = defaultdict(list)
        for rule in program.rules:
            self.rules_of[rule.head.relation].append(rule)
        self.derived = {rule.head.relation for rule in program.proper_rules}
        self.taken = set(program.declaration_of)
        self.whole: dict[str, Fallback] = {}
        self.adorned: dict[tuple[str, str], tuple[str, str | None]] = {}
        self.queue: deque[tuple[str, str]] = deque()
        self.kept: dict[str, None] = {}  # original relations kept under their own name
        self.declarations: list[Declaration] = []
        self.rules: list[Rule] = []

    # -- the slice and its fallbacks -----------------------------------------------------------

    def _reached(self, roots: Iterable[str]) -> dict[str, None]:
        """The relations ``roots`` reach through rule bodies, in order of discovery."""
        seen = dict.fromkeys(roots)
        work = deque(seen)
        while work:
            for rule in self.rules_of.get(work.popleft(), ()):
                for literal, _ in rule_literals(rule):
                    if literal.atom.relation not in seen:
                        seen[literal.atom.relation] = None
                        work.append(literal.atom.relation)
        return seen

    def _find_fallbacks(self, slice_: Iterable[str]) -> None:
        """Mark the derived relations negated or aggregated in ``slice_``, and what they
        depend on, as materialized whole."""
        for relation in slice_:
            for rule in self.rules_of.get(relation, ()):
                for literal, in_aggregate in rule_literals(rule):
                    used = literal.atom.relation
                    if used in self.derived and used not in self.whole and (
                            in_aggregate or literal.negated):
                        where = "inside an aggregate" if in_aggregate else "negated"
                        self._fall_back(used, f"{where} in the rule at "
                                        f"{location_text(rule.location)}: {rule}")
        for root in list(self.whole):
            for relation in self._reached([root]):
                if relation in self.derived and relation not in self.whole:
                    self._fall_back(relation, f"{root} depends on it")

    def _fall_back(self, relation: str, reason: str) -> None:
        self.whole[relation] = Fallback(relation, reason)

    # -- names ---------------------------------------------------------------------------------

    def _fresh(self, name: str) -> str:
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def _call(self, relation: str, adornment: str) -> tuple[str, str | None]:
        """The relation that answers a call of ``relation`` with ``adornment``, and its magic
        relation (None when the call reads the relation whole); queues new adornments."""
        if relation not in self.derived or relation in self.whole:
            self.kept.setdefault(relation)
            return relation, None
        if self.adornable is not None and relation not in self.adornable:
            adornment = FREE * len(adornment)
        key = (relation, adornment)
        if key not in self.adorned:
            if BOUND in adornment:
                names = (self._fresh(f"{relation}_{adornment}"),
                         self._fresh(f"magic_{relation}_{adornment}"))
                self._declare_adorned(relation, adornment, *names)
            else:
                names = (relation, None)
                self.kept.setdefault(relation)
            self.adorned[key] = names
            self.queue.append(key)
        return self.adorned[key]

    def _declare_adorned(self, relation: str, adornment: str, name: str, magic: str) -> None:
        columns = self.program.declaration_of[relation].columns
        self.declarations.append(Declaration(name, columns))
        self.declarations.append(Declaration(magic, tuple(
            c for c, mark in zip(columns, adornment, strict=True) if mark == BOUND)))

    # -- the rewrite ---------------------------------------------------------------------------

    def rewrite(self, goals: tuple[Atom, ...]) -> MagicRewrite:
        self._find_fallbacks(self._reached(goal.relation for goal in goals))
        seeds, answers = [], []
        for goal in goals:
            name, magic = self._call(goal.relation, goal_adornment(goal))
            answers.append(name)
            if magic is not None:
                seeds.append(Rule(Atom(magic, tuple(t for t in goal.terms
                                                    if isinstance(t, Const)))))
        self.rules.extend(dict.fromkeys(seeds))
        while self.queue:
            relation, adornment = self.queue.popleft()
            name, magic = self.adorned[relation, adornment]
            if magic is not None and relation in self.given:
                self.rules.append(_carry_given_rows(relation, adornment, name, magic,
                                                    self.program.declaration_of[relation]))
            for number, rule in enumerate(self.rules_of[relation]):
                self.rules.extend(_RuleRewrite(self, rule, adornment, name, magic,
                                               number).rules())
        return MagicRewrite(self._program(), goals, tuple(answers), tuple(self.whole.values()))

    def _program(self) -> Program:
        """The transformed program: kept declarations, directives and original rules, then the
        generated ones."""
        whole = self._reached(self.whole)
        kept = {*self.kept, *(r for r in whole)}
        original_rules = [rule for rule in self.program.rules if rule.head.relation in kept
                          and (rule.head.relation not in self.derived
                               or rule.head.relation in self.whole)]
        used = {*kept, *(d.name for d in self.declarations)}
        for rule in (*original_rules, *self.rules):
            used.update(literal.atom.relation for literal, _ in rule_literals(rule))
        return Program(
            declarations=tuple(d for d in self.program.declarations if d.name in used)
            + tuple(self.declarations),
            rules=tuple(dict.fromkeys((*original_rules, *self.rules))),
            directives=tuple(d for d in self.program.directives
                             if d.relation in kept or (d.kind == "input" and d.relation in used)),
            pragmas=tuple(p for p in self.program.pragmas if p.key != MAGIC_TRANSFORM),
        )


def _carry_given_rows(relation: str, adornment: str, name: str, magic: str,
                      declaration: Declaration) -> Rule:
    """``name(v0, ..) :- magic(bound vs), relation(v0, ..)``: the database's own rows of an
    adorned relation."""
    variables = tuple(Var(f"v{i}") for i in range(declaration.arity))
    bound = tuple(v for v, mark in zip(variables, adornment, strict=True) if mark == BOUND)
    return Rule(Atom(name, variables),
                (Literal(Atom(magic, bound)), Literal(Atom(relation, variables))))


class _RuleRewrite:
    """The rules generated from one rule of a relation called with one adornment: the
    modified rule, a magic rule per adorned body atom, and supplementary rules."""

    def __init__(self, rewriter: _Rewriter, rule: Rule, adornment: str, name: str,
                 magic: str | None, number: int):
        self.rewriter = rewriter
        self.adornment = adornment
        self.label = f"{rule.head.relation}_{adornment}_{number}"
        self.prefix_name = _fresh_variable_prefix(rule)
        self.name = name
        self.rule, self.guard = self._normalized(rule, magic)
        self.computable: dict[Var, None] = dict.fromkeys(
            v for a in self.guard for v in element_variables(a))
        self.prefix: list[BodyElement] = list(self.guard)
        self.placed: set[int] = set()
        self.types: dict[Var, str] | None = None
        self.generated: list[Rule] = []

    def _normalized(self, rule: Rule, magic: str | None) -> tuple[Rule, list[BodyElement]]:
        """The rule with atom expressions lifted into equalities and bound head expressions
        replaced by fresh variables (and equalities); its magic guard."""
        body = lift_atom_expressions(rule.body, f"{self.prefix_name}e")
        terms, equalities = [], []
        for term, mark in zip(rule.head.terms, self.adornment, strict=True):
            if mark == BOUND and isinstance(term, (Arith, Aggregate)):
                fresh = Var(f"{self.prefix_name}h{len(equalities)}")
                equalities.append(Comparison("=", fresh, term, rule.location))
                term = fresh
            terms.append(term)
        head = Atom(rule.head.relation, tuple(terms), rule.head.location)
        normalized = Rule(head, body + tuple(equalities), rule.location)
        if magic is None:
            return normalized, []
        bound = tuple(t for t, mark in zip(terms, self.adornment, strict=True) if mark == BOUND)
        return normalized, [Literal(Atom(magic, bound))]

    def rules(self) -> list[Rule]:
        body = self.rule.body
        head = replace(self.rule.head, relation=self.name)
        if not body and not self.guard:
            return [Rule(head, (), self.rule.location)]
        marks = adorn_body(self.rule, self.adornment)
        self._place_filters()
        carries_adorned = False
        for index, (element, mark) in enumerate(zip(body, marks, strict=True)):
            if mark is None:
                continue
            atom = element.atom
            callee, magic = self.rewriter._call(atom.relation, mark)
            if magic is not None:
                if carries_adorned:
                    self._supplementary(index)
                bound = tuple(t for t, m in zip(atom.terms, mark, strict=True) if m == BOUND)
                magic_rule = Rule(Atom(magic, bound), tuple(self.prefix))
                if magic_rule.body != (Literal(magic_rule.head),):  # not p(x) :- p(x).
                    self.generated.append(magic_rule)
                carries_adorned = True
            self.prefix.append(Literal(Atom(callee, atom.terms, atom.location)))
            self.placed.add(index)
            self.computable.update(dict.fromkeys(t for t in atom.terms if isinstance(t, Var)))
            self._place_filters()
        rest = tuple(e for i, e in enumerate(body) if i not in self.placed)
        self.generated.append(Rule(head, (*self.prefix, *rest), self.rule.location))
        return self.generated

    def _place_filters(self) -> None:
        """Move into the prefix every comparison and negated atom (without aggregates) whose
        variables are computable, ``x = expr`` once ``expr``'s are; to a fixpoint."""
        changed = True
        while changed:
            changed = False
            for index, element in enumerate(self.rule.body):
                if index in self.placed or _is_positive(element) or _has_aggregate(element):
                    continue
                missing = [v for v in element_variables(element) if v not in self.computable]
                binds = _binds(element, missing)
                if missing and binds is None:
                    continue
                self.prefix.append(element)
                self.placed.add(index)
                if binds is not None:
                    self.computable[binds] = None
                changed = True

    def _supplementary(self, index: int) -> None:
        """Materialize the prefix as a supplementary relation of the variables that the
        elements from ``index`` on and the head still need; it becomes the prefix."""
        needed = set(term_variables_of(self.rule.head.terms))
        for i, element in enumerate(self.rule.body):
            if i >= index or i not in self.placed:
                needed.update(body_variables((element,)))
        variables = tuple(v for v in self.computable if v in needed)
        if self.types is None:
            self.types = variable_types(self.rule, self.rewriter.program)
        name = self.rewriter._fresh(f"sup_{self.label}_{index}")
        self.rewriter.declarations.append(Declaration(name, tuple(
            Column(v.name, self.types[v]) for v in variables)))
        atom = Atom(name, variables)
        self.generated.append(Rule(atom, tuple(self.prefix)))
        self.prefix = [Literal(atom)]


def term_variables_of(terms: Iterable[Term]) -> Iterable[Var]:
    for term in terms:
        yield from term_variables(term)
        for aggregate in term_aggregates(term):
            yield from term_variables(aggregate.target)
            yield from body_variables(aggregate.body)


def _is_positive(element: BodyElement) -> bool:
    return isinstance(element, Literal) and not element.negated


def _has_aggregate(element: BodyElement) -> bool:
    return any(True for term in element_terms(element) for _ in term_aggregates(term))


def _binds(element: BodyElement, missing: list[Var]) -> Var | None:
    """The one missing variable ``element`` binds: ``x = expr`` (either side) with ``x``
    missing and ``expr`` computable; else None."""
    if not (isinstance(element, Comparison) and element.op == "=" and len(set(missing)) == 1):
        return None
    var = missing[0]
    for side, other in ((element.left, element.right), (element.right, element.left)):
        if side == var and var not in set(term_variables(other)):
            return var
    return None


def _fresh_variable_prefix(rule: Rule) -> str:
    """``_m`` (or ``_m_``, ...): a prefix no variable of ``rule`` starts with."""
    names = [v.name for v in body_variables(rule.body)]
    names += [v.name for v in term_variables_of(rule.head.terms)]
    prefix = "_m"
    while any(name.startswith(prefix) for name in names):
        prefix += "_"
    return prefix
