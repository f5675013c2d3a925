"""Whole-process measurements: herbrand as users meet it (``herbrand run PROG -F FACTS -D OUT``),
beside Soufflé (compiled and interpreted), DuckDB and clingo, each a child process timed from
``Popen`` to its exit, with its peak resident memory.

- ``run_process`` runs one command: wall time, and the child's peak RSS from ``os.wait4``'s
  rusage (``ru_maxrss``, kilobytes on Linux: native memory included, unlike tracemalloc),
  both taken by ``launch.py``, a small interpreter that forks the command (see there why). A
  watchdog thread kills the process group when it outlives ``timeout`` or its RSS passes
  ``memory_limit_mb`` (the machine is shared: a run that would swallow it is stopped and
  marked instead).
- ``output_summary`` reads what a run produced: each ``.csv`` of the output folder as (rows, an
  order-independent digest of its lines: Soufflé writes rows in its own order) and each
  ``relation<TAB>count`` line of its stdout (``.printsize``, and the peers' counts).
- ``CONFIGURATIONS`` are the columns of the comparison; each says when it is unavailable
  (no ``souffle`` on PATH, no ``native`` evaluator registered, no peer program for the
  workload's shape) and builds its command.
- ``measure`` runs one configuration on one prepared workload: a warm-up run, then ``repeat``
  timed runs, every run's output checked against the expected sizes and the reference (the
  outputs of herbrand's default configuration), and returns a ``Measurement``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .programs import PEER_PROGRAMS
from .workloads import Prepared, cache_root, spec

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = Path(__file__).resolve().with_name("launch.py")
DEFAULT_TIMEOUT = 600.0  # seconds per run
DEFAULT_LONG_RUN = 60.0  # a warm-up longer than this is the only (timed) run
COMPILE_TIMEOUT = 1800.0
POLL_SECONDS = 0.05
STDERR_TAIL = 2000  # characters of a failed run's stderr kept for the report
_COUNT_LINE = re.compile(r"^([A-Za-z_][\w.]*)\t(\d+)$")
_DIGEST_MASK = (1 << 64) - 1


def default_memory_limit_mb() -> float:
    """Half the machine's physical memory, in MB: a run above it is stopped ("memory")."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20 / 2
    except (ValueError, OSError):
        return 8192.0


