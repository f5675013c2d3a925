"""The workloads of the incremental benches (``bench_incremental``, ``update_costs``,
``epoch_costs``): a program, the input facts that stay, and the input facts the updates
change, in one fixed random order.

Workloads: the ones of ``bench.conftest`` (one input relation, all of it updated), and

- ``andersen1000`` / ``andersen4000``: Andersen points-to (``herbrand.workloads.andersen``,
  the generator of the catalogue's ``andersen5000``; seed 0) over 1,000 / 4,000 variables
  (15,120 / 1,064,506 ``pointsTo``); updates to ``assign`` only, the other inputs stay.
- ``galen-el``: EL reasoning over Galen (shared/workloads/galen-el; 143,480 input facts,
  1,091,144 ``inf_subClassOf``); updates to all its input relations together, a random subset
  of the EDB as the elastic paper draws them. A random cut shrinks its closure far faster than
  its facts (125,000 facts: 360k ``inf_subClassOf``; 80,000: 59k).
- ``crdt``: the CRDT text editor of shared/workloads/dynamic-datalog
  (``herbrand.workloads.crdt_program``: ``skipBlank`` started only from elements that have a
  value; 259,778 input facts, 104,653 ``result``); updates to both inputs, ``insert_input``
  and ``remove_input``.

``cut`` shrinks one for a quick run: the first ``n`` of the changed facts' order and the first
``n`` rows of each fixed relation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

import herbrand
from bench.conftest import WORKLOAD_NAMES, _workloads
from herbrand.api import load_database
from herbrand.framework.syntax import Program
from herbrand.workloads import andersen, crdt_facts_dir, crdt_program, workload_path
from herbrand.workloads.programs import ANDERSEN_DL

SEED = 7  # of the changed facts' order
SMALL_UPDATE = 0.001  # share of the facts in a small epoch (at least one fact)
LARGE_UPDATE = 0.05  # share of the facts in a large epoch
GALEN_INPUTS = ("nf_isMainClass", "nf_isSubClass", "nf_conj", "nf_exists", "nf_subClassOf",
                "nf_subProp", "nf_subPropChain")


@dataclass(frozen=True, eq=False)
class ChangedFacts:
    """Facts of one or more relations in one fixed order: position ``i`` is row
    ``position[i]`` of ``rows[relation[i]]``. Slicing keeps the order; ``facts`` groups a part
    by relation. Cost of both: O(positions) per relation, vectorised."""

    names: tuple[str, ...]
    rows: tuple[np.ndarray, ...]  # each relation's distinct rows
    relation: np.ndarray  # int, an index into names, per position
    position: np.ndarray  # int, a row of that relation, per position

    @classmethod
    def shuffled(cls, facts: Mapping[str, np.ndarray], seed: int = SEED) -> ChangedFacts:
        """The distinct rows of every relation of ``facts`` in one random order (``seed``);
        with one relation, the order of ``rows[default_rng(seed).permutation(len(rows))]``."""
        rows = tuple(np.unique(np.asarray(r), axis=0) for r in facts.values())
        relation = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
        position = np.concatenate([np.arange(len(r)) for r in rows])
        order = np.random.default_rng(seed).permutation(len(relation))
        return cls(tuple(facts), rows, relation[order], position[order])

    def __len__(self) -> int:
        return len(self.relation)

    def __getitem__(self, part: slice) -> ChangedFacts:
        return ChangedFacts(self.names, self.rows, self.relation[part], self.position[part])

    def facts(self) -> dict[str, np.ndarray]:
        """Relation -> its rows in this part (relations with none left out)."""
        return {name: self.rows[k][self.position[self.relation == k]]
                for k, name in enumerate(self.names) if np.any(self.relation == k)}

    def fresh(self) -> dict[str, np.ndarray]:
        """One fact of the first relation whose values are all one constant not in its rows
        (a number above them, or a symbol no data uses): it joins nothing already there."""
        rows = self.rows[0]
        value = "herbrand:fresh" if rows.dtype.kind in "US" else int(rows.max()) + 1
        return {self.names[0]: np.full((1, rows.shape[1]), value, dtype=rows.dtype)}


@dataclass(frozen=True)
class IncrementalWorkload:
    """A program, the input facts no update changes (``fixed``) and the ones the updates
    change (``changed``)."""

    name: str
    program: Program
    fixed: dict[str, np.ndarray]
    changed: ChangedFacts

    def facts(self, changed: ChangedFacts) -> dict[str, np.ndarray]:
        """The fixed facts with ``changed`` (a part of ``self.changed``)."""
        return {**self.fixed, **changed.facts()}

    def cut(self, n: int | None) -> IncrementalWorkload:
        """The first ``n`` changed facts and the first ``n`` rows of each fixed relation
        (itself when ``n`` is None)."""
        if n is None:
            return self
        return IncrementalWorkload(self.name, self.program,
                                   {r: rows[:n] for r, rows in self.fixed.items()},
                                   self.changed[:n])


def _andersen(variables: int) -> Callable[[], tuple[Program, dict[str, np.ndarray]]]:
    return lambda: (herbrand.parse(ANDERSEN_DL), andersen(variables, seed=0))


# Name -> (a function returning the program and its facts, the relations the updates change).
SOURCES = {
    "andersen1000": (_andersen(1000), ("assign",)),
    "andersen4000": (_andersen(4000), ("assign",)),
    "galen-el": (lambda: _shared_facts(workload_path("galen-el", "el-calc.souffle.dl"),
                                       workload_path("galen-el", "data")), GALEN_INPUTS),
    "crdt": (lambda: _shared_facts(crdt_program(), crdt_facts_dir()),
             ("insert_input", "remove_input")),
}
NAMES = (*WORKLOAD_NAMES, *SOURCES)


@functools.cache
def incremental_workload(name: str) -> IncrementalWorkload:
    """The workload ``name`` (one of ``NAMES``; one of ``bench.conftest`` changes its one
    input), read or generated once per process. KeyError naming the known ones for another
    name."""
    if name in SOURCES:
        source, updated = SOURCES[name]
        program, facts = source()
    elif name in WORKLOAD_NAMES:
        workload = _workloads()[name]
        program, facts = herbrand.parse(workload.program), dict(workload.facts)
        updated = tuple(facts)
    else:
        raise KeyError(f"unknown workload {name!r}; known: {', '.join(NAMES)}")
    return IncrementalWorkload(
        name, program, {r: np.asarray(v) for r, v in facts.items() if r not in updated},
        ChangedFacts.shuffled({r: facts[r] for r in updated}))


def _shared_facts(program_source, facts_dir) -> tuple[Program, dict[str, np.ndarray]]:
    """A shared workload's program (a path or text) and the facts its ``.input`` directives
    read from ``facts_dir`` (symbols as text; a relation without facts as an empty array)."""
    program = herbrand.parse(program_source)
    database = load_database(program, None, facts_dir)
    facts = {}
    for declaration in program.declarations:
        if declaration.name not in database:
            continue
        columns = database[declaration.name].columns
        facts[declaration.name] = np.stack(
            [database.symbols.decode_many(c).astype(str) if t == "symbol" else c
             for c, t in zip(columns, declaration.types, strict=True)], axis=1)
    return program, facts


def epochs(changed: ChangedFacts) -> tuple[ChangedFacts, list[tuple[str, ChangedFacts]]]:
    """The initial facts and the 12 updates of the elastic paper's workload: 6 small
    alternating delete / insert, 1 large insert, 4 small alternating, 1 large delete
    (``SMALL_UPDATE`` and ``LARGE_UPDATE`` of the facts, at least one each). The inserts come
    from the end of ``changed``, kept out of the initial facts; the deletes from its start."""
    small = max(1, int(len(changed) * SMALL_UPDATE))
    large = max(1, int(len(changed) * LARGE_UPDATE))
    pool_size = 5 * small + large  # facts kept back for the inserts
    initial, pool = changed[:-pool_size], changed[-pool_size:]
    kinds = (["delete", "insert"] * 3 + ["insert-large"] + ["delete", "insert"] * 2
             + ["delete-large"])
    updates, taken, deleted = [], 0, 0
    for kind in kinds:
        size = large if kind.endswith("large") else small
        if kind.startswith("insert"):
            updates.append(("insert", pool[taken:taken + size]))
            taken += size
        else:
            updates.append(("delete", initial[deleted:deleted + size]))
            deleted += size
    return initial, updates
