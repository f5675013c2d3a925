"""Which recursive strata of a Spark run skip the semi-naive passes for one decomposed job
(``decomposed``), and those jobs' lives over the run: planned, stored or left to a write,
counted, released.

A recursive stratum with a pivot (``herbrand.translators.pivots``) whose lower relations are
small enough to broadcast skips the passes: after the first, one job runs herbrand's native
engine to fixpoint in each partition of the seeds, split by pivot value. A recursive stratum
without a pivot skips them too when it is small: its lower relations can be broadcast and its
relations after the first pass hold at most ``single_partition_rows`` rows; the job then runs
the engine in one partition holding every seed. Dozens of passes of a few Spark jobs each
(Galen EL: 48 passes of a 3-relation stratum, 5-way joins) cost far more than one worker
running them (the stratum's result must then fit one worker, as locally).

A job whose stratum's one use is one write of a relation (``written_once``) and whose result
is in sort order (``decomposed.ordered_by_pivot``) is left to that write (``deferred``): the
write computes it, and its sizes are what its tasks counted (``DecomposedStrata.written``);
every other job is stored and counted when planned (``Decomposition.store``).

A stratum whose seeds the driver made (``run_seeded``: it held, or collected from Spark,
every relation the stratum reads) gets the job of ``driver_seeds``, over those seeds, instead
of one over frames; the rest is the same.

Before a run's first job, on a master on this machine, its Python workers are started in the
background while it is planned (``warm_workers``).

Cost: the choice, O(the pivot search); a job's, see ``decomposed``; the bookkeeping, O(strata).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from threading import Thread

import pyarrow as pa
from pyspark.sql import DataFrame

from herbrand.evaluators.fixpoint import delta_name
from herbrand.framework.analysis import Stratum
from herbrand.framework.storage import Database
from herbrand.spark_backend.decomposed import (
    Decomposition,
    lower_relations,
    ordered_by_pivot,
    relation_of,
    run_decomposed,
)
from herbrand.spark_backend.driver_seeds import seeded_decomposition
from herbrand.spark_backend.frames import frame_types
from herbrand.spark_backend.masters import master_cores, on_this_machine
from herbrand.spark_backend.session import RunSession
from herbrand.spark_backend.warm_workers import warm_workers
from herbrand.translators.pivots import Pivot, find_pivot

TASKS_PER_CORE = 4
"""Partitions of a decomposed job per core of the master, where its cores are known: a
partition's fixpoint is independent of the others', so more of them than cores balance
partitions of unequal work, and the engine works faster on fewer rows (its tables nearer the
caches; TC over Gnutella08 in one process: 3.58 s of CPU in 4 parts, 3.19 in 8, 3.02 in 16,
writing included). On ``local[2]`` (8 parts against 4 before), whole runs, three rounds
alternated: 7.1-14.7 s against 7.5-17.5 s, peak RSS of the process tree 1,155-1,172 MB
against 1,291-1,333 MB, the same CPU. Each task loads the broadcast relations again
(O(their rows))."""
SINGLE_PARTITION_ROWS = 1_000_000
"""Rows of a recursive stratum without a pivot, after its first pass, up to which it runs in one
partition (``decomposed``) rather than as semi-naive passes."""


@dataclass(frozen=True)
class Deferred:
    """A decomposed stratum's job left to a write: ``position`` of the stratum's stats in the
    run's, the ``stratum``, its ``job``, and the ``iteration`` (pass) it is reported as."""

    position: int
    stratum: Stratum
    job: Decomposition
    iteration: int


