"""``Spread``: work over a range of rows cut into one part per thread of a pool, the parts run
at once. On the parallel backend the native store grows and copies relations this way, and the
writer packs the keys it sorts: numpy's copies, fills and arithmetic and the native kernels
release the GIL, and first touching new memory costs page faults that threads take at once,
so these steps do not stay serial beside the threads' work."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from contextlib import suppress
from functools import partial
from itertools import pairwise

import numpy as np


class Spread:
    """``workers`` threads of ``pool`` to cut work over a range among."""

    MIN_LENGTH = 1 << 16  # below this, one part in the calling thread

    def __init__(self, pool: Executor, workers: int) -> None:
        self.pool, self.workers = pool, workers

    def run(self, length: int, work: Callable[[int, int], object]) -> None:
        """``work(start, stop)`` for ``workers`` consecutive parts of ``range(length)``, at
        once, the first part in the calling thread (it runs at once, where a pool thread
        must wake up first); returns when every part is done (raising the first error)."""
        first, *rest = pairwise(np.linspace(0, length, self.workers + 1).astype(np.int64)
                                .tolist())
        Spread.together(self.pool, [partial(work, *part) for part in rest], partial(work, *first))

    @staticmethod
    def together(pool: Executor, others: list[Callable[[], object]],
                 here: Callable[[], object]) -> list[object]:
        """``here()`` in the calling thread while ``others`` run as tasks of ``pool``; once
        all are done, their results, ``here``'s first (raising the first error: ``here``'s,
        else the others' in order)."""
        tasks = [pool.submit(other) for other in others]
        try:
            result = here()
        except BaseException:
            for task in tasks:  # done before the error goes up: they may use what it frees
                with suppress(Exception):
                    task.result()
            raise
        return [result] + [task.result() for task in tasks]

    @staticmethod
    def over(spread: Spread | None, length: int, work: Callable[[int, int], object]) -> None:
        """``spread.run(length, work)``, or ``work(0, length)`` here when ``spread`` is None
        or the range is short."""
        if spread is None or length < Spread.MIN_LENGTH:
            work(0, length)
        else:
            spread.run(length, work)
