"""Goals checked against a program: relation, arity, and arguments, with the goal's place."""

from __future__ import annotations

import pytest

from herbrand.framework.errors import ArityError, HerbrandTypeError, UndeclaredRelationError
from herbrand.framework.goals import check_goal, goal_declaration, goal_place
from herbrand.framework.parser import parse, parse_atom
from herbrand.framework.syntax import Atom, Const

PROGRAM = parse(".decl edge(x: number, y: number)\n.decl name(n: symbol)\n")


def test_a_goal_of_variables_constants_and_wildcards_passes():
    check_goal(parse_atom("edge(1, y)", file="goal"), PROGRAM)
    check_goal(parse_atom('name(_)', file="goal"), PROGRAM)
    assert goal_declaration(parse_atom("edge(x, x)"), PROGRAM).name == "edge"


@pytest.mark.parametrize(("goal", "error", "message"), [
    ("edgy(1, 2)", UndeclaredRelationError, "goal:1:1: undeclared relation edgy (did you mean "
                                            "edge?)"),
    ("edge(1)", ArityError, "goal:1:1: edge has 1 argument(s) here but 2 in its declaration"),
    ('edge(1, "a")', HerbrandTypeError, 'goal:1:1: argument y of edge is a number, but the goal '
                                        'gives the symbol "a"'),
    ("edge(1, 2 + 3)", HerbrandTypeError, "goal:1:1: argument y of the goal edge(1, (2 + 3)) "
                                          "must be a constant, a variable or _"),
])
def test_a_bad_goal_is_one_error_naming_its_place_and_column(goal, error, message):
    with pytest.raises(error) as raised:
        check_goal(parse_atom(goal, file="goal"), PROGRAM)
    assert str(raised.value).startswith(message)


def test_a_goal_built_in_python_is_named_by_its_text():
    assert goal_place(Atom("edge", (Const(1),))) == "goal edge(1)"
