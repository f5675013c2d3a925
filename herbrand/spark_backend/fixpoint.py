"""Semi-naive evaluation of a program's strata over Spark DataFrames, driven from the driver.

Each stratum (``analyse``) runs as in ``herbrand.evaluators.fixpoint.SemiNaiveFixpoint``: one
pass of its rules over the full relations, then, when it is recursive, passes of their
``delta_variants`` reading ``delta_name(r)``, the rows new in the previous pass, until a pass
adds nothing. A pass builds each rule's frame (``plans.PlanFrames``), unites the frames of one
head, and keeps the rows not yet known:

    new = hash_partitioned(union(rule frames)).distinct() left_anti full   (checkpointed, counted)
    full = full union new

The relations of a recursive stratum and their deltas are laid out by ``partitions``: hash-
partitioned on all columns into a number of parts sized from their rows (at most
``spark.sql.shuffle.partitions``, which is set to it during the passes). With more than one
part, ``full`` is never exchanged after the first pass: the derived rows are shuffled into the
layout, the distinct and the anti-join against ``full`` are partition-local, and the union
keeps the layout. With one part (small relations, whose lower relations hold at most
``broadcast_rows`` rows) a pass runs in one partition: every relation its rules read is
coalesced into one part (a union of one-part pieces has as many parts as pieces; coalescing is
a narrow dependency, not an exchange) and nothing is broadcast, so the pass is one job (the
count) whose stages are one task each (Spark still exchanges the two sides of each join
within the one part: a stage each, not a job).

Each ``new`` is checkpointed, so that it is a leaf of later plans: without that, every delta's
plan holds the plans of all the earlier ones and planning time (and the driver's memory) blows
up within a few dozen passes. The checkpoint is lazy, so the pass's count, its delta size
reported as a Progress event, computes and stores it in one job (an eager checkpoint then a
count took two: measured 10% slower per pass on a chain of 50 edges).
``full`` is a union of such pieces; every ``checkpoint_interval`` passes, and at the end of a
recursive stratum, it is checkpointed (lazily, by the next pass's job), and laid out again
when its row count calls for more parts. Checkpoints are local by default (blocks kept by the
executors: fast, but an executor lost loses the run) or reliable, to ``checkpoint_dir``
(files; a lost executor's tasks are redone from them). The passes run without adaptive
execution (``PASS_SETTINGS``), which made a job of every exchange.

Cost per pass: the rules' joins (a shuffle each, unless the static side is broadcast), a
shuffle of the derived rows, a sort of ``full`` for the anti-join (no shuffle), and a job per
broadcast relation and one for the count; in one partition, the count's job alone.

A recursive stratum with a pivot (``herbrand.translators.pivots``) whose lower relations are
small enough to broadcast skips the passes: after the first, one job runs herbrand's native
engine to fixpoint in each partition of the seeds, split by pivot value (``decomposed``). A
recursive stratum without a pivot skips them too when it is small: its lower relations can be
broadcast and its relations after the first pass hold at most ``single_partition_rows`` rows;
the job then runs the engine in one partition holding every seed. Dozens of passes of a few
Spark jobs each (Galen EL: 48 passes of a 3-relation stratum, 5-way joins) cost far more than
one worker running them (the stratum's result must then fit one worker, as locally).
"""

from __future__ import annotations

import time
from functools import reduce

from pyspark.sql import DataFrame, SparkSession

from herbrand.evaluators.fixpoint import delta_name, delta_variants
from herbrand.framework.analysis import Stratum
from herbrand.framework.contracts import Progress, ProgressObserver, StratumStats
from herbrand.framework.syntax import Rule
from herbrand.spark_backend.decomposed import (
    lower_relations,
    ordered_by_pivot,
    relation_of,
    run_decomposed,
)
from herbrand.spark_backend.frames import frame_types
from herbrand.spark_backend.partitions import (
    ROWS_PER_PARTITION,
    hash_partitioned,
    partition_count,
)
from herbrand.spark_backend.plans import PlanFrames
from herbrand.spark_backend.session import run_settings, sql_settings
from herbrand.translators import ir
from herbrand.translators.pipeline import translate_rule
from herbrand.translators.pivots import Pivot, find_pivot

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
SINGLE_PARTITION_ROWS = 1_000_000
"""Rows of a recursive stratum without a pivot, after its first pass, up to which it runs in one
partition (``decomposed``) rather than as semi-naive passes."""
PASS_SETTINGS = {
    # adaptive execution runs every exchange of a plan as a job of its own and plans again
    # between them: 6 jobs per pass of TC on a chain instead of 2 (the broadcast and the
    # count); the passes size their partitions from exact row counts (``partitions``) and
    # choose broadcasts from them, which is what it would have adapted
    "spark.sql.adaptive.enabled": "false",
}
"""Session SQL settings of a stratum's passes, restored after it."""
SINGLE_PARTITION_SETTINGS = {
    # a pass in one partition joins without broadcasts: Spark would broadcast the small sides
    # by their estimated size, a job per broadcast relation per pass
    "spark.sql.autoBroadcastJoinThreshold": "-1",
}
"""Session SQL settings of a pass run in one partition (``SparkFixpoint._apply``)."""


