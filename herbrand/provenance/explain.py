"""``Explainer``: proofs and why-nots of tuples of one program's least model.

    >>> from herbrand.framework.parser import parse
    >>> from herbrand.api import load_database
    >>> program = parse('''
    ...     .decl e(x: number, y: number)
    ...     .decl tc(x: number, y: number)
    ...     tc(x, y) :- e(x, y).
    ...     tc(x, z) :- tc(x, y), e(y, z).
    ... ''')
    >>> explainer = Explainer(program, load_database(program, {"e": [(1, 2), (2, 3)]}))
    >>> print(explainer.explain("tc(1, 3)"))
    tc(1, 3) [2] rule #2 at <input>:5:5: tc(x, z) :- tc(x, y), e(y, z).
      tc(1, 2) [1] rule #1 at <input>:4:5: tc(x, y) :- e(x, y).
        e(1, 2) [0] input fact
      e(2, 3) [0] input fact

A goal is Datalog text (``"tc(1, 3)"``), an ``Atom`` of constants, or a tuple
``("tc", 1, 3)``: a relation name and the tuple's values (ints, and strs for symbols).
"""

from __future__ import annotations

from herbrand.evaluators.arithmetic import evaluate_ground_term
from herbrand.framework.errors import HerbrandTypeError, UsageError
from herbrand.framework.goals import goal_declaration, goal_place
from herbrand.framework.parser import parse_atom
from herbrand.framework.storage import Database
from herbrand.framework.syntax import NUMBER, SYMBOL, Arith, Atom, Const, Program
from herbrand.provenance.derivations import Derivations, Row
from herbrand.provenance.heights import record_heights
from herbrand.provenance.proofs import NotDerived, Proof
from herbrand.provenance.reconstruct import reconstruct
from herbrand.provenance.why_not import why_not

Goal = str | Atom | tuple


class Explainer:
    """Explains tuples of the least model of ``program`` over ``database`` (its inputs).

    Construction records the model with the height of every tuple (``record_heights``: one
    semi-naive materialization with the batch executor); each ``explain`` then searches that
    model top-down (``reconstruct``, ``why_not``), building the indexes it needs once.
    """

    def __init__(self, program: Program, database: Database):
        self.program = program
        self.model = record_heights(program, database)
        self.derivations = Derivations(program, self.model)

    def explain(self, goal: Goal, *, max_depth: int | None = None) -> Proof | NotDerived:
        """The minimal-height ``Proof`` of ``goal`` (reconstructed ``max_depth`` levels below
        it; None: down to the facts), or ``NotDerived`` saying why not. Raises
        UndeclaredRelationError, ArityError, HerbrandTypeError naming the relation and column
        of a goal that cannot be a tuple of the program, UsageError for a goal of no kind
        above or with a variable. Cost: see ``reconstruct`` and ``why_not``."""
        if max_depth is not None and (not isinstance(max_depth, int) or max_depth < 0):
            raise UsageError(f"max_depth must be a non-negative int, got {max_depth!r}")
        relation, row = self.encode(goal)
        if self.derivations.matcher.height(relation, row) is None:
            return why_not(self.derivations, relation, row)
        return reconstruct(self.derivations, relation, row, max_depth)

    def encode(self, goal: Goal) -> tuple[str, Row]:
        """The relation and encoded values of ``goal`` (symbols interned), checked against
        the declarations."""
        atom = goal_atom(goal)
        declaration = goal_declaration(atom, self.program)
        row = []
        for term, column in zip(atom.terms, declaration.columns, strict=True):
            place = f"{goal_place(atom)}: column {column.name} of {atom.relation}"
            if not isinstance(term, (Const, Arith)) or not _ground(term):
                raise UsageError(f"{place} is {term}, not a value (explain takes a tuple: "
                                 f"constants only)")
            value = evaluate_ground_term(term, self.model.database.symbols)
            kind = SYMBOL if isinstance(term, Const) and term.type == SYMBOL else NUMBER
            if kind != column.type or value is None:
                raise HerbrandTypeError(f"{place} is a {column.type}, got {term}")
            row.append(value)
        return atom.relation, tuple(row)


def goal_atom(goal: Goal) -> Atom:
    """``goal`` as an Atom: parsed from text (errors at ``<goal>:line:col``), an Atom as
    given, or built from a tuple ``(relation, value, ...)``. UsageError for anything else."""
    if isinstance(goal, str):
        return parse_atom(goal, file="goal")
    if isinstance(goal, Atom):
        return goal
    if (isinstance(goal, tuple) and goal and isinstance(goal[0], str)
            and all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in goal[1:])):
        return Atom(goal[0], tuple(Const(v) for v in goal[1:]))
    raise UsageError(f"a goal is Datalog text ('tc(1, 5)'), an Atom or a tuple "
                     f"('tc', 1, 5) of a relation name and ints or strs; got {goal!r}")


def _ground(term) -> bool:
    return isinstance(term, Const) or (isinstance(term, Arith) and all(map(_ground, term.args)))
