"""What a comparison runs on, as files: a whole process reads a program file and a facts folder.

``target_of`` turns ``herbrand.compare``'s arguments (a program as a path, text or Program;
facts in memory or a facts folder) into a ``Prepared`` target, writing into ``scratch``
whatever is not a file yet: the program's text, and the in-memory facts, each relation into
the file its ``.input`` directive names, with its delimiter (``io.write_outputs`` writes them,
so symbols and numbers round-trip as the reader expects). Cost: O(facts) to write them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from os import PathLike
from pathlib import Path

from herbrand.api import load_database, parse
from herbrand.framework import io
from herbrand.framework.errors import UsageError
from herbrand.framework.syntax import Directive, Program
from herbrand.workloads.catalogue import Prepared, prepare_program


def _program_file(program: Program | str | bytes | PathLike, scratch: Path) -> Path:
    if isinstance(program, PathLike):
        return Path(program)
    if isinstance(program, str) and program.strip().endswith(".dl") and "\n" not in \
            program.strip():
        return Path(program.strip())
    path = scratch / "program.dl"
    path.write_text(str(program if isinstance(program, Program) else parse(program)))
    return path


def _write_facts(program: Program, facts: Mapping[str, object], folder: Path) -> None:
    """Write ``facts`` where ``program``'s ``.input`` directives read them; UsageError for a
    relation that is no input of the program."""
    inputs = {d.relation: d for d in program.directives if d.kind == "input"}
    strays = sorted(set(facts) - set(inputs))
    if strays:
        raise UsageError(f"facts given for {strays[0]!r}, which is no .input of the program "
                         f"(a whole process reads only its .input files)")
    database = load_database(program, facts)
    outputs = []
    for name in facts:
        directive = inputs[name]
        _, filename, _ = io.io_parameters(directive, ".facts")
        params = tuple(p for p in directive.params if p[0] != "filename")
        outputs.append(Directive("output", name, (*params, ("filename", filename))))
    io.write_outputs(replace(program, directives=tuple(outputs)), database, folder)


def target_of(program: Program | str | bytes | PathLike, facts: Mapping[str, object] | None,
              facts_dir: str | PathLike | None, scratch: Path) -> Prepared:
    """The Prepared target of ``herbrand.compare``'s arguments (see the module's docstring).
    UsageError when both ``facts`` and ``facts_dir`` are given."""
    if facts is not None and facts_dir is not None:
        raise UsageError("compare takes facts= or facts_dir=, not both (a whole process "
                         "reads one facts folder)")
    path = _program_file(program, scratch)
    folder = Path(facts_dir) if facts_dir is not None else scratch / "facts"
    if facts_dir is None:
        folder.mkdir(parents=True, exist_ok=True)
        _write_facts(parse(path), facts or {}, folder)
    return prepare_program(path, folder)
