"""Whether Spark's executors run the driver's herbrand.

A decomposed stratum (``decomposed``) runs herbrand's engine inside the executors' Python
workers, which import herbrand from their own path: on a cluster from the environment or zip
shipped to them, and on this machine from the worker's working directory first. Code of
another version there would not fail by itself: it would, for example, return unsorted rows
that the writer takes as sorted. So the driver sends the digest of its sources with the task,
and a worker whose own differs stops the job with ``ExecutorCodeError``, which the driver
reports as one line (``failures``).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import re

from herbrand.framework.errors import BackendUnavailableError

MISMATCH = "the executors run another herbrand than the driver"
_LINE = re.compile(re.escape(MISMATCH) + r"[^\n\r]*")


class ExecutorCodeError(BackendUnavailableError):
    """An executor's herbrand is not the driver's (their sources' digests differ)."""


@functools.cache
def source_digest() -> str:
    """The first 16 hex digits of a SHA-256 over this herbrand's ``.py`` sources (each file's
    path within the package and its bytes, in path order), read as package resources, so that
    a herbrand imported from a zip digests as the same files installed do. O(the sources'
    bytes, about 3 MB), once per process."""
    digest = hashlib.sha256()
    pending = [("", importlib.resources.files("herbrand"))]
    sources = []
    while pending:
        prefix, folder = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir():
                if entry.name != "__pycache__":
                    pending.append((f"{prefix}{entry.name}/", entry))
            elif entry.name.endswith(".py"):
                sources.append((f"{prefix}{entry.name}", entry))
    for path, entry in sorted(sources, key=lambda source: source[0]):
        digest.update(path.encode())
        digest.update(entry.read_bytes())
    return digest.hexdigest()[:16]


def check_same_code(driver_digest: str) -> None:
    """Nothing when this process's herbrand is the driver's (``driver_digest``, its
    ``source_digest``); else ExecutorCodeError naming both digests and the remedy."""
    own = source_digest()
    if own != driver_digest:
        raise ExecutorCodeError(
            f"backend 'spark': {MISMATCH} (sources {own}, the driver's {driver_digest}): ship "
            f"the driver's herbrand to them (README, \"Running on a cluster\")")


def code_failure(text: str) -> ExecutorCodeError | None:
    """The one-line error when ``text`` (a failed job's messages, the workers' tracebacks
    included) holds ``check_same_code``'s, else None."""
    found = _LINE.search(text)
    return ExecutorCodeError(f"backend 'spark': {found.group(0)}") if found else None
