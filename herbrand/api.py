"""The public entry points: ``parse``, ``materialize``, ``query``, ``explain``,
``incremental`` and ``compare``.

``materialize`` is the one call experiment scripts swap arguments of: the same program and facts
run with another ``evaluator``, ``fixpoint``, ``index`` or ``backend``, each resolved by name in
the registries of ``herbrand.framework.registry``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import replace
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
from herbrand.framework.encoding import encode_rows, rows_by_relation
from herbrand.framework.errors import (
    UndeclaredRelationError,
    UnknownComponentError,
    UsageError,
)
from herbrand.framework.goals import check_goal
from herbrand.framework.parser import parse as parse_text
from herbrand.framework.parser import parse_atom, parse_file
from herbrand.framework.registry import (
    BACKENDS,
    EVALUATORS,
    FIXPOINTS,
    INCREMENTAL_ENGINES,
    INDEXES,
)
from herbrand.framework.source_files import decode_source
from herbrand.framework.storage import Database, attribute_names
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Atom, Program
from herbrand.materialization import Materialization
from herbrand.provenance.proofs import NotDerived, Proof
from herbrand.translators.magic_pragma import apply_magic_pragma, has_magic_pragma
from herbrand.translators.magic_sets import MAGIC_TRANSFORM, MagicRewrite, magic_sets


def parse(text_or_path: str | bytes | PathLike) -> Program:
    """A Program from Datalog text or from a program file.

    Which one is decided by the argument's type, never by what exists on disk: a ``PathLike``
    names a file; ``bytes`` are program text (UTF-8; other bytes kept by ``surrogateescape``, as
    the file reader keeps them); a ``str`` is program text, unless it is a single line that ends
    in ``.dl`` once blanks are stripped (``"prog.dl"``, ``"/data/tc.dl"``), which names a file.
    Raises HerbrandSyntaxError (file:line:col) on malformed text, ProgramFileError naming a
    file that is missing or unreadable, UsageError for an argument of another type. Cost:
    linear in the text."""
    return _program_of(text_or_path, "parse(text_or_path)", "Datalog text (str or bytes) or "
                       "a path (os.PathLike)")


def _program_of(source: object, argument: str, expected: str) -> Program:
    """``source`` parsed by the rules of ``parse``; UsageError naming ``argument`` (and what
    it takes, ``expected``) when it is of no kind ``parse`` takes."""
    if isinstance(source, PathLike):
        return parse_file(source)
    if isinstance(source, bytes):
        return parse_text(decode_source(source))
    if not isinstance(source, str):
        raise UsageError(f"{argument} must be {expected}, got {type(source).__name__}")
    stripped = source.strip()
    if stripped.endswith(".dl") and "\n" not in stripped and "\r" not in stripped:
        return parse_file(stripped)
    return parse_text(source)


def _program(program: object, function: str) -> Program:
    """The ``program`` argument of ``function`` (materialize, incremental) as a Program."""
    if isinstance(program, Program):
        return program
    return _program_of(program, f"{function}(program)", "a Program, Datalog text (str or "
                       "bytes) or a path (os.PathLike)")


def default_evaluator(index: str | None) -> str:
    """The evaluator used when none is named: the native executor, or, when an index backing
    is chosen, the batch executor (it probes any IndexBacking; the native one its own hash
    indexes)."""
    return builtins.DEFAULT_EVALUATOR if index is None else builtins.INDEXED_EVALUATOR


def resolve_evaluator(evaluator: str | RuleEvaluator, index: str | None) -> RuleEvaluator:
    """A RuleEvaluator instance from a registered name (with ``index`` if it takes one)."""
    if isinstance(evaluator, RuleEvaluator):
        if index is not None:
            raise UsageError("pass index= only with an evaluator name, not an instance")
        return evaluator
    cls = EVALUATORS.get(evaluator)
    if cls.tags.uses_index:
        return cls() if index is None else cls(index=index)
    if index is not None:
        raise UsageError(f"evaluator {evaluator!r} does not use an index "
                         f"(got index={index!r})")
    return cls()


def load_database(
    program: Program,
    facts: Mapping[str, object] | None = None,
    facts_dir: str | PathLike | None = None,
) -> Database:
    """The input Database of ``program``, typed and with column names as declared: the
    ``.input`` files of ``facts_dir`` (when given) plus ``facts``, a mapping relation name ->
    rows (an iterable of tuples, a numpy array, a pandas DataFrame, a pyarrow Table or a
    Relation; see ``herbrand.framework.encoding`` for what each may hold).

    Raises UsageError when ``facts`` is not a mapping with str keys, UndeclaredRelationError
    for facts of an undeclared relation, ArityError or HerbrandTypeError naming the relation,
    row and column of a value that cannot be stored exactly, and io's FactsError. Cost: O(n)
    per relation given (vectorised for arrays and frames), plus the files read."""
    facts = rows_by_relation("facts", facts)
    types = {d.name: d.types for d in program.declarations}
    database = Database({}, SymbolTable(), types)
    if facts_dir is not None:
        database = io.load_inputs(program, database, facts_dir)
    for name, rows in facts.items():
        if name not in types:
            raise UndeclaredRelationError(f"facts given for undeclared relation {name!r}")
        relation = encode_rows(name, rows, types[name], database.symbols)
        if name in database:
            relation = database[name].union(relation)
        database = database.with_relations({name: relation})
    return database.with_attributes(attribute_names(program))


def resolve_backend(backend: str | Backend, master: str | None = None) -> Backend:
    """A Backend instance from a registered name (started on ``master`` when given: only for
    backends that take a master URL, such as ``spark``), or ``backend`` itself."""
    if isinstance(backend, Backend):
        if master is not None:
            raise UsageError("pass master= only with a backend name, not an instance")
        return backend
    cls = BACKENDS.get(backend)
    if master is not None and not isinstance(master, str):
        raise UsageError(f"master= must be a master URL (str), got {type(master).__name__}")
    if master is None:
        return cls()
    if "master" not in inspect.signature(cls).parameters:
        raise UsageError(f"backend {backend!r} does not take a master URL "
                         f"(got master={master!r})")
    return cls(master=master)


def _backend_for(backend: str | Backend, master: str | None, **chosen: object) -> Backend:
    """The resolved ``backend``; UsageError when it runs its own plans (spark) and one of
    ``chosen`` (evaluator=, fixpoint=, index=) is given, which it would ignore."""
    runner = resolve_backend(backend, master)
    given = [f"{name}=" for name, value in chosen.items() if value is not None]
    if not runner.tags.uses_evaluator and given:
        raise UsageError(f"{given[0]} does not go with backend {type(runner).__name__}: "
                         f"it runs its own plans, not a local evaluator")
    return runner


def program_to_run(program: Program, given: Mapping[str, object] | None = None) -> Program:
    """The program every backend runs for ``program``: transformed by magic sets when its
    ``.pragma "magic-transform"`` asks (``herbrand.translators.magic_pragma``), else itself.
    The one place the pragma is applied; ``given``: the facts passed with it (their relations
    may hold rows besides their rules). O(program)."""
    return apply_magic_pragma(program, given=tuple(given or ()))


def materialize_with_stats(
    program: Program | str | bytes | PathLike,
    facts: Mapping[str, object] | None = None,
    *,
    facts_dir: str | PathLike | None = None,
    evaluator: str | RuleEvaluator | None = None,
    fixpoint: str | None = None,
    index: str | None = None,
    backend: str | Backend = builtins.DEFAULT_BACKEND,
    master: str | None = None,
    observer: ProgressObserver | None = None,
) -> tuple[Database, list[StratumStats]]:
    """``materialize`` that also returns the per-stratum statistics."""
    program = _program(program, "materialize")
    if observer is not None and not callable(observer):
        raise UsageError(f"observer= must be callable (it receives a Progress per iteration), "
                         f"got {type(observer).__name__}")
    strata = analyse(program)  # report program errors before reading any data
    io.check_directives(program)
    to_run = program_to_run(program, facts if isinstance(facts, Mapping) else None)
    if to_run is not program:
        program, strata = to_run, analyse(to_run)
    runner = _backend_for(backend, master, evaluator=evaluator, fixpoint=fixpoint, index=index)
    if not strata:  # nothing to derive: no evaluator (nor the kernels) is loaded
        for registry, name in ((EVALUATORS, evaluator), (FIXPOINTS, fixpoint), (INDEXES, index)):
            if isinstance(name, str):
                registry.check(name)
        from herbrand.evaluators.fixpoint import base_instance

        return base_instance(program, load_database(program, facts, facts_dir)), []
    rule_evaluator = resolve_evaluator(evaluator or default_evaluator(index), index)
    fixpoint_class = FIXPOINTS.get(fixpoint or builtins.DEFAULT_FIXPOINT)
    database = load_database(program, facts, facts_dir)
    result, stats = runner.materialize(
        program, database, evaluator=rule_evaluator, fixpoint=fixpoint_class, observer=observer
    )
    # A backend (possibly a researcher's) need not carry the column names: the program has them.
    return result.with_attributes(attribute_names(program)), stats


def materialize(
    program: Program | str | bytes | PathLike,
    facts: Mapping[str, object] | None = None,
    *,
    facts_dir: str | PathLike | None = None,
    evaluator: str | RuleEvaluator | None = None,
    fixpoint: str | None = None,
    index: str | None = None,
    backend: str | Backend = builtins.DEFAULT_BACKEND,
    master: str | None = None,
    observer: ProgressObserver | None = None,
) -> Database:
    """The least model of ``program`` over its input facts, as a Database.

    ``program``: a Program, or Datalog text or a path as ``parse`` takes them (a ``str`` names a
    file only when it is one line ending in ``.dl``). ``facts``: a mapping relation -> rows
    (tuples of int and str, numpy arrays, pandas DataFrames, pyarrow Tables; every value is
    stored exactly or rejected, see ``load_database``). ``facts_dir``: read each ``.input``
    relation's file from here, as Soufflé's ``-F``. ``evaluator``/``fixpoint``/``index``/
    ``backend``: registered names (see ``herbrand.framework.registry``; None: the defaults,
    the native executor, semi-naive, local; with ``index`` given and no evaluator, the batch
    executor ``relational`` over that index); a backend tagged ``uses_evaluator=False``
    (spark) runs its own plans and refuses an evaluator, fixpoint or index with a UsageError
    rather than ignoring it; ``backend`` may also be a Backend instance, to set its hyperparameters (``ParallelBackend(workers=4)``,
    ``SparkBackend(session=spark)``). ``master``: the master URL of a distributed backend
    (``backend="spark", master="local-cluster[2,1,1024]"``). ``observer`` receives a Progress
    per iteration. With ``.pragma "magic-transform"`` the program runs transformed by magic
    sets (``program_to_run``): its output relations are whole, the relations they do not need
    are absent or partial, and the generated ones (``magic_...``) are there too. The result's
    relations are typed and their columns named as declared
    (``db.to_pandas(name)``). Errors are HerbrandError subclasses naming the place.
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
            raise UsageError("pass engine options only with an engine name, not an instance")
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
    program: Program | str | bytes | PathLike,
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
    program = _program(program, "incremental")
    analyse(program)  # report program errors before reading any data
    if has_magic_pragma(program):
        raise UsageError('an incremental engine maintains the whole program: it does not take '
                         '.pragma "magic-transform" (remove it, or use materialize)')
    io.check_directives(program)
    evaluator = resolve_engine(engine, engine_options)
    return Materialization(program, load_database(program, facts, facts_dir), evaluator)


