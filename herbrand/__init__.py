"""herbrand: a framework for Datalog materialization research.

    >>> import herbrand
    >>> db = herbrand.materialize('''
    ...     .decl edge(x: number, y: number)
    ...     .decl path(x: number, y: number)
    ...     path(x, y) :- edge(x, y).
    ...     path(x, z) :- path(x, y), edge(y, z).
    ... ''', facts={"edge": [(1, 2), (2, 3)]})
    >>> sorted(db.decoded_rows("path"))
    [(1, 2), (1, 3), (2, 3)]

Map of the package: ``framework`` (syntax, parser, analysis, storage, io, contracts, registry,
conformance suites), ``evaluators`` (substitution, fixpoints, backends), ``workloads``
(generators and loaders of benchmark data, the shared workloads by name), ``comparison``
(``herbrand compare``: configurations run as whole processes), ``reports`` (tables, charts and
COST), ``cli`` (the ``herbrand`` command).
"""

from herbrand.api import (
    compare,
    incremental,
    load_database,
    materialize,
    materialize_with_stats,
    parse,
)
from herbrand.framework.errors import HerbrandError, HerbrandSyntaxError
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Program
from herbrand.materialization import Materialization

__all__ = [
    "Database",
    "HerbrandError",
    "HerbrandSyntaxError",
    "Materialization",
    "Program",
    "Relation",
    "compare",
    "incremental",
    "load_database",
    "materialize",
    "materialize_with_stats",
    "parse",
]
__version__ = "0.1.0"
