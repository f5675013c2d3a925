"""Loaders of the real workloads kept outside the checkout, in ``shared/workloads``.

The folder is found by ``workloads_root``: the ``HERBRAND_WORKLOADS`` environment variable, else
``../shared/workloads`` beside the checkout that holds the ``herbrand`` package, else
``../shared/workloads`` from the working directory. Its README describes each workload; the
loaders here return numpy arrays (dyre graphs and LUBM triples), program paths (dyre), and the
Soufflé conformance cases as ``SouffleCase`` records.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import numpy as np

from herbrand.framework import io
from herbrand.framework.errors import FactsError
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import NUMBER, SYMBOL

ENV_VAR = "HERBRAND_WORKLOADS"
SOUFFLE_CONFORMANCE = "souffle-conformance"
# The folder holding the ``herbrand`` package (this file is herbrand/workloads/shared.py).
CHECKOUT = Path(__file__).resolve().parents[2]


def workloads_root() -> Path:
    """The workloads folder: ``$HERBRAND_WORKLOADS``, else ``<checkout>/../shared/workloads``,
    else ``./../shared/workloads``. Raises FactsError naming the variable when none exists."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        root = Path(configured)
        if not root.is_dir():
            raise FactsError(f"{ENV_VAR}={configured}: not a directory")
        return root
    candidates = (CHECKOUT / ".." / "shared" / "workloads", Path.cwd() / ".." / "shared" / "workloads")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate.resolve()
    looked = ", ".join(str(c) for c in candidates)
    raise FactsError(f"workloads folder not found (looked in {looked}); "
                     f"set {ENV_VAR} to its path")


def workload_path(*parts: str) -> Path:
    """``workloads_root() / parts``; FactsError naming the path if it does not exist."""
    path = workloads_root().joinpath(*parts)
    if not path.exists():
        raise FactsError(f"{path}: no such workload file or folder")
    return path


# ---------------------------------------------------------------------------------------------
# dyre: the DBSP paper's graphs, LUBM(1) triples and programs
# ---------------------------------------------------------------------------------------------


def dyre_edges(name: str = "graph1000") -> np.ndarray:
    """The distinct (src, dst) edges of ``dyre/<name>.txt`` as an (n, 2) int64 array, in
    order of first appearance (graph1000: 1,009; graph10000: 9,206). O(lines)."""
    rows = io.read_facts(workload_path("dyre", f"{name}.txt"), (NUMBER, NUMBER, SYMBOL),
                         SymbolTable(), delimiter=" ", relation=name)
    return np.ascontiguousarray(Relation(rows.columns[:2]).rows)


def lubm1_triples() -> np.ndarray:
    """The distinct integer-encoded LUBM(1) triples (s, p, o), tbox then abox, as an (n, 3)
    int64 array: 100,838 rows. Predicate codes as in ``generators`` (0 subClassOf ... 4 type).
    O(lines)."""
    tbox, abox = (
        io.read_facts(workload_path("dyre", f"lubm1{part}.ntenc"), (NUMBER,) * 3, SymbolTable(),
                      delimiter=" ", relation=f"lubm1{part}")
        for part in ("tbox", "abox")
    )
    return np.ascontiguousarray(tbox.union(abox).rows)


def dyre_program(name: str) -> Path:
    """The path of a dyre program: ``"tc"`` or ``"rdfs"`` (the ``.dl`` suffix is optional)."""
    return workload_path("dyre", name if name.endswith(".dl") else f"{name}.dl")


# ---------------------------------------------------------------------------------------------
# dynamic-datalog: the CRDT text editor (the elastic paper's incremental workload)
# ---------------------------------------------------------------------------------------------

# The flat program's two ``skipBlank`` rules, and the same rules restricted to the elements
# ``nextVisible`` asks about (a magic-set rewrite by hand). As written, ``skipBlank`` pairs
# every element with each one it reaches through removed elements: quadratic in a run of
# removals, 151.7M tuples and 127 s in herbrand (Soufflé's interpreter did not finish in 5
# minutes). Started only from elements that have a value, it holds 182k tuples, and
# ``nextVisible`` and ``result`` are the same relations (checked by the tests).
CRDT_SKIP_BLANK_DEMAND = {
    "skipBlank(fc, fn, tc, tn) :- nextElem(fc, fn, tc, tn).":
        "skipBlank(fc, fn, tc, tn) :- hasValue(fc, fn), nextElem(fc, fn, tc, tn).",
    "skipBlank(fc, fn, tc, tn) :- skipBlank(vc, vn, tc, tn), nextElem(fc, fn, vc, vn), "
    "!hasValue(vc, vn).":
        "skipBlank(fc, fn, tc, tn) :- skipBlank(fc, fn, vc, vn), !hasValue(vc, vn), "
        "nextElem(vc, vn, tc, tn).",
}


