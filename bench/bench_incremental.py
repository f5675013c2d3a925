"""Incremental engines: the DBSP paper's protocol, the elastic paper's 13 epochs, and memory.

Every engine registered in ``INCREMENTAL_ENGINES`` runs on:

- The DBSP protocol (dyre/graph1000, dyre/graph10000 and RDFS over LUBM(1)): materialize 99%
  (and 50%) of the facts, insert the rest, delete it again. One benchmark per step
  (``bootstrap``, ``insert``, ``delete``); each times one step on a fresh materialization
  prepared by the steps before it. ``extra_info`` records the engine's state and the
  materialization's size (tuples, bytes) and the size of the changes.
- The 13-epoch workload of the elastic paper: the initial evaluation of 90% of the facts, six
  small updates alternating delete and insert, one large insert, four small updates, one large
  delete. ``extra_info["epoch_seconds"]`` holds the time of each epoch (and for elastic
  ``epoch_switches``, each update's switch budget, the work counted against it, the exempt
  work and how it ended: ``_switch``); ``herbrand bench
  report`` draws one timeline per workload with recompute as the reference line.

Workloads (``UPDATES`` names the relation each one updates; the other inputs stay as given):
TC over dyre graph1000 and graph10000, RDFS over LUBM(1), Andersen points-to (the catalogue's
generator, 1,000 variables: 15,120 ``pointsTo``; updates to ``assign``) and Galen EL
(shared/workloads/galen-el; updates to ``nf_subClassOf``; its full materialization takes about
30 s, so it runs the protocol at 99% only and is left out of the epochs), and the CRDT text
editor of shared/workloads/dynamic-datalog (``herbrand.workloads.crdt_program``: the flat
program with ``skipBlank`` started only from elements that have a value, since as written it
holds 151.7M tuples and takes 127 s; updates to ``remove_input``, the removals of characters;
recursions 7,604 and 14,149 iterations deep).

pydbsp 2.1.0, the external reference of the issue, requires Python >= 3.12 and does not install
on this project's Python 3.11; it is not benchmarked here.

With ``--benchmark-disable`` (``make test``) every workload is cut to its first
``SMOKE_FACTS`` facts, so each function runs once in seconds.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np
import pytest

import herbrand
from herbrand.api import load_database
from herbrand.framework.registry import INCREMENTAL_ENGINES
from herbrand.workloads import andersen, crdt_facts_dir, crdt_program
from herbrand.workloads.programs import ANDERSEN_DL
from herbrand.workloads.shared import workload_path

ENGINES = INCREMENTAL_ENGINES.names()
PROTOCOL_WORKLOADS = ["tc-graph1000", "tc-graph10000", "rdfs-lubm1", "andersen1000", "galen-el",
                      "crdt"]
EPOCH_WORKLOADS = ["tc-graph1000", "tc-graph10000", "rdfs-lubm1", "andersen1000", "crdt"]
UPDATES = {"andersen1000": "assign", "galen-el": "nf_subClassOf",  # default: the one input
           "crdt": "remove_input"}
HEAVY = {"galen-el"}  # the protocol at 99% only
STEPS = ["bootstrap", "insert", "delete"]
SMOKE_FACTS = 300
SMALL_UPDATE = 0.001  # share of the facts in a small epoch (at least one fact)
LARGE_UPDATE = 0.05  # share of the facts in a large epoch


@dataclass(frozen=True)
class _Inputs:
    """A workload's program, its input facts by relation (symbols decoded to text where the
    program declares them) and the relation the updates change, in a fixed random order."""

    program: object
    fixed: dict
    relation: str
    rows: np.ndarray


def _incremental_workload(name: str, workloads):
    """(program, facts by relation) of a bench workload or of the incremental ones here."""
    if name == "andersen1000":
        return herbrand.parse(ANDERSEN_DL), andersen(1000, seed=0)
    if name == "galen-el":
        return _shared_facts(workload_path("galen-el", "el-calc.souffle.dl"),
                             workload_path("galen-el", "data"))
    if name == "crdt":
        return _shared_facts(crdt_program(), crdt_facts_dir())
    workload = workloads[name]
    return herbrand.parse(workload.program), dict(workload.facts)


@functools.cache
def _shared_facts(program_source, facts_dir):
    """A shared workload's program (a path or text) and the facts its ``.input`` directives
    read from ``facts_dir`` (symbols as text), read once per session."""
    program = herbrand.parse(program_source)
    database = load_database(program, None, facts_dir)
    facts = {}
    for relation in database:
        columns = database[relation].columns
        types = next(d.types for d in program.declarations if d.name == relation)
        facts[relation] = np.stack(
            [database.symbols.decode_many(c).astype(str) if t == "symbol" else c
             for c, t in zip(columns, types, strict=True)], axis=1)
    return program, facts


def _facts(name: str, workloads, benchmark) -> _Inputs:
    """The workload's inputs, the updated relation's rows shuffled (seed 7) and, when
    benchmarks are disabled, every relation cut to its first SMOKE_FACTS rows."""
    program, facts = _incremental_workload(name, workloads)
    relation = UPDATES.get(name) or next(iter(facts))
    rows = np.unique(np.asarray(facts[relation]), axis=0)
    rows = rows[np.random.default_rng(7).permutation(len(rows))]
    fixed = {r: np.asarray(v) for r, v in facts.items() if r != relation}
    if benchmark.disabled:
        rows = rows[:SMOKE_FACTS]
        fixed = {r: v[:SMOKE_FACTS] for r, v in fixed.items()}
    return _Inputs(program, fixed, relation, rows)


def _record(benchmark, materialization, changes=None) -> None:
    stats = materialization.stats()
    benchmark.extra_info.update({
        "state_tuples": stats.state_tuples, "state_bytes": stats.state_bytes,
        "tuples": stats.tuples, "bytes": stats.bytes, "strategy": stats.strategy,
    })
    if changes is not None:
        benchmark.extra_info["changes"] = changes.size
    switch = _switch(materialization)
    if switch is not None:
        benchmark.extra_info["switch"] = switch


def _switch(materialization) -> list | None:
    """For an engine with a switch (elastic's ``last_switch``), how its last update met its
    budget: [budget s, counted s, exempt s, strategy]; None for other engines or before an
    update."""
    record = getattr(materialization.engine, "last_switch", None)
    if record is None:
        return None
    return [round(record.budget, 6), round(record.counted, 6), round(record.exempted, 6),
            record.strategy]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize(("workload_name", "share"), [
    (name, share) for name in PROTOCOL_WORKLOADS for share in (0.99, 0.5)
    if share == 0.99 or name not in HEAVY])
def test_dbsp_protocol(benchmark, workloads, workload_name, share, step, engine):
    benchmark.group = f"incremental {workload_name} {int(share * 100)}%"
    benchmark.name = f"{engine} {step}"
    inputs = _facts(workload_name, workloads, benchmark)
    split = int(len(inputs.rows) * share)
    start, rest = inputs.rows[:split], inputs.rows[split:]
    relation = inputs.relation

    def bootstrap():
        return herbrand.incremental(inputs.program, facts={**inputs.fixed, relation: start},
                                    engine=engine)

    if step == "bootstrap":
        materialization = benchmark.pedantic(bootstrap, rounds=1, iterations=1)
        _record(benchmark, materialization)
        return

    def prepared():
        materialization = bootstrap()
        if step == "delete":
            materialization.update(insert={relation: rest})
        return (materialization,), {}

    def run(materialization):
        update = {relation: rest}
        changes = materialization.update(**({"insert": update} if step == "insert"
                                            else {"delete": update}))
        _record(benchmark, materialization, changes)

    benchmark.pedantic(run, setup=prepared, rounds=1, iterations=1)


def _epochs(rows: np.ndarray) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """The initial facts and the 12 updates of the elastic workload: 6 small alternating
    delete / insert, 1 large insert, 4 small alternating, 1 large delete."""
    small = max(1, int(len(rows) * SMALL_UPDATE))
    large = max(1, int(len(rows) * LARGE_UPDATE))
    pool_size = 5 * small + large  # facts kept back for the inserts
    initial, pool = rows[:-pool_size], rows[-pool_size:]
    kinds = ["delete", "insert"] * 3 + ["insert-large"] + ["delete", "insert"] * 2 + ["delete-large"]
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


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("workload_name", EPOCH_WORKLOADS)
def test_thirteen_epochs(benchmark, workloads, workload_name, engine):
    benchmark.group = f"epochs {workload_name}"
    benchmark.name = engine
    inputs = _facts(workload_name, workloads, benchmark)
    initial, updates = _epochs(inputs.rows)
    relation = inputs.relation

    def run():
        seconds, strategies, switches = [], [], []
        start = time.perf_counter()
        materialization = herbrand.incremental(
            inputs.program, facts={**inputs.fixed, relation: initial}, engine=engine)
        seconds.append(time.perf_counter() - start)
        strategies.append(materialization.stats().strategy)
        for kind, update in updates:
            start = time.perf_counter()
            materialization.update(**{kind: {relation: update}})
            seconds.append(time.perf_counter() - start)
            strategies.append(materialization.stats().strategy)
            switches.append(_switch(materialization))
        return materialization, seconds, strategies, switches

    materialization, seconds, strategies, switches = benchmark.pedantic(run, rounds=1,
                                                                        iterations=1)
    _record(benchmark, materialization)
    benchmark.extra_info["epoch_seconds"] = [round(s, 6) for s in seconds]
    benchmark.extra_info["epoch_strategies"] = strategies
    if any(switches):
        benchmark.extra_info["epoch_switches"] = switches
    assert len(seconds) == 13


RULE_CHANGES = {"tc-graph10000": "tc(x, z) :- tc(x, y), e(y, z).",
                "rdfs-lubm1": "m(z, 4, y) :- m(x, 0, y), m(z, 4, x)."}


@pytest.mark.parametrize("action", ["remove", "add"])
@pytest.mark.parametrize("workload_name", list(RULE_CHANGES))
def test_rule_changes(benchmark, workloads, workload_name, action):
    """The dbsp engine (rules as data) removing one rule of the workload's program (the
    recursive TC rule; RDFS's type inheritance along subClassOf) from its materialization, or
    adding it back after removing it; compare with a warm ``herbrand.materialize``."""
    benchmark.group = f"rule changes {workload_name}"
    benchmark.name = f"dbsp {action}"
    inputs = _facts(workload_name, workloads, benchmark)
    facts = {**inputs.fixed, inputs.relation: inputs.rows}
    rule = RULE_CHANGES[workload_name]

    def prepared():
        materialization = herbrand.incremental(inputs.program, facts=facts, engine="dbsp")
        if action == "add":
            materialization.remove_rules(rule)
        return (materialization,), {}

    def run(materialization):
        change = materialization.add_rules if action == "add" else materialization.remove_rules
        _record(benchmark, materialization, change(rule))

    benchmark.pedantic(run, setup=prepared, rounds=3, iterations=1)
