"""``Materialization``: a materialization kept alive under updates, as applications use it.

``herbrand.incremental(program, facts, engine="dred")`` returns one. It wraps an
``IncrementalEvaluator`` (the engine level: encoded batches in and out) with what users need:

- ``update(insert={rel: rows}, delete={rel: rows}) -> Changes``: one transaction, deletes before
  inserts. Rows are given as in ``materialize`` (tuples of int and str, numpy arrays, pandas
  DataFrames, pyarrow Tables; see ``herbrand.framework.encoding``). Everything is validated
  before the engine runs and before any symbol is interned: ``insert``/``delete`` that are not
  mappings (UsageError), an unknown relation, a derived relation (one that a rule derives), a
  wrong arity or a value that cannot be stored exactly is a HerbrandError naming the relation,
  and nothing changes. Inline facts of an input relation belong to the program: deleting one is
  a no-op. The result maps every output relation (every ``.output`` relation, or every declared
  relation when there is none) to its decoded added and removed rows, empty where nothing
  changed, as Differential Datalog's commit does.
- ``relation(name)``: the decoded rows of a relation, as a frozenset of tuples (``database[name]``
  is the encoded Relation).
- ``database``: the current materialization (a Database, input and derived relations, columns
  named as declared).
- ``stats()``: the strategy and time of the last bootstrap or update, and the sizes of the
  engine's state and of the materialization.
- ``add_rules`` / ``remove_rules``: only on engines tagged ``dynamic_rules``; other engines raise
  UpdateError naming the engines that support it. They take rules only (Datalog text without
  declarations or directives, or Rule values; a fact is a rule). ``add_rules`` refuses a rule
  whose head is an input relation (one that holds facts or has ``.input``: deriving it would
  make every later update of it fail); a declared relation without facts may become derived.
  ``remove_rules`` refuses a rule that is not in the program.

Atomicity: validation happens first and engines commit their new state only at the end of an
update, so after any exception the materialization is exactly as before the call.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from herbrand.framework.allocator import retain_freed_memory
from herbrand.framework.analysis import analyse
from herbrand.framework.contracts import (
    BatchChanges,
    Changes,
    IncrementalEvaluator,
    RelationChanges,
)
from herbrand.framework.encoding import CheckedRows, check_rows, rows_by_relation
from herbrand.framework.errors import UndeclaredRelationError, UpdateError, UsageError
from herbrand.framework.parser import parse
from herbrand.framework.registry import INCREMENTAL_ENGINES
from herbrand.framework.storage import Database, Relation, attribute_names
from herbrand.framework.syntax import Program, Rule


@dataclass(frozen=True)
class MaterializationStats:
    """What ``Materialization.stats()`` reports."""

    strategy: str  # how the engine did the last bootstrap or update
    seconds: float  # its wall-clock time
    state_tuples: int  # the engine's state beyond the materialization
    state_bytes: int
    tuples: int  # the materialization itself (every relation)
    bytes: int


class Materialization:
    """A program's materialization maintained by an incremental engine (see the module doc)."""

    def __init__(self, program: Program, database: Database, engine: IncrementalEvaluator):
        """Bootstrap ``engine`` on ``program`` over ``database`` (its input relations), the
        C allocator set to reuse the memory updates free (``allocator``). Cost: the
        engine's bootstrap."""
        retain_freed_memory()
        self._engine = engine
        start = time.perf_counter()
        engine.bootstrap(program, database)
        self._seconds = time.perf_counter() - start
        self._set_program(program)

    # -- reading ---------------------------------------------------------------------------------

    @property
    def program(self) -> Program:
        return self._program

    @property
    def engine(self) -> IncrementalEvaluator:
        return self._engine

    @property
    def database(self) -> Database:
        """The engine's materialization, with the declared column names. O(relations)."""
        return self._engine.database.with_attributes(self._attributes)

    def relation(self, name: str) -> frozenset[tuple]:
        """The decoded rows of ``name``. O(n) Python tuples."""
        self._require_declared(name)
        return frozenset(self.database.decoded_rows(name))

    def stats(self) -> MaterializationStats:
        """The last strategy and time, the engine's state size and the materialization's."""
        state_tuples, state_bytes = self._engine.state_size()
        relations = list(self.database.values())
        return MaterializationStats(
            strategy=self._engine.last_strategy, seconds=self._seconds,
            state_tuples=state_tuples, state_bytes=state_bytes,
            tuples=sum(map(len, relations)), bytes=sum(r.nbytes for r in relations),
        )

    # -- updating --------------------------------------------------------------------------------

    def update(self, insert: Mapping[str, object] | None = None,
               delete: Mapping[str, object] | None = None) -> Changes:
        """Apply one transaction (deletes first, then inserts); the changes of every output
        relation. Raises UsageError (``insert``/``delete`` not a mapping of relation names),
        UndeclaredRelationError, UpdateError (a derived relation), ArityError or
        HerbrandTypeError naming the relation (row, column) before anything changes, the
        symbol table included. Cost: checking and encoding the rows, plus the engine's update."""
        checked_inserts = self._checked(rows_by_relation("update(insert=...)", insert))
        checked_deletes = self._checked(rows_by_relation("update(delete=...)", delete))
        symbols = self.database.symbols
        inserts = {name: rows.encode(symbols).columns for name, rows in checked_inserts.items()}
        deletes = {name: self._without_inline_facts(name, rows.encode(symbols).columns)
                   for name, rows in checked_deletes.items()}
        start = time.perf_counter()
        changes = self._engine.update(inserts, deletes)
        self._seconds = time.perf_counter() - start
        return self._decode(changes)

    def add_rules(self, rules: str | Sequence[Rule]) -> Changes:
        """Add rules (Datalog text over the program's declared relations, without declarations
        or directives, or Rule values); the materialization follows. Only on engines tagged
        ``dynamic_rules``. Raises UsageError (declarations or directives in the text),
        UpdateError (a rule whose head is an input relation, named with the rule's place), the
        syntax and analysis errors of the new program, changing nothing. Cost: the engine's."""
        parsed = self._rules(rules, "add_rules")
        self._reject_input_heads(parsed)
        start = time.perf_counter()
        changes = self._engine.add_rules(parsed)
        self._seconds = time.perf_counter() - start
        self._set_program(replace(self._program, rules=self._program.rules + parsed))
        return self._decode(changes)

    def remove_rules(self, rules: str | Sequence[Rule]) -> Changes:
        """Remove rules (equal by syntax; one occurrence per rule given); the materialization
        follows. Only on engines tagged ``dynamic_rules``. Raises UpdateError naming a rule that
        is not in the program, changing nothing. Cost: the engine's."""
        parsed = self._rules(rules, "remove_rules")
        kept = _without(self._program.rules, parsed)
        start = time.perf_counter()
        changes = self._engine.remove_rules(parsed)
        self._seconds = time.perf_counter() - start
        self._set_program(replace(self._program, rules=kept))
        return self._decode(changes)

    # -- helpers ---------------------------------------------------------------------------------

    def _set_program(self, program: Program) -> None:
        # imported here: ``import herbrand`` loads no evaluator
        from herbrand.evaluators.fixpoint import inline_facts

        self._program = program
        self._derived = frozenset(name for s in analyse(program) for name in s.relations)
        self._types = {d.name: d.types for d in program.declarations}
        self._attributes = attribute_names(program)
        self._outputs = program.outputs or tuple(self._types)
        self._inline_inputs = {name: rows
                               for name, rows in inline_facts(program, self.database).items()
                               if name not in self._derived}

    def _require_declared(self, name: str) -> None:
        if name not in self._types:
            raise UndeclaredRelationError(f"relation {name!r} is not declared in the program")

    def _checked(self, given: Mapping[str, object]) -> dict[str, CheckedRows]:
        """Each relation's rows checked (nothing interned): declared, an input relation, every
        value storable. O(n) per relation (see ``check_rows``)."""
        checked = {}
        for name, rows in given.items():
            self._require_declared(name)
            if name in self._derived:
                raise UpdateError(f"relation {name} is derived by rules; only input relations "
                                  f"can be updated")
            checked[name] = check_rows(name, rows, self._types[name], self.database.symbols)
        return checked

    def _without_inline_facts(self, name: str, batch: np.ndarray) -> np.ndarray:
        facts = self._inline_inputs.get(name)
        return batch if facts is None else Relation(batch).difference(facts).columns

    def _rules(self, rules: str | Sequence[Rule], operation: str) -> tuple[Rule, ...]:
        """``rules`` (Datalog text, or Rule values) as Rules, on an engine with dynamic rules.
        Raises UpdateError for an engine without them, UsageError for another kind of argument
        or for declarations or directives in the text, HerbrandSyntaxError (at
        ``<operation>:line:col``) for malformed text."""
        if not self._engine.tags.dynamic_rules:
            supporting = [name for name in INCREMENTAL_ENGINES.names()
                          if INCREMENTAL_ENGINES.get(name).tags.dynamic_rules]
            raise UpdateError(
                f"{operation} needs an engine with dynamic rules; "
                f"{type(self._engine).__name__} has none (engines that do: "
                f"{', '.join(supporting) or 'none registered'})")
        if isinstance(rules, str):
            return _rules_only(parse(rules, file=f"<{operation}>"), operation)
        if isinstance(rules, Sequence) and all(isinstance(rule, Rule) for rule in rules):
            return tuple(rules)
        raise UsageError(f"{operation}(rules) must be Datalog text (str) or a sequence of Rule "
                         f"values, got {type(rules).__name__}")

    def _reject_input_heads(self, rules: Sequence[Rule]) -> None:
        """UpdateError at the first rule (a fact included) whose head is an input relation: one
        no rule derives that has a ``.input`` directive, inline facts or rows. O(rules given and
        rules of the program)."""
        given = set(self._program.inputs) | {fact.head.relation for fact in self._program.facts}
        database = self.database
        for rule in rules:
            name = rule.head.relation
            if name in self._derived or name not in self._types:
                continue  # deriving more of it, or undeclared (the engine's analysis says so)
            if name in given or len(database.get(name, ())):
                raise UpdateError(
                    f"{_place(rule)}add_rules cannot derive input relation {name} (it holds "
                    f"facts, changed by update()): rule {rule}")

    def _decode(self, changes: BatchChanges) -> Changes:
        relations = {}
        for name in self._outputs:
            added, removed = changes.get(name, (None, None))
            relations[name] = RelationChanges(self._decoded(name, added),
                                              self._decoded(name, removed))
        return Changes(relations)

    def _decoded(self, name: str, batch: np.ndarray | None) -> frozenset[tuple]:
        if batch is None or not batch.shape[1]:
            return frozenset()
        database = Database({name: Relation(batch, unique=True)}, self.database.symbols,
                            {name: self._types[name]})
        return frozenset(database.decoded_rows(name))


