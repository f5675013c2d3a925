"""``herbrand run``: materialize a program as Soufflé does (``.input`` from ``-F``, ``.output``
to ``-D``), locally, on threads, on Spark, or with an incremental engine and an updates file.

``add_run_parser`` adds the command to ``herbrand``'s parser (``herbrand.cli``); every flag is
either honoured or refused in one line (RUN_FLAGS, ENGINE_FLAGS, EVALUATOR_FLAGS say which goes
with which). ``check_paths`` (the facts directory, the output directories) is shared with
``query`` and ``explain``, so a bad path fails before any input is read.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from herbrand import builtins
from herbrand.api import incremental, materialize_with_stats, parse, program_to_run
from herbrand.framework import io
from herbrand.framework.contracts import Backend, StratumStats
from herbrand.framework.errors import FactsError, OutputError, UsageError
from herbrand.framework.registry import (
    BACKENDS,
    EVALUATORS,
    FIXPOINTS,
    INCREMENTAL_ENGINES,
    INDEXES,
)
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Program
from herbrand.framework.whole_outputs import MadeFolders, made_folders
from herbrand.materialization import Materialization
from herbrand.progress import ProgressDisplay, plural
from herbrand.updates import read_updates

SUMMARY_ROWS = 5
OUTPUT_FORMATS = ("csv", "parquet")
# options of `herbrand run` passed to the backend's constructor when given: flag -> parameter
BACKEND_OPTIONS = {"--master": "master", "--spark-conf": "conf",
                   "--checkpoint-dir": "checkpoint_dir", "--workers": "workers",
                   "--no-decompose": "decompose", "--driver-rows": "driver_rows"}
# what each flag of `herbrand run` goes with, as data: flag -> its attribute in the namespace
RUN_FLAGS = {"--evaluator": "evaluator", "--fixpoint": "fixpoint", "--index": "index",
             "--backend": "backend", "--master": "master", "--spark-conf": "spark_conf",
             "--checkpoint-dir": "checkpoint_dir", "--workers": "workers",
             "--no-decompose": "no_decompose", "--driver-rows": "driver_rows",
             "--output-format": "output_format", "--stats": "stats", "--summary": "summary",
             "--no-progress": "no_progress", "--engine": "engine", "--updates": "updates"}
ENGINE_FLAGS = ("--engine", "--updates", "--index", "--stats", "--summary", "--no-progress")
EVALUATOR_FLAGS = ("--evaluator", "--fixpoint", "--index")
_URI = re.compile(r"^[a-zA-Z][\w+.-]*:")


def registry_names(registry) -> str:
    """The names a registry knows, comma-separated, for a flag's help."""
    return ", ".join(registry.names())


def add_run_parser(commands) -> None:
    run = commands.add_parser("run", help="materialize a program (Soufflé's -F/-D meaning)")
    run.add_argument("program", help="the Datalog program (.dl)")
    run.add_argument("-F", "--facts", default=".", help="directory of .input files (default .)")
    run.add_argument("-D", "--output", default=".",
                     help="directory for .output files, or - for stdout (default .)")
    run.add_argument("--evaluator", default=None,
                     help=f"rule evaluator: {registry_names(EVALUATORS)} "
                          f"(default {builtins.DEFAULT_EVALUATOR}; with --index, "
                          f"{builtins.INDEXED_EVALUATOR})")
    run.add_argument("--fixpoint", default=None,
                     help=f"fixpoint strategy: {registry_names(FIXPOINTS)} "
                          f"(default {builtins.DEFAULT_FIXPOINT})")
    run.add_argument("--index", default=None,
                     help=f"index backing of an evaluator or engine that takes one: "
                          f"{registry_names(INDEXES)}")
    run.add_argument("--backend", default=None,
                     help=f"execution backend: {registry_names(BACKENDS)} "
                          f"(default {builtins.DEFAULT_BACKEND})")
    run.add_argument("--stats", action="store_true",
                     help="print per-stratum iterations, tuples derived and time to stderr "
                          "(with --engine: the engine's state and the materialization's size)")
    run.add_argument("--summary", action="store_true",
                     help="print each output relation's size and first rows, and the time")
    run.add_argument("--no-progress", action="store_true", help="no progress display")
    run.add_argument("--workers", type=int, default=None,
                     help="threads of the parallel backend (default: the machine's cores)")
    run.add_argument("--master", default=None,
                     help="master URL of a distributed backend (spark: default local[*])")
    run.add_argument("--spark-conf", action="append", default=None, metavar="KEY=VALUE",
                     help="a Spark configuration setting (repeatable)")
    run.add_argument("--checkpoint-dir", default=None,
                     help="spark: reliable checkpoints in this directory (default: local ones)")
    run.add_argument("--no-decompose", action="store_true",
                     help="spark: semi-naive passes for every recursive stratum (default: one "
                          "with a pivot runs as one job, herbrand's engine in each partition)")
    run.add_argument("--driver-rows", type=int, default=None, metavar="N",
                     help="spark: a stratum reading at most N rows in all runs on the driver "
                          "with herbrand's engine (unless it derives over 1M), small local "
                          "files are read and its outputs written there (default 100000; 0: "
                          "all on Spark)")
    run.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None,
                     help="format of the .output relations (default csv; parquet: a backend "
                          "that writes files itself, spark: each the directory of its file "
                          "name with .parquet for its extension)")
    run.add_argument("--engine", default=None,
                     help=f"materialize with an incremental engine: "
                          f"{registry_names(INCREMENTAL_ENGINES)}")
    run.add_argument("--updates", default=None,
                     help="apply the epochs of this updates file (+rel/-rel lines, 'commit' "
                          "between epochs) with --engine; prints one line per epoch to stderr")
    run.set_defaults(handler=_run)


