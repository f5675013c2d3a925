"""The checkpoints of a run's semi-naive passes: cut, stored and counted in one job, freed once
nothing reads them.

A checkpoint (``Checkpoints.cut``) is a frame whose plan is a leaf (``LogicalRDD``) over an RDD
marked for checkpointing: local (blocks kept by the executors) or reliable (files under the
session's checkpoint directory). ``store`` counts that RDD: one job, which computes the rows,
stores them and cuts the RDD's lineage before it returns, together with every checkpoint the
job read that was not stored yet (``marking``: Spark's ``checkpointAllMarkedAncestors``;
without it only the outermost marked RDD of a job is cut, and a lineage left uncut by a lazy
checkpoint grew pass after pass until serializing a task overflowed the driver's stack).

A relation's full frame is a union of checkpoints, its *pieces*: the last one that laid the
whole relation out, and the deltas since (``piece``). When the relation is laid out again
(``relaid``), the earlier pieces are retired, and ``collect`` frees them once the new layout is
stored (a job has read it): the storage a run holds stays within about twice its relations'
rows, where keeping every checkpoint until the end held the sum of every layout's rows
(quadratic in the passes). ``release`` frees everything left. Freeing a checkpoint is
``RDD.unpersist`` on its RDD (``DataFrame.unpersist`` drops only cached plans, not a
checkpoint's blocks) and, for a reliable one, deleting its files.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from py4j.java_gateway import JavaObject
from py4j.protocol import Py4JError
from pyspark.sql import DataFrame, SparkSession

CHECKPOINT_ALL_MARKED = "spark.checkpoint.checkpointAllMarkedAncestors"
"""SparkContext local property: a job cuts the lineage of every marked RDD it read."""


def checkpoint_rdd(frame: DataFrame) -> JavaObject:
    """The (JVM) RDD under a checkpoint's ``frame`` (its plan is one ``LogicalRDD``)."""
    return frame._jdf.queryExecution().logical().rdd()


LIMIT_ROWS = 2**31 - 1
"""Most rows a Spark Limit takes (an int): ``sized`` estimates larger checkpoints as this."""


def sized(frame: DataFrame, rows: int) -> DataFrame:
    """The checkpoint ``frame`` (``Checkpoints.cut``) with Spark's size estimate set to
    ``rows`` rows, what ``frame.limit(rows)`` would estimate, without a Limit in the plans that
    read it: a Limit's generated code names its counter from a counter global to the JVM, so
    each stage holding one is compiled anew (on the driver, then again in the task: the
    compiled-code cache is per class loader), about 9 compilations of 4-25 ms per pass of TC
    in one partition. The copy is the same leaf over the same RDD, with the estimate of a
    Limit of ``rows`` (at most ``LIMIT_ROWS``) over it. O(1): about 15 calls to the JVM,
    nothing run or planned. A Spark whose internals differ from 4.3's gets ``frame.limit(rows)``
    (the same rows and estimate, its code compiled anew every pass)."""
    session = frame.sparkSession
    jvm = session._jvm
    leaf = frame._jdf.queryExecution().logical()
    try:
        literal = getattr(getattr(jvm.org.apache.spark.sql.catalyst.expressions, "Literal$"),
                          "MODULE$")
        limit = jvm.org.apache.spark.sql.catalyst.plans.logical.Limit.apply(
            literal.apply(min(rows, LIMIT_ROWS)), leaf)
        jsession, _, constraints, checkpointed = (leaf.otherCopyArgs().apply(i)
                                                  for i in range(4))
        copy = leaf.copy(leaf.output(), leaf.rdd(), leaf.outputPartitioning(),
                         leaf.outputOrdering(), leaf.isStreaming(), leaf.stream(), jsession,
                         jvm.scala.Some(limit.stats()), constraints, checkpointed)
        return DataFrame(jvm.org.apache.spark.sql.classic.Dataset.ofRows(jsession, copy), session)
    except Py4JError:
        return frame.limit(rows)


