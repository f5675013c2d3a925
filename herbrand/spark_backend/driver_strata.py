"""Small strata run on the driver by herbrand's native engine, so that a small program on Spark
does not pay Spark's planning and jobs for every stratum and pass.

A stratum of the Spark backend runs on the driver (``Driver.attempt``) when the relations it
reads (its lower relations and its own, which may hold given facts) hold at most
``driver_rows`` rows in all, and its derivation stays within ``derived_budget`` rows: the
local backend's default engine (``SemiNaiveFixpoint`` over ``NativeEvaluator``) runs it over
the driver's copies of those relations with the budget as its ``row_limit``: the engine's
buffers grow no further than the budget's room, and the kernel call that needs more is
stopped (``RowLimitError``), in the first pass as in the recursive ones; the stratum then
runs on Spark as before, from the same inputs (the engine copies what it reads). TC over
Gnutella08 (20,777 edges, 13.1M derived) is abandoned that way and stays on Spark.

Relations live in one place or both (``Driver.relations``, ids of the driver's SymbolTable;
the run's frames): a relation held on the driver becomes a frame (``createDataFrame`` from
Arrow, ``frames.relation_frame``) only when a stratum run on Spark reads it, or a write only
Spark can do (Parquet, a path that is not local) needs it; a frame a driver stratum reads is
collected (``frames.frame_relation``, a job). Small ``.input`` files on the local file system
are read by the local reader (``read``), and the outputs of relations held on the driver are
written by the local writer (``outputs``): the local backend's rows, errors and bytes.

The seeds of a recursive stratum that runs as one decomposed job (``driver_seeds``) are made
here too (``Driver.seeds``: its exit rules under the budget) whenever the relations it reads
fit the budget, with ``driver_rows`` 0 too: the relations Spark holds (read from files, or
derived there) are collected first (``take``). TC over Gnutella08 with Spark reading its
input (``--driver-rows 0``) so runs no pass on Spark and no range sample (see bench/README.md).

Cost of a driver stratum: the native engine's (loading the relations it reads, O(rows)), and
an analysis of the stratum's rules; of an abandoned attempt, that plus the derivations of at
most the budget's rows (per relation of the stratum, when several grow together).
"""

from __future__ import annotations

import os
import re
import stat
import time

import pyarrow as pa
from pyspark.sql import DataFrame

from herbrand.framework import io
from herbrand.framework.analysis import Stratum
from herbrand.framework.contracts import Progress, ProgressObserver, StratumStats
from herbrand.framework.errors import RowLimitError
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Declaration, Literal, Program, Rule
from herbrand.spark_backend.decomposed import lower_relations
from herbrand.spark_backend.frames import driver_table, frame_relation, relation_frame
from herbrand.spark_backend.session import RunSession

DRIVER_ROWS = 100_000
"""Rows a stratum may read, in all, to run on the driver (``SparkBackend(driver_rows=...)``
and ``herbrand run --driver-rows``; 0: every stratum on Spark, every file read by Spark)."""
DERIVED_BUDGET = 1_000_000
"""Rows a driver stratum may derive before its attempt is abandoned for Spark, and that the
seeds of a decomposed stratum may hold, and the relations Spark holds that they are made
from (``SparkBackend(derived_budget=...)``; 0: no seeds made on the driver)."""
BYTES_PER_ROW = 128
"""A local ``.input`` file of at most ``driver_rows`` times this many bytes (as stored: a
``.gz`` file's compressed bytes) is read on the driver."""
DRIVER, SPARK = "driver", "spark"
"""Where a stratum ran (``StratumStats.where``, ``Progress.where``)."""
STARTING = "spark (starting the Spark session)"
"""``Progress.where`` of the event sent before the first stratum of a run to run on Spark
starts the run's session (``session.RunSession``)."""
_URI = re.compile(r"^[a-zA-Z][\w+.-]*:")


