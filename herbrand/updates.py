"""The updates file of ``herbrand run --updates``: epochs of fact inserts and deletes.

One line per fact, ``+relation<TAB>value<TAB>...`` to insert or ``-relation<TAB>value<TAB>...``
to delete; a line ``commit`` ends an epoch (one transaction); lines after the last ``commit``
form a last epoch. Blank lines are ignored. Values are read by the relation's declared column
types (numbers as Soufflé reads them, symbols verbatim). Example::

    +edge	1	2
    -edge	2	3
    commit
    +edge	3	4

Every malformed line (no sign, an undeclared or derived relation, a wrong number of values, a
value that is not a number) is a FactsError naming ``file:line``. The file is read as facts
files are: lines end at ``\n`` (a ``\r`` before it is dropped), values are split on tabs only,
and bytes that are not UTF-8 are kept in symbols. Cost: O(file size).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from herbrand.framework.analysis import analyse
from herbrand.framework.errors import FactsError, quoted
from herbrand.framework.io import parse_number
from herbrand.framework.source_files import read_source
from herbrand.framework.syntax import SYMBOL, Program

COMMIT = "commit"


@dataclass(frozen=True)
class Epoch:
    """One transaction: decoded rows to insert and to delete, by relation, and the line that
    ended it (its ``commit``, or the last line of the file)."""

    insert: Mapping[str, list[tuple]] = field(default_factory=dict)
    delete: Mapping[str, list[tuple]] = field(default_factory=dict)
    line: int = 0

    @property
    def size(self) -> int:
        return sum(map(len, self.insert.values())) + sum(map(len, self.delete.values()))


def read_updates(path: str | PathLike, program: Program) -> list[Epoch]:
    """The epochs of the updates file at ``path`` for ``program``'s input relations."""
    path = Path(path)
    text = read_source(path, "updates", FactsError)
    derived = {name for stratum in analyse(program) for name in stratum.relations}
    types = {d.name: d.types for d in program.declarations}
    epochs: list[Epoch] = []
    insert: dict[str, list[tuple]] = {}
    delete: dict[str, list[tuple]] = {}
    number = 0
    for number, line in enumerate(text.removesuffix("\n").split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        if line.strip() == COMMIT:
            epochs.append(Epoch(insert, delete, number))
            insert, delete = {}, {}
            continue
        where = f"{path}:{number}"
        sign, fields = line[:1], line[1:].split("\t")
        if sign not in ("+", "-"):
            raise FactsError(f"{where}: expected '+relation', '-relation' or 'commit', "
                             f"got {quoted(line[:40])}")
        name = fields[0]
        if name not in types:
            raise FactsError(f"{where}: relation {quoted(name)} is not declared")
        if name in derived:
            raise FactsError(f"{where}: relation {name} is derived by rules; only input "
                             f"relations can be updated")
        row = _row(where, name, fields[1:], types[name])
        (insert if sign == "+" else delete).setdefault(name, []).append(row)
    if insert or delete:
        epochs.append(Epoch(insert, delete, number))
    return epochs


def _row(where: str, name: str, values: list[str], types: tuple[str, ...]) -> tuple:
    if len(values) != len(types):
        raise FactsError(f"{where}: relation {name} has {len(types)} columns, "
                         f"the line has {len(values)} values")
    row = []
    for column, (value, type_) in enumerate(zip(values, types, strict=True), start=1):
        if type_ == SYMBOL:
            row.append(value)
            continue
        try:
            row.append(parse_number(value))
        except ValueError:
            raise FactsError(f"{where}: relation {name} column {column}: {quoted(value)} is not a "
                             f"number") from None
    return tuple(row)