def goal_of(program: Program, goal: str | Atom) -> Atom:
    """``goal`` (text such as ``'sg(16384, y)'``, or an Atom) checked against ``program``:
    one atom of a declared relation with its arity, whose arguments are constants of the
    column types, variables or ``_``. Raises HerbrandSyntaxError or an analysis error whose
    one line names the place (``goal:1:col``). O(goal)."""
    if isinstance(goal, str):
        goal = parse_atom(goal, file="goal")
    elif not isinstance(goal, Atom):
        raise UsageError(f"goal must be text such as 'tc(1, y)' or an Atom, got "
                         f"{type(goal).__name__}")
    check_goal(goal, program)
    return goal


def query_rewrite(program: Program | str | bytes | PathLike, goal: str | Atom) -> MagicRewrite:
    """The magic-sets rewrite that ``query`` runs for ``goal`` (``goal_of``): the program, the
    answer relation and the relations materialized whole, and why (``explain()`` prints
    them). O(program)."""
    program = _program(program, "query_rewrite")
    analyse(program)
    return magic_sets(program, (goal_of(program, goal),))


def query(
    program: Program | str | bytes | PathLike,
    goal: str | Atom,
    facts: Mapping[str, object] | None = None,
    *,
    facts_dir: str | PathLike | None = None,
    evaluator: str | RuleEvaluator | None = None,
    fixpoint: str | None = None,
    index: str | None = None,
    backend: str | Backend = builtins.DEFAULT_BACKEND,
    master: str | None = None,
    magic: bool = True,
) -> Database:
    """The rows of ``goal``'s relation that match ``goal``, as a Database holding that one
    relation (typed, columns named as declared: ``.decoded_rows(name)``, ``.to_pandas(name)``).

    ``goal``: text such as ``'sg(16384, y)'`` or ``'tc(1, _)'`` (constants select, a repeated
    variable asks for equal values), or an Atom; checked by ``goal_of``. ``magic``: answer by
    the magic-sets rewrite (``MagicSetsEvaluator``: only what the goal needs is derived;
    relations negated or aggregated in its slice are materialized whole) or, with False, by a
    full materialization of the program without its magic-transform pragma. The other
    arguments as ``materialize`` takes them. Errors are HerbrandError subclasses naming the
    place. Cost: the bottom-up cost of what is derived, then O(answer) for the selection."""
    program = _program(program, "query")
    analyse(program)  # report program errors before reading any data
    io.check_directives(program)
    goal = goal_of(program, goal)
    runner = _backend_for(backend, master, evaluator=evaluator, fixpoint=fixpoint, index=index)
    rule_evaluator = resolve_evaluator(evaluator or default_evaluator(index), index)
    fixpoint_class = FIXPOINTS.get(fixpoint or builtins.DEFAULT_FIXPOINT)
    database = load_database(program, facts, facts_dir)
    from herbrand.evaluators.top_down import MagicSetsEvaluator, select_goal

    if magic:
        top_down = MagicSetsEvaluator(rule_evaluator, fixpoint_class, runner)
        rows = top_down.query(program, database, goal)
    else:
        whole = replace(program, pragmas=tuple(p for p in program.pragmas
                                               if p.key != MAGIC_TRANSFORM))
        result, _ = runner.materialize(whole, database, evaluator=rule_evaluator,
                                       fixpoint=fixpoint_class)
        rows = select_goal(result[goal.relation], goal, result.symbols)
    return Database({goal.relation: rows}, database.symbols, database.types,
                    attribute_names(program))
