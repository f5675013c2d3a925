"""The launcher of every measured process: ``python -I -S launch.py RESULT CMD ...``.

Linux folds the memory a process had before ``exec`` into its peak RSS (``ru_maxrss``): a
child forked from the benchmark harness (tens of MB, hundreds inside pytest) would report at
least the harness's size. So the harness starts this script, with nothing imported but
``os``, ``sys`` and ``time`` (about 5 MB resident), and it forks and execs ``CMD``, waits for
it with ``os.wait4`` and writes ``<seconds> <ru_maxrss in KB> <exit status>`` to ``RESULT``.
Peak RSS figures therefore have a floor of this script's size (about 5 MB); seconds run from
just before the fork to the reaped exit. ``CMD`` inherits the standard streams and the
environment; a ``CMD`` that cannot be started exits with status 127.
"""

import os
import sys
import time


def main() -> int:
    result, command = sys.argv[1], sys.argv[2:]
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(command[0], command)
        except OSError as error:
            os.write(2, f"launch: {command[0]}: {error.strerror}\n".encode())
        os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    with open(result, "w") as handle:
        handle.write(f"{seconds!r} {usage.ru_maxrss} {code}\n")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
