"""The herbrand command: run a program as Soufflé would, answer a query, explain a tuple,
translate it, compare configurations, report benchmarks.

Bad input prints one line (``herbrand: error: <place>: <message>``) and exits with status 1; a
malformed command line (an unknown option, a missing argument) prints argparse's usage line
and its error and exits with status 2. No traceback reaches the user for either. A closed
stdout (``herbrand run ... -D - | head``) ends the run quietly with status 141, as a Unix tool
killed by SIGPIPE. ``herbrand explain`` exits with status 0 when the tuple is derived and
NOT_DERIVED_STATUS (3) when it is not, so that a script can tell those apart from an error.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from herbrand import builtins
from herbrand.api import (
    incremental,
    materialize_with_stats,
    parse,
    program_to_run,
    query,
    query_rewrite,
)
from herbrand.framework import io
from herbrand.framework.contracts import Backend, StratumStats
from herbrand.framework.errors import FactsError, HerbrandError, OutputError, UsageError
from herbrand.framework.registry import (
    BACKENDS,
    EVALUATORS,
    FIXPOINTS,
    INCREMENTAL_ENGINES,
    INDEXES,
)
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Program
from herbrand.materialization import Materialization
from herbrand.progress import ProgressDisplay, plural
from herbrand.updates import read_updates

SUMMARY_ROWS = 5
OUTPUT_FORMATS = ("csv", "parquet")
SIGPIPE_STATUS = 141
NOT_DERIVED_STATUS = 3  # `herbrand explain` of a tuple not in the model (errors are 1, usage 2)
# options of `herbrand run` passed to the backend's constructor when given: flag -> parameter
BACKEND_OPTIONS = {"--master": "master", "--spark-conf": "conf",
                   "--checkpoint-dir": "checkpoint_dir", "--workers": "workers"}
# what each flag of `herbrand run` goes with, as data: flag -> its attribute in the namespace
RUN_FLAGS = {"--evaluator": "evaluator", "--fixpoint": "fixpoint", "--index": "index",
             "--backend": "backend", "--master": "master", "--spark-conf": "spark_conf",
             "--checkpoint-dir": "checkpoint_dir", "--workers": "workers",
             "--output-format": "output_format", "--stats": "stats", "--summary": "summary",
             "--no-progress": "no_progress", "--engine": "engine", "--updates": "updates"}
ENGINE_FLAGS = ("--engine", "--updates", "--index", "--stats", "--summary", "--no-progress")
EVALUATOR_FLAGS = ("--evaluator", "--fixpoint", "--index")
_URI = re.compile(r"^[a-zA-Z][\w+.-]*:")


def _names(registry) -> str:
    return ", ".join(registry.names())


def _run_parser(commands) -> None:
    run = commands.add_parser("run", help="materialize a program (Soufflé's -F/-D meaning)")
    run.add_argument("program", help="the Datalog program (.dl)")
    run.add_argument("-F", "--facts", default=".", help="directory of .input files (default .)")
    run.add_argument("-D", "--output", default=".",
                     help="directory for .output files, or - for stdout (default .)")
    run.add_argument("--evaluator", default=None,
                     help=f"rule evaluator: {_names(EVALUATORS)} "
                          f"(default {builtins.DEFAULT_EVALUATOR}; with --index, "
                          f"{builtins.INDEXED_EVALUATOR})")
    run.add_argument("--fixpoint", default=None,
                     help=f"fixpoint strategy: {_names(FIXPOINTS)} "
                          f"(default {builtins.DEFAULT_FIXPOINT})")
    run.add_argument("--index", default=None,
                     help=f"index backing of an evaluator or engine that takes one: "
                          f"{_names(INDEXES)}")
    run.add_argument("--backend", default=None,
                     help=f"execution backend: {_names(BACKENDS)} "
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
    run.add_argument("--output-format", choices=OUTPUT_FORMATS, default=None,
                     help="format of the .output relations (default csv; parquet: a backend "
                          "that writes files itself, spark)")
    run.add_argument("--engine", default=None,
                     help=f"materialize with an incremental engine: {_names(INCREMENTAL_ENGINES)}")
    run.add_argument("--updates", default=None,
                     help="apply the epochs of this updates file (+rel/-rel lines, 'commit' "
                          "between epochs) with --engine; prints one line per epoch to stderr")
    run.set_defaults(handler=_run)


def _translate_parser(commands) -> None:
    translate = commands.add_parser(
        "translate", help="print the relational-algebra plan of every rule and its delta variants"
    )
    translate.add_argument("program", help="the Datalog program (.dl)")
    translate.add_argument("--magic", default=None, metavar="GOAL",
                           help="print the program rewritten by magic sets for GOAL "
                                "(such as 'sg(16384, y)') instead of the plans")
    translate.set_defaults(handler=_translate)


def _query_parser(commands) -> None:
    ask = commands.add_parser(
        "query", help="answer one goal by magic sets: the matching rows, tab-separated")
    ask.add_argument("program", help="the Datalog program (.dl)")
    ask.add_argument("goal", help="one atom: constants select, _ and variables are free "
                                  "(a repeated variable asks for equal values): 'tc(1, y)'")
    ask.add_argument("-F", "--facts", default=".", help="directory of .input files (default .)")
    ask.add_argument("--evaluator", default=None,
                     help=f"rule evaluator: {_names(EVALUATORS)} "
                          f"(default {builtins.DEFAULT_EVALUATOR}; with --index, "
                          f"{builtins.INDEXED_EVALUATOR})")
    ask.add_argument("--index", default=None, help=f"index backing: {_names(INDEXES)}")
    ask.add_argument("--explain-plan", action="store_true",
                     help="print the rewritten program, and the relations materialized whole "
                          "and why, to stderr")
    ask.add_argument("--no-magic", action="store_true",
                     help="answer by materializing the whole program (for comparison)")
    ask.set_defaults(handler=_query)


def _bench_parser(commands) -> None:
    bench = commands.add_parser("bench", help="benchmark tools")
    bench_commands = bench.add_subparsers(dest="bench_command", required=True)
    report = bench_commands.add_parser(
        "report", help="markdown table (and PNG charts beside it) of pytest-benchmark JSON")
    report.add_argument("results", help="the JSON written by pytest --benchmark-json")
    report.add_argument("-o", "--output", default="-",
                        help="markdown file (default stdout); its charts are written beside it")
    report.set_defaults(handler=_bench_report)


def _explain_parser(commands) -> None:
    explain = commands.add_parser(
        "explain", help="print why a tuple is derived (a proof tree) or why it is not",
        description="Print a minimal-height proof of the tuple (exit status 0), or, when it is "
                    "not in the model, for each rule of its relation the first body element "
                    f"with no match (exit status {NOT_DERIVED_STATUS}). Errors: status 1.")
    explain.add_argument("program", help="the Datalog program (.dl)")
    explain.add_argument("goal", help="the tuple, as an atom of constants: 'tc(1, 5)'")
    explain.add_argument("-F", "--facts", default=".", help="directory of .input files "
                                                             "(default .)")
    explain.add_argument("--json", action="store_true", help="print the answer as JSON")
    explain.add_argument("--max-depth", type=int, default=None, metavar="N",
                         help="reconstruct and print premises at most N levels below the tuple")
    explain.set_defaults(handler=_explain)
def _compare_parser(commands) -> None:
    compare = commands.add_parser(
        "compare", help="run a program in every configuration of a grid, each as a whole "
                        "process, check they agree, and report times, memory and COST")
    compare.add_argument("program", nargs="?", help="the Datalog program (.dl)")
    compare.add_argument("-F", "--facts", default=".", help="directory of .input files "
                                                            "(default .)")
    compare.add_argument("--workload", default=None,
                         help="a shared workload instead of PROGRAM (see --list-workloads)")
    compare.add_argument("--size", choices=("full", "smoke"), default="full",
                         help="the workload's size (default full)")
    compare.add_argument("--list-workloads", action="store_true",
                         help="name the shared workloads and stop")
    compare.add_argument("--evaluator", default=None,
                         help=f"comma-separated rule evaluators: {_names(EVALUATORS)} "
                              f"(default {builtins.DEFAULT_EVALUATOR}, and "
                              f"{builtins.INDEXED_EVALUATOR} with --index)")
    compare.add_argument("--index", default=None,
                         help=f"comma-separated index backings of the evaluators that take "
                              f"one, or all: {_names(INDEXES)}")
    compare.add_argument("--backend", default="local",
                         help="comma-separated backends: local, parallel:N, spark:MASTER "
                              "(default local)")
    compare.add_argument("--peers", default="souffle,duckdb,clingo",
                         help="comma-separated peers run beside herbrand where installed: "
                              "souffle (compiled and interpreted), duckdb, clingo, or none "
                              "(default all)")
    compare.add_argument("--repeat", type=int, default=3,
                         help="whole processes per configuration (default 3)")
    compare.add_argument("--timeout", type=float, default=600.0,
                         help="seconds before a run is stopped and marked (default 600)")
    compare.add_argument("-o", "--output", default=None,
                         help="directory for compare.csv, compare.json and the PNG charts")
    compare.set_defaults(handler=_compare)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="herbrand", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    _run_parser(commands)
    _translate_parser(commands)
    _query_parser(commands)
    _explain_parser(commands)
    _bench_parser(commands)
    _compare_parser(commands)
    return parser


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
    given = _given(args)
    program = parse(Path(args.program))
    if args.engine is not None or args.updates is not None:
        _refuse([f for f in given if f not in ENGINE_FLAGS],
                f"--engine (an incremental engine runs in this process on its own evaluator; "
                f"with --engine use {', '.join(ENGINE_FLAGS[1:])})")
        _check_paths(program, args.facts, args.output)
        return _run_incremental(args, program)
    backend = _backend(args)
    if not backend.tags.uses_evaluator:
        _refuse([f for f in given if f in EVALUATOR_FLAGS],
                f"--backend {args.backend} (it runs its own plans, not a local evaluator)")
    if backend.tags.reads_files:
        _check_paths(program, args.facts, args.output)
        return _run_distributed(args, program, backend)
    if args.output_format not in (None, "csv"):
        raise UsageError(f"--output-format {args.output_format} needs a backend that writes "
                         f"files itself (spark)")
    _check_paths(program, args.facts, args.output)
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
        _write_outputs(program, database, args.output, progress)
    finally:
        if progress is not None:
            progress.close()
    if args.stats:
        _print_stats(stats, seconds)
    if args.summary:
        _print_summary(program, database, seconds)
    return 0


def _write_outputs(program: Program, database: Database, output: str,
                   progress: ProgressDisplay | None) -> None:
    """Write the outputs, reporting each relation on ``progress`` and ending it with the
    final line."""
    started = time.perf_counter()
    io.write_outputs(program, database, output, observer=progress and progress.stage)
    if progress is not None:
        derived = sum(len(database[name]) for name in database)
        progress.finish(f"done: {plural(derived, 'tuple')} in {plural(len(database), 'relation')}"
                        f", outputs written in {time.perf_counter() - started:.1f}s")


def _check_paths(program: Program, facts: str, output: str) -> None:
    """Fail now, before any input is read, when the facts directory is not one (FactsError) or
    an output file of ``program`` could not be written (``_check_outputs``). Local paths only:
    URIs are left to the backend that reads them. The I/O directives are checked first."""
    io.check_directives(program)
    if program.inputs and not _URI.match(facts) and not Path(facts).is_dir():
        reason = "not a directory" if Path(facts).exists() else "no such directory"
        raise FactsError(f"{facts}: facts directory: {reason}")
    _check_outputs(program, output)


def _check_outputs(program: Program, output: str) -> None:
    """Create each output directory under ``output`` (a local path; URIs and ``-`` are left to
    the backend) and write and remove a probe file in it. Raises OutputError naming the
    directory. Cost: one small file per output directory."""
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
            directory.mkdir(parents=True, exist_ok=True)
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
             "--workers": args.workers}
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
    relations itself (``materialize_files``), so no relation passes through this process."""
    if args.summary:
        raise UsageError("--summary needs a local backend (a distributed backend writes "
                         "its outputs where it runs)")
    progress = None if args.no_progress else ProgressDisplay()
    start = time.perf_counter()
    try:
        stats = backend.materialize_files(program_to_run(program), args.facts, args.output,
                                          output_format=args.output_format or "csv",
                                          observer=progress)
        if progress is not None:
            progress.finish(f"done: {plural(sum(s.derived for s in stats), 'tuple')} derived, "
                            f"outputs written")
    finally:
        if progress is not None:
            progress.close()
    if args.stats:
        _print_stats(stats, time.perf_counter() - start)
    return 0


