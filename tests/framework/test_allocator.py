"""The allocator policy: arrays of a few MB freed and allocated again fault in no new pages."""

from __future__ import annotations

import resource
import sys

import numpy as np
import pytest

from herbrand.framework.allocator import retain_freed_memory


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_freed_arrays_are_reused_without_page_faults():
    assert retain_freed_memory() and retain_freed_memory()  # set once, stays in force

    def churn():
        for _ in range(10):  # two 4 MB arrays at once, as an update's copies
            first, second = np.ones(1 << 19), np.ones(1 << 19)
            del first, second

    churn()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    churn()
    # without the policy each round maps fresh pages: about 2,000 faults per round
    assert resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before < 200
