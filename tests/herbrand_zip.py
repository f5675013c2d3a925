"""The herbrand package under test zipped, as ``--py-files`` ships it, and Python code run in
a fresh interpreter that imports herbrand from such a zip."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import herbrand


def herbrand_zip(path: Path) -> Path:
    """``path``: a zip of the herbrand package's ``.py`` sources, under ``herbrand/``."""
    package = Path(herbrand.__file__).parent
    with zipfile.ZipFile(path, "w") as archive:
        for source in package.rglob("*.py"):
            archive.write(source, source.relative_to(package.parent))
    return path


def run_from_zip(archive: Path, code: str) -> subprocess.CompletedProcess:
    """``code`` run by this interpreter with ``archive`` first on its path (and no
    ``PYTHONPATH``), its output captured as text."""
    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(archive)!r}); {code}"],
        capture_output=True, text=True,
        env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"})