# ---------------------------------------------------------------------------------------------
# One process
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One child process. ``status``: ``ok`` (exit 0), ``error`` (another exit status or a
    signal), ``timeout`` or ``memory`` (stopped by the watchdog). ``peak_rss_mb``: the child's
    peak resident set size (``ru_maxrss``). ``stdout``: its standard output (a path)."""

    status: str
    seconds: float
    peak_rss_mb: float
    returncode: int | None
    stdout: Path
    stderr_tail: str = ""


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm", "rb") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as handle:
            return [int(child) for child in handle.read().split()]
    except (OSError, ValueError):
        return []


def run_process(
    command: Sequence[str],
    *,
    cwd: Path,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit_mb: float | None = None,
    env: Mapping[str, str] | None = None,
) -> Run:
    """Run ``command`` in ``cwd`` (its stdout and stderr go to ``cwd/stdout.txt`` and
    ``cwd/stderr.txt``) through ``launch.py``, which forks it from a 5 MB interpreter, waits
    for it with ``os.wait4`` and reports its wall time (fork to exit) and peak RSS
    (``ru_maxrss``): forked from this process directly, the child's peak would include this
    process's size. Watchdog: SIGKILL to the process group (launcher and command) after
    ``timeout`` seconds or once the command's RSS (read from /proc every POLL_SECONDS) passes
    ``memory_limit_mb``; the launcher is reaped only after the watchdog has stood down, so it
    never signals a reused pid. Cost: the command's, plus about 20 ms of launcher start-up
    (not in the seconds) and a wake-up of the watchdog every POLL_SECONDS."""
    cwd.mkdir(parents=True, exist_ok=True)
    stdout_path, stderr_path = cwd / "stdout.txt", cwd / "stderr.txt"
    report = cwd / "launch.txt"
    report.unlink(missing_ok=True)
    limit = None if memory_limit_mb is None else memory_limit_mb * 2**20
    stopped: list[str] = []
    seen = [0]  # the largest RSS the watchdog saw, bytes
    lock = threading.Lock()
    finished = threading.Event()
    launcher = [sys.executable, "-I", "-S", str(LAUNCHER), str(report), *command]
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        start = time.perf_counter()
        child = subprocess.Popen(launcher, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err, start_new_session=True,
                                 env=None if env is None else dict(env))

    def watchdog() -> None:
        while not finished.wait(POLL_SECONDS):
            rss = sum(_rss_bytes(pid) for pid in _children(child.pid))
            seen[0] = max(seen[0], rss)
            reason = None
            if time.perf_counter() - start > timeout:
                reason = "timeout"
            elif limit is not None and rss > limit:
                reason = "memory"
            if reason:
                with lock:
                    if not finished.is_set():
                        stopped.append(reason)
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(child.pid, signal.SIGKILL)
                return

    guard = threading.Thread(target=watchdog, daemon=True)
    guard.start()
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
    seconds = time.perf_counter() - start
    with lock:
        finished.set()
    guard.join()
    _, status, _ = os.wait4(child.pid, 0)
    child.returncode = returncode = os.waitstatus_to_exitcode(status)
    peak = seen[0] / 2**20
    try:
        measured, maxrss, returncode = report.read_text().split()
        seconds, peak, returncode = float(measured), int(maxrss) / 1024, int(returncode)
    except (OSError, ValueError):
        pass  # killed before it could report: the harness's figures stand
    state = stopped[0] if stopped else "ok" if returncode == 0 else "error"
    tail = ""
    if state == "error":
        tail = stderr_path.read_text(errors="replace")[-STDERR_TAIL:]
    return Run(state, seconds, round(peak, 1), returncode, stdout_path, tail)


# ---------------------------------------------------------------------------------------------
# What a run produced
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Output:
    """One output relation: ``rows`` and ``digest`` (the sum of the CRC-32 of its lines, an
    order-independent fingerprint; None for a count printed on stdout)."""

    rows: int
    digest: int | None = None


def file_summary(path: Path, chunk_bytes: int = 1 << 24) -> Output:
    """Rows (non-empty lines) and the line digest of one output file, read in chunks (bounded
    memory). Carriage returns are dropped. O(file size)."""
    rows = digest = 0
    rest = b""
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(chunk_bytes)
            if not chunk:
                break
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            lines = [line.rstrip(b"\r") for line in lines] if b"\r" in chunk else lines
            lines = [line for line in lines if line] if b"" in lines else lines
            rows += len(lines)
            digest += sum(map(zlib.crc32, lines))
    rest = rest.rstrip(b"\r")
    if rest:
        rows += 1
        digest += zlib.crc32(rest)
    return Output(rows, digest & _DIGEST_MASK)


def output_summary(out_dir: Path, stdout: Path | None = None) -> dict[str, Output]:
    """Relation -> Output for every ``.csv`` under ``out_dir`` (named by its path without the
    suffix) and every ``relation<TAB>count`` line of ``stdout``."""
    summary = {}
    for path in sorted(out_dir.rglob("*.csv")):
        summary[path.relative_to(out_dir).with_suffix("").as_posix()] = file_summary(path)
    if stdout is not None and stdout.exists():
        for line in stdout.read_text(errors="replace").splitlines():
            match = _COUNT_LINE.match(line.strip())
            if match and match.group(1) not in summary:
                summary[match.group(1)] = Output(int(match.group(2)))
    return summary


def compare(got: Mapping[str, Output], expected: Mapping[str, int],
            reference: Mapping[str, Output] | None, complete: bool) -> str | None:
    """None when ``got`` agrees with the expected sizes and the reference, else what differs.
    ``complete``: every relation of the reference must be there (herbrand and Soufflé write
    all outputs; a peer computes one relation)."""
    if not got:
        return "no output"
    for name, rows in expected.items():
        if name in got and got[name].rows != rows:
            return f"{name}: {got[name].rows:,} rows, expected {rows:,}"
        if name not in got and complete:
            return f"{name}: missing (expected {rows:,} rows)"
    if reference is None:
        return None
    for name, output in got.items():
        if name not in reference:
            return f"{name}: not an output of the reference"
        want = reference[name]
        if output.rows != want.rows:
            return f"{name}: {output.rows:,} rows, reference {want.rows:,}"
        if None not in (output.digest, want.digest) and output.digest != want.digest:
            return f"{name}: same size as the reference, other rows"
    if complete:
        missing = sorted(set(reference) - set(got))
        if missing:
            return f"{missing[0]}: missing"
    return None


# ---------------------------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------------------------


class Unavailable(Exception):
    """A configuration that cannot run here (the message says why)."""


def herbrand_command() -> list[str]:
    """The ``herbrand`` console script beside this interpreter, else on PATH, else the CLI's
    ``main`` through this interpreter."""
    script = Path(sys.executable).with_name("herbrand")
    if script.exists():
        return [str(script)]
    found = shutil.which("herbrand")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from herbrand.cli import main; sys.exit(main())"]


def registered_evaluators() -> tuple[str, ...]:
    import herbrand  # noqa: F401  (registers the built-ins)
    from herbrand.framework.registry import EVALUATORS

    return EVALUATORS.names()


def souffle_version() -> str | None:
    """``souffle --version``'s version line, or None when ``souffle`` is not on PATH."""
    if shutil.which("souffle") is None:
        return None
    try:
        text = subprocess.run(["souffle", "--version"], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"Version:\s*(\S+)", text)
    return match.group(1) if match else text.strip().splitlines()[0] if text.strip() else "?"


