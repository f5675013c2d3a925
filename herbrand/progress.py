"""Progress display on stderr for long runs: silent for the first second, then a status line.

A run reports fixpoint iterations (``__call__`` with a Progress event), then stages such as
writing an output relation (``stage``), and ends with ``finish``: once anything was shown, the
last line is always a final one with the exact totals, so no stale count is left on screen.
On a terminal the line is redrawn in place; otherwise a line is written at most once a second.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from herbrand.framework.contracts import Progress


def plural(count: int, noun: str) -> str:
    """``1 tuple``, ``2 tuples``, ``1,000 tuples``: a count with its noun."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


class ProgressDisplay:
    """A ProgressObserver that reports iterations and tuples derived once ``delay`` has passed.

    Cost: O(1) per event; writes at most ``1 / interval`` lines a second.
    """

    def __init__(self, stream: TextIO | None = None, delay: float = 1.0, interval: float = 0.2):
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.tty = self.stream.isatty()
        self.interval = interval if self.tty else max(interval, 1.0)
        self.start = time.perf_counter()
        self._last_write = 0.0
        self._shown = False  # whether any line was written
        self._open = False  # whether an in-place line waits for its newline

    @property
    def elapsed(self) -> float:
        """Seconds since the display was made."""
        return time.perf_counter() - self.start

    def __call__(self, event: Progress) -> None:
        self._show(
            f"stratum {event.stratum + 1}/{event.strata}"
            f"{'' if event.where is None else ' on ' + event.where}"
            f"  iteration {event.iteration}  "
            f"+{event.delta:,} tuples  total {event.total:,}", throttled=True)

    def stage(self, text: str) -> None:
        """Report the start of a stage of the run (``writing path.csv: 13,148,244 tuples``);
        shown once the delay has passed, never throttled away."""
        self._show(text, throttled=False)

    def finish(self, text: str) -> None:
        """End the display with the final line ``text`` (exact totals), when anything was
        shown; a short run stays silent."""
        if self._shown:
            self._write(f"{text}  {self.elapsed:.1f}s")
        self.close()

    def close(self) -> None:
        """End the in-place line, if one is open."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False

    def _show(self, line: str, throttled: bool) -> None:
        now = time.perf_counter()
        if now - self.start < self.delay or throttled and now - self._last_write < self.interval:
            return
        self._last_write = now
        self._write(f"{line}  {now - self.start:.1f}s")

    def _write(self, line: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
            self._open = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self._shown = True
