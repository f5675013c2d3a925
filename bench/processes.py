"""The columns of the whole-process benchmarks: herbrand as users meet it (``herbrand run PROG
-F FACTS -D OUT``), beside Soufflé (compiled and interpreted), DuckDB and clingo.

Each column is a named ``herbrand.comparison`` configuration with the label the tables print;
``herbrand.comparison.measure`` runs it (whole processes, their outputs checked) and
``herbrand.workloads.catalogue`` prepares the workloads' files, here under ``cache_root()``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from herbrand.comparison.configurations import Configuration

CACHE_ENV = "HERBRAND_BENCH_CACHE"
DEFAULT_CACHE = Path(__file__).resolve().parent / ".cache"


def cache_root() -> Path:
    """``$HERBRAND_BENCH_CACHE``, else ``bench/.cache`` (ignored by git): the prepared
    workloads, Soufflé's binaries and the runs' scratch folders."""
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE)


@dataclass(frozen=True)
class Column:
    """A column of the comparison: ``name`` (in ids and JSON), ``label`` (in tables) and the
    ``configuration`` it runs; ``peer``: a system herbrand is compared with (the report's
    ratio columns)."""

    name: str
    label: str
    configuration: Configuration

    @property
    def kind(self) -> str:
        return self.configuration.kind

    @property
    def complete(self) -> bool:
        return self.configuration.complete

    @property
    def peer(self) -> bool:
        return self.configuration.peer is not None


CONFIGURATIONS: dict[str, Column] = {c.name: c for c in (
    Column("herbrand", "herbrand default", Configuration()),
    Column("herbrand-relational", "batch (relational)", Configuration("relational")),
    Column("herbrand-parallel2", "parallel-2", Configuration(backend="parallel", workers=2)),
    Column("herbrand-native", "native", Configuration("native")),
    Column("souffle-compiled", "Soufflé compiled", Configuration(peer="souffle")),
    Column("souffle-interpreted", "Soufflé interpreted",
           Configuration(peer="souffle-interpreted")),
    Column("duckdb", "DuckDB (1 thread)", Configuration(peer="duckdb")),
    Column("duckdb-2thread", "DuckDB (2 threads)", Configuration(peer="duckdb", threads=2)),
    Column("clingo", "clingo", Configuration(peer="clingo")),
)}
# The columns of the side-by-side table unless chosen otherwise (duckdb-2thread on request).
DEFAULT_CONFIGURATIONS = ("herbrand", "herbrand-relational", "herbrand-parallel2",
                          "herbrand-native", "souffle-compiled", "souffle-interpreted",
                          "duckdb", "clingo")
REFERENCE = "herbrand"
