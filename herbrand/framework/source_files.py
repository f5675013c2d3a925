"""Reading Datalog source files as Soufflé reads them: UTF-8 with a byte-order mark skipped,
other bytes kept (``surrogateescape``), and one-line errors naming the path (programs, update
files)."""

from __future__ import annotations

import os
from pathlib import Path

from herbrand.framework.errors import HerbrandError, ProgramFileError, os_reason


def read_source(path: str | os.PathLike[str], what: str,
                error: type[HerbrandError] = ProgramFileError) -> str:
    """The text of the file at ``path`` (UTF-8, BOM skipped, other bytes kept by
    ``surrogateescape``); ``error`` (ProgramFileError by default) with the one-line message
    ``"{path}: cannot read {what} file: <reason>"`` when it is missing, a directory or
    unreadable. O(bytes)."""
    try:
        data = Path(path).read_bytes()
    except OSError as failure:
        raise error(f"{path}: cannot read {what} file: {os_reason(failure)}") from None
    return decode_source(data)


def decode_source(data: bytes) -> str:
    """Program text from bytes as Soufflé reads them: UTF-8 with a byte-order mark skipped,
    other bytes kept (``surrogateescape``), so a string constant keeps them. O(bytes)."""
    return data.decode("utf-8-sig", "surrogateescape")
