"""The shared workloads by name, each a program file plus a facts directory in Soufflé's
layout, so the same files feed ``herbrand run``, ``souffle``, a compiled Soufflé binary and the
peers: ``herbrand compare --workload NAME`` and the whole-process benchmarks of ``bench/``.

Every workload has two sizes: ``full`` (the performance issue's figures) and ``smoke`` (small
enough for ``make test`` to run every configuration once in seconds). Generated facts are
written once into a cache folder (``prepare``; herbrand's cache directory unless told
otherwise); the real data of ``shared/workloads`` (``herbrand.workloads.workload_path``) is
read where it lies, never copied.

``expected`` holds the sizes every configuration must reproduce, where they are known in
advance: the issue's figures and the ones measured once for the generators' default seeds
(R-MAT 2,048 / 20,000 gives 2,134,125 where the issue says about 2.05M; the random tree of
3,000 nodes 999,438 where it says about 948k: other generators than ours).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from herbrand.evaluators.native.compiled import cache_directory
from herbrand.framework import io
from herbrand.framework.analysis import analyse
from herbrand.framework.errors import UnknownComponentError, UsageError
from herbrand.framework.parser import parse as parse_text
from herbrand.framework.parser import parse_file
from herbrand.workloads import programs
from herbrand.workloads.generators import (
    andersen,
    chain,
    gnm,
    gnp,
    random_tree,
    rdfs_ontology,
    rmat,
)
from herbrand.workloads.shapes import Shape, recognise
from herbrand.workloads.shared import dyre_edges, lubm1_triples, workload_path

# Bump when a generator or program changes, so cached facts folders are rewritten.
LAYOUT_VERSION = "1"
SIZES = ("full", "smoke")


@dataclass(frozen=True)
class Prepared:
    """A program's files, ready for whole-process runs: ``program`` (a ``.dl`` file),
    ``facts`` (the ``-F`` folder), ``inputs`` (relation -> its facts file, for the peers),
    ``expected`` (relation -> size, when known), ``shape`` (the peers' computation it is, when
    recognised), ``headline`` (the relation whose size is its tuple count; None: all outputs
    together). ``size``: the workload's size, empty for a program given by the user."""

    name: str
    size: str
    program: Path
    facts: Path
    inputs: dict[str, Path] = field(default_factory=dict)
    expected: dict[str, int] = field(default_factory=dict)
    shape: Shape | None = None
    headline: str | None = None


@dataclass(frozen=True)
class Spec:
    """How to build a workload. ``program``: size -> Datalog text, or a Path (a program kept
    in shared/workloads). ``facts``: size -> relation -> rows (written as
    ``<relation>.facts``), or, for real data, ``facts_dir``: size -> an existing folder and
    ``inputs``: size -> relation -> its file in that folder. ``headline``: the relation whose
    size is the workload's tuple count (None: all outputs together). The peers run where the
    program is one of their shapes (``shapes.recognise``)."""

    title: str
    program: Callable[[str], str | Path]
    facts: Callable[[str], Mapping[str, np.ndarray]] | None
    headline: str | None
    expected: Mapping[str, Mapping[str, int] | Callable[[], Mapping[str, int]]] = field(
        default_factory=dict)
    sizes: tuple[str, ...] = SIZES
    facts_dir: Callable[[str], Path] | None = None
    inputs: Callable[[str], Mapping[str, str]] | None = None


def _pick(full, smoke):
    return lambda size: full() if size == "full" else smoke()


def _shared(*parts: str) -> Path:
    return workload_path(*parts)


def _lubm_expected() -> dict[str, int]:
    folder = _shared("lubm-chasebench", "expected")
    return {path.stem: sum(1 for line in path.read_bytes().splitlines() if line)
            for path in sorted(folder.glob("q*.csv"))}


