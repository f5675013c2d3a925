"""A comparison: every configuration run on one program, checked to agree, with COST.

``run_comparison`` measures each configuration in turn: for a herbrand one, first its warm
in-process seconds in one child process (which also warms the page cache and the bytecode),
then ``repeat`` fresh ``herbrand run`` processes; for a peer, its processes only. Every run's
outputs are checked against the expected sizes and against the reference: the first
configuration that finishes with every output relation (herbrand's, or Soufflé's). One that
cannot run here, fails, times out or disagrees is marked and the others go on. The result is a
``Comparison``, an immutable value the reports read (``herbrand.reports.comparison``).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from herbrand.comparison.configurations import Configuration
from herbrand.comparison.measure import Measurement, measure, measure_warm
from herbrand.comparison.processes import DEFAULT_TIMEOUT, default_memory_limit_mb
from herbrand.evaluators.native.compiled import cache_directory
from herbrand.framework.errors import HerbrandError
from herbrand.reports.cost import FamilyCost, Timing, family_costs
from herbrand.workloads.catalogue import Prepared


class ResultsDisagreeError(HerbrandError):
    """Configurations of one comparison computed different results; the message names the
    first one, the relation and the sizes. ``table``: the comparison's table when known."""

    def __init__(self, message: str, table: object = None):
        super().__init__(message)
        self.table = table


@dataclass(frozen=True)
class Comparison:
    """``measurements[i]`` is ``configurations[i]`` measured on ``target``; ``reference``: the
    name of the configuration the others were checked against (None: none finished);
    ``skipped``: the combinations of the grid left out, one line each; ``seconds``: the wall
    time of the whole comparison."""

    target: Prepared
    configurations: tuple[Configuration, ...]
    measurements: tuple[Measurement, ...]
    reference: str | None
    skipped: tuple[str, ...] = ()
    repeat: int = 3
    seconds: float = 0.0

    def tuples(self) -> int | None:
        """The size of the headline relation (all outputs together when none), as the
        reference computed it."""
        reference = next((m for m in self.measurements if m.configuration == self.reference),
                         None)
        return None if reference is None else reference.tuples(self.target.headline)

    def timings(self) -> list[Timing]:
        """The configurations that finished, for COST (those with a known core count)."""
        return [Timing(m.configuration, c.family, c.cores, m.median)
                for c, m in zip(self.configurations, self.measurements, strict=True)
                if m.ok and c.cores is not None]

    def costs(self) -> list[FamilyCost]:
        return family_costs(self.timings())

    def unavailable(self) -> list[str]:
        """One line per reason some configurations could not run here, naming them."""
        reasons: dict[str, list[str]] = {}
        for m in self.measurements:
            if m.status == "unavailable":
                reasons.setdefault(m.detail, []).append(m.configuration)
        return [f"not run: {', '.join(names)}: {why}" for why, names in reasons.items()]

    def disagreements(self) -> list[Measurement]:
        return [m for m in self.measurements if m.status == "mismatch"]

    def check_agreement(self, table: object = None) -> None:
        """Raise ResultsDisagreeError naming the first configuration whose result differs."""
        wrong = self.disagreements()
        if wrong:
            others = f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""
            raise ResultsDisagreeError(
                f"{self.target.name}: {wrong[0].configuration} disagrees with "
                f"{self.reference}: {wrong[0].detail}{others}", table)


def run_comparison(
    target: Prepared,
    configurations: Sequence[Configuration],
    *,
    repeat: int = 3,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit_mb: float | None = None,
    skipped: Sequence[str] = (),
    cache_root: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> Comparison:
    """Measure every configuration on ``target`` (see the module's docstring): ``repeat``
    whole processes each, stopped after ``timeout`` seconds or past ``memory_limit_mb`` (default
    half the machine's memory). Soufflé's binaries are cached under ``cache_root`` (default
    herbrand's cache directory). ``log`` gets one line per configuration as it finishes. Cost:
    the runs' own, plus about 0.1 s of process start-up per run."""
    cache_root = Path(cache_root) if cache_root is not None else cache_directory()
    memory = memory_limit_mb if memory_limit_mb is not None else default_memory_limit_mb()
    start = time.perf_counter()
    measurements: list[Measurement] = []
    reference = reference_name = None
    with tempfile.TemporaryDirectory(prefix="herbrand-compare-") as scratch:
        for number, configuration in enumerate(configurations, start=1):
            warm = None
            if configuration.kind == "herbrand":
                warm = measure_warm(configuration, target, scratch=Path(scratch) / "warm",
                                    repeat=1, timeout=timeout, memory_limit_mb=memory)
            result = measure(configuration, target, scratch=Path(scratch) / "run",
                             cache_root=cache_root, repeat=repeat, warmup=0, timeout=timeout,
                             memory_limit_mb=memory, reference=reference)
            result.warm = warm
            measurements.append(result)
            if reference is None and result.ok and configuration.complete:
                reference, reference_name = result.outputs, result.configuration
            if log is not None:
                log(f"[{number}/{len(configurations)}] {_progress_line(result)}")
    comparison = Comparison(target, tuple(configurations), tuple(measurements), reference_name,
                            tuple(skipped), repeat, time.perf_counter() - start)
    if log is not None:
        statuses: dict[str, int] = {}
        for m in measurements:
            statuses[m.status] = statuses.get(m.status, 0) + 1
        log(f"compared {len(measurements)} configurations of {target.name} in "
            f"{comparison.seconds:.1f} s: "
            + ", ".join(f"{count} {status}" for status, count in statuses.items()))
    return comparison


def _progress_line(m: Measurement) -> str:
    if not m.ok:
        return f"{m.configuration}: {m.status}: {m.detail}"
    warm = f", warm {min(m.warm):.3f} s" if m.warm else ""
    return (f"{m.configuration}: {m.median:.3f} s (median of {len(m.seconds)}), "
            f"{m.rss:,.0f} MB{warm}")
