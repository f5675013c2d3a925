"""The contracts researchers implement, and their capability tags.

Constructors take hyperparameters as explicit keyword arguments and nothing else; they print in
``repr`` and in benchmark ids. What an implementation can do is declared as data in its ``tags``
class attribute (a frozen dataclass), never probed with ``hasattr``; the conformance suites of
``herbrand.framework.testing`` read the tags to decide which checks apply.

Data shapes: a batch of rows is an (arity, n) int64 array, column i at ``batch[i]``, the same
layout as ``Relation.columns``.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from types import MappingProxyType
from typing import ClassVar, TextIO

import numpy as np

from herbrand.framework.native_view import NativeView, NoNativeView
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Atom, Program, Rule


class Component:
    """Shared ``repr``: the class name and the constructor's hyperparameters."""

    def hyperparameters(self) -> dict[str, object]:
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names if hasattr(self, n)}

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.hyperparameters().items())
        return f"{type(self).__name__}({params})"


# ---------------------------------------------------------------------------------------------
# Index backings
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexTags:
    """What an IndexBacking supports beyond insert and join."""

    ordered: bool = False  # range(lo, hi) is supported and rows come out in key order
    supports_delete: bool = False  # delete(rows) is supported
    persistent: bool = False  # snapshot() is O(1) and snapshots are unaffected by later writes
    parallel_safe: bool = False  # concurrent joins on one instance are safe (no lazy mutation)
    native: bool = False  # native_view() exposes the storage as arrays a kernel can probe