def _run_incremental(args, program: Program) -> int:
    """``run --engine NAME [--updates FILE]``: bootstrap, apply each epoch (one stderr line
    each: epoch, facts given, tuples added and removed, seconds, strategy), write the outputs;
    with ``--stats``, the engine's state and the materialization's size at the end."""
    if args.engine is None:
        raise UsageError("--updates needs --engine NAME (an incremental engine: "
                         f"{_names(INCREMENTAL_ENGINES)})")
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


def _print_stats(stats: list[StratumStats], seconds: float) -> None:
    print("stratum\titerations\tderived\tseconds\trelations", file=sys.stderr)
    for s in stats:
        print(f"{s.stratum}\t{s.iterations}\t{s.derived}\t{s.seconds:.3f}\t{','.join(s.relations)}",
              file=sys.stderr)
    print(f"total\t{sum(s.iterations for s in stats)}\t{sum(s.derived for s in stats)}"
          f"\t{seconds:.3f}", file=sys.stderr)


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


# -- translate, bench ----------------------------------------------------------------------------


def _translate(args) -> int:
    from herbrand.translators.pipeline import explain_program

    program = parse(Path(args.program))
    if args.magic is not None:
        sys.stdout.write(query_rewrite(program, args.magic).explain())
    else:
        sys.stdout.write(explain_program(program))
    return 0