# -- run ---------------------------------------------------------------------------------------


def _given(args) -> list[str]:
    """The flags of ``herbrand run`` given on the command line, in RUN_FLAGS order."""
    return [flag for flag, attribute in RUN_FLAGS.items()
            if getattr(args, attribute) not in (None, False)]


def _refuse(flags: list[str], why: str) -> None:
    """UsageError naming the first of ``flags`` and why it does not apply."""
    if flags:
        raise UsageError(f"{flags[0]} does not go with {why}")


def _run(args) -> int:
    """``herbrand run``: the run ``_run_with`` describes; when it fails or is interrupted, the
    output folders it made that are still empty are removed (``whole_outputs.made_folders``),
    never one that was there before."""
    with made_folders() as folders:
        return _run_with(args, folders)


def _run_with(args, folders: MadeFolders) -> int:
    """Parse the program, check the flags and paths (making the output folders through
    ``folders``), and run it: with an incremental engine, on a backend that writes its files
    itself, or on a local one."""
    given = _given(args)
    program = parse(Path(args.program))
    if args.engine is not None or args.updates is not None:
        _refuse([f for f in given if f not in ENGINE_FLAGS],
                f"--engine (an incremental engine runs in this process on its own evaluator; "
                f"with --engine use {', '.join(ENGINE_FLAGS[1:])})")
        check_paths(program, args.facts, args.output, folders)
        return _run_incremental(args, program)
    backend = _backend(args)
    if not backend.tags.uses_evaluator:
        _refuse([f for f in given if f in EVALUATOR_FLAGS],
                f"--backend {args.backend} (it runs its own plans, not a local evaluator)")
    if backend.tags.reads_files:
        check_paths(program, args.facts, args.output, folders)
        return _run_distributed(args, program, backend)
    if args.output_format not in (None, "csv"):
        raise UsageError(f"--output-format {args.output_format} needs a backend that writes "
                         f"files itself (spark)")
    check_paths(program, args.facts, args.output, folders)
    progress = None if args.no_progress else ProgressDisplay()
    start = time.perf_counter()
    try:
        database, stats = materialize_with_stats(
            program, facts_dir=args.facts,
            evaluator=args.evaluator,
            fixpoint=args.fixpoint or builtins.DEFAULT_FIXPOINT,
            index=args.index, backend=backend, observer=progress,
        )
        seconds = time.perf_counter() - start
        _write_outputs(program, database, args.output, progress, backend.threads)
        written = time.perf_counter() - start - seconds
    finally:
        if progress is not None:
            progress.close()
    if args.stats:
        _print_stats(stats, seconds)
        computed = sum(s.seconds for s in stats)
        _print_phases(started_at(), start, (("read and set-up", seconds - computed),
                                            ("strata", computed), ("write", written)))
    if args.summary:
        _print_summary(program, database, seconds)
    return 0


def _write_outputs(program: Program, database: Database, output: str,
                   progress: ProgressDisplay | None, threads: int) -> None:
    """Write the outputs on ``threads`` threads (the backend's), reporting each relation on
    ``progress`` and ending it with the final line."""
    started = time.perf_counter()
    io.write_outputs(program, database, output, observer=progress and progress.stage,
                     threads=threads)
    if progress is not None:
        derived = sum(len(database[name]) for name in database)
        progress.finish(f"done: {plural(derived, 'tuple')} in {plural(len(database), 'relation')}"
                        f", outputs written in {time.perf_counter() - started:.1f}s")


