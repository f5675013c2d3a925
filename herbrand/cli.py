"""The ``herbrand`` command: ``run`` a program as Soufflé would, ``bench report`` results.

Errors print one line (``herbrand: error: <place>: <message>``) and exit with status 1; no
traceback reaches the user for bad input.
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path

from herbrand import builtins
from herbrand.api import incremental, materialize_with_stats, parse
from herbrand.framework import io
from herbrand.framework.contracts import Backend, StratumStats
from herbrand.framework.errors import EvaluationError, HerbrandError, UpdateError
from herbrand.framework.registry import BACKENDS, EVALUATORS, FIXPOINTS, INCREMENTAL_ENGINES
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Program
from herbrand.progress import ProgressDisplay
from herbrand.updates import read_updates

SUMMARY_ROWS = 5
OUTPUT_FORMATS = ("csv", "parquet")
# options of `herbrand run` passed to the backend's constructor when given: flag -> parameter
BACKEND_OPTIONS = {"--master": "master", "--spark-conf": "conf",
                   "--checkpoint-dir": "checkpoint_dir", "--workers": "workers"}


def _run_parser(commands) -> None:
    run = commands.add_parser("run", help="materialize a program (Soufflé's -F/-D meaning)")
    run.add_argument("program", help="the Datalog program (.dl)")
    run.add_argument("-F", "--facts", default=".", help="directory of .input files (default .)")
    run.add_argument("-D", "--output", default=".",
                     help="directory for .output files, or - for stdout (default .)")
    run.add_argument("--evaluator", default=builtins.DEFAULT_EVALUATOR,
                     help=f"rule evaluator: {', '.join(EVALUATORS.names())}")
    run.add_argument("--fixpoint", default=builtins.DEFAULT_FIXPOINT,
                     help=f"fixpoint strategy: {', '.join(FIXPOINTS.names())}")
    run.add_argument("--index", default=None, help="index backing, for evaluators that take one")
    run.add_argument("--backend", default=builtins.DEFAULT_BACKEND,
                     help=f"execution backend: {', '.join(BACKENDS.names())}")
    run.add_argument("--stats", action="store_true",
                     help="print per-stratum iterations, tuples derived and time to stderr")
    run.add_argument("--summary", action="store_true",
                     help="print each output relation's size and first rows, and the time")
    run.add_argument("--no-progress", action="store_true", help="no progress display")
    run.add_argument("--workers", type=int, default=None,
                     help="threads of the parallel backend (default: the machine's cores)")
    run.add_argument("--master", default=None,
                     help="master URL of a distributed backend (spark: default local[*])")
    run.add_argument("--spark-conf", action="append", default=[], metavar="KEY=VALUE",
                     help="a Spark configuration setting (repeatable)")
    run.add_argument("--checkpoint-dir", default=None,
                     help="spark: reliable checkpoints in this directory (default: local ones)")
    run.add_argument("--output-format", choices=OUTPUT_FORMATS, default="csv",
                     help="format of the .output relations (parquet: distributed backends)")
    run.add_argument("--engine", default=None,
                     help=f"materialize with an incremental engine: "
                          f"{', '.join(INCREMENTAL_ENGINES.names())}")
    run.add_argument("--updates", default=None,
                     help="apply the epochs of this updates file (+rel/-rel lines, 'commit' "
                          "between epochs) with --engine; prints one line per epoch to stderr")
    run.set_defaults(handler=_run)


def _translate_parser(commands) -> None:
    translate = commands.add_parser(
        "translate", help="print the relational-algebra plan of every rule and its delta variants"
    )
    translate.add_argument("program", help="the Datalog program (.dl)")
    translate.set_defaults(handler=_translate)


def _bench_parser(commands) -> None:
    bench = commands.add_parser("bench", help="benchmark tools")
    bench_commands = bench.add_subparsers(dest="bench_command", required=True)
    report = bench_commands.add_parser("report", help="markdown table of pytest-benchmark JSON")
    report.add_argument("results", help="the JSON written by pytest --benchmark-json")
    report.add_argument("-o", "--output", default="-", help="markdown file (default stdout)")
    report.set_defaults(handler=_bench_report)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="herbrand", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    _run_parser(commands)
    _translate_parser(commands)
    _bench_parser(commands)
    return parser


def _run(args) -> int:
    program = parse(Path(args.program))
    if args.engine is not None or args.updates is not None:
        return _run_incremental(args, program)
    backend = _backend(args)
    if backend.tags.reads_files:
        return _run_distributed(args, program, backend)
    if args.output_format != "csv":
        raise EvaluationError(f"--output-format {args.output_format} needs a backend that "
                              "writes files itself (spark)")
    progress = None if args.no_progress else ProgressDisplay()
    start = time.perf_counter()
    try:
        database, stats = materialize_with_stats(
            program, facts_dir=args.facts, evaluator=args.evaluator, fixpoint=args.fixpoint,
            index=args.index, backend=backend, observer=progress,
        )
    finally:
        if progress is not None:
            progress.close()
    seconds = time.perf_counter() - start
    io.write_outputs(program, database, args.output)
    if args.stats:
        _print_stats(stats, seconds)
    if args.summary:
        _print_summary(program, database, seconds)
    return 0


def _backend(args) -> Backend:
    """The ``--backend`` built with the BACKEND_OPTIONS given; EvaluationError naming a flag
    the backend does not take."""
    given = {"--master": args.master, "--checkpoint-dir": args.checkpoint_dir,
             "--spark-conf": dict(map(_setting, args.spark_conf)) or None,
             "--workers": args.workers}
    cls = BACKENDS.get(args.backend)
    accepted = inspect.signature(cls).parameters
    options = {}
    for flag, value in given.items():
        if value is None:
            continue
        if BACKEND_OPTIONS[flag] not in accepted:
            raise EvaluationError(f"backend {args.backend!r} does not take {flag}")
        options[BACKEND_OPTIONS[flag]] = value
    return cls(**options)


def _setting(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise EvaluationError(f"--spark-conf {text!r}: expected KEY=VALUE")
    return key, value


def _run_distributed(args, program: Program, backend: Backend) -> int:
    """``run`` on a backend that reads the ``.input`` files and writes the ``.output``
    relations itself (``materialize_files``), so no relation passes through this process."""
    if args.summary:
        raise EvaluationError("--summary needs a local backend (a distributed backend writes "
                              "its outputs where it runs)")
    progress = None if args.no_progress else ProgressDisplay()
    start = time.perf_counter()
    try:
        stats = backend.materialize_files(program, args.facts, args.output,
                                          output_format=args.output_format, observer=progress)
    finally:
        if progress is not None:
            progress.close()
    if args.stats:
        _print_stats(stats, time.perf_counter() - start)
    return 0


def _run_incremental(args, program: Program) -> int:
    """``run --engine NAME [--updates FILE]``: bootstrap, apply each epoch (one stderr line
    each: epoch, facts given, tuples added and removed, seconds, strategy), write the outputs."""
    if args.engine is None:
        raise UpdateError("--updates needs --engine NAME (an incremental engine: "
                          f"{', '.join(INCREMENTAL_ENGINES.names())})")
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
    if args.summary:
        _print_summary(program, materialization.database, seconds)
    return 0


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
        print(f"{name}: {len(rows):,} tuples")
        for row in rows[:SUMMARY_ROWS]:
            print("    " + "\t".join(map(str, row)))
        if len(rows) > SUMMARY_ROWS:
            print("    ...")
    print(f"materialized in {seconds:.3f}s")


def _translate(args) -> int:
    from herbrand.translators.pipeline import explain_program

    sys.stdout.write(explain_program(parse(Path(args.program))))
    return 0


def _bench_report(args) -> int:
    from herbrand.bench_report import write_report

    write_report(Path(args.results), args.output)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``herbrand`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except HerbrandError as error:
        print(f"herbrand: error: {str(error).splitlines()[0]}", file=sys.stderr)
    except OSError as error:
        print(f"herbrand: error: {error}", file=sys.stderr)
    except KeyboardInterrupt:
        print("herbrand: interrupted", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    sys.exit(main())
