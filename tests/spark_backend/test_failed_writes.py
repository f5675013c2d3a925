"""A Spark write that fails or is interrupted changes nothing it did not finish: the output
stays as it was, and no ``.parts`` directory, Spark ``_temporary`` folder or temporary file
is left beside it (``leftovers``): Spark's writers (CSV by one task or several, Parquet), a
decomposed stratum's tasks writing their part files (``part_files``), and a target the write
cannot replace."""

from __future__ import annotations

import io as text_io
import os
import subprocess
import sys
import textwrap

import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

import herbrand
from herbrand.cli import main
from herbrand.framework.errors import OutputError
from herbrand.spark_backend import outputs, replaced_outputs
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.leftovers import SETTLE_SECONDS
from tests.folder_listing import listing
from tests.spark_backend.conftest import requires_java
from tests.spark_backend.edge_files import NUMBER_EDGES, SYMBOL_EDGES, tc_files

FAILING_ROW = {"number": "-20", "symbol": "z"}
"""A value of column c0 of some row of tc over NUMBER_EDGES or SYMBOL_EDGES."""


def failing(frame: DataFrame, value: str) -> DataFrame:
    """``frame``, whose rows with c0 = ``value`` make the task computing them raise."""
    return frame.withColumn("c0", F.when(F.col("c0").cast("string") == value, F.raise_error(
        F.lit("fault injected"))).otherwise(F.col("c0")))


def failing_write(monkeypatch, kind: str, output_format: str) -> None:
    """Make a task of every write from now on raise (``failing``: the rows
    ``outputs._sorted_rows`` gives, after the range sample of a write by several tasks, or
    the frame ``_write_parquet`` takes)."""
    if output_format == "parquet":
        write = outputs._write_parquet
        monkeypatch.setattr(outputs, "_write_parquet", lambda session, frame, path: write(
            session, failing(frame, FAILING_ROW[kind]), path))
    else:
        rows = outputs._sorted_rows
        monkeypatch.setattr(outputs, "_sorted_rows", lambda frame, parts: failing(
            rows(frame, parts), FAILING_ROW[kind]))


def written_then_failed(tmp_path, spark, monkeypatch, kind: str, output_format: str
                        ) -> tuple[dict, dict]:
    """Write tc once, then again with a task of the write raising (``failing_write``): the
    output directory's ``listing`` after each."""
    program, facts = tc_files(tmp_path, kind, "", NUMBER_EDGES if kind == "number"
                              else SYMBOL_EDGES)
    out = tmp_path / "out"
    backend = SparkBackend(session=spark, decompose=False)
    parsed = herbrand.parse(program.read_text())
    backend.materialize_files(parsed, facts, out, output_format=output_format)
    before = listing(out)
    failing_write(monkeypatch, kind, output_format)
    with pytest.raises(Exception, match="fault injected"):
        backend.materialize_files(parsed, facts, out, output_format=output_format)
    return before, listing(out)


@pytest.mark.parametrize("kind", ["number", "symbol"])  # Spark's CSV writer, its text writer
@pytest.mark.parametrize("tasks", [1, 4])
def test_a_failed_csv_write_leaves_the_output_as_it_was(spark, tmp_path, monkeypatch, kind,
                                                       tasks):
    if tasks > 1:  # tc holds about 1,600 rows: written by 4 tasks, a range each
        monkeypatch.setattr(outputs, "ROWS_PER_WRITE_TASK", 100)
    before, after = written_then_failed(tmp_path, spark, monkeypatch, kind, "csv")
    assert list(before) == ["tc.csv"] and before["tc.csv"]
    assert after == before


def test_a_failed_parquet_write_leaves_the_output_as_it_was(spark, tmp_path, monkeypatch):
    before, after = written_then_failed(tmp_path, spark, monkeypatch, "number", "parquet")
    assert "tc.parquet/_SUCCESS" in before
    assert after == before