def check_paths(program: Program, facts: str, output: str,
                folders: MadeFolders | None = None) -> None:
    """Fail now, before any input is read, when the facts directory is not one (FactsError) or
    an output file of ``program`` could not be written (``_check_outputs``, which makes the
    output folders, through ``folders`` when given: they are the run's). Local paths only:
    URIs are left to the backend that reads them. The I/O directives are checked first."""
    io.check_directives(program)
    if program.inputs and not _URI.match(facts) and not Path(facts).is_dir():
        reason = "not a directory" if Path(facts).exists() else "no such directory"
        raise FactsError(f"{facts}: facts directory: {reason}")
    _check_outputs(program, output, MadeFolders() if folders is None else folders)


def _check_outputs(program: Program, output: str, folders: MadeFolders) -> None:
    """Make each output directory under ``output`` (a local path; URIs and ``-`` are left to
    the backend) through ``folders`` and write and remove a probe file in it. Raises
    OutputError naming the directory. Cost: one small file per output directory."""
    if output == "-" or _URI.match(output):
        return
    directories = {Path(output)}
    for directive in program.directives:
        if directive.kind == "output":
            kind, filename, _ = io.io_parameters(directive, ".csv")
            if kind == "file" and not _URI.match(filename):
                directories.add((Path(output) / filename).parent)
    for directory in sorted(directories):
        try:
            folders.make(directory)
        except FileExistsError:
            raise OutputError(f"{directory}: cannot write outputs there: it is a file, "
                              f"not a directory") from None
        except OSError as error:
            raise OutputError(f"{directory}: cannot create the output directory: "
                              f"{_strerror(error)}") from None
        try:
            with tempfile.TemporaryFile(dir=directory):
                pass
        except OSError as error:
            raise OutputError(f"{directory}: cannot write outputs there: "
                              f"{_strerror(error)}") from None


def _strerror(error: OSError) -> str:
    """The system's reason for a failed write, in lower case (no errno, no path)."""
    return (error.strerror or str(error)).lower()


def _backend(args) -> Backend:
    """The ``--backend`` built with the BACKEND_OPTIONS given; UsageError naming a flag the
    backend does not take."""
    name = args.backend or builtins.DEFAULT_BACKEND
    given = {"--master": args.master, "--checkpoint-dir": args.checkpoint_dir,
             "--spark-conf": dict(map(_setting, args.spark_conf or [])) or None,
             "--workers": args.workers, "--no-decompose": False if args.no_decompose else None,
             "--driver-rows": args.driver_rows}
    cls = BACKENDS.get(name)
    accepted = inspect.signature(cls).parameters
    options = {}
    for flag, value in given.items():
        if value is None:
            continue
        if BACKEND_OPTIONS[flag] not in accepted:
            raise UsageError(f"backend {name!r} does not take {flag}")
        options[BACKEND_OPTIONS[flag]] = value
    return cls(**options)


