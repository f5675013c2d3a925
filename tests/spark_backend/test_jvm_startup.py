"""The driver JVM's start-up options: errors-only logging, and a class archive recorded once
(by the process holding its lock, with ``jcmd``), used by every later JVM, and never half
written."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from herbrand.spark_backend import jvm_startup
from herbrand.spark_backend.jvm_startup import (
    JAVA_OPTIONS,
    LOG_CONFIGURATION,
    archive_path,
    driver_startup,
)
from herbrand.spark_backend.session import java_executable

from .conftest import requires_java


@pytest.fixture
def java(tmp_path) -> Path:
    """A fake JDK's ``java``, with a ``jcmd`` beside it."""
    bin_ = tmp_path / "jdk" / "bin"
    bin_.mkdir(parents=True)
    for name in ("java", "jcmd"):
        (bin_ / name).write_text("#!/bin/sh\n")
        (bin_ / name).chmod(0o755)
    return bin_ / "java"


def _options(startup) -> list[str]:
    return startup.settings[JAVA_OPTIONS].split()


@pytest.fixture(autouse=True)
def _release_locks(monkeypatch):
    monkeypatch.setattr(jvm_startup, "_held_locks", [])
    yield
    for handle in jvm_startup._held_locks:
        handle.close()


def test_without_an_archive_the_lock_holder_records_one(java, tmp_path):
    startup = driver_startup(str(java), tmp_path / "spark")
    assert startup.recording == archive_path(str(java), tmp_path / "spark")
    assert "-XX:+RecordDynamicDumpInfo" in _options(startup)
    assert not any(o.startswith("-XX:SharedArchiveFile") for o in _options(startup))


def test_a_second_process_while_one_records_records_nothing(java, tmp_path):
    directory = tmp_path / "spark"
    directory.mkdir()
    archive = archive_path(str(java), directory)
    with open(archive.with_name(archive.name + ".lock"), "w") as other:  # another process's
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        startup = driver_startup(str(java), directory)
    assert startup.recording is None
    assert "-XX:+RecordDynamicDumpInfo" not in _options(startup)


def test_with_an_archive_the_jvm_maps_it(java, tmp_path):
    directory = tmp_path / "spark"
    directory.mkdir()
    archive = archive_path(str(java), directory)
    archive.write_bytes(b"archive")
    startup = driver_startup(str(java), directory)
    assert startup.recording is None
    assert f"-XX:SharedArchiveFile={archive}" in _options(startup)
    assert {"-Xshare:auto", "-Xlog:cds=off", "-Xlog:cds+dynamic=off"} <= set(_options(startup))


def test_the_jit_compiler_stops_at_its_first_tier(java, tmp_path):
    assert "-XX:TieredStopAtLevel=1" in _options(driver_startup(str(java), tmp_path / "spark"))


def test_the_session_s_jvm_runs_with_the_first_tier_only(spark):
    """The test run's session (started by ``start_session``, tests/conftest.py) took the
    option: the JVM's own flag says so."""
    jvm = spark.sparkContext._jvm
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
    assert bean.getVMOption("TieredStopAtLevel").getValue() == "1"


def test_a_failed_dump_is_not_tried_again_and_a_jre_records_nothing(java, tmp_path):
    directory = tmp_path / "spark"
    directory.mkdir()
    archive = archive_path(str(java), directory)
    archive.with_name(archive.name + ".failed").write_text("why\n")
    assert driver_startup(str(java), directory).recording is None
    archive.with_name(archive.name + ".failed").unlink()
    (java.parent / "jcmd").unlink()
    assert driver_startup(str(java), directory).recording is None


def test_the_log_configuration_prints_errors_only(java, tmp_path):
    startup = driver_startup(str(java), tmp_path / "spark")
    [option] = [o for o in _options(startup) if o.startswith("-Dlog4j2.configurationFile=")]
    path = Path(option.removeprefix("-Dlog4j2.configurationFile=file:"))
    assert path.read_text() == LOG_CONFIGURATION
    assert "rootLogger.level = error" in LOG_CONFIGURATION


def test_an_unwritable_directory_gives_no_options(java, tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("")
    startup = driver_startup(str(java), blocked / "spark")
    assert startup.settings == {} and startup.recording is None


def _jcmd(java: Path, body: str) -> None:
    (java.parent / "jcmd").write_text(f"#!/bin/sh\n{body}\n")


def test_a_dump_is_moved_into_place_only_when_complete(java, tmp_path, capsys):
    (tmp_path / "errors").mkdir()  # a word of the path, echoed by jcmd, is not a failure
    archive = tmp_path / "errors" / "classes.jsa"
    _jcmd(java, 'printf archived > "$4"; echo "Dynamic dump to file $4"')
    jvm_startup._dump(str(java.parent / "jcmd"), 1234, archive)
    assert archive.read_bytes() == b"archived"
    assert list(archive.parent.glob("*.partial")) == []
    assert "archived in" in capsys.readouterr().err


@pytest.mark.parametrize("body", [
    'printf half > "$4"; exit 1',
    'echo "Error: -XX:+RecordDynamicDumpInfo is required"',
])
def test_a_failed_dump_leaves_no_archive_and_says_why(java, tmp_path, capsys, body):
    archive = tmp_path / "classes.jsa"
    _jcmd(java, body)
    jvm_startup._dump(str(java.parent / "jcmd"), 1234, archive)
    assert not archive.exists() and list(tmp_path.glob("*.partial")) == []
    assert archive.with_name(archive.name + ".failed").read_text()
    assert "were not archived" in capsys.readouterr().err


@requires_java
def test_the_first_run_records_the_archive_and_the_next_runs_on_it(tmp_path):
    """Two ``herbrand run --backend spark -D -`` processes on an empty cache directory: the
    first records the archive at its exit (its stdout only the outputs), the second starts with ``-Xshare:on`` (the JVM fails to
    start if it cannot map the archive). Neither prints a Spark warning or a CDS log line."""
    program = tmp_path / "p.dl"
    program.write_text(".decl e(x: number)\n.output e\ne(1).\n")
    environment = {**os.environ, "HERBRAND_CACHE_DIR": str(tmp_path / "cache")}
    for name in Path(jvm_startup.cache_directory()).glob("kernels_*"):
        (tmp_path / "cache").mkdir(exist_ok=True)
        os.symlink(name, tmp_path / "cache" / name.name)
    command = [sys.executable, "-m", "herbrand.cli", "run", str(program), "-D", "-",
               "--backend", "spark", "--master", "local[1]", "--no-progress",
               "--driver-rows", "0"]  # on the driver, the run would start no JVM
    first = subprocess.run(command, capture_output=True, text=True, timeout=300,
                           env=environment)
    assert first.returncode == 0, first.stderr
    # the JVM's own lines (the dump's "Dynamic dump to file ...") go to stderr, not among
    # the outputs printed to stdout
    assert first.stdout == "---------------\ne\n===============\n1\n===============\n", \
        first.stdout
    archive = archive_path(java_executable(), tmp_path / "cache" / "spark")
    assert archive.is_file(), first.stderr
    second = subprocess.run(
        [*command, "--spark-conf", "spark.driver.extraJavaOptions=-Xshare:on"],
        capture_output=True, text=True, timeout=300, env=environment)
    assert second.returncode == 0, second.stderr
    for run in (first, second):
        assert " WARN " not in run.stderr and "[cds" not in run.stderr, run.stderr
    assert "archiv" not in second.stderr