@pytest.mark.parametrize("decompose", [True, False], ids=["by-tasks", "by-spark"])
def test_a_write_that_cannot_replace_its_output_leaves_nothing(spark, tmp_path, decompose):
    """The target is a folder holding a file: the parts are written, the join fails, and the
    error is one line naming the directive; the folder and its file stay as they were."""
    program, facts = tc_files(tmp_path, "number", "", NUMBER_EDGES)
    out = tmp_path / "out"
    (out / "tc.csv").mkdir(parents=True)
    (out / "tc.csv" / "kept").write_bytes(b"kept\n")
    backend = SparkBackend(session=spark, decompose=decompose)
    with pytest.raises(OutputError, match=r":5:9: \.output tc: cannot write .*tc\.csv: "):
        backend.materialize_files(herbrand.parse(program.read_text()), facts, out,
                                  stdout=text_io.StringIO())
    assert listing(out) == {"tc.csv": None, "tc.csv/kept": b"kept\n"}


@pytest.mark.parametrize("writer", ["csv", "parquet", "tasks"])
def test_a_failed_write_removes_the_folders_it_made(spark, tmp_path, monkeypatch, writer):
    """tc to ``out/a/b/tc.csv`` (``out/a/b/tc.parquet``), none of whose folders exist, by
    Spark's CSV or Parquet writer failing in a task, or by a decomposed stratum's tasks whose
    part files fail to join: no folder is left."""
    program, facts = tc_files(tmp_path, "number", '(filename="a/b/tc.csv")', NUMBER_EDGES)
    if writer == "tasks":
        monkeypatch.setattr(outputs, "join_parts", lambda path: 1 / 0)
    else:
        failing_write(monkeypatch, "number", writer)
    backend = SparkBackend(session=spark, decompose=writer == "tasks")
    with pytest.raises(Exception, match="fault injected|division by zero"):
        backend.materialize_files(herbrand.parse(program.read_text()), facts, tmp_path / "out",
                                  output_format="parquet" if writer == "parquet" else "csv")
    assert not (tmp_path / "out").exists()


def test_a_failed_write_through_hadoop_removes_the_folders_it_made(spark, tmp_path,
                                                                   monkeypatch):
    """As above, to a ``file:`` URI taken for another machine's file system: the folders are
    made, and removed, through Hadoop's FileSystem API (``hadoop_folders``)."""
    program, facts = tc_files(tmp_path, "number", '(filename="a/b/tc.csv")', NUMBER_EDGES)
    (tmp_path / "out").mkdir()
    made = []

    class Recorded(outputs.HadoopFolders):
        def make_parent(self, path: str) -> None:
            made.append(path)
            super().make_parent(path)

    monkeypatch.setattr(outputs, "local_file", lambda path: None)
    monkeypatch.setattr(outputs, "HadoopFolders", Recorded)
    failing_write(monkeypatch, "number", "csv")
    backend = SparkBackend(session=spark, decompose=False)
    with pytest.raises(Exception, match="fault injected"):
        backend.materialize_files(herbrand.parse(program.read_text()), facts,
                                  f"file://{tmp_path}/out")
    assert made == [f"file://{tmp_path}/out/a/b/tc.csv"]
    assert listing(tmp_path / "out") == {}


class Killed(BaseException):
    """The process's end, injected (nothing of the write's handlers acts on it)."""


class KilledAtTheRenameIn(replaced_outputs.HadoopFiles):
    """Hadoop's files, the process ending (``Killed``) at a replacement's second rename (the
    new output's rename in, after the old one was moved aside): every call from then on
    raises ``Killed`` too."""

    renames = 0

    def _alive(self) -> None:
        if KilledAtTheRenameIn.renames >= 2:
            raise Killed

    def exists(self, path: str) -> bool:
        self._alive()
        return super().exists(path)

    def rename(self, source: str, target: str) -> None:
        self._alive()
        KilledAtTheRenameIn.renames += 1
        self._alive()
        super().rename(source, target)

    def delete(self, path: str) -> None:
        self._alive()
        super().delete(path)


