"""The machine's ceiling for two threads: what speed-up numba ``nogil`` kernels get at all.

The parallel backend's target is 1.8x on 2 cores. Whether that is reachable depends on the
machine as much as on herbrand: on a 2-vCPU virtual machine the two vCPUs may be hyperthreads of
one core, share one memory channel, or be taken by the host. Three kernels, each a fixed amount
of work cut into one contiguous part per thread (threads of a ``ThreadPoolExecutor``, as the
parallel backend's):

- ``compute``: a register-only hash loop (no memory traffic): the cores' own scaling;
- ``random-reads``: independent random reads from a ``MEGABYTES`` int64 array, summed (a hash
  probe's pattern: each read a cache and TLB miss, the reads of one thread overlapping);
- ``cas-inserts``: distinct keys inserted into an open-addressing table of ``MEGABYTES`` (linear
  probing, a slot claimed by compare-and-swap, as ``tables._add_concurrently`` does), filled to
  ``FILL``.

``python -m bench.bench_scaling [--repeat 5] [--megabytes 256]`` prints, per kernel, the
fastest 1-thread and 2-thread seconds (runs alternated, so load from other processes hits both),
their ratio, and the fastest 2-thread run's CPU seconds over its seconds (near 2: both threads
had a core). As a pytest-benchmark suite, each (kernel, threads) is a benchmark in group
``scaling-<kernel>``; with ``--benchmark-disable`` the arrays are small and each test checks
that the threads' parts give the one-thread answer.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import pytest
from numba import njit

from herbrand.evaluators.native.memory import _load_atomic, _swap_if

MEGABYTES = 256
SMOKE_MEGABYTES = 1
FILL = 0.4  # the table's load factor once every key is in (the dedup tables': at most 0.5)
COMPUTE_STEPS_PER_MB = 1 << 18  # about as long as the random reads of a megabyte's worth
COMPUTE_ROUNDS = 16
EMPTY = -1
MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(inline="always")
def _hash(value):
    """A murmur-style finaliser of ``value`` (as the dedup tables hash a key)."""
    h = np.uint64(value) * MIX
    h ^= h >> np.uint64(29)
    h *= MIX
    return h ^ (h >> np.uint64(32))


@njit(nogil=True, cache=True)
def compute(start, stop):
    """The number of odd values among ``start`` to ``stop``, each hashed ``COMPUTE_ROUNDS``
    times over (a chain of dependent multiplies: no memory traffic, nothing for the compiler
    to fold). O(stop - start)."""
    odd = 0
    for i in range(start, stop):
        h = np.uint64(i)
        for _ in range(COMPUTE_ROUNDS):
            h = _hash(h)
        odd += np.int64(h & np.uint64(1))
    return odd


@njit(nogil=True, cache=True)
def random_reads(array, start, stop):
    """The sum of ``array`` at the hashed positions of ``start`` to ``stop`` (independent
    reads: the core may have several in flight). O(stop - start), each read a miss."""
    mask = np.uint64(array.shape[0] - 1)
    total = 0
    for i in range(start, stop):
        total += array[np.int64(_hash(i) & mask)]
    return total


@njit(nogil=True, cache=True)
def cas_inserts(table, start, stop):
    """Insert the keys ``start`` to ``stop`` into ``table`` (EMPTY-filled, a power of two
    long, other threads inserting other keys at once): each claims the first empty slot from
    its hash by compare-and-swap; the number inserted. O(stop - start) expected."""
    mask = table.shape[0] - 1
    base = table.ctypes.data
    inserted = 0
    for key in range(start, stop):
        s = np.int64(_hash(key) >> np.uint64(1)) & mask
        while True:
            value = _load_atomic(base + 8 * s)
            if value == key:
                break
            if value == EMPTY and _swap_if(base + 8 * s, EMPTY, key):
                inserted += 1
                break
            s = (s + 1) & mask
    return inserted


@dataclass(frozen=True)
class Kernel:
    """A kernel over ``work`` units (cut into a part per thread): ``prepare`` makes its array
    before each timed run (not timed), ``run(array, start, stop)`` does a part, ``combine``
    merges the parts' results into the answer, which must not depend on the threads."""

    name: str
    work: Callable[[int], int]
    prepare: Callable[[int], np.ndarray | None]
    run: Callable[..., int]
    combine: Callable[[list[int]], int]


