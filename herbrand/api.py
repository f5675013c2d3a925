"""The public entry points: ``parse``, ``materialize`` and ``incremental``.

``materialize`` is the one call experiment scripts swap arguments of: the same program and facts
run with another ``evaluator``, ``fixpoint``, ``index`` or ``backend``, each resolved by name in
the registries of ``herbrand.framework.registry``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from os import PathLike
from pathlib import Path

from herbrand import builtins
from herbrand.framework import io
from herbrand.framework.analysis import analyse
from herbrand.framework.contracts import (
    Backend,
    IncrementalEvaluator,
    ProgressObserver,
    RuleEvaluator,
    StratumStats,
)
from herbrand.framework.errors import (
    EvaluationError,
    UndeclaredRelationError,
    UnknownComponentError,
)
from herbrand.framework.parser import parse as parse_text
from herbrand.framework.parser import parse_file
from herbrand.framework.registry import BACKENDS, EVALUATORS, FIXPOINTS, INCREMENTAL_ENGINES
from herbrand.framework.storage import Database, encode_rows
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Program
from herbrand.materialization import Materialization


def parse(text_or_path: str | PathLike) -> Program:
    """A Program from Datalog text, or from the file at a path (a PathLike or an existing
    ``*.dl`` path). Raises HerbrandSyntaxError with file:line:col on malformed input."""
    if isinstance(text_or_path, PathLike):
        return parse_file(text_or_path)
    looks_like_path = "\n" not in text_or_path and text_or_path.strip().endswith(".dl")
    if looks_like_path and Path(text_or_path).is_file():
        return parse_file(text_or_path)
    return parse_text(text_or_path)


def resolve_evaluator(evaluator: str | RuleEvaluator, index: str | None) -> RuleEvaluator:
    """A RuleEvaluator instance from a registered name (with ``index`` if it takes one)."""
    if isinstance(evaluator, RuleEvaluator):
        if index is not None:
            raise EvaluationError("pass index= only with an evaluator name, not an instance")
        return evaluator
    cls = EVALUATORS.get(evaluator)
    if cls.tags.uses_index:
        return cls() if index is None else cls(index=index)
    if index is not None:
        raise EvaluationError(f"evaluator {evaluator!r} does not use an index (got index={index!r})")
    return cls()


def load_database(
    program: Program,
    facts: Mapping[str, object] | None = None,
    facts_dir: str | PathLike | None = None,
) -> Database:
    """The input Database of ``program``: the ``.input`` files of ``facts_dir`` (when given)
    plus ``facts``, a mapping relation -> rows (tuples, numpy arrays or pandas DataFrames)."""
    types = {d.name: d.types for d in program.declarations}
    database = Database({}, SymbolTable(), types)
    if facts_dir is not None:
        database = io.load_inputs(program, database, facts_dir)
    for name, rows in (facts or {}).items():
        if name not in types:
            raise UndeclaredRelationError(f"facts given for undeclared relation {name!r}")
        relation = encode_rows(name, rows, types[name], database.symbols)
        if name in database:
            relation = database[name].union(relation)
        database = database.with_relations({name: relation})
    return database


def resolve_backend(backend: str | Backend, master: str | None = None) -> Backend:
    """A Backend instance from a registered name (started on ``master`` when given: only for
    backends that take a master URL, such as ``spark``), or ``backend`` itself."""
    if isinstance(backend, Backend):
        if master is not None:
            raise EvaluationError("pass master= only with a backend name, not an instance")
        return backend
    cls = BACKENDS.get(backend)
    if master is None:
        return cls()
    if "master" not in inspect.signature(cls).parameters:
        raise EvaluationError(f"backend {backend!r} does not take a master URL "
                              f"(got master={master!r})")
    return cls(master=master)


def materialize_with_stats(
    program: Program | str | PathLike,
    facts: Mapping[str, object] | None = None,
    *,
    facts_dir: str | PathLike | None = None,
    evaluator: str | RuleEvaluator = builtins.DEFAULT_EVALUATOR,
    fixpoint: str = builtins.DEFAULT_FIXPOINT,
    index: str | None = None,
    backend: str | Backend = builtins.DEFAULT_BACKEND,
    master: str | None = None,
    observer: ProgressObserver | None = None,
) -> tuple[Database, list[StratumStats]]:
    """``materialize`` that also returns the per-stratum statistics."""
    if not isinstance(program, Program):
        program = parse(program)
    analyse(program)  # report program errors before reading any data
    rule_evaluator = resolve_evaluator(evaluator, index)
    fixpoint_class = FIXPOINTS.get(fixpoint)
    runner = resolve_backend(backend, master)
    database = load_database(program, facts, facts_dir)
    return runner.materialize(
        program, database, evaluator=rule_evaluator, fixpoint=fixpoint_class, observer=observer
    )


def materialize(
    program: Program | str | PathLike,
    facts: Mapping[str, object] | None = None,
    *,
    facts_dir: str | PathLike | None = None,
    evaluator: str | RuleEvaluator = builtins.DEFAULT_EVALUATOR,
    fixpoint: str = builtins.DEFAULT_FIXPOINT,
    index: str | None = None,
    backend: str | Backend = builtins.DEFAULT_BACKEND,
    master: str | None = None,
    observer: ProgressObserver | None = None,
) -> Database:
    """The least model of ``program`` over its input facts, as a Database.

    ``program``: a Program, Datalog text or a path. ``facts``: relation -> rows (tuples of int
    and str, numpy arrays, pandas DataFrames). ``facts_dir``: read each ``.input`` relation's file
    from here, as Soufflé's ``-F``. ``evaluator``/``fixpoint``/``index``/``backend``: registered
    names (see ``herbrand.framework.registry``); ``backend`` may also be a Backend instance, to
    set its hyperparameters (``ParallelBackend(workers=4)``, ``SparkBackend(session=spark)``).
    ``master``: the master URL of a distributed backend (``backend="spark",
    master="local-cluster[2,1,1024]"``). ``observer`` receives a Progress per iteration. Errors are HerbrandError subclasses naming the place.
    """
    database, _ = materialize_with_stats(
        program, facts, facts_dir=facts_dir, evaluator=evaluator, fixpoint=fixpoint,
        index=index, backend=backend, master=master, observer=observer,
    )
    return database


def resolve_engine(engine: str | IncrementalEvaluator,
                   options: Mapping[str, object]) -> IncrementalEvaluator:
    """An IncrementalEvaluator from a registered name and its constructor options (or an
    instance, then without options). Raises UnknownComponentError for an unknown name or an
    option the engine does not take."""
    if isinstance(engine, IncrementalEvaluator):
        if options:
            raise EvaluationError("pass engine options only with an engine name, not an instance")
        return engine
    cls = INCREMENTAL_ENGINES.get(engine)
    accepted = [p for p in inspect.signature(cls).parameters if p != "self"]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise UnknownComponentError(
            f"incremental engine {engine!r} takes no option {', '.join(map(repr, unknown))}; "
            f"its options: {', '.join(accepted) or 'none'}")
    return cls(**options)


def incremental(
    program: Program | str | PathLike,
    facts: Mapping[str, object] | None = None,
    *,
    facts_dir: str | PathLike | None = None,
    engine: str | IncrementalEvaluator = builtins.DEFAULT_INCREMENTAL_ENGINE,
    **engine_options: object,
) -> Materialization:
    """Materialize ``program`` over its input facts with an incremental ``engine`` (a name of
    ``INCREMENTAL_ENGINES``: recompute, dred, counting, ...; ``engine_options`` go to its
    constructor) and return the Materialization that keeps it up to date under ``update``.
    ``program``, ``facts`` and ``facts_dir`` as in ``materialize``. Errors are HerbrandError
    subclasses naming the place. Cost: the engine's bootstrap."""
    if not isinstance(program, Program):
        program = parse(program)
    analyse(program)  # report program errors before reading any data
    evaluator = resolve_engine(engine, engine_options)
    return Materialization(program, load_database(program, facts, facts_dir), evaluator)