def souffle_binary(program: Path, compile: bool = True) -> Path:
    """The ``souffle -o`` binary of ``program``, compiled once and cached under
    ``<cache>/souffle/<hash of the program text and souffle's version>/`` (compile time is not
    part of any measurement). Unavailable when ``souffle`` is missing, when ``compile`` is False
    and no binary is cached, or when the compiler fails (its message included)."""
    version = souffle_version()
    if version is None:
        raise Unavailable("souffle not on PATH")
    key = hashlib.sha256(program.read_bytes() + version.encode()).hexdigest()[:16]
    folder = cache_root() / "souffle" / key
    binary = folder / "program"
    if binary.exists():
        return binary
    if not compile:
        raise Unavailable("no compiled binary cached (smoke runs do not compile)")
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=folder.parent))
    try:
        result = subprocess.run(["souffle", "-o", str(scratch / "program"), str(program)],
                                cwd=scratch, capture_output=True, text=True,
                                timeout=COMPILE_TIMEOUT)
        if result.returncode != 0 or not (scratch / "program").exists():
            message = (result.stderr or result.stdout).strip().splitlines()
            raise Unavailable(f"souffle -o failed: {message[-1] if message else result.returncode}")
        (scratch / "program.dl").write_bytes(program.read_bytes())
        with contextlib.suppress(OSError):  # OSError: compiled meanwhile by another session
            scratch.rename(folder)
    except subprocess.TimeoutExpired:
        raise Unavailable(f"souffle -o took over {COMPILE_TIMEOUT:.0f} s") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return binary


@dataclass(frozen=True)
class Configuration:
    """A column of the comparison. ``kind``: ``herbrand``, ``souffle`` or ``peer``; ``flags``:
    the ``herbrand run`` flags (herbrand), ``warm``: the in-process equivalent
    (``bench.warm`` options), ``peer``: True for the systems herbrand is compared with (the
    report's ratio columns), ``complete``: its output holds every output relation."""

    name: str
    label: str
    kind: str
    flags: tuple[str, ...] = ()
    warm: tuple[str, ...] | None = None
    evaluator: str | None = None  # a herbrand evaluator that must be registered
    tool: str | None = None  # souffle: compiled | interpreted; peer: duckdb | clingo
    threads: int = 1
    peer: bool = False
    complete: bool = True

    def check(self, prepared: Prepared, compile: bool = True) -> None:
        """Raise Unavailable when this configuration cannot run ``prepared`` here; compiles the
        Soufflé binary (cached) when ``compile``."""
        if self.evaluator is not None and self.evaluator not in registered_evaluators():
            raise Unavailable(f"no {self.evaluator!r} evaluator in "
                              "herbrand.framework.registry.EVALUATORS")
        if self.kind == "souffle":
            if self.tool == "compiled":
                souffle_binary(prepared.program, compile)
            elif souffle_version() is None:
                raise Unavailable("souffle not on PATH")
        if self.kind == "peer":
            shape = spec(prepared.name).shape
            asp, sql = PEER_PROGRAMS.get(shape, (None, None))
            if (sql if self.tool == "duckdb" else asp) is None:
                raise Unavailable(f"no {self.tool} program for this workload")
            try:
                __import__(self.tool)
            except ImportError:
                raise Unavailable(f"{self.tool} is not installed "
                                  "(pip install 'herbrand[bench]')") from None

    def command(self, prepared: Prepared, out_dir: Path) -> list[str]:
        """The command line of one run writing into ``out_dir``."""
        program, facts = str(prepared.program), str(prepared.facts)
        if self.kind == "herbrand":
            return [*herbrand_command(), "run", program, "-F", facts, "-D", str(out_dir),
                    *self.flags]
        if self.kind == "souffle":
            if self.tool == "compiled":
                return [str(souffle_binary(prepared.program, compile=False)), "-F", facts,
                        "-D", str(out_dir)]
            return ["souffle", "-F", facts, "-D", str(out_dir), program]
        workload = spec(prepared.name)
        inputs = [f"{name}={path}" for name, path in prepared.inputs.items()]
        return [sys.executable, "-m", "bench.peer_process", self.tool, "--shape",
                str(workload.shape), "--output", str(workload.headline),
                "--threads", str(self.threads), *(arg for i in inputs for arg in ("--input", i))]

    def env(self) -> dict[str, str]:
        """The environment of a run: the peers import ``bench`` from this checkout; Python
        writes and reuses bytecode as in a user's install (the warm-up run writes it), whatever
        ``PYTHONDONTWRITEBYTECODE`` says here (unset, it saves herbrand's processes about
        60 ms of compiling its modules on every run)."""
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        if self.kind == "peer":
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO),
                                                              env.get("PYTHONPATH")]))
        return env


