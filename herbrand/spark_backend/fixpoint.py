"""Semi-naive evaluation of a program's strata over Spark DataFrames, driven from the driver.

Each stratum (``analyse``) runs as in ``herbrand.evaluators.fixpoint.SemiNaiveFixpoint``: one
pass of its rules over the full relations, then, when it is recursive, passes of their
``delta_variants`` reading ``delta_name(r)``, the rows new in the previous pass, until a pass
adds nothing. A pass builds each rule's frame (``plans.PlanFrames``), unites the frames of one
head, and keeps the rows not yet known:

    new = partitions.new_rows(union(rule frames), full)   (checkpointed, counted)
    full = full union new

The relations of a recursive stratum and their deltas are laid out by ``partitions``: hash-
partitioned on all columns into a number of parts sized from their rows (at most
``spark.sql.shuffle.partitions``, which is set to it during the passes). With more than one
part, ``full`` is never exchanged after the first pass: the derived rows are shuffled into the
layout, the distinct and the anti-join against ``full`` are partition-local, and the union
keeps the layout. With one part (small relations, whose lower relations hold at most
``broadcast_rows`` rows) a pass runs in one partition, without exchanges or broadcasts: every
relation its rules read is one part that Spark knows as one (a full relation, a union of
one-part pieces, is coalesced: a narrow dependency; a lower relation is coalesced and stored
once per stratum), and the deltas carry their exact sizes (``SparkFixpoint._derive``), so the
joins, the distinct and the anti-join run in the one task of the pass's one stage.

Each ``new`` is a checkpoint (``checkpoints``), so that it is a leaf of later plans: without
that, every delta's plan holds the plans of all the earlier ones and planning time (and the
driver's memory) blows up within a few dozen passes. The pass's count (its delta size,
reported as a Progress event) is the count of the checkpoint's RDD: one job computes the new
rows, stores them and cuts their lineage before the next pass is planned. (A lazy checkpoint
left for the next pass's job to store, with the count taken from a cache, kept a lineage that
grew until serializing a task overflowed the driver's stack after 175 passes.)
``full`` is a union of such pieces; every ``checkpoint_interval`` passes, and at the end of a
recursive stratum, it is checkpointed (lazily, by the next pass's job), and laid out again
when its row count calls for more parts; once stored, the pieces it supersedes are freed, so
the storage held stays within about twice the relations' rows over any number of passes.
Checkpoints are local by default (blocks kept by the executors: fast, but an executor lost
loses the run) or reliable, to ``checkpoint_dir`` (files; a lost executor's tasks are redone
from them). The passes run without adaptive execution (``PASS_SETTINGS``), which made a job
of every exchange.

Cost per pass: the rules' joins (a shuffle each, unless the static side is broadcast), a
shuffle of the derived rows, a sort of ``full`` for the anti-join (no shuffle), and a job per
broadcast relation and one for the count; in one partition, the count's job alone, of one
stage (a job more in the pass after a layout when that pass reads none of the laid-out
rows), whose generated code is the previous pass's (``checkpoints.sized`` and
``spark.sql.codegen.useIdInClassName`` off: a Limit, or a stage at another position in the
plan, made about 9 classes to compile per pass, each on the driver and again in the task).
Measured on a chain of 50 edges (linear TC, ``local[2]``, decomposition off, bench/):
see bench/README.md.

A recursive stratum that ``decomposed_strata`` chooses skips the passes after the first: one
job runs herbrand's native engine to fixpoint in each partition of its seeds (``decomposed``).
A stratum small enough for the driver runs there, Spark's passes skipped (``driver_strata``);
one chosen so whose seeds, and the relations it reads, fit the driver's budget (whether the
driver held them, and its attempt there was abandoned, or Spark read or derived them) runs no
pass on Spark at all: the driver makes its seeds and splits them (``driver_seeds``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import reduce

from pyspark.sql import DataFrame, SparkSession

from herbrand.evaluators.fixpoint import delta_name, delta_variants
from herbrand.framework.analysis import Stratum
from herbrand.framework.contracts import Progress, ProgressObserver, StratumStats
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Rule
from herbrand.spark_backend.checkpoints import Checkpoints, sized
from herbrand.spark_backend.decomposed import lower_relations
from herbrand.spark_backend.decomposed_strata import SINGLE_PARTITION_ROWS, DecomposedStrata
from herbrand.spark_backend.driver_strata import SPARK, STARTING, Driver, reads_of
from herbrand.spark_backend.partitions import (
    ROWS_PER_PARTITION,
    hash_partitioned,
    new_rows,
    partition_count,
)
from herbrand.spark_backend.plans import PlanFrames
from herbrand.spark_backend.session import RunSession, run_settings, sql_settings
from herbrand.translators import ir
from herbrand.translators.pipeline import translate_rule

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
PASS_SETTINGS = {
    # adaptive execution runs every exchange of a plan as a job of its own and plans again
    # between them: 6 jobs per pass of TC on a chain instead of 2 (the broadcast and the
    # count); the passes size their partitions from exact row counts (``partitions``) and
    # choose broadcasts from them, which is what it would have adapted
    "spark.sql.adaptive.enabled": "false",
    # a stage's generated class is named by its position in the plan: the same stage at
    # another position (the full relation is a union of as many pieces as passes since its
    # layout) would be another class to compile; Spark's compiled-code cache matches on code
    "spark.sql.codegen.useIdInClassName": "false",
}
"""Session SQL settings of a stratum's passes, restored after it."""
SINGLE_PARTITION_SETTINGS = {
    # a pass in one partition joins without broadcasts: Spark would broadcast the small sides
    # by their estimated size, a job per broadcast relation per pass
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    # and without exchanges: Spark keeps both sides of a join (or anti-join) in their one
    # partition only when each side's estimated size is at most this (128 MB by default); the
    # pass's frames carry exact sizes (``SparkFixpoint._derive``), but a join's estimate is the
    # product of its sides'
    "spark.sql.maxSinglePartitionBytes": str(2**63 - 1),
}
"""Session SQL settings of a pass run in one partition (``SparkFixpoint._apply``)."""