def explain(
    program: Program | str | bytes | PathLike,
    goal: str | Atom | tuple,
    facts: Mapping[str, object] | None = None,
    *,
    facts_dir: str | PathLike | None = None,
    max_depth: int | None = None,
) -> Proof | NotDerived:
    """Why ``goal`` is in the least model of ``program``: its ``Proof`` of minimal height (the
    rule that derived it, the rule's ground body, and each premise explained in turn down to
    the facts), or, for a tuple not in the model, ``NotDerived`` naming for each rule of its
    relation the first body element with no match. Both are immutable, with ``to_dict()``
    and a readable ``str`` (see ``herbrand.provenance.proofs``).

    ``goal``: Datalog text ``"tc(1, 5)"``, an Atom of constants, or a tuple ``("tc", 1, 5)``.
    ``program``, ``facts``, ``facts_dir`` as in ``materialize``. ``max_depth``: reconstruct
    premises that many levels below the goal at most (None: down to the facts). Errors are
    HerbrandError subclasses naming the place: the program's, the facts', and for the goal
    an undeclared relation, a wrong arity or a value of the wrong type (naming the column).
    Cost: one semi-naive materialization with the batch executor recording each tuple's
    height (explain's alone: ``materialize`` never pays it), then a bounded top-down search;
    to explain several goals of one model, use ``herbrand.provenance.explain.Explainer``."""
    program = _program(program, "explain")
    analyse(program)  # report program errors before reading any data
    io.check_directives(program)
    from herbrand.provenance.explain import Explainer  # loads the evaluators

    explainer = Explainer(program, load_database(program, facts, facts_dir))
    return explainer.explain(goal, max_depth=max_depth)
