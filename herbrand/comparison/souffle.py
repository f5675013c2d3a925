"""Soufflé as a peer: its version, and its programs compiled once (``souffle -o``) and cached."""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from herbrand.comparison.processes import Unavailable

COMPILE_TIMEOUT = 1800.0


def souffle_version() -> str | None:
    """``souffle --version``'s version line, or None when ``souffle`` is not on PATH (asked
    once per ``souffle`` found)."""
    found = shutil.which("souffle")
    return None if found is None else _version(found)


@cache
def _version(souffle: str) -> str | None:
    try:
        text = subprocess.run([souffle, "--version"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"Version:\s*(\S+)", text)
    return match.group(1) if match else text.strip().splitlines()[0] if text.strip() else "?"


def souffle_binary(program: Path, cache_root: Path, compile: bool = True) -> Path:
    """The ``souffle -o`` binary of ``program``, compiled once and cached under
    ``<cache_root>/souffle/<hash of the program text and souffle's version>/`` (compile time is not
    part of any measurement; minutes for a large program). Unavailable when ``souffle`` is missing, when ``compile`` is False
    and no binary is cached, or when the compiler fails (its message included)."""
    version = souffle_version()
    if version is None:
        raise Unavailable("souffle is not on PATH")
    key = hashlib.sha256(program.read_bytes() + version.encode()).hexdigest()[:16]
    folder = cache_root / "souffle" / key
    binary = folder / "program"
    if binary.exists():
        return binary
    if not compile:
        raise Unavailable("no compiled binary cached (smoke runs do not compile)")
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=folder.parent))
    try:
        result = subprocess.run(["souffle", "-o", str(scratch / "program"), str(program)],
                                cwd=scratch, capture_output=True, text=True,
                                timeout=COMPILE_TIMEOUT)
        if result.returncode != 0 or not (scratch / "program").exists():
            message = (result.stderr or result.stdout).strip().splitlines()
            raise Unavailable(f"souffle -o failed: "
                              f"{message[-1] if message else result.returncode}")
        (scratch / "program.dl").write_bytes(program.read_bytes())
        with contextlib.suppress(OSError):  # OSError: compiled meanwhile by another session
            scratch.rename(folder)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"souffle -o took over {COMPILE_TIMEOUT:.0f} s") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return binary

