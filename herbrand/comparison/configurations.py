"""Configurations: the ways one program can be run, written as short strings.

The syntax, used by ``herbrand compare`` and ``herbrand.compare`` alike:

    [EVALUATOR][/INDEX][@BACKEND]     herbrand, e.g. native, relational/btree, /hash,
                                      native/spine, native@parallel:2,
                                      relational/spine@parallel:4
    BACKEND                           a backend that runs its own plans: spark:local[2],
                                      spark:local-cluster[2,1,1024]
    souffle | souffle-interpreted     Soufflé, compiled (souffle -o, once, not timed) or not
    duckdb | duckdb:N | clingo        the peers (DuckDB on N threads, default 1)

``BACKEND`` is ``local`` (the default), ``parallel:N`` (N threads; ``parallel``: the machine's
cores) or ``spark:MASTER`` (``spark``: ``local[*]``). A missing evaluator is the one
``herbrand run`` would use (``herbrand.api.default_evaluator``: native, or relational when an
index is named). Every name is checked against the registries when parsed: a bad one is a
UsageError of one line naming the configuration.

``grid`` expands ``herbrand compare``'s ``--evaluator x --index x --backend`` product into
configurations, leaving out the combinations that mean nothing (an index for an evaluator that
takes none, an evaluator for a backend that runs its own plans) and saying which in one line.
"""

from __future__ import annotations

import inspect
import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from herbrand.api import default_evaluator
from herbrand.builtins import DEFAULT_BACKEND
from herbrand.comparison.processes import Unavailable
from herbrand.comparison.souffle import souffle_binary, souffle_version
from herbrand.framework.contracts import Backend
from herbrand.framework.errors import HerbrandError, MissingDependencyError, UsageError
from herbrand.framework.registry import BACKENDS, EVALUATORS, INDEXES
from herbrand.workloads.catalogue import Prepared

SOUFFLE = ("souffle", "souffle-interpreted")
PEERS = (*SOUFFLE, "duckdb", "clingo")
PEER_PROCESS = str(Path(__file__).with_name("peer_process.py"))  # run by its path