def compare(
    program: Program | str | bytes | PathLike,
    facts: Mapping[str, object] | None = None,
    *,
    facts_dir: str | PathLike | None = None,
    configurations: Sequence[str | object] = ("native",),
    repeat: int = 3,
    timeout: float = 600.0,
):
    """Run ``program`` in each of ``configurations``, each as ``repeat`` fresh ``herbrand run``
    processes (and once warm in one process), check that all agree, and return the table as a
    pandas DataFrame (columns: ``herbrand.reports.comparison.COLUMNS``: configuration, cores,
    status, runs, median_s, min_s, max_s, peak_rss_mb, warm_s, tuples, tuples_per_s,
    x_fastest, detail).

    A configuration is a string in the syntax of ``herbrand.comparison.configurations``
    (``"native"``, ``"relational/btree"``, ``"native@parallel:2"``, ``"spark:local[2]"``,
    ``"souffle"``, ``"duckdb"``, ...) or a ``Configuration``. ``program`` and ``facts`` as in
    ``materialize``, or ``facts_dir`` (a folder of ``.input`` files); program text and facts in
    memory are written to a temporary folder first, since whole processes read files. A
    configuration that cannot run here, fails or times out (after ``timeout`` seconds) has
    its status in its row. Raises UsageError for a bad configuration, and
    ResultsDisagreeError (its ``table`` the DataFrame) when configurations disagree. Cost:
    the runs' own, plus about 0.1 s of start-up per process.
    """
    import tempfile

    from herbrand.comparison.configurations import parse_configuration
    from herbrand.comparison.runner import run_comparison
    from herbrand.comparison.targets import target_of
    from herbrand.reports.comparison import to_frame

    chosen = [parse_configuration(c) if isinstance(c, str) else c for c in configurations]
    with tempfile.TemporaryDirectory(prefix="herbrand-compare-") as scratch:
        target = target_of(program, facts, facts_dir, Path(scratch))
        comparison = run_comparison(target, chosen, repeat=repeat, timeout=timeout)
    table = to_frame(comparison)
    comparison.check_agreement(table)
    return table