def new_rows(derived: DataFrame, known: DataFrame, parts: int) -> DataFrame:
    """The distinct rows of ``derived`` that are not in ``known`` (same columns), laid out by
    ``partitions.hash_partitioned`` into ``parts`` parts. When ``known`` is laid out so too,
    only ``derived`` is shuffled; the distinct and the anti-join are partition-local."""
    distinct = hash_partitioned(derived, parts).distinct()
    if not distinct.columns:
        return distinct.join(known.limit(1), how="left_anti")
    return distinct.join(known, on=distinct.columns, how="left_anti")


class SparkFixpoint:
    """Runs strata over ``frames`` (relation name -> distinct rows) with ``counts`` (name ->
    number of rows), updating both in place; collects a StratumStats per stratum in
    ``stats`` and sends a Progress per pass to ``observer``.

    Hyperparameters: see ``SparkBackend``. ``release()`` drops every frame this run stored
    (call it once the results are written or collected).
    """

    def __init__(self, session: SparkSession, frames: dict[str, DataFrame],
                 counts: dict[str, int], *, strata: int, checkpoint_interval: int,
                 checkpoint_dir: str | None, broadcast_rows: int, decompose: bool = True,
                 observer: ProgressObserver | None = None,
                 rows_per_partition: int = ROWS_PER_PARTITION,
                 single_partition_rows: int = SINGLE_PARTITION_ROWS):
        self.session = session
        self.frames = frames
        self.counts = counts
        self.strata = strata
        self.checkpoint_interval = checkpoint_interval
        self.checkpoint_dir = checkpoint_dir
        self.broadcast_rows = broadcast_rows
        self.decompose = decompose
        self.observer = observer
        self.rows_per_partition = rows_per_partition
        self.single_partition_rows = single_partition_rows
        self.stats: list[StratumStats] = []
        self.ordered: set[str] = set()
        """Relations whose frames are in sort order by column, partition after partition
        (``decomposed.ordered_by_pivot``): ``outputs`` writes them without sorting."""
        self.total = 0
        self._stored: list[DataFrame] = []
        self._parts: dict[str, int] = {}
        if checkpoint_dir is not None:
            session.sparkContext.setCheckpointDir(checkpoint_dir)

    # -- one stratum -----------------------------------------------------------------------------

    def run_stratum(self, stratum: Stratum) -> None:
        """Bring ``stratum``'s relations to fixpoint in ``frames``: after the first pass, by
        one decomposed job when ``_decomposable`` says so, else by semi-naive passes over
        relations laid out by ``partitions``."""
        start, before, passes = time.perf_counter(), self.total, 1
        most = int(self.session.conf.get(SHUFFLE_PARTITIONS))
        with run_settings(self.session, {**PASS_SETTINGS, SHUFFLE_PARTITIONS: str(most)}):
            if stratum.recursive:
                self._lay_out(stratum.relations, most)
            self._apply(stratum, self._plans(stratum.rules), passes)
            if self._decomposable(stratum):
                passes += 1
                pivot = find_pivot(stratum)
                self._decomposed(stratum, pivot, passes, 1 if pivot is None else most)
            elif stratum.recursive:
                variants = self._plans(tuple(v for rule in stratum.rules
                                             for v in delta_variants(rule, set(stratum.relations))))
                while any(self.counts[delta_name(name)] for name in stratum.relations):
                    if passes % self.checkpoint_interval == 0:
                        self._lay_out(stratum.relations, most)
                    passes += 1
                    self._apply(stratum, variants, passes)
                self._lay_out(stratum.relations, most)
        self.stats.append(StratumStats(
            stratum=stratum.index, relations=stratum.relations, iterations=passes,
            derived=self.total - before, seconds=time.perf_counter() - start))

    def _decomposable(self, stratum: Stratum) -> bool:
        """Whether the recursive ``stratum``, after its first pass, runs as one decomposed job:
        ``decompose`` is on, the lower relations it reads hold at most ``broadcast_rows`` rows,
        and it has a pivot or its own relations hold at most ``single_partition_rows``. O(the
        pivot search)."""
        if not (stratum.recursive and self.decompose) or sum(
                self.counts[name] for name in lower_relations(stratum)) > self.broadcast_rows:
            return False
        return (sum(self.counts[name] for name in stratum.relations)
                <= self.single_partition_rows or find_pivot(stratum) is not None)

    def _decomposed(self, stratum: Stratum, pivot: Pivot | None, iteration: int,
                    partitions: int) -> None:
        """The stratum's fixpoint from its seeds (the frames after the first pass) by one
        decomposed job, reported as pass ``iteration``."""
        names = (*lower_relations(stratum), *stratum.relations)
        types = {name: frame_types(self.frames[name]) for name in names}
        result, counts = run_decomposed(self.session, stratum, pivot, self.frames, types,
                                        partitions)
        self._stored.append(result)
        if ordered_by_pivot(stratum, pivot, types):
            self.ordered.update(stratum.relations)
        added = 0
        for name in stratum.relations:
            self.frames[name] = relation_of(result, stratum, name, types)
            self._parts.pop(name, None)
            added += counts[name] - self.counts[name]
            self.counts[name] = counts[name]
            self.frames[delta_name(name)] = self.frames[name].limit(0)
            self.counts[delta_name(name)] = 0
        self.total += added
        if self.observer is not None:
            self.observer(Progress(stratum=stratum.index, strata=self.strata,
                                   iteration=iteration, delta=added, total=self.total))

    def _plans(self, rules: tuple[Rule, ...]) -> tuple[tuple[Rule, ir.Plan], ...]:
        return tuple((rule, translate_rule(rule, sizes=self.counts)) for rule in rules)

    def _single_partition(self, stratum: Stratum) -> bool:
        """Whether a pass of the recursive ``stratum`` runs in one partition: its relations are
        laid out in one part and the lower relations it reads hold at most ``broadcast_rows``
        rows in all. O(relations)."""
        return (stratum.recursive
                and all(self._parts.get(name) == 1 for name in stratum.relations)
                and sum(self.counts[name] for name in lower_relations(stratum))
                <= self.broadcast_rows)

    def _apply(self, stratum: Stratum, plans: tuple[tuple[Rule, ir.Plan], ...],
               iteration: int) -> None:
        """One pass: derive, keep the new rows as the deltas, grow the full relations.

        In one partition (``_single_partition``) every relation the rules read is coalesced
        into one part (a narrow dependency: a union of one-part pieces is one part again) and
        nothing is broadcast, so that the pass is one job, the count, of one-task stages."""
        single = self._single_partition(stratum)
        frames: dict[str, DataFrame] = self.frames
        if single:
            read = (*lower_relations(stratum), *stratum.relations,
                    *(delta_name(name) for name in stratum.relations))
            frames = {**self.frames, **{name: self.frames[name].coalesce(1) for name in read
                                        if name in self.frames}}
        with sql_settings(self.session, SINGLE_PARTITION_SETTINGS if single else {}):
            self._derive(stratum, plans, iteration, frames, -1 if single else self.broadcast_rows)

    def _derive(self, stratum: Stratum, plans: tuple[tuple[Rule, ir.Plan], ...],
                iteration: int, frames: dict[str, DataFrame], broadcast_rows: int) -> None:
        derived: dict[str, list[DataFrame]] = {}
        for rule, plan in plans:
            builder = PlanFrames(self.session, frames, self.counts, broadcast_rows, rule)
            derived.setdefault(rule.head.relation, []).append(builder.frame(plan))
        added, most = 0, int(self.session.conf.get(SHUFFLE_PARTITIONS))
        for name in stratum.relations:
            heads = derived.get(name)
            layout = self._parts.get(name) or partition_count(self.counts[name], most,
                                                              self.rows_per_partition)
            if heads is None:
                delta, size = self.frames[name].limit(0), 0
            else:
                delta = self._cut(new_rows(reduce(DataFrame.union, heads), frames[name],
                                           layout))
                size = delta.count()
            self.frames[delta_name(name)] = delta
            self.counts[delta_name(name)] = size
            if size:
                # an empty relation is Spark's empty LocalRelation, without the delta's layout
                self.frames[name] = (self.frames[name].union(delta) if self.counts[name]
                                     else delta)
                self.counts[name] += size
                added += size
        self.total += added
        if self.observer is not None:
            self.observer(Progress(stratum=stratum.index, strata=self.strata,
                                   iteration=iteration, delta=added, total=self.total))

    def _cut(self, frame: DataFrame) -> DataFrame:
        """``frame`` as a checkpoint (local or reliable), a leaf of later plans, which would
        otherwise hold the whole history of the run. Lazy: the next action (the pass's count)
        computes and stores it in the same job."""
        stored = (frame.localCheckpoint(eager=False) if self.checkpoint_dir is None
                  else frame.checkpoint(eager=False))
        self._stored.append(stored)
        return stored

    def _lay_out(self, relations: tuple[str, ...], most: int) -> None:
        """Cut the lineage of ``relations``' full frames (lazily: the next pass's job stores
        them), hash-partitioned on all columns into ``partitions.partition_count`` of their rows
        (at most ``most``) parts, which becomes the session's shuffle partitions, so that the
        passes' deltas land in the same layout. A frame already in that layout is not
        shuffled again."""
        parts = partition_count(sum(self.counts[name] for name in relations), most,
                                self.rows_per_partition)
        self.session.conf.set(SHUFFLE_PARTITIONS, str(parts))
        for name in relations:
            frame = self.frames[name]
            if parts == 1 or self._parts.get(name) != parts:  # one part: a union of pieces
                frame = hash_partitioned(frame, parts)
                self._parts[name] = parts
            self.frames[name] = self._cut(frame)

    # -- whole run -------------------------------------------------------------------------------

    def release(self) -> None:
        """Drop the blocks of the frames this run stored (the checkpoints)."""
        for frame in self._stored:
            frame.unpersist()
        self._stored.clear()

