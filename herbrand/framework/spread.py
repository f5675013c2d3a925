"""``Spread``: work over a range of rows cut into one part per thread of a pool, the parts run
at once. On the parallel backend the native store grows and copies relations this way, and the
writer packs the keys it sorts: numpy's copies, fills and arithmetic and the native kernels
release the GIL, and first touching new memory costs page faults that threads take at once,
so these steps do not stay serial beside the threads' work."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from itertools import pairwise

import numpy as np


class Spread:
    """``workers`` threads of ``pool`` to cut work over a range among."""

    MIN_LENGTH = 1 << 16  # below this, one part in the calling thread

    def __init__(self, pool: Executor, workers: int) -> None:
        self.pool, self.workers = pool, workers

    def run(self, length: int, work: Callable[[int, int], object]) -> None:
        """``work(start, stop)`` for ``workers`` consecutive parts of ``range(length)``, at
        once; returns when every part is done (raising the first error)."""
        bounds = np.linspace(0, length, self.workers + 1).astype(np.int64).tolist()
        for task in [self.pool.submit(work, start, stop) for start, stop in pairwise(bounds)]:
            task.result()

    @staticmethod
    def over(spread: Spread | None, length: int, work: Callable[[int, int], object]) -> None:
        """``spread.run(length, work)``, or ``work(0, length)`` here when ``spread`` is None
        or the range is short."""
        if spread is None or length < Spread.MIN_LENGTH:
            work(0, length)
        else:
            spread.run(length, work)