CONFIGURATIONS: dict[str, Configuration] = {c.name: c for c in (
    Configuration("herbrand", "herbrand default", "herbrand", warm=()),
    Configuration("herbrand-relational", "batch (relational)", "herbrand",
                  ("--evaluator", "relational"), warm=("--evaluator", "relational")),
    Configuration("herbrand-parallel2", "parallel-2", "herbrand",
                  ("--backend", "parallel", "--workers", "2"),
                  warm=("--backend", "parallel", "--workers", "2"), threads=2),
    Configuration("herbrand-native", "native", "herbrand", ("--evaluator", "native"),
                  warm=("--evaluator", "native"), evaluator="native"),
    Configuration("souffle-compiled", "Soufflé compiled", "souffle", tool="compiled",
                  peer=True),
    Configuration("souffle-interpreted", "Soufflé interpreted", "souffle",
                  tool="interpreted", peer=True),
    Configuration("duckdb", "DuckDB (1 thread)", "peer", tool="duckdb", peer=True,
                  complete=False),
    Configuration("duckdb-2thread", "DuckDB (2 threads)", "peer", tool="duckdb", threads=2,
                  peer=True, complete=False),
    Configuration("clingo", "clingo", "peer", tool="clingo", peer=True, complete=False),
)}
# The columns of the side-by-side table unless chosen otherwise (duckdb-2thread on request).
DEFAULT_CONFIGURATIONS = ("herbrand", "herbrand-relational", "herbrand-parallel2",
                          "herbrand-native", "souffle-compiled", "souffle-interpreted",
                          "duckdb", "clingo")
REFERENCE = "herbrand"


# ---------------------------------------------------------------------------------------------
# One configuration on one workload
# ---------------------------------------------------------------------------------------------


