"""A peer as a process of its own, for whole-process measurements beside ``herbrand run``:

    python peer_process.py duckdb --sql TEXT --output tc --threads 1 --input e=DIR/e.facts
    python peer_process.py clingo --asp TEXT --output tc --input e=DIR/e.facts

It reads the input relations from their tab-separated facts files itself (DuckDB's CSV reader;
for clingo, each line becomes an ASP fact), computes the program given (the SQL query returns
one count; the ASP rules are grounded and the atoms of ``--output`` counted) and prints
``<label><TAB><count>`` (``--label``, default ``--output``), as Soufflé's ``.printsize``
does, for the harness to check against herbrand's output. Run by its path, it imports only the
standard library and the peer: its start-up cost is the peer's own.
"""

from __future__ import annotations

import argparse
import sys


def clingo_count(rules: str, facts_text: str, output: str) -> int:
    """Atoms of ``output`` after grounding ``rules`` over ``facts_text``. Grounding a stratified
    positive program computes its least model, so the count equals herbrand's."""
    import clingo

    control = clingo.Control(["--warn=none"])
    control.add("base", [], facts_text + "\n" + rules)
    control.ground([("base", [])])
    return sum(1 for atom in control.symbolic_atoms if atom.symbol.name == output)


def duckdb_count_files(sql: str, inputs: dict[str, str], threads: int) -> int:
    """The single count returned by ``sql`` over tables ``<relation>(c0, c1, ...)`` of BIGINT
    loaded by DuckDB's CSV reader from tab-separated facts files (``inputs``: relation ->
    path; the arity is the first line's, 2 for an empty file)."""
    import duckdb

    connection = duckdb.connect(config={"threads": threads})
    try:
        for name, path in inputs.items():
            with open(path) as handle:
                first = handle.readline()
            arity = first.count("\t") + 1 if first.strip() else 2
            columns = ", ".join(f"'c{i}': 'BIGINT'" for i in range(arity))
            connection.execute(
                f"CREATE TABLE {name} AS SELECT * FROM read_csv(?, delim = '\t', "
                f"header = false, columns = {{{columns}}})", [str(path)])
        return connection.execute(sql).fetchone()[0]
    finally:
        connection.close()


def asp_facts_from_files(inputs: dict[str, str]) -> str:
    """ASP facts ``relation(v1,...,vk).`` from tab-separated files of numbers. O(bytes)."""
    parts = []
    for relation, path in inputs.items():
        with open(path) as handle:
            parts += [f"{relation}({line.rstrip().replace(chr(9), ',')})."
                      for line in handle if line.strip()]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="peer_process.py")
    parser.add_argument("tool", choices=("duckdb", "clingo"))
    program = parser.add_mutually_exclusive_group(required=True)
    program.add_argument("--sql", help="DuckDB: the query returning the count")
    program.add_argument("--asp", help="clingo: the rules")
    parser.add_argument("--output", required=True, help="the relation counted")
    parser.add_argument("--label", default=None, help="the name printed (default --output)")
    parser.add_argument("--input", action="append", default=[], metavar="RELATION=FILE")
    parser.add_argument("--threads", type=int, default=1, help="DuckDB's worker threads")
    args = parser.parse_args(argv)
    inputs = dict(item.split("=", 1) for item in args.input)
    if args.tool == "duckdb":
        if args.sql is None:
            parser.error("duckdb takes --sql")
        count = duckdb_count_files(args.sql, inputs, args.threads)
    else:
        if args.asp is None:
            parser.error("clingo takes --asp")
        count = clingo_count(args.asp, asp_facts_from_files(inputs), args.output)
    sys.stdout.write(f"{args.label or args.output}\t{count}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