def crdt_program(demand: bool = True) -> str:
    """The text of ``dynamic-datalog/crdt/query_flat.dl`` (its ``.input`` directives read
    ``insert.txt`` and ``remove.txt`` from ``crdt_facts_dir()``); with ``demand``, its
    ``skipBlank`` rules restricted as ``CRDT_SKIP_BLANK_DEMAND`` says. FactsError if the file
    no longer holds the rules to restrict."""
    text = workload_path("dynamic-datalog", "crdt", "query_flat.dl").read_text()
    if not demand:
        return text
    for written, restricted in CRDT_SKIP_BLANK_DEMAND.items():
        if written not in text:
            raise FactsError(f"dynamic-datalog/crdt/query_flat.dl: no rule {written!r} "
                             "to restrict")
        text = text.replace(written, restricted)
    return text


def crdt_facts_dir() -> Path:
    """The folder of the CRDT program's edit operations (``insert.txt``: 182,315 insertions,
    ``remove.txt``: 77,463 removals)."""
    return workload_path("dynamic-datalog", "crdt")


def write_facts_dir(
    directory: str | PathLike,
    relations: Mapping[str, np.ndarray | Iterable[tuple[int | str, ...]]],
) -> Path:
    """Write each relation's rows to ``<directory>/<relation>.facts`` (tab-separated, sorted),
    creating the folder, so a program's ``.input`` directives can read them; returns the
    folder. ``rows``: an (n, arity) integer array or decoded tuples. O(n log n) per relation."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for name, rows in relations.items():
        io.write_csv(directory / f"{name}.facts", rows)
    return directory


# ---------------------------------------------------------------------------------------------
# Soufflé's own evaluation tests
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SouffleCase:
    """One staged Soufflé test case.

    ``directory``: where the expected outputs are; ``program``: the ``.dl`` file;
    ``facts_dir``: the folder of its input files (which may not exist when the
    program reads no files); ``expected``: output relation -> expected ``.csv`` (Soufflé's rows,
    to compare as sets); ``expected_stdout``: the ``.out`` file, None when missing or empty.
    """

    name: str
    directory: Path
    program: Path
    facts_dir: Path
    expected: dict[str, Path] = field(hash=False)
    expected_stdout: Path | None = None


def souffle_cases(tier: str) -> list[SouffleCase]:
    """The cases of one tier folder (``"tierA_plain"``, ``"tierB_arith_agg"``,
    ``"tierD_ignorable_directives"``), sorted by name. A case folder with subfolders other than
    ``facts`` (Soufflé's ``lucas``) is one case per subfolder, named ``case/subfolder``, whose
    facts and expected outputs are in that subfolder. FactsError listing the tiers for an
    unknown tier. O(files in the tier)."""
    base = workload_path(SOUFFLE_CONFORMANCE)
    folder = base / tier
    if not folder.is_dir():
        tiers = sorted(p.name for p in base.iterdir() if p.is_dir())
        raise FactsError(f"{folder}: no such tier (tiers: {', '.join(tiers)})")
    cases = []
    for directory in sorted(p for p in folder.iterdir() if p.is_dir()):
        program = directory / f"{directory.name}.dl"
        variants = sorted(p for p in directory.iterdir() if p.is_dir() and p.name != "facts")
        if variants:  # one program run on several facts folders, each with its own outputs
            cases += [_case(f"{directory.name}/{v.name}", v, program, v) for v in variants]
        else:
            cases.append(_case(directory.name, directory, program, directory / "facts"))
    return cases


def _case(name: str, directory: Path, program: Path, facts_dir: Path) -> SouffleCase:
    stdout = directory / f"{program.stem}.out"
    return SouffleCase(
        name=name,
        directory=directory,
        program=program,
        facts_dir=facts_dir,
        expected={p.stem: p for p in sorted(directory.glob("*.csv"))},
        expected_stdout=stdout if stdout.is_file() and stdout.stat().st_size else None,
    )