def _specs() -> dict[str, Spec]:
    def tc(facts_full, facts_smoke) -> Callable[[str], Mapping[str, np.ndarray]]:
        return _pick(lambda: {"e": facts_full()}, lambda: {"e": facts_smoke()})

    tc_text = lambda size: programs.TC_DL  # noqa: E731
    return {
        "tc-graph10000": Spec(
            "TC, dyre graph10000", tc_text,
            tc(lambda: dyre_edges("graph10000"), lambda: dyre_edges("graph1000")),
            "tc", {"full": {"tc": 262_144}, "smoke": {"tc": 11_532}}),
        "rdfs-lubm1": Spec(
            "RDFS, dyre LUBM(1)", lambda size: _shared("dyre", "rdfs.dl"),
            _pick(lambda: {"t": lubm1_triples()},
                  lambda: {"t": rdfs_ontology(30, 10, 200, seed=0)}),
            "m", {"full": {"m": 126_732}}),
        "tc-rmat2048": Spec(
            "TC, R-MAT 2,048 nodes / 20,000 edges", tc_text,
            tc(lambda: rmat(2048, 20_000, seed=0), lambda: rmat(128, 500, seed=0)),
            "tc", {"full": {"tc": 2_134_125}}),
        "tc-gnp1000": Spec(
            "TC, G(1000, 0.01)", tc_text,
            tc(lambda: gnp(1000, 0.01, seed=0), lambda: gnp(100, 0.02, seed=0)),
            "tc", {"full": {"tc": 1_000_000}}),
        "tc-chain2000": Spec(
            "TC, chain of 2,000 edges", tc_text,
            tc(lambda: chain(2000), lambda: chain(100)),
            "tc", {"full": {"tc": 2_001_000}, "smoke": {"tc": 5_050}}),
        "sg-tree3000": Spec(
            "same generation, random tree of 3,000 nodes",
            lambda size: programs.SAME_GENERATION_DL,
            _pick(lambda: {"parent": random_tree(3000, seed=0)},
                  lambda: {"parent": random_tree(300, seed=0)}),
            "sg", {"full": {"sg": 999_438}}),
        "andersen5000": Spec(
            "Andersen points-to, 5,000 variables", lambda size: programs.ANDERSEN_DL,
            _pick(lambda: andersen(5000, seed=0), lambda: andersen(1000, seed=0)),
            "pointsTo", {"full": {"pointsTo": 1_707_548}, "smoke": {"pointsTo": 15_120}}),
        "counter100k": Spec(
            "counter b(x+1) :- b(x), x < 100000",
            _pick(lambda: programs.counter_dl(100_000), lambda: programs.counter_dl(1_000)),
            lambda size: {}, "b",
            {"full": {"b": 100_001}, "smoke": {"b": 1_001}}),
        "lubm-chasebench": Spec(
            "LUBM ChaseBench, 14 queries",
            lambda size: _shared("lubm-chasebench", "lubm_datalog.dl"),
            None, None, {"full": _lubm_expected, "smoke": _lubm_expected},
            facts_dir=lambda size: _shared("lubm-chasebench", "data")),
        "tc-gnutella08": Spec(
            "TC, SNAP Gnutella08",
            lambda size: programs.tc_file_dl("snap_p2p-Gnutella08.edge.facts"),
            None, "tc", {"full": {"tc": 13_148_244}}, sizes=("full",),
            facts_dir=lambda size: _shared("graphs"),
            inputs=lambda size: {"e": "snap_p2p-Gnutella08.edge.facts"}),
        "tc-random10000": Spec(
            "TC, uniform random graph G(10,000, 50,000)", tc_text,
            tc(lambda: gnm(10_000, 50_000, seed=0), lambda: gnm(300, 1_500, seed=0)),
            "tc", {"full": {"tc": 98_664_477}, "smoke": {"tc": 88_209}}),
        "galen-el": Spec(
            "Galen EL (inf_subClassOf)",
            lambda size: _shared("galen-el", "el-calc.souffle.dl"),
            None, "inf_subClassOf", {"full": {"inf_subClassOf": 1_091_144}},
            sizes=("full",), facts_dir=lambda size: _shared("galen-el", "data")),
    }


WORKLOADS = ("tc-graph10000", "rdfs-lubm1", "tc-rmat2048", "tc-gnp1000", "tc-chain2000",
             "sg-tree3000", "andersen5000", "counter100k", "lubm-chasebench", "tc-gnutella08",
             "tc-random10000", "galen-el")
# The workloads that take minutes for herbrand today (run last, and with a timeout).
HEAVY = ("tc-gnutella08", "tc-random10000", "galen-el")

_SPECS: dict[str, Spec] | None = None


