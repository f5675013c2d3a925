"""The built-in implementations, registered lazily by name (nothing is imported here)."""

from __future__ import annotations

from herbrand.framework.registry import BACKENDS, EVALUATORS, FIXPOINTS

EVALUATORS.register("substitution", "herbrand.evaluators.substitution:SubstitutionEvaluator")
FIXPOINTS.register("naive", "herbrand.evaluators.fixpoint:NaiveFixpoint")
FIXPOINTS.register("seminaive", "herbrand.evaluators.fixpoint:SemiNaiveFixpoint")
BACKENDS.register("local", "herbrand.evaluators.local:LocalBackend")

DEFAULT_EVALUATOR = "substitution"
DEFAULT_FIXPOINT = "seminaive"
DEFAULT_BACKEND = "local"