def _setting(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise UsageError(f"--spark-conf {text!r}: expected KEY=VALUE")
    return key, value


def _run_distributed(args, program: Program, backend: Backend) -> int:
    """``run`` on a backend that reads the ``.input`` files and writes the ``.output``
    relations itself (``materialize_files``), so no relation passes through this process;
    the run's notes (``FilesRun.notes``) go to stderr, one line each."""
    if args.summary:
        raise UsageError("--summary needs a local backend (a distributed backend writes "
                         "its outputs where it runs)")
    progress = None if args.no_progress else ProgressDisplay()
    start = time.perf_counter()
    try:
        run = backend.materialize_files(program_to_run(program), args.facts, args.output,
                                        output_format=args.output_format or "csv",
                                        observer=progress)
        if progress is not None:
            progress.finish(f"done: {plural(sum(s.derived for s in run.stats), 'tuple')} "
                            f"derived, outputs written")
    finally:
        if progress is not None:
            progress.close()
    for note in run.notes:
        print(f"herbrand: note: {note}", file=sys.stderr)
    if args.stats:
        _print_stats(run.stats, time.perf_counter() - start, run.where)
        _print_phases(started_at(), start, run.phases)
    return 0


def _run_incremental(args, program: Program) -> int:
    """``run --engine NAME [--updates FILE]``: bootstrap, apply each epoch (one stderr line
    each: epoch, facts given, tuples added and removed, seconds, strategy), write the outputs;
    with ``--stats``, the engine's state and the materialization's size at the end."""
    if args.engine is None:
        raise UsageError("--updates needs --engine NAME (an incremental engine: "
                         f"{registry_names(INCREMENTAL_ENGINES)})")
    options = {} if args.index is None else {"index": args.index}
    epochs = read_updates(args.updates, program) if args.updates is not None else []
    start = time.perf_counter()
    materialization = incremental(program, facts_dir=args.facts, engine=args.engine, **options)
    if epochs:
        print("epoch\tgiven\tadded\tremoved\tseconds\tstrategy", file=sys.stderr)
    for number, epoch in enumerate(epochs, start=1):
        changes = materialization.update(insert=epoch.insert, delete=epoch.delete)
        stats = materialization.stats()
        added = sum(len(c.added) for c in changes.relations.values())
        print(f"{number}\t{epoch.size}\t{added}\t{changes.size - added}\t{stats.seconds:.3f}"
              f"\t{stats.strategy}", file=sys.stderr)
    seconds = time.perf_counter() - start
    io.write_outputs(program, materialization.database, args.output)
    if args.stats:
        _print_engine_stats(args.engine, materialization)
    if args.summary:
        _print_summary(program, materialization.database, seconds)
    return 0


def _print_engine_stats(engine: str, materialization: Materialization) -> None:
    stats = materialization.stats()
    print("engine\tstate_tuples\tstate_mb\ttuples\tmb", file=sys.stderr)
    print(f"{engine}\t{stats.state_tuples}\t{stats.state_bytes / 2**20:.1f}\t{stats.tuples}"
          f"\t{stats.bytes / 2**20:.1f}", file=sys.stderr)


def _print_stats(stats: Sequence[StratumStats], seconds: float, where: str | None = None
                 ) -> None:
    """The per-stratum table of ``--stats`` and its total line; a last column says where each
    stratum ran when one says, and the total's, ``where``, where the run ran."""
    placed = any(s.where is not None for s in stats)  # a last column: where each ran
    columns = ("stratum", "iterations", "derived", "seconds", "relations") + (
        ("where",) if placed else ())
    print("\t".join(columns), file=sys.stderr)
    for s in stats:
        fields = [str(s.stratum), str(s.iterations), str(s.derived), f"{s.seconds:.3f}",
                  ",".join(s.relations)] + ([str(s.where)] if placed else [])
        print("\t".join(fields), file=sys.stderr)
    total = (f"total\t{sum(s.iterations for s in stats)}\t{sum(s.derived for s in stats)}"
             f"\t{seconds:.3f}")
    print(total if where is None else f"{total}\t\t{where}", file=sys.stderr)


def started_at() -> float | None:
    """The ``time.monotonic()`` reading at which this process started (from Linux's
    ``/proc/self/stat`` and ``/proc/uptime``, to 10 ms), or None where they are not."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            ticks = int(stat.read().rpartition(")")[2].split()[19])  # field 22, starttime
            since_boot = float(uptime.read().split()[0])
        hertz = os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None
    return time.monotonic() - (since_boot - ticks / hertz)


def _print_phases(process_start: float | None, run_start: float,
                  phases: tuple[tuple[str, float], ...]) -> None:
    """The run's serial phases (``--stats``): start-up (interpreter, imports and parsing until
    the run began; ``-`` where the process start is unknown), then ``phases`` in order, (name,
    seconds) pairs: locally, reading the facts and setting up the evaluator (the run's time
    outside its strata), the strata, and writing the outputs (sorting, formatting and I/O); a
    backend that reads and writes files itself says its own (``FilesRun``)."""
    startup = "-" if process_start is None else \
        f"{time.monotonic() - (time.perf_counter() - run_start) - process_start:.3f}"
    fields = "".join(f"\t{name}\t{seconds:.3f}" for name, seconds in phases)
    print(f"phases\tstart-up\t{startup}{fields}", file=sys.stderr)


def _print_summary(program: Program, database: Database, seconds: float) -> None:
    names = program.outputs or tuple(database)
    for name in names:
        rows = sorted(database.decoded_rows(name), key=io.row_sort_key)
        print(f"{name}: {plural(len(rows), 'tuple')}")
        for row in rows[:SUMMARY_ROWS]:
            print("    " + "\t".join(map(str, row)))
        if len(rows) > SUMMARY_ROWS:
            print("    ...")
    print(f"materialized in {seconds:.3f}s")
