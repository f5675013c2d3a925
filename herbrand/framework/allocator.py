"""The C allocator's policy for the arrays that updates allocate and free again.

glibc's malloc serves an allocation above ``M_MMAP_THRESHOLD`` (128 KiB, raised to the size
of the largest such block freed, up to 32 MiB) with pages of its own mapping, and gives the
free top of its heap back to the system once it exceeds ``M_TRIM_THRESHOLD`` (twice that).
An incremental update allocates arrays of a few MB (a relation's new copy, an iteration's new
counts and runs) and frees the previous state's when it commits, so every update faults in
fresh pages, each zeroed by the kernel: on RDFS over LUBM(1) about 790 faults and 1.5 ms of a
3.5 ms one-fact update of the counting engine, 1 ms of a 1% update (CPU time, ``bench``'s
``update_costs`` protocol).

``retain_freed_memory()`` sets both thresholds (``MMAP_THRESHOLD``: glibc's largest,
``TRIM_THRESHOLD``), so that such arrays come from the heap and a freed block is reused by the
next update instead of being returned and faulted in again. It is process-wide, set once; the
cost is memory that stays mapped after it is freed (at most ``TRIM_THRESHOLD`` at the heap's
top), never more than the process's peak. On other C libraries it does nothing. The same
policy for any process: ``MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=268435456``.
"""

from __future__ import annotations

import ctypes
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt parameters
MMAP_THRESHOLD = 32 << 20  # glibc refuses more (half its 64 MiB heap size)
TRIM_THRESHOLD = 256 << 20

_retained: bool | None = None


def retain_freed_memory() -> bool:
    """Set the thresholds (see the module doc) the first time; whether they are in force
    (False where the C library has no glibc ``mallopt``). O(1)."""
    global _retained
    if _retained is None:
        _retained = False
        if sys.platform.startswith("linux"):
            try:
                mallopt = ctypes.CDLL(None).mallopt
            except (OSError, AttributeError):
                return False
            mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
            _retained = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                             and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _retained
