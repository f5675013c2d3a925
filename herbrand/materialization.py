"""``Materialization``: a materialization kept alive under updates, as applications use it.

``herbrand.incremental(program, facts, engine="dred")`` returns one. It wraps an
``IncrementalEvaluator`` (the engine level: encoded batches in and out) with what users need:

- ``update(insert={rel: rows}, delete={rel: rows}) -> Changes``: one transaction, deletes before
  inserts. Rows are given as in ``materialize`` (tuples of int and str, numpy arrays of encoded
  values, pandas DataFrames). Everything is validated before the engine runs: an unknown
  relation, a derived relation (one that a rule derives), a wrong arity or a wrong value type is
  a HerbrandError naming the relation, and nothing changes. Inline facts of an input relation
  belong to the program: deleting one is a no-op. The result maps every output relation (every
  ``.output`` relation, or every declared relation when there is none) to its decoded added and
  removed rows, empty where nothing changed, as Differential Datalog's commit does.
- ``relation(name)``: the decoded rows of a relation, as a frozenset of tuples (``database[name]``
  is the encoded Relation).
- ``database``: the current materialization (a Database, input and derived relations).
- ``stats()``: the strategy and time of the last bootstrap or update, and the sizes of the
  engine's state and of the materialization.
- ``add_rules`` / ``remove_rules``: only on engines tagged ``dynamic_rules``; other engines raise
  UpdateError naming the engines that support it.

Atomicity: validation happens first and engines commit their new state only at the end of an
update, so after any exception the materialization is exactly as before the call.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from herbrand.framework.analysis import analyse
from herbrand.framework.contracts import (
    BatchChanges,
    Changes,
    IncrementalEvaluator,
    RelationChanges,
)
from herbrand.framework.errors import UndeclaredRelationError, UpdateError
from herbrand.framework.parser import parse
from herbrand.framework.registry import INCREMENTAL_ENGINES
from herbrand.framework.storage import Database, Relation, encode_rows
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
        """Bootstrap ``engine`` on ``program`` over ``database`` (its input relations).
        Cost: the engine's bootstrap."""
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
        return self._engine.database

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
        relation. Raises UndeclaredRelationError, UpdateError (a derived relation), ArityError
        or HerbrandTypeError naming the relation before anything changes. Cost: encoding the
        rows, plus the engine's update."""
        inserts = self._encode(insert or {})
        deletes = {name: self._without_inline_facts(name, rows)
                   for name, rows in self._encode(delete or {}).items()}
        start = time.perf_counter()
        changes = self._engine.update(inserts, deletes)
        self._seconds = time.perf_counter() - start
        return self._decode(changes)

    def add_rules(self, rules: str | Sequence[Rule]) -> Changes:
        """Add rules (Datalog text over declared relations, or Rule values); the
        materialization follows. Only on engines tagged ``dynamic_rules``."""
        parsed = self._rules(rules, "add_rules")
        start = time.perf_counter()
        changes = self._engine.add_rules(parsed)
        self._seconds = time.perf_counter() - start
        self._set_program(replace(self._program, rules=self._program.rules + parsed))
        return self._decode(changes)

    def remove_rules(self, rules: str | Sequence[Rule]) -> Changes:
        """Remove rules (equal by syntax); the materialization follows. Only on engines tagged
        ``dynamic_rules``."""
        parsed = self._rules(rules, "remove_rules")
        start = time.perf_counter()
        changes = self._engine.remove_rules(parsed)
        self._seconds = time.perf_counter() - start
        kept = tuple(rule for rule in self._program.rules if rule not in parsed)
        self._set_program(replace(self._program, rules=kept))
        return self._decode(changes)

    # -- helpers ---------------------------------------------------------------------------------

    def _set_program(self, program: Program) -> None:
        # imported here: ``import herbrand`` loads no evaluator (they load numba)
        from herbrand.evaluators.fixpoint import inline_facts

        self._program = program
        self._derived = frozenset(name for s in analyse(program) for name in s.relations)
        self._types = {d.name: d.types for d in program.declarations}
        self._outputs = program.outputs or tuple(self._types)
        self._inline_inputs = {name: rows for name, rows in inline_facts(program, self.database).items()
                               if name not in self._derived}

    def _require_declared(self, name: str) -> None:
        if name not in self._types:
            raise UndeclaredRelationError(f"relation {name!r} is not declared in the program")

    def _encode(self, rows_by_relation: Mapping[str, object]) -> dict[str, np.ndarray]:
        batches = {}
        for name, rows in rows_by_relation.items():
            self._require_declared(name)
            if name in self._derived:
                raise UpdateError(f"relation {name} is derived by rules; only input relations "
                                  f"can be updated")
            batches[name] = encode_rows(name, rows, self._types[name], self.database.symbols).columns
        return batches

    def _without_inline_facts(self, name: str, batch: np.ndarray) -> np.ndarray:
        facts = self._inline_inputs.get(name)
        return batch if facts is None else Relation(batch).difference(facts).columns

    def _rules(self, rules: str | Sequence[Rule], operation: str) -> tuple[Rule, ...]:
        if not self._engine.tags.dynamic_rules:
            supporting = [name for name in INCREMENTAL_ENGINES.names()
                          if INCREMENTAL_ENGINES.get(name).tags.dynamic_rules]
            raise UpdateError(
                f"{operation} needs an engine with dynamic rules; "
                f"{type(self._engine).__name__} has none (engines that do: "
                f"{', '.join(supporting) or 'none registered'})")
        return parse(rules).rules if isinstance(rules, str) else tuple(rules)

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
