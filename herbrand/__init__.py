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
conformance suites), ``evaluators`` (substitution, fixpoints, backends), ``translators``
(plans, and program rewrites such as magic sets for ``query``), ``provenance`` (``explain``:
proofs of tuples, and why a tuple is not derived), ``workloads`` (generators and loaders of
benchmark data, the shared workloads by name), ``comparison`` (``herbrand compare``:
configurations run as whole processes), ``reports`` (tables, charts and COST), ``cli`` (the
``herbrand`` command).
"""

from herbrand.api import (
    compare,
    explain,
    incremental,
    load_database,
    materialize,
    materialize_with_stats,
    parse,
    query,
    query_rewrite,
)
from herbrand.framework.errors import HerbrandError, HerbrandSyntaxError
from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Program
from herbrand.materialization import Materialization
from herbrand.provenance.proofs import NotDerived, Proof

__all__ = [
    "Database",
    "HerbrandError",
    "HerbrandSyntaxError",
    "Materialization",
    "NotDerived",
    "Program",
    "Proof",
    "Relation",
    "compare",
    "explain",
    "incremental",
    "load_database",
    "materialize",
    "materialize_with_stats",
    "parse",
    "query",
    "query_rewrite",
]
__version__ = "0.1.0"
