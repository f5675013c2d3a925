"""Progress display on stderr for long runs: silent for the first second, then a status line.

On a terminal the line is redrawn in place; otherwise a line is written at most once a second.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from herbrand.framework.contracts import Progress


class ProgressDisplay:
    """A ProgressObserver that reports iterations and tuples derived once ``delay`` has passed.

    Cost: O(1) per event; writes at most ``1 / interval`` lines a second.
    """

    def __init__(self, stream: TextIO | None = None, delay: float = 1.0, interval: float = 0.2):
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.interval = interval if self.stream.isatty() else max(interval, 1.0)
        self.start = time.perf_counter()
        self._last_write = 0.0
        self._drawn = False

    def __call__(self, event: Progress) -> None:
        now = time.perf_counter()
        elapsed = now - self.start
        if elapsed < self.delay or now - self._last_write < self.interval:
            return
        self._last_write = now
        line = (
            f"stratum {event.stratum + 1}/{event.strata}  iteration {event.iteration}  "
            f"+{event.delta:,} tuples  total {event.total:,}  {elapsed:.1f}s"
        )
        if self.stream.isatty():
            self.stream.write("\r\x1b[K" + line)
            self._drawn = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the in-place line, if one was drawn."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