class SparkFixpoint:
    """Runs strata over ``frames`` (relation name -> distinct rows) with ``counts`` (name ->
    number of rows), updating both in place; collects a StratumStats per stratum in
    ``stats`` and sends a Progress per pass to ``observer``.

    Hyperparameters: see ``SparkBackend``; ``written_once``: see ``DecomposedStrata``, which
    holds the decomposed strata's jobs (``decomposed``: those left to a write, the relations
    in sort order); call ``settle()`` after the writes. ``release()`` drops every frame this
    run stored (call it once the results are written or collected).
    ``driver``: where small strata run, and the seeds of decomposed ones are made, and the
    relations held there (``driver_strata``); every other relation is in ``frames``.
    """

    def __init__(self, spark: RunSession, driver: Driver, frames: dict[str, DataFrame],
                 counts: dict[str, int], *, strata: int, checkpoint_interval: int,
                 checkpoint_dir: str | None, broadcast_rows: int, decompose: bool = True,
                 observer: ProgressObserver | None = None,
                 rows_per_partition: int = ROWS_PER_PARTITION,
                 single_partition_rows: int = SINGLE_PARTITION_ROWS,
                 written_once: frozenset[str] = frozenset()):
        self.spark = spark
        self.driver = driver
        self.frames = frames
        self.counts = counts
        self.strata = strata
        self.checkpoint_interval = checkpoint_interval
        self.broadcast_rows = broadcast_rows
        self.observer = observer
        self.rows_per_partition = rows_per_partition
        self.decomposed = DecomposedStrata(spark, decompose=decompose,
                                           broadcast_rows=broadcast_rows,
                                           single_partition_rows=single_partition_rows,
                                           written_once=written_once)
        self.stats: list[StratumStats] = []
        self.total = 0
        self._checkpoint_dir = checkpoint_dir
        self._stored: Checkpoints | None = None
        self._parts: dict[str, int] = {}
        self._one_part: set[str] = set()
        """Deltas stored in one part that Spark knows as one (``SinglePartition``)."""
        self._lower: dict[str, tuple[DataFrame, DataFrame]] = {}
        """Lower relation -> (its frame, that frame stored in one part), for passes in one
        partition (``_one_part_frames``)."""

    @property
    def session(self) -> SparkSession:
        """The run's session, started now if it is not yet (``RunSession``)."""
        return self.spark.get()

    @property
    def _checkpoints(self) -> Checkpoints:
        """The run's checkpoints, in the session (made when a stratum first runs on Spark)."""
        if self._stored is None:
            self._stored = Checkpoints(self.session, self._checkpoint_dir)
        return self._stored

    # -- one stratum -----------------------------------------------------------------------------

    def run_stratum(self, stratum: Stratum) -> None:
        """Bring ``stratum``'s relations to fixpoint in ``frames``: after the first pass, by
        one decomposed job when ``decomposed`` chooses it, else by semi-naive passes over
        relations laid out by ``partitions``; on the driver when ``driver`` allows, and from
        seeds made on the driver when what it reads fits the driver's budget
        (``_driver_seeds``)."""
        ran = self.driver.run(stratum, self.frames, self.counts, self.total, self.strata,
                              self.observer)
        if ran is not None:
            self.total += ran.derived
            self.stats.append(ran)
            return
        if not self.spark.started and self.observer is not None:
            self.observer(Progress(stratum=stratum.index, strata=self.strata, iteration=0,
                                   delta=0, total=self.total, where=STARTING))
        seeding = time.perf_counter()
        seeds = self._driver_seeds(stratum)
        seeding = time.perf_counter() - seeding
        if seeds is None:
            self.driver.hand_over(stratum, self.frames)
        most = int(self.session.conf.get(SHUFFLE_PARTITIONS))  # the session's start is no pass
        start, before = time.perf_counter() - seeding, self.total
        with (run_settings(self.session, {**PASS_SETTINGS, SHUFFLE_PARTITIONS: str(most)}),
              self._checkpoints.marking()):
            passes = (self._seeded(stratum, seeds, most) if seeds is not None
                      else self._passes(stratum, most))
        self.stats.append(StratumStats(
            stratum=stratum.index, relations=stratum.relations, iterations=passes,
            derived=self.total - before, seconds=time.perf_counter() - start, where=SPARK))

    def _passes(self, stratum: Stratum, most: int) -> int:
        """Run ``stratum`` from its frames: its first pass, then one decomposed job when
        ``decomposed`` chooses it, else semi-naive passes over relations laid out by
        ``partitions`` (in at most ``most`` parts); its passes."""
        passes = 1
        if stratum.recursive:
            self._lay_out(stratum.relations, most)
        self._apply(stratum, self._plans(stratum.rules), passes)
        if self.decomposed.chooses(stratum, self.counts):
            passes += 1
            for name in stratum.relations:
                self._parts.pop(name, None)
            counts = self.decomposed.run(stratum, self.frames, self.counts, most,
                                         len(self.stats), passes,
                                         self.driver.tables(lower_relations(stratum)))
            if counts is not None:
                self._counted(stratum, counts, passes)
        elif stratum.recursive:
            variants = self._plans(tuple(v for rule in stratum.rules
                                         for v in delta_variants(rule, set(stratum.relations))))
            while any(self.counts[delta_name(name)] for name in stratum.relations):
                if passes % self.checkpoint_interval == 0:
                    self._lay_out(stratum.relations, most)
                passes += 1
                self._apply(stratum, variants, passes)
            self._lay_out(stratum.relations, most)
        return passes

    def _seeded(self, stratum: Stratum, seeds: Database, most: int) -> int:
        """Run ``stratum`` as one decomposed job (``DecomposedStrata.parts``) from ``seeds``
        made on the driver (``_driver_seeds``), reported as its first pass: two passes."""
        self._counted(stratum, {name: len(seeds[name]) for name in stratum.relations}, 1)
        counts = self.decomposed.run_seeded(stratum, seeds, self.frames, self.counts, most,
                                            len(self.stats), 2)
        if counts is not None:
            self._counted(stratum, counts, 2)
        return 2

    def _driver_seeds(self, stratum: Stratum) -> Database | None:
        """The seeds of ``stratum`` made on the driver (``Driver.seeds``) when it is to run as
        one decomposed job over them (``driver_seeds``): ``decomposed`` may choose it by the
        sizes of the relations it reads (``DecomposedStrata.may_choose``), those of them the
        driver does not hold (Spark's: read by Spark, or derived there) hold at most its
        budget of rows in all and are collected (``Driver.take``: a job each; the lower
        ones, read by every partition, are collected for the job's broadcast anyway), the
        seeds are within the budget and ``decomposed`` chooses the stratum with their sizes;
        its relations are then Spark's alone. Else None (a budget of 0: always), and nothing
        changed but the relations collected, which the driver keeps."""
        if not (self.driver.budget and self.decomposed.may_choose(stratum, self.counts)):
            return None
        names = reads_of(stratum)
        if sum(self.counts[name] for name in names
               if not self.driver.holds(name)) > self.driver.budget:
            return None
        self.driver.take(names, self.frames, self.counts)
        seeds = self.driver.seeds(stratum)
        if seeds is None or not self.decomposed.chooses(stratum, {**self.counts,
                                                                  **seeds.sizes()}):
            return None
        self.driver.drop(stratum)
        return seeds

    def _counted(self, stratum: Stratum, counts: dict[str, int], iteration: int) -> int:
        """Take ``counts`` (name -> rows) as the stratum's relations' sizes after pass
        ``iteration``, and report it; the rows it added."""
        added = 0
        for name in stratum.relations:
            added += counts[name] - self.counts[name]
            self.counts[name] = counts[name]
        self.total += added
        if self.observer is not None:
            self.observer(Progress(stratum=stratum.index, strata=self.strata,
                                   iteration=iteration, delta=added, total=self.total,
                                   where=SPARK))
        return added

    def settle(self) -> None:
        """After the writes: the sizes of the strata whose decomposed job ran in a write
        (``DecomposedStrata.deferred``), as its tasks counted them; their pass is reported
        now and their ``stats`` count its rows (their seconds do not hold the job: the
        write's do)."""
        for left, sizes in self.decomposed.written():
            added = self._counted(left.stratum, sizes, left.iteration)
            done = self.stats[left.position]
            self.stats[left.position] = replace(done, derived=done.derived + added)

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

        In one partition (``_single_partition``) every relation the rules read is in one part
        (``_one_part_frames``) and nothing is broadcast, so that the pass is one job, the
        count, of one stage: no exchange."""
        single = self._single_partition(stratum)
        frames = {**self.frames, **self._one_part_frames(stratum)} if single else self.frames
        with sql_settings(self.session, SINGLE_PARTITION_SETTINGS if single else {}):
            self._derive(stratum, plans, iteration, frames, single)

    def _one_part_frames(self, stratum: Stratum) -> dict[str, DataFrame]:
        """The frames a pass of ``stratum`` in one partition reads, each one part that Spark
        knows as one (``SinglePartition``). A delta of a pass in one partition is so already;
        a full relation (a union of pieces) is coalesced, a narrow dependency; a lower
        relation is coalesced and stored once for the stratum, not read again from its source
        and coalesced every pass (each coalesce also splits the pass's generated code). O(the
        relations read), plus a store of each lower relation once."""
        frames = {name: self.frames[name] if name in self._one_part
                  else self.frames[name].coalesce(1)
                  for name in (*stratum.relations, *map(delta_name, stratum.relations))
                  if name in self.frames}
        for name in filter(self.frames.__contains__, lower_relations(stratum)):
            source, stored = self._lower.get(name, (None, None))
            if source is not self.frames[name]:
                source, stored = self.frames[name], self._checkpoints.cut(
                    self.frames[name].coalesce(1))
                self._lower[name] = (source, stored)
            frames[name] = stored
        return frames

    def _derive(self, stratum: Stratum, plans: tuple[tuple[Rule, ir.Plan], ...],
                iteration: int, frames: dict[str, DataFrame], single: bool) -> None:
        """Derive the pass's rows from ``frames``, keep the new ones as the deltas (each
        checkpointed, stored and counted in one job, ``Checkpoints.store``, its lineage cut
        when it returns) and grow the full relations; then free the checkpoints a stored
        layout supersedes (``Checkpoints.collect``).

        In one partition (``single``), a delta is read, and added to its full relation, as
        its checkpoint estimated at its exact row count (``checkpoints.sized``). A
        checkpoint's own size estimate is that of the plan it stored, a product over the joins
        of every earlier pass, which soon exceeds what Spark keeps in one partition
        (``SINGLE_PARTITION_SETTINGS``) and then exchanges both sides of every join, a stage
        each."""
        broadcast_rows = -1 if single else self.broadcast_rows
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
                new = new_rows(reduce(DataFrame.union, heads), frames[name], layout)
                delta = stored = self._checkpoints.cut(new)
                size = self._checkpoints.store(delta)
                if single:
                    delta = sized(delta, size)
            if single and heads is not None:
                self._one_part.add(delta_name(name))
            else:
                self._one_part.discard(delta_name(name))
            self.frames[delta_name(name)] = delta
            self.counts[delta_name(name)] = size
            if size:
                # an empty relation is Spark's empty LocalRelation, without the delta's layout
                self.frames[name] = (self.frames[name].union(delta) if self.counts[name]
                                     else delta)
                self.counts[name] += size
                self._checkpoints.piece(name, stored)
                added += size
        self._checkpoints.collect()
        self.total += added
        if self.observer is not None:
            self.observer(Progress(stratum=stratum.index, strata=self.strata,
                                   iteration=iteration, delta=added, total=self.total,
                                   where=SPARK))

    def _lay_out(self, relations: tuple[str, ...], most: int) -> None:
        """Cut the lineage of ``relations``' full frames (lazily: the next pass's job stores
        them, and the pieces they supersede are then freed), hash-partitioned on all columns
        into ``partitions.partition_count`` of their rows (at most ``most``) parts, which
        becomes the session's shuffle partitions, so that the passes' deltas land in the same
        layout. A frame already in that layout is not shuffled again."""
        parts = partition_count(sum(self.counts[name] for name in relations), most,
                                self.rows_per_partition)
        self.session.conf.set(SHUFFLE_PARTITIONS, str(parts))
        for name in relations:
            frame = self.frames[name]
            if parts == 1 or self._parts.get(name) != parts:  # one part: a union of pieces
                frame = hash_partitioned(frame, parts)
                self._parts[name] = parts
            self.frames[name] = self._checkpoints.cut(frame)
            self._checkpoints.relaid(name, self.frames[name])

    # -- whole run -------------------------------------------------------------------------------

    def release(self) -> None:
        """Drop the blocks of the frames this run stored (the checkpoints and caches)."""
        self.decomposed.release()
        self._lower.clear()
        if self._stored is not None:
            self._stored.release()