def _query(args) -> int:
    """``query PROG GOAL``: the matching rows, sorted and tab-separated, on stdout; their
    count on stderr (after the rewrite, with --explain-plan)."""
    program = parse(Path(args.program))
    if args.explain_plan:
        if args.no_magic:
            raise UsageError("--explain-plan does not go with --no-magic (nothing is rewritten)")
        sys.stderr.write(query_rewrite(program, args.goal).explain())
    _check_paths(program, args.facts, "-")
    answer = query(program, args.goal, facts_dir=args.facts, evaluator=args.evaluator,
                   index=args.index, magic=not args.no_magic)
    (name,) = answer
    rows = sorted(answer.decoded_rows(name), key=io.row_sort_key)
    sys.stdout.writelines("\t".join(map(str, row)) + "\n" for row in rows)
    print(plural(len(rows), "answer"), file=sys.stderr)
    return 0


def _explain(args) -> int:
    """``explain``: the proof (status 0) or the why-not (NOT_DERIVED_STATUS) on stdout."""
    from herbrand.api import explain

    if args.max_depth is not None and args.max_depth < 0:
        raise UsageError(f"--max-depth {args.max_depth}: expected a number of levels >= 0")
    program = parse(Path(args.program))
    _check_paths(program, args.facts, "-")
    answer = explain(program, args.goal, facts_dir=args.facts, max_depth=args.max_depth)
    if args.json:
        print(json.dumps(answer.to_dict(max_depth=args.max_depth) if answer.derived
                         else answer.to_dict(), indent=2))
    else:
        print(answer.render(max_depth=args.max_depth) if answer.derived else answer)
    return 0 if answer.derived else NOT_DERIVED_STATUS


def _bench_report(args) -> int:
    from herbrand.reports.benchmarks import write_report

    for chart in write_report(Path(args.results), args.output):
        print(f"chart: {chart}", file=sys.stderr)
    return 0


def _compare(args) -> int:
    from herbrand.comparison.command import compare_command

    return compare_command(args)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``herbrand`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except HerbrandError as error:
        print(f"herbrand: error: {str(error).splitlines()[0]}", file=sys.stderr)
    except BrokenPipeError:
        # the reader of stdout has gone: nothing more can be said there; keep the
        # interpreter's final flush from failing again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return SIGPIPE_STATUS
    except OSError as error:
        print(f"herbrand: error: {error}", file=sys.stderr)
    except MemoryError:
        print("herbrand: error: out of memory (the model does not fit in this machine's memory; "
              "a query of one goal, herbrand query, may need far less)", file=sys.stderr)
    except KeyboardInterrupt:
        print("herbrand: interrupted", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
