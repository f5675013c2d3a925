"""What a run produced, and whether it agrees with another run.

- ``output_summary`` reads each ``.csv`` of an output folder as (rows, an order-independent
  digest of its lines: Soufflé writes rows in its own order) and each ``relation<TAB>count``
  line of the run's stdout (``.printsize``, and the peers' counts).
- ``difference`` says how one run's outputs differ from the expected sizes and from a
  reference run's (which relation, and its sizes), or None when they agree.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_COUNT_LINE = re.compile(r"^([A-Za-z_][\w.]*)\t(\d+)$")
_DIGEST_MASK = (1 << 64) - 1


@dataclass(frozen=True)
class Output:
    """One output relation: ``rows`` and ``digest`` (the sum of the CRC-32 of its lines, an
    order-independent fingerprint; None for a count printed on stdout)."""

    rows: int
    digest: int | None = None


def file_summary(path: Path, chunk_bytes: int = 1 << 24) -> Output:
    """Rows (non-empty lines) and the line digest of one output file, read in chunks (bounded
    memory). Carriage returns are dropped. O(file size)."""
    rows = digest = 0
    rest = b""
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(chunk_bytes)
            if not chunk:
                break
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            lines = [line.rstrip(b"\r") for line in lines] if b"\r" in chunk else lines
            lines = [line for line in lines if line] if b"" in lines else lines
            rows += len(lines)
            digest += sum(map(zlib.crc32, lines))
    rest = rest.rstrip(b"\r")
    if rest:
        rows += 1
        digest += zlib.crc32(rest)
    return Output(rows, digest & _DIGEST_MASK)


def output_summary(out_dir: Path, stdout: Path | None = None) -> dict[str, Output]:
    """Relation -> Output for every ``.csv`` under ``out_dir`` (named by its path without the
    suffix) and every ``relation<TAB>count`` line of ``stdout``."""
    summary = {}
    for path in sorted(out_dir.rglob("*.csv")):
        summary[path.relative_to(out_dir).with_suffix("").as_posix()] = file_summary(path)
    if stdout is not None and stdout.exists():
        for line in stdout.read_text(errors="replace").splitlines():
            match = _COUNT_LINE.match(line.strip())
            if match and match.group(1) not in summary:
                summary[match.group(1)] = Output(int(match.group(2)))
    return summary


def difference(got: Mapping[str, Output], expected: Mapping[str, int],
            reference: Mapping[str, Output] | None, complete: bool) -> str | None:
    """None when ``got`` agrees with the expected sizes and the reference, else what differs.
    ``complete``: every relation of the reference must be there (herbrand and Soufflé write
    all outputs; a peer computes one relation)."""
    if not got:
        return "no output"
    for name, rows in expected.items():
        if name in got and got[name].rows != rows:
            return f"{name}: {got[name].rows:,} rows, expected {rows:,}"
        if name not in got and complete:
            return f"{name}: missing (expected {rows:,} rows)"
    if reference is None:
        return None
    for name, output in got.items():
        if name not in reference:
            return f"{name}: not an output of the reference"
        want = reference[name]
        if output.rows != want.rows:
            return f"{name}: {output.rows:,} rows, reference {want.rows:,}"
        if None not in (output.digest, want.digest) and output.digest != want.digest:
            return f"{name}: same size as the reference, other rows"
    if complete:
        missing = sorted(set(reference) - set(got))
        if missing:
            return f"{missing[0]}: missing"
    return None