def _words(megabytes: int) -> int:
    """The int64 words of ``megabytes`` MB, a power of two."""
    return 1 << ((megabytes << 17) - 1).bit_length()


KERNELS = {
    "compute": Kernel("compute", lambda mb: mb * COMPUTE_STEPS_PER_MB, lambda mb: None,
                      lambda _, start, stop: compute(start, stop), sum),
    "random-reads": Kernel("random-reads", lambda mb: _words(mb),
                           lambda mb: np.arange(_words(mb), dtype=np.int64),
                           random_reads, sum),
    "cas-inserts": Kernel("cas-inserts", lambda mb: int(_words(mb) * FILL),
                          lambda mb: np.full(_words(mb), EMPTY, dtype=np.int64),
                          cas_inserts, sum),
}


def run_parts(pool: ThreadPoolExecutor, kernel: Kernel, array: np.ndarray | None, work: int,
              threads: int) -> tuple[float, int]:
    """(seconds, answer) of ``kernel`` over ``work`` units cut into ``threads`` contiguous
    parts, run at once on ``pool``."""
    bounds = np.linspace(0, work, threads + 1).astype(np.int64).tolist()
    start = time.perf_counter()
    parts = [pool.submit(kernel.run, array, first, stop) for first, stop in pairwise(bounds)]
    answer = kernel.combine([part.result() for part in parts])
    return time.perf_counter() - start, answer


def measure(kernel: Kernel, megabytes: int, repeat: int) -> dict[int, tuple[float, float]]:
    """For 1 and 2 threads, (seconds, CPU seconds / seconds) of the fastest of ``repeat``
    alternated runs of ``kernel`` (after one untimed run each, which compiles and touches the
    memory). A 2-thread run whose CPU / wall is well under 2 shared the cores with other
    processes: its speed-up says little about the machine."""
    work = kernel.work(megabytes)
    best = {1: (float("inf"), 0.0), 2: (float("inf"), 0.0)}
    with ThreadPoolExecutor(2) as pool:
        for round_ in range(repeat + 1):
            for threads in (1, 2):
                array = kernel.prepare(megabytes)
                cpu = time.process_time()
                seconds, _ = run_parts(pool, kernel, array, work, threads)
                cpu = time.process_time() - cpu
                if round_ > 0 and seconds < best[threads][0]:
                    best[threads] = (seconds, cpu / seconds)
    return best


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_scaling(benchmark, name, threads):
    kernel = KERNELS[name]
    megabytes = SMOKE_MEGABYTES if benchmark.disabled else MEGABYTES
    work = kernel.work(megabytes)
    benchmark.group = f"scaling-{name}"
    benchmark.name = f"{threads}-thread"
    with ThreadPoolExecutor(threads) as pool:
        alone = run_parts(pool, kernel, kernel.prepare(megabytes), work, 1)[1]
        answer = benchmark.pedantic(
            lambda array: run_parts(pool, kernel, array, work, threads)[1],
            setup=lambda: ((kernel.prepare(megabytes),), {}),
            rounds=1 if benchmark.disabled else 5, iterations=1)
    assert answer == alone
    if name == "cas-inserts":
        assert answer == work  # every key distinct, each inserted once


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--megabytes", type=int, default=MEGABYTES)
    parser.add_argument("--kernels", default=",".join(KERNELS))
    args = parser.parse_args(argv)
    print(f"| kernel ({args.megabytes} MB) | 1 thread (s) | 2 threads (s) | speed-up "
          "| CPU / wall, 2 threads |")
    print("|---|---:|---:|---:|---:|")
    for name in args.kernels.split(","):
        best = measure(KERNELS[name], args.megabytes, args.repeat)
        (one, _), (two, busy) = best[1], best[2]
        print(f"| {name} | {one:.3f} | {two:.3f} | {one / two:.2f}x | {busy:.2f} |", flush=True)


if __name__ == "__main__":
    main()
