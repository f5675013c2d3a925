"""Benchmark data: deterministic generators (``generators``) and loaders of the real workloads
in ``shared/workloads`` (``shared``).

    >>> from herbrand.workloads import chain
    >>> chain(2).tolist()
    [[0, 1], [1, 2]]
"""

from herbrand.workloads.generators import (
    ANDERSEN_PROGRAM,
    andersen,
    chain,
    gnm,
    gnp,
    random_tree,
    rdfs_ontology,
    rmat,
)
from herbrand.workloads.shared import (
    SouffleCase,
    crdt_facts_dir,
    crdt_program,
    dyre_edges,
    dyre_program,
    lubm1_triples,
    souffle_cases,
    workload_path,
    workloads_root,
    write_facts_dir,
)

__all__ = [
    "ANDERSEN_PROGRAM",
    "SouffleCase",
    "andersen",
    "crdt_facts_dir",
    "crdt_program",
    "chain",
    "dyre_edges",
    "dyre_program",
    "gnm",
    "gnp",
    "lubm1_triples",
    "random_tree",
    "rdfs_ontology",
    "rmat",
    "souffle_cases",
    "workload_path",
    "workloads_root",
    "write_facts_dir",
]
