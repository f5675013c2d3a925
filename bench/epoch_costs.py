"""The elastic paper's 13 epochs, engines interleaved in one process, as a timeline table.

    .venv/bin/python -m bench.epoch_costs --workloads tc-graph1000,rdfs-lubm1 \\
        --engines recompute,elastic --rounds 3 --clock cpu

Per workload (``bench.incremental_workloads``'s, its changed facts in their fixed random order;
the epochs of ``incremental_workloads.epochs``: the initial 90%, six small updates alternating
delete and insert, one large insert, four small, one large delete): one warm-up run of every engine, then
``rounds`` rounds running each engine in turn (so a slow spell of a shared machine hits all of
them); each engine's run with the least total is printed, one line per engine with its total,
its ratio to the first engine's and each epoch's milliseconds tagged with the strategy's
initial (b bootstrap, u update, s switched-to-bootstrap, r recompute, ...). ``--clock cpu``
times the process's CPU time (steadier on a shared machine). pytest-benchmark's
``bench_incremental.test_thirteen_epochs`` times one run per engine, without the warm-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import herbrand
from bench.incremental_workloads import IncrementalWorkload, epochs, incremental_workload
from bench.update_costs import CLOCKS, engine_parser


@dataclass(frozen=True)
class EpochRun:
    """One engine's run of the 13 epochs: seconds and strategy of each."""

    engine: str
    seconds: tuple[float, ...]
    strategies: tuple[str, ...]

    @property
    def total(self) -> float:
        return sum(self.seconds)


def run_epochs(workload: IncrementalWorkload, engine: str, clock: str = "wall",
               facts: int | None = None) -> EpochRun:
    """The 13 epochs of ``workload`` (cut to its first ``facts`` facts when given:
    ``IncrementalWorkload.cut``) on ``engine``, timed by ``clock`` (a name of
    ``update_costs.CLOCKS``)."""
    now = CLOCKS[clock]
    workload = workload.cut(facts)
    initial, updates = epochs(workload.changed)
    initial = workload.facts(initial)
    updates = [(kind, batch.facts()) for kind, batch in updates]
    start = now()
    materialization = herbrand.incremental(workload.program, facts=initial, engine=engine)
    seconds, strategies = [now() - start], [materialization.stats().strategy]
    for kind, batch in updates:
        start = now()
        materialization.update(**{kind: batch})
        seconds.append(now() - start)
        strategies.append(materialization.stats().strategy)
    return EpochRun(engine, tuple(seconds), tuple(strategies))


def measure(workload: IncrementalWorkload, engines: Sequence[str], rounds: int = 3, clock: str = "wall",
            facts: int | None = None) -> list[EpochRun]:
    """Each engine's fastest run (least total) of ``rounds`` interleaved rounds, after one
    warm-up run each. Cost: (rounds + 1) runs of the epochs per engine."""
    for engine in engines:
        run_epochs(workload, engine, clock, facts)
    best: dict[str, EpochRun] = {}
    for _ in range(rounds):
        for engine in engines:
            run = run_epochs(workload, engine, clock, facts)
            if engine not in best or run.total < best[engine].total:
                best[engine] = run
    return [best[engine] for engine in engines]


def render(name: str, runs: Sequence[EpochRun]) -> str:
    """The lines printed for one workload: the first engine is the reference of the ratios."""
    lines = [f"{name}: 13 epochs (ratio to {runs[0].engine})"]
    for run in runs:
        epochs = " ".join(f"{s * 1e3:.1f}{strategy[0]}"
                          for s, strategy in zip(run.seconds, run.strategies, strict=True))
        lines.append(f"  {run.engine:9s} total {run.total:.4f} s "
                     f"({run.total / runs[0].total:.2f}x)  {epochs}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = engine_parser("python -m bench.epoch_costs", __doc__,
                           "tc-graph1000,tc-graph10000,rdfs-lubm1", "recompute,elastic")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    for name in args.workloads.split(","):
        runs = measure(incremental_workload(name), args.engines.split(","), args.rounds,
                       args.clock, args.facts)
        print(render(name, runs), flush=True)


if __name__ == "__main__":
    main()
