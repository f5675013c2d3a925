"""In-process ("warm") seconds of a herbrand configuration, for comparison with the whole
process:

    python -m herbrand.comparison.warm PROGRAM FACTS [--evaluator E] [--index I] [--backend B]
        [--workers N] [--master URL] [--repeat 3]

Parses the program once, calls ``herbrand.materialize(program, facts_dir=FACTS, ...)`` once
untimed (imports, numba's cache, the page cache) and then ``--repeat`` times timed: reading the
facts and computing the model, not writing the outputs. Prints ``{"seconds": [...],
"sizes": {relation: rows}}`` as JSON on stdout. The options are ``herbrand run``'s. Run it as
a child process (``measure.measure_warm`` guards it with the same timeout and memory limit as a whole run), so one configuration's
memory never stays in another's measurement.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m herbrand.comparison.warm")
    parser.add_argument("program")
    parser.add_argument("facts")
    parser.add_argument("--evaluator", default=None)
    parser.add_argument("--index", default=None)
    parser.add_argument("--backend", default="local")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--master", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import herbrand
    from herbrand.framework.registry import BACKENDS

    program = herbrand.parse(Path(args.program))
    backend = args.backend
    if args.workers is not None:
        backend = BACKENDS.get(args.backend)(workers=args.workers)

    def run():
        return herbrand.materialize(program, facts_dir=args.facts, evaluator=args.evaluator,
                                    index=args.index, backend=backend, master=args.master)

    database = run()
    seconds = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        database = run()
        seconds.append(time.perf_counter() - start)
    sizes = {name: len(database[name]) for name in database}
    json.dump({"seconds": seconds, "sizes": sizes}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
