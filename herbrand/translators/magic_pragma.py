"""``.pragma "magic-transform" "rel,..."`` (or ``"*"``): magic sets in ordinary
materialization, as Soufflé applies them.

The goals are the program's ``.output`` and ``.printsize`` relations with every argument free,
so bindings come from constants in rule bodies (``query() :- samegen(16384, 32767).`` asks for
one pair only). With ``"*"`` every derived relation may be adorned; with a list, only the
relations named (the others are called with every argument free: materialized whole, though
their rules still pass bindings on). Output relations keep their names and whole contents; the
relations the outputs do not reach are dropped. Several such pragmas add up. A program without
the pragma, or without outputs, is returned as it is.

>>> from herbrand.framework.parser import parse
>>> program = parse('''
... .pragma "magic-transform" "*"
... .decl e(x: number, y: number)
... .decl tc(x: number, y: number)
... .decl q(y: number)
... .output q
... tc(x, y) :- e(x, y).
... tc(x, z) :- tc(x, y), e(y, z).
... q(y) :- tc(1, y).''')
>>> print(apply_magic_pragma(program), end="")
.decl e(x: number, y: number)
.decl q(y: number)
.decl tc_bf(x: number, y: number)
.decl magic_tc_bf(x: number)
.output q
magic_tc_bf(1).
q(y) :- tc_bf(1, y).
tc_bf(x, y) :- magic_tc_bf(x), e(x, y).
tc_bf(x, z) :- magic_tc_bf(x), tc_bf(x, y), e(y, z).
"""

from __future__ import annotations

from collections.abc import Collection

from herbrand.framework.errors import UndeclaredRelationError
from herbrand.framework.syntax import Atom, Program, Wildcard
from herbrand.framework.type_checking import location_text
from herbrand.translators.magic_sets import MAGIC_TRANSFORM, MagicRewrite, magic_sets

ALL = "*"


def has_magic_pragma(program: Program) -> bool:
    """Whether ``program`` asks for the magic-sets transformation."""
    return any(pragma.key == MAGIC_TRANSFORM for pragma in program.pragmas)


def magic_pragma_rewrite(program: Program, given: Collection[str] = ()) -> MagicRewrite | None:
    """The rewrite the pragma asks for (see the module doc), or None when the program has no
    such pragma or no output. ``given`` as ``magic_sets`` takes it. Raises
    UndeclaredRelationError naming the pragma's place when its list names an undeclared
    relation. O(program)."""
    pragmas = [p for p in program.pragmas if p.key == MAGIC_TRANSFORM]
    goals = tuple(Atom(name, (Wildcard(),) * program.declaration_of[name].arity)
                  for name in dict.fromkeys((*program.outputs, *program.printsizes)))
    if not pragmas or not goals:
        return None
    adornable: set[str] | None = set()
    for pragma in pragmas:
        names = [name.strip() for name in (pragma.value or "").split(",") if name.strip()]
        if ALL in names:
            adornable = None
            break
        for name in names:
            if name not in program.declaration_of:
                raise UndeclaredRelationError(
                    f"{location_text(pragma.location)}: .pragma \"{MAGIC_TRANSFORM}\" names "
                    f"undeclared relation {name}")
        adornable.update(names)
    return magic_sets(program, goals, adornable=adornable, given=given)


def apply_magic_pragma(program: Program, given: Collection[str] = ()) -> Program:
    """``program`` transformed as its magic-transform pragma asks (``program`` itself when it
    has none, or no output). O(program)."""
    rewrite = magic_pragma_rewrite(program, given)
    return program if rewrite is None else rewrite.program
