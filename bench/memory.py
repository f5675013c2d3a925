"""Peak memory of a call, measured by tracemalloc (numpy reports its buffers to it).

Run apart from the timed rounds: tracing slows Python down. Counts what Python and numpy
allocate, which is all of herbrand's data; native allocations of peers (clingo, DuckDB) are not
seen, so peers get no memory figure.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable


def peak_megabytes(call: Callable[[], object]) -> float:
    """The peak traced memory, in MB, while ``call()`` runs."""
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return round(peak / 2**20, 1)
