"""A CSV output written by the tasks that compute its rows, straight to this machine's file
system, in herbrand's own layout (``herbrand.framework.io``): no row goes to the JVM.

When a decomposed stratum's one use is one CSV file (``outputs.written_once``) and its
partitions hold ranges of the sort order (``decomposed.ordered_by_pivot``), each task can
write its partition's rows of that relation itself, with the local writer
(``csv_writer.relation_chunks`` and ``write_chunks``: the bytes the local backend writes for
those rows), as the part file ``part-<partition id>`` of a directory beside the output; the
driver then joins the parts in partition order into the file (``join_parts``). That takes
the executors to see the driver's file system: a master on this machine
(``masters.on_this_machine``) and a path on the local file system (``task_written_path``);
every other output goes through Spark's writers (``outputs``). A gzipped output
(``csv_writer.gzipped``: ``r.csv.gz``) has each task gzip its part: the joined members are one
gzip file of the local backend's bytes (an output of no part: ``csv_writer.EMPTY_GZIP``).

A task writes its part whole or not at all (``write_chunks``: a temporary file of its own
beside it, renamed to the part's name, removed when the task fails or is killed): a retried or
speculative attempt writes the same bytes again, and a temporary file left by a task killed
outright is one ``join_parts`` never reads and removes with the directory. A task never
creates the directory: once it is removed (a failed or interrupted write, ``leftovers``), a
task still running fails instead of writing into a new one. The output takes its place only
once joined whole.

    >>> task_written_path("file:///data/out/tc.csv", "local[2]")
    '/data/out/tc.csv'
    >>> task_written_path("hdfs://name/out/tc.csv", "local[2]"), \\
    ...     task_written_path("/data/out/tc.csv", "yarn")
    (None, None)
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from herbrand.framework.csv_writer import EMPTY_GZIP, gzipped, relation_chunks, write_chunks
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.spark_backend.masters import on_this_machine
from herbrand.spark_backend.paths import local_file

_PART = re.compile(r"^part-(\d+)$")
_COPY_BUFFER = 1 << 20


def task_written_path(path: str, master: str) -> str | None:
    """The absolute local path tasks write ``path`` (an output file's path as Spark would
    take it) at, or None when they cannot: ``master``'s executors are not on this machine, or
    ``path`` is not on this machine's file system (``paths.local_file``). Pure (no file
    system access)."""
    return local_file(path) if on_this_machine(master) else None


def parts_directory(path: str) -> str:
    """The directory of ``path``'s part files: ``path + ".parts"``, beside it."""
    return path + ".parts"


@dataclass(frozen=True)
class PartFile:
    """How a task writes its partition's rows of an output (pickled to the workers): into
    ``directory`` (absolute, existing), fields separated by ``delimiter``, gzipped when
    ``compressed``."""

    directory: str
    delimiter: str
    compressed: bool = False

    def write(self, relation: Relation, types: tuple[str, ...], symbols: SymbolTable) -> None:
        """Write ``relation`` (of column ``types``, ids decoded with ``symbols``) as the part
        file of this task's partition: the local writer's bytes, whole or not at all (see the
        module doc). Cost: ``relation_chunks`` (O(n log n)) and the bytes written."""
        from pyspark import TaskContext

        part = Path(self.directory, f"part-{TaskContext.get().partitionId():05d}")
        write_chunks(part, relation_chunks(relation, types, symbols, self.delimiter),
                     self.compressed, make_folder=False)


def part_file(path: str, delimiter: str) -> PartFile:
    """The PartFile of the output file ``path`` (absolute, local, in a folder that exists)
    with ``delimiter``, gzipped when ``gzipped(path)``: its part directory
    (``parts_directory``) made empty (a stale one, left by a run that failed, is removed
    first). O(the stale directory's files)."""
    directory = parts_directory(path)
    shutil.rmtree(directory, ignore_errors=True)
    os.mkdir(directory)
    return PartFile(directory, delimiter, gzipped(path))


def join_parts(path: str) -> None:
    """Make ``path`` the concatenation of its part files in partition order (no part: an
    empty file, ``EMPTY_GZIP`` when ``gzipped(path)``), then remove the part directory. The
    others are appended to the first in the directory, which then replaces ``path`` (one
    rename): a join that fails leaves ``path`` as it was. Cost: one sequential copy of every
    part but the first."""
    directory = parts_directory(path)
    parts = sorted((int(found.group(1)), name) for name in os.listdir(directory)
                   if (found := _PART.match(name)) is not None)
    joined = os.path.join(directory, parts[0][1] if parts else "joined")
    with open(joined, "ab" if parts else "wb") as target:
        if not parts and gzipped(path):
            target.write(EMPTY_GZIP)
        for _, name in parts[1:]:
            with open(os.path.join(directory, name), "rb") as source:
                shutil.copyfileobj(source, target, _COPY_BUFFER)
    os.replace(joined, path)
    shutil.rmtree(directory)
