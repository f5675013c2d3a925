"""A goal (of ``herbrand query`` or ``herbrand explain``: one atom such as ``tc(1, y)``)
checked against a program: a declared relation, its arity, and arguments that fit its columns.
Errors name the goal's place (``goal:line:col`` for a parsed goal) and the column.
"""

from __future__ import annotations

from herbrand.framework.analysis import suggestion
from herbrand.framework.errors import ArityError, HerbrandTypeError, UndeclaredRelationError
from herbrand.framework.syntax import Atom, Const, Declaration, Program, Var, Wildcard
from herbrand.framework.type_checking import location_text


def check_goal(goal: Atom, program: Program) -> None:
    """Check a query's goal against ``program``: a declared relation with its arity
    (``goal_declaration``), whose arguments are constants of the columns' types, variables or
    wildcards. Raises UndeclaredRelationError, ArityError or HerbrandTypeError naming the
    goal's place (and the column of a bad argument). Cost: linear in the goal."""
    declaration = goal_declaration(goal, program)
    location = goal_place(goal)
    for term, column in zip(goal.terms, declaration.columns, strict=True):
        if isinstance(term, (Var, Wildcard)):
            continue
        if not isinstance(term, Const):
            raise HerbrandTypeError(f"{location}: argument {column.name} of the goal {goal} "
                                    f"must be a constant, a variable or _, not {term}")
        if term.type != column.type:
            raise HerbrandTypeError(f"{location}: argument {column.name} of {goal.relation} "
                                    f"is a {column.type}, but the goal gives the {term.type} "
                                    f"{term}")


def goal_declaration(goal: Atom, program: Program) -> Declaration:
    """The declaration of the relation of ``goal`` (a query's or ``explain``'s), checked:
    UndeclaredRelationError or ArityError naming the goal's place otherwise. O(arity)."""
    declaration = program.declaration_of.get(goal.relation)
    location = goal_place(goal)
    if declaration is None:
        raise UndeclaredRelationError(f"{location}: undeclared relation {goal.relation}"
                                      f"{suggestion(goal.relation, program)}")
    if declaration.arity != goal.arity:
        raise ArityError(f"{location}: {goal.relation} has {goal.arity} argument(s) here but "
                         f"{declaration.arity} in its declaration at "
                         f"{location_text(declaration.location)}")
    return declaration


def goal_place(goal: Atom) -> str:
    """Where a goal is, for its errors: ``goal:line:col`` when it was parsed from text, else
    ``goal <the atom>``."""
    return location_text(goal.location) if goal.location is not None else f"goal {goal}"