@dataclass(frozen=True)
class Configuration:
    """One way to run a program. herbrand: ``evaluator``, ``index``, ``backend`` (a name of
    BACKENDS), ``workers`` (parallel threads; None: the machine's cores), ``master`` (spark).
    A peer: ``peer`` (one of PEERS) and ``threads`` (DuckDB's). ``str()`` is the syntax of
    the module's docstring, which ``parse_configuration`` reads back."""

    evaluator: str | None = None
    index: str | None = None
    backend: str = DEFAULT_BACKEND
    workers: int | None = None
    master: str | None = None
    peer: str | None = None
    threads: int = 1

    def __str__(self) -> str:
        if self.peer is not None:
            return f"duckdb:{self.threads}" if self.peer == "duckdb" and self.threads > 1 \
                else self.peer
        text = (self.evaluator or "") + (f"/{self.index}" if self.index else "")
        backend = self.backend_text
        if not text:
            return backend
        return text if backend == DEFAULT_BACKEND else f"{text}@{backend}"

    @property
    def backend_class(self) -> type[Backend]:
        """The backend's class, from the registry (for spark, importing pyspark)."""
        return BACKENDS.get(self.backend)

    @property
    def scale_setting(self) -> object | None:
        """The value of the backend's ``tags.scale`` parameter (the field of that name:
        ``workers``, ``master``), None when it takes none or is left at its default."""
        scale = self.backend_class.tags.scale
        return None if scale is None else getattr(self, scale)

    @property
    def backend_text(self) -> str:
        """``NAME`` or ``NAME:SETTING``, the setting at the constructor's default when not
        given (``spark:local[*]``; ``parallel`` when its default is None)."""
        backend = self.backend_class
        if backend.tags.scale is None:
            return self.backend
        setting = self.scale_setting
        if setting is None:
            setting = inspect.signature(backend).parameters[backend.tags.scale].default
        return self.backend if setting is None else f"{self.backend}:{setting}"

    @property
    def kind(self) -> str:
        """``herbrand``, ``souffle`` or ``peer`` (DuckDB, clingo: one counted relation)."""
        if self.peer is None:
            return "herbrand"
        return "souffle" if self.peer in SOUFFLE else "peer"

    @property
    def complete(self) -> bool:
        """Whether its output holds every output relation (a peer counts one)."""
        return self.kind != "peer"

    @property
    def cores(self) -> int | None:
        """The cores it uses: threads, or executors x cores (None: a cluster's, unknown)."""
        if self.peer is not None:
            return self.threads
        return self.backend_class.cores(self.scale_setting)

    @property
    def family(self) -> str | None:
        """The scaling family (its name with the core count as N) of a parallel or distributed
        configuration: ``native@parallel:N``, ``spark:local[N]``,
        ``spark:local-cluster[E,C,...]`` (cores: E x C), ``duckdb:N``; None for a single
        thread by construction (local herbrand, Soufflé, clingo, DuckDB on one thread)."""
        if self.peer == "duckdb" and self.threads > 1:
            return "duckdb:N"
        if self.peer is not None:
            return None
        backend = self.backend_class
        if not (backend.tags.parallel or backend.tags.distributed) or backend.tags.scale is None:
            return None
        name = str(self)
        family = f"{self.backend}:{backend.scale_family(self.scale_setting)}"
        return name[:len(name) - len(self.backend_text)] + family

    # -- running -------------------------------------------------------------------------------

    def check(self, prepared: Prepared, cache_root: Path, compile: bool = True) -> None:
        """Raise Unavailable when this configuration cannot run ``prepared`` here; compiles the
        Soufflé binary (cached under ``cache_root``) when ``compile``."""
        if self.peer is None:
            self._check_backend()
        if self.peer == "souffle":
            souffle_binary(prepared.program, cache_root, compile)
        elif self.peer == "souffle-interpreted" and souffle_version() is None:
            raise Unavailable("souffle is not on PATH")
        elif self.kind == "peer":
            if prepared.shape is None:
                raise Unavailable("the program is none of the peers' shapes (TC, same "
                                  "generation, RDFS), which are all they can run")
            if self._peer_program(prepared) is None:
                raise Unavailable(f"no {self.peer} program for the "
                                  f"{prepared.shape.name} shape")
            try:
                __import__(self.peer)
            except ImportError:
                raise Unavailable(f"the {self.peer} Python package is not installed "
                                  "(pip install 'herbrand[bench]')") from None

    def _check_backend(self) -> None:
        """Unavailable when the backend's optional dependency or its runtime is missing."""
        try:
            backend = self.backend_class
        except MissingDependencyError as error:
            raise Unavailable(str(error).splitlines()[0]) from None
        reason = backend.unavailable()
        if reason is not None:
            raise Unavailable(reason)

    def _peer_program(self, prepared: Prepared) -> str | None:
        peer = prepared.shape.peer
        return peer.sql if self.peer == "duckdb" else peer.asp

    def run_flags(self) -> list[str]:
        """The ``herbrand run`` flags of a herbrand configuration."""
        flags = []
        if self.evaluator is not None:
            flags += ["--evaluator", self.evaluator]
        if self.index is not None:
            flags += ["--index", self.index]
        if self.backend != DEFAULT_BACKEND:
            flags += ["--backend", self.backend]
        if self.workers is not None:
            flags += ["--workers", str(self.workers)]
        if self.master is not None:
            flags += ["--master", self.master]
        return flags

    def command(self, prepared: Prepared, out_dir: Path, cache_root: Path) -> list[str]:
        """The command line of one run writing into ``out_dir``."""
        program, facts = str(prepared.program), str(prepared.facts)
        if self.kind == "herbrand":
            return [*herbrand_command(), "run", program, "-F", facts, "-D", str(out_dir),
                    "--no-progress", *self.run_flags()]
        if self.peer == "souffle":
            return [str(souffle_binary(prepared.program, cache_root, compile=False)), "-F",
                    facts, "-D", str(out_dir)]
        if self.peer == "souffle-interpreted":
            return ["souffle", "-F", facts, "-D", str(out_dir), program]
        shape = prepared.shape
        inputs = [f"{name}={prepared.inputs[shape.relations[name]]}"
                  for name in shape.relations if shape.relations[name] in prepared.inputs]
        return [sys.executable, PEER_PROCESS, self.peer,
                "--sql" if self.peer == "duckdb" else "--asp", self._peer_program(prepared),
                "--output", shape.peer.output, "--label", shape.output,
                "--threads", str(self.threads), *(a for i in inputs for a in ("--input", i))]

    def warm_command(self, prepared: Prepared, repeat: int) -> list[str] | None:
        """The command measuring in-process seconds (``herbrand.comparison.warm``) of a herbrand
        configuration; None for a peer."""
        if self.kind != "herbrand":
            return None
        return [sys.executable, "-m", "herbrand.comparison.warm", str(prepared.program),
                str(prepared.facts), "--repeat", str(repeat), *self.run_flags()]