@dataclass
class Measurement:
    """``status``: ``ok``, ``unavailable``, ``timeout``, ``memory``, ``error`` (a failed run)
    or ``mismatch`` (an output differs); ``detail`` says why. ``seconds`` and ``peak_rss_mb``:
    one entry per timed run; ``outputs``: what the first checked run produced; ``warm``: the
    in-process seconds (``bench.warm``), when measured."""

    workload: str
    configuration: str
    status: str = "ok"
    detail: str = ""
    seconds: list[float] = field(default_factory=list)
    peak_rss_mb: list[float] = field(default_factory=list)
    outputs: dict[str, Output] | None = None
    warm: list[float] | None = None
    limit: float | None = None  # the timeout or memory limit that stopped it

    @property
    def ok(self) -> bool:
        return self.status == "ok" and bool(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def rss(self) -> float:
        """The largest peak RSS over the timed runs, MB."""
        return max(self.peak_rss_mb)

    def tuples(self, headline: str | None) -> int | None:
        """The headline relation's size (all outputs together when None)."""
        if not self.outputs:
            return None
        if headline is None:
            return sum(o.rows for o in self.outputs.values())
        return self.outputs[headline].rows if headline in self.outputs else None


def measure(
    configuration: Configuration,
    prepared: Prepared,
    *,
    scratch: Path,
    repeat: int = 3,
    warmup: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    memory_limit_mb: float | None = None,
    long_run: float = DEFAULT_LONG_RUN,
    reference: Mapping[str, Output] | None = None,
    compile: bool = True,
    log: Callable[[str], None] | None = None,
) -> Measurement:
    """Run ``configuration`` on ``prepared``: ``warmup`` untimed runs then ``repeat`` timed
    ones, each writing into a fresh ``scratch/out`` and checked (``compare``) against
    ``prepared.expected`` and ``reference``. A warm-up longer than ``long_run`` seconds is
    taken as the only timed run (at that length a second run adds nothing but minutes). The
    first run that fails (timeout, memory, exit status, wrong output) ends the measurement with
    that status. ``log`` gets one line per run."""
    result = Measurement(prepared.name, configuration.name)
    try:
        configuration.check(prepared, compile)
    except Unavailable as why:
        result.status, result.detail = "unavailable", str(why)
        return result
    out_dir = scratch / "out"

    def one(label: str) -> Run | None:
        shutil.rmtree(scratch, ignore_errors=True)
        out_dir.mkdir(parents=True)
        run = run_process(configuration.command(prepared, out_dir), cwd=scratch,
                          timeout=timeout, memory_limit_mb=memory_limit_mb,
                          env=configuration.env())
        if log is not None:
            log(f"{prepared.name} {configuration.name} {label}: {run.status} "
                f"{run.seconds:.2f} s {run.peak_rss_mb:.0f} MB")
        if run.status != "ok":
            result.status = run.status
            result.limit = {"timeout": timeout, "memory": memory_limit_mb}.get(run.status)
            result.detail = {"timeout": f"over {timeout:.0f} s",
                             "memory": f"RSS over {memory_limit_mb or 0:.0f} MB"}.get(
                run.status, _error_line(run))
            return None
        got = output_summary(out_dir, run.stdout)
        problem = compare(got, prepared.expected, reference, configuration.complete)
        if problem is not None:
            result.status, result.detail = "mismatch", problem
            return None
        if result.outputs is None:
            result.outputs = got
        return run

    runs: list[Run] = []
    for number in range(warmup):
        run = one(f"warm-up {number + 1}")
        if run is None:
            return result
        if run.seconds > long_run:
            runs.append(run)
            break
    while len(runs) < repeat and not (runs and runs[-1].seconds > long_run):
        run = one(f"run {len(runs) + 1}")
        if run is None:
            return result
        runs.append(run)
    result.seconds = [r.seconds for r in runs]
    result.peak_rss_mb = [r.peak_rss_mb for r in runs]
    shutil.rmtree(scratch, ignore_errors=True)
    return result


def _error_line(run: Run) -> str:
    lines = [line for line in run.stderr_tail.splitlines() if line.strip()]
    status = (f"killed by signal {-run.returncode}" if (run.returncode or 0) < 0
              else f"exit status {run.returncode}")
    return f"{status}: {lines[-1].strip()}" if lines else status


def measure_warm(configuration: Configuration, prepared: Prepared, *, scratch: Path,
                 repeat: int = 3, timeout: float = DEFAULT_TIMEOUT,
                 memory_limit_mb: float | None = None) -> list[float] | None:
    """In-process seconds of ``herbrand.materialize`` (reading the facts, not writing the
    outputs; after one untimed call) for a herbrand configuration, measured by ``bench.warm``
    in a child process guarded like any run. None when not a herbrand configuration or the
    child fails."""
    if configuration.kind != "herbrand" or configuration.warm is None:
        return None
    import json

    command = [sys.executable, "-m", "bench.warm", str(prepared.program), str(prepared.facts),
               "--repeat", str(repeat), *configuration.warm]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    run = run_process(command, cwd=scratch, timeout=timeout, memory_limit_mb=memory_limit_mb,
                      env=env)
    try:
        return json.loads(run.stdout.read_text())["seconds"] if run.status == "ok" else None
    except (ValueError, KeyError):
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