class UnknownWorkloadError(UnknownComponentError, KeyError):
    """A workload name that is not in ``WORKLOADS`` (the message lists them)."""

    __str__ = Exception.__str__  # KeyError would quote the message


def spec(name: str) -> Spec:
    """The Spec of workload ``name``; UnknownWorkloadError listing the workloads for an
    unknown name."""
    global _SPECS
    if _SPECS is None:
        _SPECS = _specs()
    if name not in _SPECS:
        raise UnknownWorkloadError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
    return _SPECS[name]


def shape_of(name: str, size: str = "full") -> Shape | None:
    """The peers' shape of workload ``name``'s program (None: no peer runs it). Reads the
    program (a file of shared/workloads for some) but no facts."""
    program = spec(name).program(size)
    return recognise(parse_file(program) if isinstance(program, Path)
                     else parse_text(program))


def _write_rows(path: Path, rows: np.ndarray) -> None:
    """Tab-separated rows, one per line (numbers only). O(n)."""
    rows = np.asarray(rows, dtype=np.int64).reshape(len(rows), -1)
    with open(path, "w") as handle:
        if len(rows):
            np.savetxt(handle, rows, fmt="%d", delimiter="\t")


def prepare(name: str, size: str = "full", root: Path | None = None) -> Prepared:
    """The workload's files at ``size``, written under ``root`` (default herbrand's cache
    directory, ``$HERBRAND_CACHE_DIR`` or ``~/.cache/herbrand``) the first time and reused
    after: ``<root>/workloads/<name>-<size>/`` holds the program (unless it is a file of
    shared/workloads) and ``facts/`` (unless the facts are a folder of shared/workloads).
    Writing is atomic (a temporary folder renamed into place), so parallel sessions never see
    half-written files. UnknownWorkloadError for an unknown name, UsageError for a size the
    workload lacks, FactsError when shared/workloads is missing. Cost: generating and writing
    the facts once."""
    workload = spec(name)
    if size not in workload.sizes:
        raise UsageError(f"workload {name} has no {size!r} size "
                         f"(only {', '.join(workload.sizes)})")
    root = Path(root) if root is not None else cache_directory()
    folder = root / "workloads" / f"{name}-{size}"
    program = workload.program(size)
    stamp = folder / f".complete-{LAYOUT_VERSION}"
    if not stamp.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=folder.parent))
        if isinstance(program, str):
            (scratch / "program.dl").write_text(program)
        (scratch / "facts").mkdir()
        for relation, rows in (workload.facts(size) if workload.facts else {}).items():
            _write_rows(scratch / "facts" / f"{relation}.facts", rows)
        (scratch / stamp.name).write_text("")
        shutil.rmtree(folder, ignore_errors=True)
        try:
            scratch.rename(folder)
        except OSError:  # another session won the race: use its folder
            shutil.rmtree(scratch, ignore_errors=True)
    program_path = program if isinstance(program, Path) else folder / "program.dl"
    if workload.facts_dir is not None:
        facts_dir = workload.facts_dir(size)
        files = workload.inputs(size) if workload.inputs else {}
        inputs = {relation: facts_dir / file for relation, file in files.items()}
    else:
        facts_dir = folder / "facts"
        inputs = {path.stem: path for path in sorted(facts_dir.glob("*.facts"))}
    expected = workload.expected.get(size, {})
    expected = dict(expected() if callable(expected) else expected)
    return Prepared(name, size, Path(program_path), Path(facts_dir), inputs, expected,
                    shape_of(name, size), workload.headline)


def prepare_program(program: Path, facts: Path, name: str | None = None) -> Prepared:
    """A program file and its facts folder as they are, ready for whole-process runs: the
    inputs are the files its ``.input`` directives name, its shape is recognised for the peers.
    Raises the parser's and analysis's errors, and FactsError for a bad directive. O(program)."""
    parsed = parse_file(program)
    analyse(parsed)
    inputs = {}
    for directive in parsed.directives:
        if directive.kind == "input":
            _, filename, _ = io.io_parameters(directive, ".facts")
            inputs[directive.relation] = Path(facts) / filename
    return Prepared(name or Path(program).stem, "", Path(program), Path(facts), inputs,
                    shape=recognise(parsed))