def env() -> dict[str, str]:
    """The environment of a run: this one, except that Python writes and reuses bytecode as in
    a user's install, whatever ``PYTHONDONTWRITEBYTECODE`` says here (unset, it saves
    herbrand's processes about 60 ms of compiling its modules on every run)."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


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


# -- parsing -----------------------------------------------------------------------------------


def parse_configuration(text: str) -> Configuration:
    """The Configuration written as ``text`` (the syntax of the module's docstring). Raises
    UsageError naming ``text`` and what is wrong with it. Cost: a registry lookup per name
    (loading a backend's class: for spark, importing pyspark)."""
    try:
        return _parse(text.strip())
    except HerbrandError as error:
        raise UsageError(f"configuration {text!r}: {error}") from None


def _parse(text: str) -> Configuration:
    if text in PEERS:
        return Configuration(peer=text)
    if text.startswith("duckdb:"):
        return Configuration(peer="duckdb", threads=_count(text[len("duckdb:"):], "threads"))
    herbrand, at, backend_text = text.partition("@")
    if not at and _backend_name(text) in BACKENDS:
        herbrand, backend_text = "", text
    evaluator, _, index = herbrand.partition("/")
    backend, workers, master = _backend(backend_text or DEFAULT_BACKEND)
    if not (evaluator or index or backend_text):
        raise UsageError("empty (expected EVALUATOR[/INDEX][@BACKEND] or a peer: "
                         f"{', '.join(PEERS)})")
    for registry, name in ((EVALUATORS, evaluator), (INDEXES, index)):
        if name:
            registry.check(name)
    if not _uses_evaluator(backend):
        if evaluator or index:
            raise UsageError(f"backend {backend!r} runs its own plans: no evaluator or index")
        return Configuration(None, None, backend, workers, master)
    evaluator = evaluator or default_evaluator(index or None)
    if index and not EVALUATORS.get(evaluator).tags.uses_index:
        raise UsageError(f"evaluator {evaluator!r} does not use an index")
    return Configuration(evaluator, index or None, backend, workers, master)


def _backend_name(text: str) -> str:
    return text.partition(":")[0]


def _backend(text: str) -> tuple[str, int | None, str | None]:
    """(name, workers, master) of ``NAME[:SETTING]``: the setting goes to the field its
    backend's ``tags.scale`` names. A backend whose optional dependency is missing keeps the
    setting as written (it is reported unavailable later)."""
    name, colon, argument = text.partition(":")
    BACKENDS.check(name)
    if not colon:
        return name, None, None
    try:
        backend = BACKENDS.get(name)
    except MissingDependencyError:
        return name, None, argument or None
    if backend.tags.scale is None:
        raise UsageError(f"backend {name!r} takes no ':' argument")
    settings = {"workers": None, "master": None, backend.tags.scale: backend.scale_setting(argument)}
    return name, settings["workers"], settings["master"]


def _count(text: str, what: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"{what} must be a whole number >= 1, got {text!r}")
    return int(text)


def _uses_evaluator(backend: str) -> bool:
    """Whether ``backend`` runs the evaluator it is given; a backend whose optional dependency
    is missing is taken as spark is (its own plans), to be reported unavailable later."""
    try:
        return BACKENDS.get(backend).tags.uses_evaluator
    except MissingDependencyError:
        return False


# -- the grid ----------------------------------------------------------------------------------


def grid(evaluators: Sequence[str] = (), indexes: Sequence[str] = (),
         backends: Sequence[str] = (DEFAULT_BACKEND,), peers: Sequence[str] = ()
         ) -> tuple[list[Configuration], list[str]]:
    """The configurations of ``evaluators x indexes x backends``, then the ``peers``
    (``souffle`` stands for both Soufflés), without repeats, and the combinations left out,
    each said once. No evaluators: the default one (without an index), plus ``relational``
    with each index when indexes are named. An index goes with the evaluators named that take
    one (``EvaluatorTags.uses_index``: ``native/spine``, ``relational/spine``); the others get
    one configuration per backend. A backend that runs its own plans (spark)
    gets one configuration, whatever the evaluators. Raises UsageError for a bad name."""
    defaulted = not evaluators
    if defaulted:
        evaluators = [default_evaluator(None)] + (
            [default_evaluator(indexes[0])] if indexes else [])
    try:
        for registry, names in ((EVALUATORS, evaluators), (INDEXES, indexes)):
            for name in names:
                registry.check(name)
    except HerbrandError as error:
        raise UsageError(str(error)) from None
    configurations: list[Configuration] = []
    skipped: list[str] = []
    takes_index = {e: EVALUATORS.get(e).tags.uses_index for e in evaluators}
    if defaulted:  # the default evaluator as herbrand run uses it: with its own indexes
        takes_index[default_evaluator(None)] = None
    for backend_text in backends:
        backend = parse_configuration(f"@{backend_text}")
        if backend.evaluator is None:  # its own plans
            configurations.append(backend)
            if evaluators != [default_evaluator(None)] or indexes:
                _note(skipped, f"{backend.backend} runs its own plans (no evaluator or index)")
            continue
        for evaluator in evaluators:
            chosen = indexes if takes_index[evaluator] and indexes else [None]
            if indexes and takes_index[evaluator] is False:
                _note(skipped, f"{evaluator} takes no index (one configuration per backend)")
            for index in chosen:
                configurations.append(Configuration(
                    evaluator, index, backend.backend, backend.workers, backend.master))
    for name in peers:
        for peer in (SOUFFLE if name == "souffle" else (name,)):
            configurations.append(parse_configuration(peer))
    unique = list(dict.fromkeys(configurations))
    return unique, skipped


def _note(skipped: list[str], text: str) -> None:
    if text not in skipped:
        skipped.append(text)