class Driver:
    """The relations held on the driver and the strata run there (see the module doc), in a
    run whose session is ``spark`` (started when a frame is first made).

    ``relations``: name -> the rows held on the driver (ids of ``symbols``); ``declarations``:
    the program's, by name. Hyperparameters: ``rows`` (``DRIVER_ROWS``), ``budget``
    (``DERIVED_BUDGET``)."""

    def __init__(self, spark: RunSession, declarations: dict[str, Declaration],
                 symbols: SymbolTable, rows: int = DRIVER_ROWS, budget: int = DERIVED_BUDGET):
        self.spark = spark
        self.declarations = declarations
        self.symbols = symbols
        self.rows = rows
        self.budget = budget
        self.relations: dict[str, Relation] = {}
        self._evaluator = None  # the native engine, made by the first attempt

    def holds(self, name: str) -> bool:
        return name in self.relations

    def frame(self, name: str) -> DataFrame:
        """The frame of the driver's rows of ``name`` (``createDataFrame`` from Arrow)."""
        return relation_frame(self.spark.get(), self.relations[name],
                              self.declarations[name].types, self.symbols)

    def tables(self, names: tuple[str, ...]) -> dict[str, pa.Table]:
        """The relations of ``names`` held here, as Arrow tables (``driver_table``: what
        ``frame_table`` collects from a frame of them): name -> table. O(their rows)."""
        return {name: driver_table(self.relations[name], self.declarations[name].types,
                                   self.symbols) for name in names if name in self.relations}

    def take(self, names: tuple[str, ...], frames: dict[str, DataFrame],
             counts: dict[str, int]) -> None:
        """Hold each relation of ``names`` on the driver: one held here already stays, one
        ``counts`` says is empty is taken without a job, and the rows of any other's frame in
        ``frames`` are collected (a job each)."""
        for name in names:
            if name in self.relations:
                continue
            self.relations[name] = (
                Relation.empty(len(self.declarations[name].types)) if not counts[name]
                else frame_relation(frames[name], self.declarations[name].types, self.symbols))

    def add(self, name: str, rows: Relation) -> None:
        """Add ``rows`` (ids of ``symbols``) to the driver's rows of ``name``."""
        held = self.relations.get(name)
        self.relations[name] = rows if held is None else held.union(rows)

    # -- reading ---------------------------------------------------------------------------------

    def reads(self, path: str) -> bool:
        """Whether the ``.input`` file ``path`` is read on the driver: a local path (no
        scheme) of at most ``rows * BYTES_PER_ROW`` bytes, or one the local reader will
        report (missing, a directory, unreadable: its message is the Spark reader's). One
        stat."""
        if not self.rows or not local_path(path):
            return False
        try:
            status = os.stat(path)
        except OSError:
            return True
        return not stat.S_ISREG(status.st_mode) or status.st_size <= self.rows * BYTES_PER_ROW

    def read(self, path: str, name: str, delimiter: str) -> None:
        """Read ``path`` with the local reader (``io.read_facts``) into ``name``'s rows.
        FactsError as the local backend's."""
        self.add(name, io.read_facts(path, self.declarations[name].types, self.symbols,
                                     delimiter, name))

    # -- strata ----------------------------------------------------------------------------------

    def attempt(self, stratum: Stratum) -> tuple[Database, int] | None:
        """``stratum``'s relations at fixpoint computed here from the driver's rows of the
        relations it reads (all held here), and its iterations; None when the attempt would
        derive more than ``budget`` rows and was abandoned (``RowLimitError``)."""
        return self._materialize(stratum, stratum.rules)

    def seeds(self, stratum: Stratum) -> Database | None:
        """The seeds of the recursive ``stratum`` (every relation it reads held here): its
        relations' rows here united with what its exit rules (those reading none of them)
        derive, with the lower relations its rules read, as a Database of the driver's
        symbols; None when that would derive more than ``budget`` rows. Cost: one pass of the
        exit rules by the native engine."""
        own = set(stratum.relations)
        exits = tuple(rule for rule in stratum.rules if not any(
            isinstance(element, Literal) and element.atom.relation in own
            for element in rule.body))
        attempted = self._materialize(stratum, exits)
        return None if attempted is None else attempted[0]

    def _materialize(self, stratum: Stratum, rules: tuple[Rule, ...]
                     ) -> tuple[Database, int] | None:
        """The fixpoint of ``rules`` over the driver's rows of the relations ``stratum``
        reads (all held here) and its iterations, or None over ``budget`` (``attempt``)."""
        names = reads_of(stratum)
        program = Program(declarations=tuple(self.declarations[name] for name in names),
                          rules=rules)
        database = Database({name: self.relations[name] for name in names}, self.symbols,
                            {name: self.declarations[name].types for name in names})
        from herbrand.evaluators.fixpoint import SemiNaiveFixpoint
        from herbrand.evaluators.native.evaluator import NativeEvaluator

        if self._evaluator is None:  # one for the run: the strata share its loaded relations
            self._evaluator = NativeEvaluator(row_limit=self.budget)
        fixpoint = SemiNaiveFixpoint(self._evaluator)
        try:
            result = fixpoint.materialize(program, database)
        except RowLimitError:  # the evaluator dropped its store, which held part of it
            return None
        return result, sum(s.iterations for s in fixpoint.stats)

    def run(self, stratum: Stratum, frames: dict[str, DataFrame], counts: dict[str, int],
            total: int, strata: int, observer: ProgressObserver | None) -> StratumStats | None:
        """Run ``stratum`` here when the relations it reads hold at most ``rows`` rows (by
        ``counts``, every relation's size; those only in ``frames`` are collected: a job
        each) and ``attempt`` succeeds: its relations' rows are then held here only (their
        frames dropped) and their sizes set in ``counts``, one Progress (after the run's
        ``total`` rows) goes to ``observer``, and its stats are returned; None when it must
        run on Spark (``hand_over``)."""
        names = reads_of(stratum)
        if not self.rows or sum(counts[name] for name in names) > self.rows:
            return None
        start = time.perf_counter()
        self.take(names, frames, counts)
        attempted = self.attempt(stratum)
        if attempted is None:
            return None
        result, iterations = attempted
        derived = 0
        for name in stratum.relations:
            self.relations[name] = result[name]
            frames.pop(name, None)
            derived += len(result[name]) - counts[name]
            counts[name] = len(result[name])
        if observer is not None:
            observer(Progress(stratum=stratum.index, strata=strata, iteration=iterations,
                              delta=derived, total=total + derived, where=DRIVER))
        return StratumStats(stratum=stratum.index, relations=stratum.relations,
                            iterations=iterations, derived=derived,
                            seconds=time.perf_counter() - start, where=DRIVER)

    def hand_over(self, stratum: Stratum, frames: dict[str, DataFrame]) -> None:
        """Before ``stratum`` runs on Spark: a frame for each relation it reads that is held
        here only (``frame``); its own relations are then Spark's alone."""
        for name in reads_of(stratum):
            if name not in frames:
                frames[name] = self.frame(name)
        self.drop(stratum)

    def drop(self, stratum: Stratum) -> None:
        """Hold none of ``stratum``'s relations here: they are Spark's alone."""
        for name in stratum.relations:
            self.relations.pop(name, None)


def local_path(path: str) -> bool:
    """Whether ``path`` is a path of the driver's file system as the local backend takes it:
    without a scheme (``hdfs://``, ``file:``, ``s3a://``). Pure.

    >>> local_path("facts/e.facts"), local_path("file:///facts/e.facts")
    (True, False)
    """
    return _URI.match(path) is None


def reads_of(stratum: Stratum) -> tuple[str, ...]:
    """The relations ``stratum`` reads: those of lower strata its rules use, and its own."""
    return (*lower_relations(stratum), *stratum.relations)
