"""Work over a range cut among threads: every index once, in consecutive parts."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from herbrand.framework.spread import Spread


@pytest.mark.parametrize(("length", "workers"), [(0, 2), (1, 3), (10, 3), (1 << 17, 2)])
def test_each_index_is_worked_on_once(length, workers):
    seen = np.zeros(length, dtype=np.int64)
    parts = []
    with ThreadPoolExecutor(workers) as pool:
        spread = Spread(pool, workers)

        def work(start, stop):
            seen[start:stop] += 1
            parts.append((start, stop, threading.current_thread().name))

        spread.run(length, work)
    assert (seen == 1).all()
    assert sorted((start, stop) for start, stop, _ in parts) == [
        (length * i // workers, length * (i + 1) // workers) for i in range(workers)]


def test_short_ranges_and_no_spread_run_here_and_errors_reach_the_caller():
    here = threading.current_thread().name
    names = []
    Spread.over(None, 1 << 20, lambda start, stop: names.append((start, stop, here)))
    with ThreadPoolExecutor(2) as pool:
        spread = Spread(pool, 2)
        Spread.over(spread, Spread.MIN_LENGTH - 1,
                    lambda start, stop: names.append((start, stop,
                                                      threading.current_thread().name)))
        assert names == [(0, 1 << 20, here), (0, Spread.MIN_LENGTH - 1, here)]

        def fail(start, stop):
            raise ValueError(f"part {start}")

        with pytest.raises(ValueError, match="part 0"):
            spread.run(10, fail)


def test_together_runs_one_part_here_waits_for_the_others_and_keeps_their_order():
    here = threading.current_thread().name
    finished = []
    with ThreadPoolExecutor(2) as pool:
        def other(i):
            finished.append(i)
            return (i, threading.current_thread().name)

        results = Spread.together(pool, [lambda: other(1), lambda: other(2)],
                                  lambda: (0, threading.current_thread().name))
        assert [i for i, _ in results] == [0, 1, 2]
        assert results[0][1] == here and {name for _, name in results[1:]} != {here}

        def fail():
            raise ValueError("here")

        finished.clear()
        with pytest.raises(ValueError, match="here"):
            Spread.together(pool, [lambda: other(1)], fail)
        assert finished == [1]  # the other part was done before the error went up
