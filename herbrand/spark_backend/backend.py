"""``SparkBackend``: the ``spark`` backend of ``herbrand.materialize`` and ``herbrand run``.

Two ways in: ``materialize`` (the Backend contract) takes facts as a herbrand Database,
decodes them into typed DataFrames, runs, and collects every declared relation back into a
Database (for outputs small enough for the driver); ``materialize_files`` lets Spark read the
``.input`` files and write the ``.output`` relations itself (``files``, ``outputs``), so that data never
passes through the driver. Both run ``fixpoint.SparkFixpoint`` over the strata of
``analyse(program)``; the ``evaluator`` and ``fixpoint`` arguments of the contract name local
components and are not used: the rules always run as DataFrame plans, semi-naively.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from contextlib import ExitStack
from os import PathLike
from typing import TextIO

from pyspark.sql import DataFrame, SparkSession

from herbrand.evaluators.fixpoint import inline_facts
from herbrand.framework.analysis import analyse
from herbrand.framework.contracts import (
    Backend,
    BackendTags,
    FilesRun,
    FixpointEvaluator,
    ProgressObserver,
    RuleEvaluator,
    StratumStats,
)
from herbrand.framework.errors import ArityError, UsageError
from herbrand.framework.storage import Database, Relation, attribute_names
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Program
from herbrand.spark_backend import driver_strata
from herbrand.spark_backend.decomposed_strata import SINGLE_PARTITION_ROWS
from herbrand.spark_backend.driver_strata import Driver
from herbrand.spark_backend.files import StoredRelation, read_inputs, united
from herbrand.spark_backend.fixpoint import SparkFixpoint
from herbrand.spark_backend.frames import frame_relation, relation_frame
from herbrand.spark_backend.masters import master_cores, master_family
from herbrand.spark_backend.outputs import write_outputs, written_once
from herbrand.spark_backend.partitions import ROWS_PER_PARTITION
from herbrand.spark_backend.paths import check_paths, parquet_notes
from herbrand.spark_backend.session import RunSession, java_executable, start_session

NO_SESSION = ("every stratum ran on the driver, every file was read and written there: no "
              "Spark session was started (--driver-rows 0 runs them on Spark)")
"""The note of a file run that started no session (``FilesRun.notes``)."""
NO_SESSION_WHERE = "driver, no Spark session"
"""``FilesRun.where`` of a file run that started no session."""


class SparkBackend(Backend):
    """Materializes on Spark. Hyperparameters:

    - ``master``: the Spark master URL (``local[*]``, ``local-cluster[2,1,1024]``,
      ``spark://host:7077``, ``yarn``, ``k8s://...``); ignored when ``session`` is given.
    - ``conf``: Spark configuration (key -> value) for a session this backend starts.
    - ``checkpoint_interval``: passes between checkpoints of a recursive relation.
    - ``checkpoint_dir``: None for local checkpoints (fast; lost with an executor), or a
      directory (any Hadoop path) for reliable ones that survive executor loss.
    - ``broadcast_rows``: a join's right-hand relation with at most this many rows is broadcast.
    - ``decompose``: run a recursive stratum that reads at most ``broadcast_rows`` rows of
      lower relations, and has a pivot or holds at most ``single_partition_rows`` rows after
      its first pass, as one job with herbrand's native engine in each partition (one, without
      a pivot; ``decomposed``); False: semi-naive passes for every stratum.
    - ``single_partition_rows``: see ``decompose`` (0: a stratum without a pivot always runs
      as semi-naive passes).
    - ``rows_per_partition``: known rows per partition of a recursive relation during
      semi-naive passes (``partitions``).
    - ``driver_rows``: a stratum whose relations read hold at most this many rows in all
      runs on the driver with herbrand's native engine, unless it derives over
      ``derived_budget`` rows (then it runs on Spark); local input files of at most about
      that many rows are read, and outputs held on the driver written, by the local reader
      and writer (``driver_strata``). None: ``driver_strata.DRIVER_ROWS`` (100,000), read
      when a run starts; 0: every stratum on Spark.
    - ``derived_budget``: see ``driver_rows``; also the rows a recursive stratum to run as
      one decomposed job may bring to the driver (the relations it reads that Spark holds)
      and derive there as its seeds, so that the job starts from seeds the driver made
      (``driver_seeds``), whatever ``driver_rows`` says; more, and its seeds are made by
      Spark (a first pass). None: ``driver_strata.DERIVED_BUDGET`` (1,000,000), read when
      a run starts; 0: no seeds made on the driver.
    - ``session``: an existing SparkSession to run on (else the active one, or a new one).

    A run starts the session when it first needs it (``session.RunSession``): one whose
    strata all run on the driver, its files read and written there, starts none. A run sets
    ``session.RUN_SETTINGS`` on the session it uses and restores them afterwards.
    """

    tags = BackendTags(parallel=True, distributed=True, reads_files=True,
                       uses_evaluator=False, scale="master")
    DEFAULT_MASTER = "local[*]"

    @classmethod
    def scale_setting(cls, text: str) -> str:
        if not text:
            raise UsageError("a master URL must follow 'spark:'")
        return text

    @classmethod
    def cores(cls, setting: object | None) -> int | None:
        return master_cores(str(setting or cls.DEFAULT_MASTER))

    @classmethod
    def scale_family(cls, setting: object | None) -> str:
        return master_family(str(setting or cls.DEFAULT_MASTER))

    @classmethod
    def unavailable(cls) -> str | None:
        if java_executable() is None:
            return ("no Java (Spark needs Java 17 or later: set JAVA_HOME or put java on "
                    "PATH)")
        return None

    def __init__(self, master: str = DEFAULT_MASTER, conf: Mapping[str, str] | None = None,
                 checkpoint_interval: int = 5, checkpoint_dir: str | None = None,
                 broadcast_rows: int = 1_000_000, decompose: bool = True,
                 single_partition_rows: int = SINGLE_PARTITION_ROWS,
                 rows_per_partition: int = ROWS_PER_PARTITION,
                 driver_rows: int | None = None,
                 derived_budget: int | None = None,
                 session: SparkSession | None = None):
        self.master = master
        self.conf = dict(conf or {})
        self.checkpoint_interval = checkpoint_interval
        self.checkpoint_dir = checkpoint_dir
        self.broadcast_rows = broadcast_rows
        self.decompose = decompose
        self.single_partition_rows = single_partition_rows
        self.rows_per_partition = rows_per_partition
        if driver_rows is not None and driver_rows < 0:
            raise UsageError(f"driver_rows must be 0 (off) or more, not {driver_rows}")
        self.driver_rows = driver_rows
        self.derived_budget = derived_budget
        self.session = session

    def spark(self) -> SparkSession:
        """The session runs use: ``session``, else one started on ``master`` with ``conf``
        (kept for later runs). Raises BackendUnavailableError without Java."""
        if self.session is None:
            self.session = start_session(self.master, self.conf)
        return self.session

    def _driver(self, spark: RunSession, program: Program, symbols: SymbolTable) -> Driver:
        """Where this run's small strata run, and decomposed strata's seeds are made when
        small (``driver_strata``); when ``driver_rows`` is 0, none runs there and no file is
        read there, and the run's session (``spark``) is started now: every file and stratum
        needs it."""
        rows = driver_strata.DRIVER_ROWS if self.driver_rows is None else self.driver_rows
        budget = (driver_strata.DERIVED_BUDGET if self.derived_budget is None
                  else self.derived_budget)
        if not rows:
            spark.get()
        return Driver(spark, program.declaration_of, symbols, rows, budget)

    def _fixpoint(self, spark: RunSession, driver: Driver, frames: dict[str, DataFrame],
                  counts: dict[str, int], strata: int, observer: ProgressObserver | None,
                  written_once: frozenset[str] = frozenset()) -> SparkFixpoint:
        return SparkFixpoint(spark, driver, frames, counts, strata=strata,
                             written_once=written_once,
                             checkpoint_interval=self.checkpoint_interval,
                             checkpoint_dir=self.checkpoint_dir,
                             broadcast_rows=self.broadcast_rows, decompose=self.decompose,
                             single_partition_rows=self.single_partition_rows,
                             rows_per_partition=self.rows_per_partition, observer=observer)

    # -- the Backend contract: a Database in, a Database out -------------------------------------

    def materialize(
        self,
        program: Program,
        database: Database,
        *,
        evaluator: RuleEvaluator | None = None,
        fixpoint: type[FixpointEvaluator] | None = None,
        observer: ProgressObserver | None = None,
    ) -> tuple[Database, list[StratumStats]]:
        """The least model of ``program`` over ``database``, collected into a Database sharing
        ``database.symbols``, and the per-stratum stats. Raises the analysis errors, ArityError
        for given rows of another arity than declared, BackendUnavailableError without Java.
        Cost: the run's Spark jobs, plus O(rows) on the driver to ship the facts and collect
        every declared relation."""
        strata = analyse(program)
        types = {**database.types, **{d.name: d.types for d in program.declarations}}
        relations = dict(database)
        for name, facts in inline_facts(program, database).items():
            relations[name] = relations[name].union(facts) if name in relations else facts
        with ExitStack() as stack:
            spark = RunSession(self.spark, stack)
            frames, counts = {}, {}
            driver = self._driver(spark, program, database.symbols)
            for declaration in program.declarations:
                name = declaration.name
                relation = relations.get(name, Relation.empty(declaration.arity))
                if relation.arity != declaration.arity:
                    raise ArityError(f"relation {name}: given rows have arity {relation.arity}, "
                                     f"declared arity {declaration.arity}")
                driver.add(name, relation)
                counts[name] = len(relation)
            run = self._fixpoint(spark, driver, frames, counts, len(strata), observer)
            try:
                for stratum in strata:
                    run.run_stratum(stratum)
                for declaration in program.declarations:
                    name = declaration.name
                    relations[name] = (driver.relations[name] if driver.holds(name) else
                                       frame_relation(frames[name], declaration.types,
                                                      database.symbols))
            finally:
                run.release()
        attributes = {**database.attributes, **attribute_names(program)}
        return Database(relations, database.symbols, types, attributes), list(run.stats)

    # -- files in, files out ---------------------------------------------------------------------

    def materialize_files(
        self,
        program: Program,
        facts_dir: str | PathLike,
        output_dir: str | PathLike,
        *,
        output_format: str = "csv",
        observer: ProgressObserver | None = None,
        stdout: TextIO | None = None,
    ) -> FilesRun:
        """Run ``program`` with Spark reading its ``.input`` files from ``facts_dir`` and
        writing its ``.output`` relations to ``output_dir`` (``-``: stdout) as ``csv`` or
        ``parquet`` (see ``files``, ``outputs``); returns the per-stratum stats, the seconds of
        the phases ``session`` (starting it, when the run first needed it; none when it runs
        already or the run needed none), ``read and set-up``, ``strata`` and ``write`` (which
        holds the job of a decomposed stratum whose one use is a write,
        ``outputs.written_once``: its progress line comes after it), the notes of a Parquet
        run (``paths.parquet_notes``), and, for a run that started no session (every stratum
        and file on the driver), the note ``NO_SESSION`` and where ``NO_SESSION_WHERE``; a
        run that needs Spark after some strata on the driver sends a Progress ``where``
        ``driver_strata.STARTING`` before it starts the session. Raises the analysis errors;
        before the session starts, FactsError, OutputError or UsageError for a path Spark
        cannot take as the local backend does (``paths.check_paths``); FactsError for a
        missing or malformed file, OutputError for an output the file system refuses,
        BackendUnavailableError without Java. Cost: the run's Spark jobs; only stdout output
        and inline facts pass the driver."""
        strata = analyse(program)
        check_paths(program, str(output_dir), output_format)
        started = time.perf_counter()
        with ExitStack() as stack:
            spark = RunSession(self.spark, stack)
            driver = self._driver(spark, program, SymbolTable())
            relations = read_inputs(spark, program, str(facts_dir), driver)
            try:
                self._add_inline_facts(spark, program, relations, driver)
                frames = {name: relation.rows for name, relation in relations.items()}
                counts = {name: relation.count for name, relation in relations.items()}
                for declaration in program.declarations:
                    name = declaration.name
                    if name not in frames:
                        driver.add(name, Relation.empty(declaration.arity))
                        counts[name] = len(driver.relations[name])
                run = self._fixpoint(spark, driver, frames, counts, len(strata), observer,
                                     written_once(program, strata, str(output_dir)))
                try:
                    for stratum in strata:
                        run.run_stratum(stratum)
                    write_from = time.perf_counter()
                    write_outputs(spark, program, frames, str(output_dir), output_format,
                                  stdout, counts, run.decomposed.ordered,
                                  run.decomposed.deferred_jobs(), driver)
                    run.settle()
                    finished = time.perf_counter()
                finally:
                    run.release()
            finally:
                for relation in relations.values():
                    relation.release()
        computed = sum(s.seconds for s in run.stats)
        # the session's start, wherever it came, is a phase of its own
        in_write = spark.seconds if spark.started and spark.started_at >= write_from else 0.0
        notes = parquet_notes(program, str(output_dir)) if output_format == "parquet" else ()
        return FilesRun(tuple(run.stats), (
            ("session", spark.seconds),
            ("read and set-up", write_from - started - computed - spark.seconds + in_write),
            ("strata", computed), ("write", finished - write_from - in_write)),
            notes if spark.started else (*notes, NO_SESSION),
            None if spark.started else NO_SESSION_WHERE)

    @staticmethod
    def _add_inline_facts(spark: RunSession, program: Program,
                          relations: dict[str, StoredRelation], driver: Driver) -> None:
        """Add the facts written in ``program`` to ``relations`` (name -> stored rows), each
        relation holding some stored again with them (``files.united``: a job each), or to
        the ``driver``'s rows of the others."""
        for name, facts in inline_facts(program, Database({}, driver.symbols)).items():
            if name not in relations:
                driver.add(name, facts)
                continue
            inline = relation_frame(spark.get(), facts, program.declaration_of[name].types,
                                    driver.symbols)
            relations[name] = united(relations[name], inline)
