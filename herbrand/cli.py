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
import json
import os
import sys
from pathlib import Path

from herbrand import builtins
from herbrand.api import parse, query, query_rewrite
from herbrand.framework import io
from herbrand.framework.errors import HerbrandError, UsageError
from herbrand.framework.registry import EVALUATORS, INDEXES
from herbrand.progress import plural
from herbrand.run_command import add_run_parser, check_paths, registry_names

SIGPIPE_STATUS = 141
NOT_DERIVED_STATUS = 3  # `herbrand explain` of a tuple not in the model (errors are 1, usage 2)


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
                     help=f"rule evaluator: {registry_names(EVALUATORS)} "
                          f"(default {builtins.DEFAULT_EVALUATOR}; with --index, "
                          f"{builtins.INDEXED_EVALUATOR})")
    ask.add_argument("--index", default=None, help=f"index backing: {registry_names(INDEXES)}")
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
                         help=f"comma-separated rule evaluators: {registry_names(EVALUATORS)} "
                              f"(default {builtins.DEFAULT_EVALUATOR}, and "
                              f"{builtins.INDEXED_EVALUATOR} with --index)")
    compare.add_argument("--index", default=None,
                         help=f"comma-separated index backings of the evaluators that take "
                              f"one, or all: {registry_names(INDEXES)}")
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
    add_run_parser(commands)
    _translate_parser(commands)
    _query_parser(commands)
    _explain_parser(commands)
    _bench_parser(commands)
    _compare_parser(commands)
    return parser


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
    check_paths(program, args.facts, "-")
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
    check_paths(program, args.facts, "-")
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
