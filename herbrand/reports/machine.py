"""The machine a measurement ran on, for the reports that print or store it.

``machine_description()`` is a JSON-ready dict: CPU model and count, memory, OS, Python, and
the versions of herbrand and of the libraries and tools its times depend on ("not installed"
for those missing). Cost: reading /proc/cpuinfo, importing each library named (pyspark, when
installed, takes about a second), and ``souffle --version``.
"""

from __future__ import annotations

import os
import platform
from importlib import metadata
from pathlib import Path

VERSIONED = ("herbrand", "numpy", "numba", "pyspark", "pandas", "duckdb", "clingo")


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_description() -> dict[str, object]:
    """CPU model (``cpu``), logical CPUs (``cpus``), physical memory (``memory_gb``), OS
    (``os``), Python (``python``), the versions of VERSIONED and Soufflé (``versions``)."""
    from herbrand.comparison.souffle import souffle_version

    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    versions = {name: _version(name) for name in VERSIONED}
    versions["souffle"] = souffle_version() or "not installed"
    return {"cpu": cpu_model(), "cpus": os.cpu_count(), "memory_gb": round(memory, 1),
            "os": platform.platform(), "python": platform.python_version(),
            "versions": versions}


def machine_line(description: dict[str, object]) -> str:
    """The description in one line: ``<cpu>, <n> cores, <m> GB; <os>; Python <v>``."""
    return (f"{description['cpu']}, {description['cpus']} cores, "
            f"{description['memory_gb']:.0f} GB; {description['os']}; "
            f"Python {description['python']}")