@pytest.mark.parametrize("output_format", ["csv", "parquet"])
def test_an_old_output_left_aside_by_a_killed_replacement_is_put_back(spark, tmp_path,
                                                                      monkeypatch,
                                                                      output_format):
    """tc written, then replaced by a run killed between the old output's move aside and
    the new one's rename in: the old output is whole aside; the next run's write, failing
    in a task, puts it back first; the one after replaces it."""
    program, facts = tc_files(tmp_path, "number", "", NUMBER_EDGES)
    out = tmp_path / "out"
    backend = SparkBackend(session=spark, decompose=False)
    parsed = herbrand.parse(program.read_text())
    backend.materialize_files(parsed, facts, out, output_format=output_format)
    before = listing(out)
    name = "tc.csv" if output_format == "csv" else "tc.parquet"
    with monkeypatch.context() as patched:
        patched.setattr(outputs, "HadoopFiles", KilledAtTheRenameIn)
        patched.setattr(KilledAtTheRenameIn, "renames", 0)
        with pytest.raises(Killed):
            backend.materialize_files(parsed, facts, out, output_format=output_format)
    assert listing(out) == {f"{name}.old{key[len(name):]}": value
                            for key, value in before.items()}
    with monkeypatch.context() as patched:
        failing_write(patched, "number", output_format)
        with pytest.raises(Exception, match="fault injected"):
            backend.materialize_files(parsed, facts, out, output_format=output_format)
    assert listing(out) == before
    backend.materialize_files(parsed, facts, out, output_format=output_format)
    after = listing(out)
    assert name in after and not any(key.startswith((f"{name}.", f".{name}.")) for key in after)


FAILING_TASKS = """
import os, signal, sys, threading, time
from pathlib import Path
import herbrand
from herbrand.spark_backend import outputs, replaced_outputs
from herbrand.spark_backend.backend import SparkBackend
from herbrand.spark_backend.part_files import PartFile

program, facts, out, marks, mode = sys.argv[1:]
MARKS = Path(marks)


class Failing(PartFile):
    '''Each task writes half a temporary file and marks that it started; then, mode "raise":
    partition 0 raises, the others write their part a while later (after the job failed);
    mode "interrupt": each sleeps, to be interrupted.'''

    def write(self, relation, types, symbols):
        from pyspark import TaskContext

        partition = TaskContext.get().partitionId()
        Path(self.directory, f".part-{partition:05d}.x").write_bytes(b"half a line")
        (MARKS / str(partition)).touch()
        if mode == "interrupt":
            time.sleep(600)
        if partition == 0:
            raise RuntimeError("fault injected")
        time.sleep(1.5)
        super().write(relation, types, symbols)


SENT = []


def interrupt_once_a_task_runs():
    while not any(MARKS.iterdir()):
        time.sleep(0.05)
    time.sleep(0.5)
    SENT.append(time.monotonic())
    os.kill(os.getpid(), signal.SIGINT)


backend = SparkBackend(master="local[2]", driver_rows=0, conf={
    "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"})
parsed = herbrand.parse(Path(program).read_text())
backend.materialize_files(parsed, facts, out)
made = outputs.part_file
outputs.part_file = lambda path, delimiter: Failing(**vars(made(path, delimiter)))
if mode == "interrupt":
    threading.Thread(target=interrupt_once_a_task_runs, daemon=True).start()
try:
    backend.materialize_files(parsed, facts, out)
except KeyboardInterrupt:
    print("interrupted after", round(time.monotonic() - SENT[0]), "s")
except Exception as error:
    print("failed" if "fault injected" in str(error) else error)
"""


@requires_java
@pytest.mark.parametrize("mode", ["raise", "interrupt"])
def test_a_failed_or_interrupted_write_by_tasks_leaves_nothing(tmp_path, mode):
    """A decomposed stratum's tasks write the file (``part_files``) on ``local[2]``: one task
    raises while another still runs and writes its part after the job failed, or the run is
    interrupted (SIGINT, as Ctrl-C) while every task runs (for 10 minutes, unless the write's
    job is cancelled); the old output stays, and no part directory, part file or temporary
    file is left."""
    program, facts = tc_files(tmp_path, "number", "", NUMBER_EDGES)
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "failing.py"
    script.write_text(textwrap.dedent(FAILING_TASKS))
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, str(script), str(program), str(facts), str(out),
                             str(marks), mode], capture_output=True, text=True, timeout=600,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert result.returncode == 0, result.stderr[-3000:]
    words = result.stdout.split()
    if mode == "interrupt":  # the job cancelled: its tasks' Python workers killed in seconds
        assert words[:2] == ["interrupted", "after"] and int(words[2]) < SETTLE_SECONDS, words
    else:
        assert words == ["failed"]
    assert main(["run", str(program), "-F", str(facts), "-D", str(tmp_path / "local"),
                 "--no-progress"]) == 0
    assert listing(out) == listing(tmp_path / "local") == {
        "tc.csv": (tmp_path / "local" / "tc.csv").read_bytes()}
