"""The evaluator configurations every shared conformance suite runs against.

Each is a set of ``herbrand.materialize`` keyword arguments with a readable id. Later engines add
their entries here, so the golden cases and property tests cover them without new test code.
"""

from __future__ import annotations

import pytest

from herbrand.evaluators.parallel import ParallelBackend
from herbrand.framework.registry import INDEXES as INDEX_REGISTRY

REFERENCE = {"evaluator": "substitution", "fixpoint": "naive"}
INDEXES = ("hash", "btree", "sorted_vector", "persistent", "spine")
NATIVE_INDEXES = ("sorted_vector", "spine", "open_hash", "hash")  # three views, one batch

CONFIGURATIONS = {
    "substitution-seminaive": {"evaluator": "substitution", "fixpoint": "seminaive"},
    **{
        f"relational-{index}-seminaive": {
            "evaluator": "relational", "index": index, "fixpoint": "seminaive",
        }
        for index in INDEXES
    },
    # min_rows=0: every iteration is cut into slices, however small, so the tests exercise the
    # split and the merge; two workers as on the CI machine
    **{
        f"relational-{index}-seminaive-parallel": {
            "evaluator": "relational", "index": index, "fixpoint": "seminaive",
            "backend": ParallelBackend(workers=2, min_rows=0),
        }
        for index in INDEXES
    },
    "native-seminaive": {"evaluator": "native", "fixpoint": "seminaive"},
    "native-naive": {"evaluator": "native", "fixpoint": "naive"},
    "native-seminaive-parallel": {
        "evaluator": "native", "fixpoint": "seminaive",
        "backend": ParallelBackend(workers=2, min_rows=0),
    },
    # native with an index: the kernels probe the views of the tagged backings; an untagged
    # one (hash) makes it the batch executor over that index
    **{
        f"native-{index}-seminaive": {"evaluator": "native", "index": index,
                                      "fixpoint": "seminaive"}
        for index in NATIVE_INDEXES
    },
    **{
        f"native-{index}-seminaive-parallel": {
            "evaluator": "native", "index": index, "fixpoint": "seminaive",
            "backend": ParallelBackend(workers=2, min_rows=0),
        }
        for index in NATIVE_INDEXES
    },
    "substitution-seminaive-parallel": {
        "evaluator": "substitution", "fixpoint": "seminaive",
        "backend": ParallelBackend(workers=3, min_rows=0),
    },
}


def runs_batch(configuration: dict) -> bool:
    """Whether a configuration runs the batch executor: relational, or native over an index
    its kernels cannot read (``IndexTags.native`` unset)."""
    index = configuration.get("index")
    return configuration["evaluator"] == "relational" or (
        configuration["evaluator"] == "native" and index is not None
        and not INDEX_REGISTRY.get(index).tags.native)


def configuration_params():
    """pytest params over CONFIGURATIONS, with their names as ids."""
    return [pytest.param(kwargs, id=name) for name, kwargs in CONFIGURATIONS.items()]
