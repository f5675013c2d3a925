"""The native kernels, compiled ahead of time: ``kernels()`` is the extension module.

The module is built by ``build`` from the sources of ``kernels``, ``choice``, ``claims``,
``concurrent``, ``tables``, ``runs``, ``views``, ``operators``, ``memory``, ``layout``,
``build``, ``exported``, ``herbrand.framework.native_view`` and the ``EXPORTING_MODULES``
(the kernels of the indexes, the row sets and the incremental engines), and kept in
herbrand's cache directory (``HERBRAND_CACHE_DIR``, else ``$XDG_CACHE_HOME/herbrand`` or
``~/.cache/herbrand``) under a name keyed by a hash of those sources, numpy's version and the
interpreter's extension suffix: an edit to any of them builds a new one. The first process
that needs it builds it (about 45 s, said on stderr; ``make`` builds it at install), under a
lock so that concurrent processes build it once; later ones import it in under a millisecond.
Only the ``KEEP`` most recently built versions are kept.
Importing it loads neither numba nor LLVM, which is what a short run's start-up and memory floor
were made of (about 0.35 s and 100 MB).
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.machinery
import importlib.resources
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import numpy as np

from herbrand.evaluators.native.exported import BUILDING_VARIABLE
from herbrand.framework.errors import EvaluationError

_NATIVE = "herbrand.evaluators.native"
# the modules outside this package whose kernels are marked ``exported`` (``build`` imports
# them to compile those kernels into the module)
EXPORTING_MODULES = (
    "herbrand.indexes.kernels", "herbrand.indexes.open_hash", "herbrand.evaluators.row_sets",
    "herbrand.evaluators.incremental.relation_sets",
    "herbrand.evaluators.incremental.checked_facts",
    "herbrand.evaluators.incremental.bf_kernels",
    "herbrand.evaluators.incremental.counting_merge",
    "herbrand.evaluators.incremental.counting_refresh",
    "herbrand.evaluators.incremental.elastic_kernels",
    "herbrand.evaluators.incremental.member_kernels",
    "herbrand.evaluators.incremental.dbsp.counts_kernels",
    "herbrand.evaluators.incremental.dbsp.zset_kernels")
_SOURCES = tuple((_NATIVE, name) for name in (
    "kernels.py", "interpreter.py", "choice.py", "claims.py", "concurrent.py", "tables.py",
    "runs.py", "views.py", "operators.py", "memory.py", "layout.py", "build.py",
    "exported.py")) + (("herbrand.framework", "native_view.py"),) + tuple(
        (module.rpartition(".")[0], module.rpartition(".")[2] + ".py")
        for module in EXPORTING_MODULES)
KEEP = 8  # modules kept in the cache directory, the most recently built
_module: ModuleType | None = None


class KernelBuildError(EvaluationError):
    """The native kernels could not be compiled (no C compiler, for example)."""


def kernels() -> ModuleType:
    """The compiled kernels (built first if this version has not been)."""
    global _module
    if _module is None:
        _module = _load()
    return _module


def cache_directory() -> Path:
    """Where herbrand keeps what it builds once per version."""
    given = os.environ.get("HERBRAND_CACHE_DIR")
    if given:
        return Path(given)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "herbrand"


def module_name() -> str:
    """The extension module's name for these sources, this numpy and this interpreter. The
    sources are read as package resources, so herbrand imported from a zip (Spark's
    ``--py-files``) finds the kernels a packed environment's cache holds."""
    digest = hashlib.sha256()
    for package, source in _SOURCES:
        digest.update(_source(package, source))
    digest.update(np.__version__.encode())
    digest.update(importlib.machinery.EXTENSION_SUFFIXES[0].encode())
    return "kernels_" + digest.hexdigest()[:16]


def _source(package: str, name: str) -> bytes:
    """The bytes of source file ``name`` of ``package``, from a folder or a zip."""
    return importlib.resources.files(package).joinpath(name).read_bytes()


def _load() -> ModuleType:
    name = module_name()
    directory = cache_directory()
    path = directory / (name + importlib.machinery.EXTENSION_SUFFIXES[0])
    if not path.exists():
        _build(directory, name, path)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(directory: Path, name: str, path: Path) -> None:
    """Build the module into ``path`` once: in a child process (numba and the compiler stay out
    of this one), into a temporary directory, moved into place when complete. The child runs in
    the directory holding this herbrand package, so that it compiles these sources even when
    the caller's working directory holds another checkout (``-m`` puts it first on the path)."""
    directory, path = directory.resolve(), path.resolve()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise KernelBuildError(f"cannot create the cache directory {directory}: "
                               f"{error.strerror}; set HERBRAND_CACHE_DIR") from None
    with open(directory / (name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():  # another process built it while this one waited
            return
        print("herbrand: compiling the native kernels (once for this version, about 45 s)...",
              file=sys.stderr, flush=True)
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(dir=directory) as scratch:
            result = subprocess.run(
                [sys.executable, "-m", "herbrand.evaluators.native.build", scratch, name],
                capture_output=True, text=True, cwd=Path(__file__).resolve().parents[3],
                env={**os.environ, BUILDING_VARIABLE: "1"})
            built = Path(scratch) / path.name
            if result.returncode != 0 or not built.exists():
                lines = (result.stderr or result.stdout).strip().splitlines() or ["no output"]
                raise KernelBuildError(
                    f"the native kernels could not be compiled ({lines[-1]}); "
                    "run with --evaluator relational") from None
            os.replace(built, path)
        _prune(directory)
        print(f"herbrand: native kernels compiled in {time.perf_counter() - start:.0f} s",
              file=sys.stderr, flush=True)


def _prune(directory: Path) -> None:
    """Delete all but the ``KEEP`` most recently built modules (and their locks) of
    ``directory``: each version of the sources leaves one (about 1 MB), and checkouts of other
    versions may still load theirs. A module another process has loaded stays mapped."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    built = sorted(directory.glob("kernels_*" + suffix), key=lambda p: p.stat().st_mtime,
                   reverse=True)
    for old in built[KEEP:]:
        for path in (old, old.with_name(old.name[:-len(suffix)] + ".lock")):
            path.unlink(missing_ok=True)


if __name__ == "__main__":  # build now (``make`` does, at install) and say where it is
    print(kernels().__file__)
