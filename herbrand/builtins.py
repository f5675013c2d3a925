"""The built-in implementations, registered lazily by name (nothing is imported here)."""

from __future__ import annotations

from herbrand.framework.registry import (
    BACKENDS,
    EVALUATORS,
    FIXPOINTS,
    INCREMENTAL_ENGINES,
    INDEXES,
)

EVALUATORS.register("substitution", "herbrand.evaluators.substitution:SubstitutionEvaluator")
EVALUATORS.register("relational", "herbrand.evaluators.relational:RelationalEvaluator")
EVALUATORS.register("native", "herbrand.evaluators.native.evaluator:NativeEvaluator")
FIXPOINTS.register("naive", "herbrand.evaluators.fixpoint:NaiveFixpoint")
FIXPOINTS.register("seminaive", "herbrand.evaluators.fixpoint:SemiNaiveFixpoint")
BACKENDS.register("local", "herbrand.evaluators.local:LocalBackend")
BACKENDS.register("spark", "herbrand.spark_backend.backend:SparkBackend", extra="spark")
BACKENDS.register("parallel", "herbrand.evaluators.parallel:ParallelBackend")
INDEXES.register("hash", "herbrand.indexes.hash:HashIndex")
INDEXES.register("btree", "herbrand.indexes.btree:BTreeIndex")
INDEXES.register("sorted_vector", "herbrand.indexes.sorted_vector:SortedVectorIndex")
INDEXES.register("persistent", "herbrand.indexes.persistent:PersistentIndex")
INDEXES.register("spine", "herbrand.indexes.spine:SpineIndex")
INDEXES.register("open_hash", "herbrand.indexes.open_hash:OpenHashIndex")
INCREMENTAL_ENGINES.register(
    "recompute", "herbrand.evaluators.incremental.recompute:RecomputeEngine")
INCREMENTAL_ENGINES.register("dred", "herbrand.evaluators.incremental.dred:DRedEngine")
INCREMENTAL_ENGINES.register("bf", "herbrand.evaluators.incremental.bf:BFEngine")
INCREMENTAL_ENGINES.register(
    "counting", "herbrand.evaluators.incremental.counting:CountingEngine")
INCREMENTAL_ENGINES.register("elastic", "herbrand.evaluators.incremental.elastic:ElasticEngine")
INCREMENTAL_ENGINES.register("dbsp", "herbrand.evaluators.incremental.dbsp.engine:DbspEngine")

DEFAULT_EVALUATOR = "native"
INDEXED_EVALUATOR = "relational"  # the default when an index is chosen: it takes any backing
DEFAULT_FIXPOINT = "seminaive"
DEFAULT_BACKEND = "local"
DEFAULT_INCREMENTAL_ENGINE = "dred"
