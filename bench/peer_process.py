"""A peer as a process of its own, for whole-process measurements beside ``herbrand run``:

    python -m bench.peer_process duckdb --shape tc --output tc --threads 1 --input e=DIR/e.facts
    python -m bench.peer_process clingo --shape tc --output tc --input e=DIR/e.facts

It reads the input relations from their tab-separated facts files itself (DuckDB's CSV reader;
for clingo, each line becomes an ASP fact), computes the shape's program
(``programs.PEER_PROGRAMS``) and prints ``<output><TAB><count>``, as Soufflé's ``.printsize``
does, for the harness to check against herbrand's output. Only the standard library and the
peer are imported: its start-up cost is the peer's own.
"""

from __future__ import annotations

import argparse
import sys

from .peers import clingo_count, duckdb_count_files
from .programs import PEER_PROGRAMS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peer_process")
    parser.add_argument("tool", choices=("duckdb", "clingo"))
    parser.add_argument("--shape", required=True, choices=sorted(PEER_PROGRAMS))
    parser.add_argument("--output", required=True, help="the relation counted")
    parser.add_argument("--input", action="append", default=[], metavar="RELATION=FILE")
    parser.add_argument("--threads", type=int, default=1, help="DuckDB's worker threads")
    args = parser.parse_args(argv)
    inputs = dict(item.split("=", 1) for item in args.input)
    asp, sql = PEER_PROGRAMS[args.shape]
    if args.tool == "duckdb":
        if sql is None:
            parser.error(f"no SQL for shape {args.shape}")
        count = duckdb_count_files(sql, inputs, args.threads)
    else:
        if asp is None:
            parser.error(f"no ASP for shape {args.shape}")
        count = clingo_count(asp, asp_facts_from_files(inputs), args.output)
    sys.stdout.write(f"{args.output}\t{count}\n")
    return 0


def asp_facts_from_files(inputs: dict[str, str]) -> str:
    """ASP facts ``relation(v1,...,vk).`` from tab-separated files of numbers. O(bytes)."""
    parts = []
    for relation, path in inputs.items():
        with open(path) as handle:
            parts += [f"{relation}({line.rstrip().replace(chr(9), ',')})."
                      for line in handle if line.strip()]
    return "\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
