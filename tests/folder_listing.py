"""What a folder holds, as one value a test compares before and after a write."""

from __future__ import annotations

from pathlib import Path


def listing(directory: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``directory`` (relative path -> bytes; None: a folder)."""
    return {str(path.relative_to(directory)): None if path.is_dir() else path.read_bytes()
            for path in sorted(directory.rglob("*"))}