def _rules_only(program: Program, operation: str) -> tuple[Rule, ...]:
    """The rules of ``program`` parsed from ``operation``'s text; UsageError naming the first
    declaration or directive, which belong in the program given to ``herbrand.incremental``."""
    if program.declarations:
        first = program.declarations[0]
        raise UsageError(f"{first.location}: {operation} takes rules only; declare "
                         f"{first.name} in the program")
    if program.directives:
        first = program.directives[0]
        raise UsageError(f"{first.location}: {operation} takes rules only; put "
                         f".{first.kind} {first.relation} in the program")
    return program.rules


def _without(rules: tuple[Rule, ...], removed: Sequence[Rule]) -> tuple[Rule, ...]:
    """``rules`` less one occurrence of each rule of ``removed`` (equal by syntax), in order.
    Raises UpdateError naming (and placing) a removed rule not left in ``rules``. O(rules)."""
    missing = Counter(removed)
    kept = []
    for rule in rules:
        if missing[rule]:
            missing[rule] -= 1
        else:
            kept.append(rule)
    for rule in removed:
        if missing[rule]:
            raise UpdateError(f"{_place(rule)}rule {rule} is not in the program; "
                              f"remove_rules removes only rules of the program")
    return tuple(kept)


def _place(rule: Rule) -> str:
    """``file:line:col: `` of a rule parsed from text, nothing for a Rule built in code."""
    return f"{rule.location}: " if rule.location is not None else ""