class IndexBacking(Component, ABC):
    """A set of fixed-arity int64 rows organised on ``key``, a tuple of column positions.

    Duplicates are ignored (set semantics). Implementations state the cost of insert and join.
    """

    tags: ClassVar[IndexTags] = IndexTags()

    def __init__(self, arity: int, key: tuple[int, ...]):
        self.arity = arity
        self.key = tuple(key)

    @abstractmethod
    def insert(self, rows: np.ndarray) -> None:
        """Add an (arity, n) batch of rows; rows already present are ignored."""

    def insert_new(self, rows: np.ndarray) -> None:
        """Add an (arity, n) batch of rows the caller knows are not stored (rows appended to
        a relation whose rows the index holds, rows a change added): ``insert``, for an index
        whose insert would compare them against the stored rows without it."""
        self.insert(rows)

    @abstractmethod
    def join(self, probe: np.ndarray, probe_key: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """Match a probe batch (probe_arity, m) on its columns ``probe_key`` against ``key``.

        Returns ``(positions, rows)``: positions (k,) int64 indexes into the probe batch and rows
        (arity, k), one pair per (probe row, stored row) with equal keys, in any order.
        """

    @abstractmethod
    def __len__(self) -> int:
        """The number of distinct rows stored."""

    @abstractmethod
    def rows(self) -> np.ndarray:
        """All stored rows as an (arity, n) batch, in any order."""

    def delete(self, rows: np.ndarray) -> None:
        """Remove an (arity, n) batch; absent rows are ignored. Only when ``supports_delete``."""
        raise NotImplementedError(f"{type(self).__name__} does not support delete")

    def range(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> np.ndarray:
        """Rows whose key lies in [lo, hi], in key order. Only when ``ordered``."""
        raise NotImplementedError(f"{type(self).__name__} is not ordered")

    def snapshot(self) -> IndexBacking:
        """An O(1) read-only view unaffected by later writes. Only when ``persistent``."""
        raise NotImplementedError(f"{type(self).__name__} is not persistent")

    def native_view(self) -> NativeView:
        """The stored rows as arrays a compiled kernel searches in place, valid until the next
        write (``herbrand.framework.native_view``). Only when ``native``; NoNativeView
        otherwise."""
        raise NoNativeView(f"{type(self).__name__} has no native view (IndexTags.native)")

    def _check_invariants(self) -> None:
        """Assert the structure's internal invariants (used by stress tests)."""


# ---------------------------------------------------------------------------------------------
# Evaluators
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvaluatorTags:
    """What a RuleEvaluator supports."""

    negation: bool = True
    arithmetic: bool = True
    aggregates: bool = True
    uses_index: bool = False  # takes an ``index=`` hyperparameter naming an IndexBacking
    # runs a whole recursive stratum itself (``run_stratum(stratum, instance, run)``), with
    # storage that grows in place: the semi-naive fixpoint hands strata over to it
    runs_strata: bool = False


class RuleEvaluator(Component, ABC):
    """One application of the immediate-consequence operator.

    ``evaluate(rules, instance)`` returns, for each head relation of ``rules``, every row that
    one application of the rules derives from ``instance`` (rows already in the instance may be
    included). Body atoms may name any relation of the instance, including the delta and
    previous-state relations that the semi-naive rewrite introduces (see
    ``herbrand.evaluators.fixpoint``). Symbol constants are interned in
    ``instance.symbols``. The instance is never modified.
    """

    tags: ClassVar[EvaluatorTags] = EvaluatorTags()
    # the smallest delta (rows) worth cutting among threads on the parallel backend, unless
    # the backend is given one: below it, the threads' start costs more than they save
    parallel_min_rows: ClassVar[int] = 20_000

    @abstractmethod
    def evaluate(self, rules: Sequence[Rule], instance: Database) -> dict[str, Relation]:
        """Rows derived by one application of ``rules`` to ``instance``, by head relation."""

    def derive(self, rules: Sequence[Rule], instance: Database) -> dict[str, np.ndarray]:
        """``evaluate``'s rows as (arity, n) batches that may repeat rows: what fixpoints
        consume (they deduplicate against what they hold anyway, so an evaluator can skip its
        own deduplication). Default: the columns of ``evaluate``'s sets."""
        return {name: relation.columns for name, relation in self.evaluate(rules, instance).items()}


@dataclass(frozen=True)
class StratumStats:
    """What a fixpoint did for one stratum."""

    stratum: int
    relations: tuple[str, ...]
    iterations: int
    derived: int  # new tuples added to the stratum's relations
    seconds: float
    where: str | None = None
    """Where it ran, for a backend that runs strata in more than one place (``spark``:
    ``driver`` or ``spark``); None otherwise."""


@dataclass(frozen=True)
class FilesRun:
    """What ``Backend.materialize_files`` did: the per-stratum ``stats``, the seconds of the
    run's serial phases in order (``phases``: (name, seconds) pairs, ``strata`` among them, as
    ``herbrand run --stats`` prints them), ``notes``: one line for each directive the run
    carried out otherwise than it reads (an output written elsewhere or in another format),
    and for a run carried out otherwise than the backend's name says (the Spark backend's
    without a Spark session), which ``herbrand run`` prints to stderr; ``where``: where the
    run as a whole ran, when a backend says (``--stats`` prints it on its total line)."""

    stats: tuple[StratumStats, ...]
    phases: tuple[tuple[str, float], ...]
    notes: tuple[str, ...] = ()
    where: str | None = None


@dataclass(frozen=True)
class Progress:
    """A progress event: sent after each fixpoint iteration."""

    stratum: int
    strata: int
    iteration: int
    delta: int  # new tuples in this iteration
    total: int  # tuples derived so far in the whole run
    where: str | None = None  # as ``StratumStats.where``


ProgressObserver = Callable[[Progress], None]


class BottomUpEvaluator(Component, ABC):
    """Computes the least model of a program over a database."""

    @abstractmethod
    def materialize(
        self, program: Program, database: Database, observer: ProgressObserver | None = None
    ) -> Database:
        """A new Database holding ``database`` plus every relation of ``program`` at fixpoint.

        Strata run in order; ``observer`` (if given) receives a Progress after each iteration.
        After the call ``self.stats`` lists a StratumStats per stratum.
        """


class FixpointEvaluator(BottomUpEvaluator):
    """A fixpoint strategy (naive, semi-naive) over any RuleEvaluator."""

    def __init__(self, rule_evaluator: RuleEvaluator):
        self.rule_evaluator = rule_evaluator
        self.stats: list[StratumStats] = []


class TopDownEvaluator(Component, ABC):
    """Answers one goal without materializing everything (magic sets; a later capability)."""

    @abstractmethod
    def query(self, program: Program, database: Database, goal: Atom) -> Relation:
        """The rows of ``goal.relation`` that match the constants of ``goal``."""


# ---------------------------------------------------------------------------------------------
# Incremental maintenance
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IncrementalTags:
    dynamic_rules: bool = False  # add_rules / remove_rules are supported


@dataclass(frozen=True)
class RelationChanges:
    """Decoded rows added to and removed from one relation by an update."""

    added: frozenset[tuple] = frozenset()
    removed: frozenset[tuple] = frozenset()


@dataclass(frozen=True, eq=False)
class Changes(Mapping[str, RelationChanges]):
    """Output relation -> its RelationChanges, as Differential Datalog's commit returns.

    A read-only Mapping: iteration yields relation names; ``len``, ``items``, ``get`` and
    equality with any mapping work as for a dict. ``relations`` is the same mapping (a
    read-only copy of the one given); ``size`` counts the rows added and removed."""

    relations: Mapping[str, RelationChanges] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "relations", MappingProxyType(dict(self.relations)))

    def __getitem__(self, relation: str) -> RelationChanges:
        return self.relations[relation]

    def __iter__(self) -> Iterator[str]:
        return iter(self.relations)

    def __len__(self) -> int:
        return len(self.relations)

    def __repr__(self) -> str:
        return f"Changes({dict(self.relations)!r})"

    def __reduce__(self):
        return Changes, (dict(self.relations),)  # a mappingproxy does not pickle

    @property
    def size(self) -> int:
        return sum(len(c.added) + len(c.removed) for c in self.relations.values())


Batch = np.ndarray  # (arity, n) int64 rows, symbols encoded with the database's SymbolTable
BatchChanges = dict[str, tuple[np.ndarray, np.ndarray]]  # relation -> (added, removed) batches


class IncrementalEvaluator(Component, ABC):
    """Keeps a materialization up to date under fact (and, where tagged, rule) updates.

    The engine level of incremental maintenance: batches in and out are encoded (arity, n) int64
    rows. ``herbrand.incremental`` (a ``Materialization``) validates and encodes the user's rows,
    decodes the result into ``Changes``, and is what applications call.
    """

    tags: ClassVar[IncrementalTags] = IncrementalTags()

    @abstractmethod
    def bootstrap(self, program: Program, database: Database) -> None:
        """Materialize ``program`` over ``database`` and keep the state for updates."""

    @abstractmethod
    def update(self, insert: Mapping[str, Batch], delete: Mapping[str, Batch]) -> BatchChanges:
        """Apply one transaction to input relations: deletes first, then inserts.

        ``insert`` / ``delete`` map input (EDB) relations of the program to encoded batches of
        that relation's arity (already validated by the caller); deleting an absent row or
        inserting a present one is a no-op. Returns, for every relation (input or derived) whose
        rows changed, ``(added, removed)``: the rows of new minus old and of old minus new.
        Atomic: on any exception the state is exactly as before the call.
        """

    @property
    @abstractmethod
    def database(self) -> Database:
        """The current materialization (input and derived relations)."""

    @property
    @abstractmethod
    def last_strategy(self) -> str:
        """How the last bootstrap or update was done (e.g. "bootstrap", "update", "dred")."""

    @abstractmethod
    def state_size(self) -> tuple[int, int]:
        """(tuples, bytes) of the state kept for maintenance beyond the materialization itself
        (counts, proof counts, traces); (0, 0) for an engine that keeps none."""

    def add_rules(self, rules: Sequence[Rule]) -> BatchChanges:
        """Add rules; the materialization follows. Only when tagged ``dynamic_rules``.

        Rejects (changing nothing) rules that make the program unstratifiable or unsafe."""
        raise NotImplementedError(f"{type(self).__name__} does not support dynamic rules")

    def remove_rules(self, rules: Sequence[Rule]) -> BatchChanges:
        """Remove rules (equal by syntax); the materialization follows. Only when tagged
        ``dynamic_rules``."""
        raise NotImplementedError(f"{type(self).__name__} does not support dynamic rules")


# ---------------------------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BackendTags:
    parallel: bool = False  # uses more than one core
    distributed: bool = False  # runs outside this process
    reads_files: bool = False  # materialize_files: reads .input and writes .output itself
    # runs the RuleEvaluator and FixpointEvaluator it is given (False: its own plans, so an
    # evaluator, fixpoint or index chosen by the user would be ignored and is refused)
    uses_evaluator: bool = True
    # the constructor parameter that sets how many cores a run gets (parallel: workers; spark:
    # master), written after the backend's name in a configuration: ``parallel:4``
    scale: str | None = None


class Backend(Component, ABC):
    """Where a materialization runs: local, parallel, spark.

    A backend whose ``tags.scale`` names a constructor parameter says, through the class
    methods below, what a value of it means: ``scale_setting`` reads one from text,
    ``cores`` counts the cores it gives, ``scale_family`` writes it with the count as N (the
    name of its scaling family in a COST table), and ``unavailable`` says why the backend
    cannot run on this machine."""

    tags: ClassVar[BackendTags] = BackendTags()

    @classmethod
    def scale_setting(cls, text: str) -> object:
        """``text`` as a value of the ``tags.scale`` parameter; UsageError when it is none."""
        return text

    @classmethod
    def cores(cls, setting: object | None) -> int | None:
        """The cores a run gets with the ``tags.scale`` parameter at ``setting`` (None: its
        default); None when only the running system knows. O(1)."""
        return 1

    @classmethod
    def scale_family(cls, setting: object | None) -> str:
        """``setting`` with its core count written as N (``4`` -> ``N``)."""
        return "N"

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this backend cannot run on this machine (a missing runtime), or None."""
        return None

    @property
    def threads(self) -> int:
        """The threads of this process a run on this backend may use around the fixpoint too
        (formatting the outputs): 1 unless the backend itself runs on several."""
        return 1

    @abstractmethod
    def materialize(
        self,
        program: Program,
        database: Database,
        *,
        evaluator: RuleEvaluator,
        fixpoint: type[FixpointEvaluator],
        observer: ProgressObserver | None = None,
    ) -> tuple[Database, list[StratumStats]]:
        """Run ``program`` over ``database`` to fixpoint; the result and per-stratum stats."""

    def materialize_files(
        self,
        program: Program,
        facts_dir: str | PathLike,
        output_dir: str | PathLike,
        *,
        output_format: str = "csv",
        observer: ProgressObserver | None = None,
        stdout: TextIO | None = None,
    ) -> FilesRun:
        """Run ``program`` with the backend itself reading the ``.input`` files of
        ``facts_dir`` and writing the ``.output`` relations to ``output_dir`` (``-``:
        ``stdout``) as ``output_format``, so no relation passes through this process; the
        per-stratum stats and the phases' seconds. Only when tagged ``reads_files``."""
        raise NotImplementedError(f"{type(self).__name__} does not read files itself")
