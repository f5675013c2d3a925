"""The evaluator configurations every shared conformance suite runs against.

Each is a set of ``herbrand.materialize`` keyword arguments with a readable id. Later engines add
their entries here, so the golden cases and property tests cover them without new test code.
"""

from __future__ import annotations

import pytest

REFERENCE = {"evaluator": "substitution", "fixpoint": "naive"}

CONFIGURATIONS = {
    "substitution-seminaive": {"evaluator": "substitution", "fixpoint": "seminaive"},
    **{
        f"relational-{index}-seminaive": {
            "evaluator": "relational", "index": index, "fixpoint": "seminaive",
        }
        for index in ("hash", "btree", "sorted_vector", "persistent", "spine")
    },
}


def configuration_params():
    """pytest params over CONFIGURATIONS, with their names as ids."""
    return [pytest.param(kwargs, id=name) for name, kwargs in CONFIGURATIONS.items()]