class Checkpoints:
    """The checkpoints a run cuts in ``session``: local when ``directory`` is None, else
    reliable, to files under ``directory``."""

    def __init__(self, session: SparkSession, directory: str | None):
        self.session = session
        self.reliable = directory is not None
        if directory is not None:
            session.sparkContext.setCheckpointDir(directory)
        self._live: dict[int, JavaObject] = {}
        """RDD id -> RDD of every checkpoint cut and not freed yet."""
        self._pieces: dict[str, list[JavaObject]] = {}
        """Relation -> the checkpoints its full frame is a union of."""
        self._retired: list[tuple[JavaObject, list[JavaObject]]] = []
        """(a relation's new layout, the pieces it supersedes), freed once it is stored."""

    def cut(self, frame: DataFrame) -> DataFrame:
        """``frame`` as a checkpoint, a leaf of later plans (which would otherwise hold the
        whole history of the run). Lazy: ``store``, or any job that reads it under
        ``marking``, computes and stores it. O(1) calls to the JVM."""
        stored = frame.checkpoint(eager=False) if self.reliable else frame.localCheckpoint(
            eager=False)
        rdd = checkpoint_rdd(stored)
        self._live[rdd.id()] = rdd
        return stored

    def store(self, frame: DataFrame) -> int:
        """The rows of the checkpoint ``frame`` (``cut``), computed and stored by one job
        (two for a reliable checkpoint: Spark writes its files by computing it again) that
        also stores the checkpoints it reads; its lineage is cut when this returns."""
        return checkpoint_rdd(frame).count()

    @contextmanager
    def marking(self) -> Iterator[None]:
        """For the duration, a job stores and cuts every checkpoint it reads (and computes
        those it needed but did not compute: a laid-out relation that an empty anti-join
        skipped), so that ``collect`` can free what they supersede."""
        context = self.session.sparkContext
        previous = context.getLocalProperty(CHECKPOINT_ALL_MARKED)
        context.setLocalProperty(CHECKPOINT_ALL_MARKED, "true")
        try:
            yield
        finally:
            context.setLocalProperty(CHECKPOINT_ALL_MARKED, previous)

    def piece(self, relation: str, frame: DataFrame) -> None:
        """Record the checkpoint ``frame`` as a piece of ``relation``'s full frame."""
        self._pieces.setdefault(relation, []).append(checkpoint_rdd(frame))

    def relaid(self, relation: str, frame: DataFrame) -> None:
        """The checkpoint ``frame`` now holds all of ``relation``'s rows: its earlier pieces
        are freed once it is stored (``collect``)."""
        layout = checkpoint_rdd(frame)
        self._retired.append((layout, self._pieces.get(relation, [])))
        self._pieces[relation] = [layout]

    def collect(self) -> None:
        """Free the pieces superseded by a layout that is stored. O(retired) JVM calls."""
        waiting = []
        for layout, pieces in self._retired:
            if layout.isCheckpointed():
                for rdd in pieces:
                    self._free(rdd)
            else:
                waiting.append((layout, pieces))
        self._retired = waiting

    def release(self) -> None:
        """Free every checkpoint not freed yet."""
        for rdd in list(self._live.values()):
            self._free(rdd)
        self._pieces.clear()
        self._retired.clear()

    def _free(self, rdd: JavaObject) -> None:
        """Drop ``rdd``'s blocks and, when reliable, its checkpoint files."""
        if self._live.pop(rdd.id(), None) is None:
            return
        rdd.unpersist(False)
        file = rdd.getCheckpointFile()
        if self.reliable and file.isDefined():
            path = self.session.sparkContext._jvm.org.apache.hadoop.fs.Path(file.get())
            path.getFileSystem(self.session.sparkContext._jsc.hadoopConfiguration()).delete(
                path, True)