class DecomposedStrata:
    """The decomposed jobs of one run over the session ``spark``. Hyperparameters: see
    ``SparkBackend`` (``decompose``, ``broadcast_rows``, ``single_partition_rows``);
    ``written_once``: relations that are, of all the rows of their stratum, the one thing read
    after it, by one write (``outputs.written_once``).

    ``ordered``: relations whose frames are in sort order by column, partition after
    partition (``outputs`` writes them without sorting); ``deferred``: the jobs left to a
    write, in the order planned. ``release()`` drops what every job stored."""

    def __init__(self, spark: RunSession, *, decompose: bool, broadcast_rows: int,
                 single_partition_rows: int = SINGLE_PARTITION_ROWS,
                 written_once: frozenset[str] = frozenset()):
        self.spark = spark
        self.decompose = decompose
        self.broadcast_rows = broadcast_rows
        self.single_partition_rows = single_partition_rows
        self.written_once = written_once
        self.ordered: set[str] = set()
        self.deferred: list[Deferred] = []
        self._jobs: list[Decomposition] = []
        self._warming: Thread | None = None

    def may_choose(self, stratum: Stratum, counts: dict[str, int]) -> bool:
        """Whether ``chooses`` may take ``stratum`` once its seeds are known: it is recursive,
        ``decompose`` is on and the lower relations it reads hold at most ``broadcast_rows``
        rows (``counts``: name -> rows). O(rules)."""
        return stratum.recursive and self.decompose and sum(
            counts[name] for name in lower_relations(stratum)) <= self.broadcast_rows

    def chooses(self, stratum: Stratum, counts: dict[str, int]) -> bool:
        """Whether the recursive ``stratum``, after its first pass (``counts``: name -> rows),
        runs as one decomposed job: ``may_choose``, and it has a pivot or its own relations
        hold at most ``single_partition_rows``. O(the pivot search)."""
        return self.may_choose(stratum, counts) and (
            sum(counts[name] for name in stratum.relations) <= self.single_partition_rows
            or find_pivot(stratum) is not None)

    def run(self, stratum: Stratum, frames: dict[str, DataFrame], counts: dict[str, int],
            most: int, position: int, iteration: int,
            held: dict[str, pa.Table]) -> dict[str, int] | None:
        """Plan the job bringing ``stratum`` to fixpoint from its seeds (``frames`` after the
        first pass) in ``parts(pivot, most)`` partitions, broadcasting the lower relations
        in ``held`` as they are (``run_decomposed``), and make its
        result the frames of the stratum's relations, with empty deltas (in ``frames`` and
        ``counts``). A job left to a write (see the module doc) is ``deferred`` (with the
        stratum's stats' ``position`` and its pass, ``iteration``): None; else it is stored
        and counted here: rows per relation name."""
        pivot = find_pivot(stratum)
        parts = self.parts(pivot, most)
        self._warm(parts)
        names = (*lower_relations(stratum), *stratum.relations)
        types = {name: frame_types(frames[name]) for name in names}
        job = run_decomposed(self.spark.get(), stratum, pivot, frames, types, parts, held)
        return self._adopt(stratum, pivot, job, types, frames, counts, position, iteration)

    def run_seeded(self, stratum: Stratum, seeds: Database, frames: dict[str, DataFrame],
                   counts: dict[str, int], most: int, position: int,
                   iteration: int) -> dict[str, int] | None:
        """``run``, for a stratum whose ``seeds`` (and lower relations) the driver holds
        (``Driver.seeds``): the job is ``driver_seeds``'s, and needs no frame of them."""
        pivot = find_pivot(stratum)
        parts = self.parts(pivot, most)
        self._warm(parts)
        job = seeded_decomposition(self.spark.get(), stratum, pivot, seeds, parts)
        return self._adopt(stratum, pivot, job, dict(seeds.types), frames, counts, position,
                           iteration)

    def parts(self, pivot: Pivot | None, most: int) -> int:
        """The partitions of a job of a stratum with ``pivot``: one without a pivot; else
        ``TASKS_PER_CORE`` per core of the session's master where they are known, else
        ``most`` (the session's shuffle partitions). O(1)."""
        if pivot is None:
            return 1
        cores = master_cores(self.spark.get().sparkContext.master)
        return most if cores is None else TASKS_PER_CORE * cores

    def _warm(self, parts: int) -> None:
        """Before the run's first job: on a master on this machine, start as many Python
        workers as the job's ``parts`` can use at once (at most the master's cores) while it
        is planned (``warm_workers``)."""
        master = self.spark.get().sparkContext.master
        if self._warming is None and on_this_machine(master):
            tasks = min(parts, master_cores(master) or 1)
            self._warming = warm_workers(self.spark.get(), tasks)

    def _adopt(self, stratum: Stratum, pivot: Pivot | None, job: Decomposition,
               types: dict[str, tuple[str, ...]], frames: dict[str, DataFrame],
               counts: dict[str, int], position: int, iteration: int) -> dict[str, int] | None:
        """Make ``job``'s result the stratum's frames (see ``run``), and defer or store it."""
        self._jobs.append(job)
        ordered = ordered_by_pivot(stratum, pivot, types)
        if ordered:
            self.ordered.update(stratum.relations)
        for name in stratum.relations:
            frames[name] = relation_of(job.result, stratum, name, types)
            frames[delta_name(name)] = frames[name].limit(0)
            counts[delta_name(name)] = 0
        if ordered and self.written_once.intersection(stratum.relations):
            self.deferred.append(Deferred(position, stratum, job, iteration))
            return None
        return job.store()

    def deferred_jobs(self) -> dict[str, Decomposition]:
        """Each relation of ``written_once`` whose stratum's job is ``deferred`` -> that job.
        O(deferred strata)."""
        return {name: left.job for left in self.deferred
                for name in self.written_once.intersection(left.stratum.relations)}

    def written(self) -> Iterator[tuple[Deferred, dict[str, int]]]:
        """After the writes: each ``deferred`` job with its relations' sizes as its tasks
        counted them (``Decomposition.written_sizes``); ``deferred`` is then empty."""
        while self.deferred:
            left = self.deferred.pop(0)
            yield left, left.job.written_sizes()

    def release(self) -> None:
        """Drop every job's cache and broadcast relations, once the workers' warming (if
        any) is over. O(jobs) calls."""
        if self._warming is not None:
            self._warming.join()
        for job in self._jobs:
            job.release()
        self._jobs.clear()
