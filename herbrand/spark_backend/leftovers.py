"""What a failed or interrupted Spark write leaves behind, removed: a run that fails changes no
output it did not finish.

Spark's writers (``outputs``) and a decomposed stratum's tasks (``part_files``) write an output
into a directory beside it (``<output>.parts``, with Spark's own ``_temporary`` folders inside
while its tasks write), and the output takes its place only once it is complete. When the
write fails (a task raises, the file system refuses a path) or is interrupted (Ctrl-C, a
KeyboardInterrupt), ``removed_on_failure`` cancels the write's jobs (tagged ``WRITE_TAG``:
PySpark's own Ctrl-C handler fails to cancel them, its call to the JVM made on the
connection that waits for the job) and removes that directory before the error goes on.

The tasks of a failed or cancelled job may still run when the driver hears of it (a killed
task stops at its next row, or is interrupted; a Python worker is killed after
``spark.python.task.killTimeout``), and such a task could write into the directory after it
is removed (Hadoop creates the folders of a file it creates): the removal first waits until
no task runs (``tasks_ended``, at most ``SETTLE_SECONDS``). A removal that fails in turn (the
JVM is gone) leaves the directory, and the error raised is still the write's; the next write
of the output replaces a stale directory.

Cost: nothing while the write succeeds; on failure, the wait (a status poll every
``_POLL_SECONDS``) and the removal.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pyspark.sql import SparkSession

WRITE_TAG = "herbrand-write"
"""The Spark job tag of the jobs of a write under ``removed_on_failure``."""
SETTLE_SECONDS = 30.0
"""Longest wait, after a failed write, for its job's tasks to end before the removal."""
_POLL_SECONDS = 0.05
_INTERRUPT_ON_CANCEL = "spark.job.interruptOnCancel"


def running_tasks(session: SparkSession) -> int:
    """Tasks running now on the session's executors (the driver, in local mode), killed ones
    included until they end: the task scheduler's own count (Spark's status tracker counts
    none in local mode). A JVM call per executor."""
    counts = session.sparkContext._jsc.sc().taskScheduler().runningTasksByExecutors()
    tasks, running = counts.values().iterator(), 0
    while tasks.hasNext():
        running += tasks.next()
    return running


def tasks_ended(session: SparkSession, timeout: float = SETTLE_SECONDS) -> bool:
    """Wait until no task runs on ``session``'s executors (``running_tasks``), at most
    ``timeout`` seconds: whether none does."""
    deadline = time.monotonic() + timeout
    while running_tasks(session):
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_SECONDS)
    return True


def removing_path(session: SparkSession, path: str) -> Callable[[], None]:
    """A removal of ``path`` (any path Spark writes; a directory with all it holds) through
    its Hadoop file system."""

    def remove() -> None:
        context = session.sparkContext
        target = context._jvm.org.apache.hadoop.fs.Path(path)
        target.getFileSystem(context._jsc.hadoopConfiguration()).delete(target, True)

    return remove


def removing_directory(directory: str) -> Callable[[], None]:
    """A removal of the local ``directory`` with all it holds (nothing when it is absent)."""
    return lambda: shutil.rmtree(directory, ignore_errors=True)


@contextmanager
def removed_on_failure(session: SparkSession, remove: Callable[[], None]) -> Iterator[None]:
    """Tag the jobs run inside ``WRITE_TAG`` (interrupting their tasks when cancelled); on
    any failure or interruption inside, cancel them, wait for the tasks to end
    (``tasks_ended``), ``remove()`` what the write left, and raise the failure on (see the
    module doc). Cost: a few JVM calls to set and clear the tag and the interruption."""
    context = session.sparkContext
    interrupting = context.getLocalProperty(_INTERRUPT_ON_CANCEL)
    context.addJobTag(WRITE_TAG)
    context.setInterruptOnCancel(True)
    try:
        yield
    except BaseException:
        try:
            context.cancelJobsWithTag(WRITE_TAG)
            tasks_ended(session)
            remove()
        except Exception:  # the write's failure is the one to report; the next write replaces
            pass
        raise
    finally:
        try:
            context.setLocalProperty(_INTERRUPT_ON_CANCEL, interrupting)  # None: unset
            context.removeJobTag(WRITE_TAG)
        except Exception:  # the JVM is gone: nothing runs in it to tag
            pass
