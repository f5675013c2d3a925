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

Workloads (``bench.incremental_workloads``, which says which relations each one's updates
change; the other inputs stay as given): TC over dyre graph1000 and graph10000, RDFS over
LUBM(1), Andersen points-to over 1,000 variables (15,120 ``pointsTo``; updates to ``assign``),
Galen EL (updates to all its inputs; its full materialization takes about 30 s, so it runs the
protocol at 99% only and is left out of the epochs), and the CRDT text editor (updates to its
insertions and removals; recursions 7,604 and 14,149 iterations deep).

pydbsp 2.1.0, the external reference of the issue, requires Python >= 3.12 and does not install
on this project's Python 3.11; it is not benchmarked here.

With ``--benchmark-disable`` (``make test``) every workload is cut to its first
``SMOKE_FACTS`` facts, so each function runs once in seconds.
"""

from __future__ import annotations

import time

import pytest

import herbrand
from bench.incremental_workloads import IncrementalWorkload, epochs, incremental_workload
from herbrand.framework.registry import INCREMENTAL_ENGINES

ENGINES = INCREMENTAL_ENGINES.names()
PROTOCOL_WORKLOADS = ["tc-graph1000", "tc-graph10000", "rdfs-lubm1", "andersen1000", "galen-el",
                      "crdt"]
EPOCH_WORKLOADS = ["tc-graph1000", "tc-graph10000", "rdfs-lubm1", "andersen1000", "crdt"]
HEAVY = {"galen-el"}  # the protocol at 99% only
STEPS = ["bootstrap", "insert", "delete"]
SMOKE_FACTS = 300


def _inputs(name: str, benchmark) -> IncrementalWorkload:
    """The workload, cut to SMOKE_FACTS when benchmarks are disabled."""
    workload = incremental_workload(name)
    return workload.cut(SMOKE_FACTS) if benchmark.disabled else workload


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
def test_dbsp_protocol(benchmark, workload_name, share, step, engine):
    benchmark.group = f"incremental {workload_name} {int(share * 100)}%"
    benchmark.name = f"{engine} {step}"
    inputs = _inputs(workload_name, benchmark)
    split = int(len(inputs.changed) * share)
    start, rest = inputs.facts(inputs.changed[:split]), inputs.changed[split:].facts()

    def bootstrap():
        return herbrand.incremental(inputs.program, facts=start, engine=engine)

    if step == "bootstrap":
        materialization = benchmark.pedantic(bootstrap, rounds=1, iterations=1)
        _record(benchmark, materialization)
        return

    def prepared():
        materialization = bootstrap()
        if step == "delete":
            materialization.update(insert=rest)
        return (materialization,), {}

    def run(materialization):
        changes = materialization.update(**({"insert": rest} if step == "insert"
                                            else {"delete": rest}))
        _record(benchmark, materialization, changes)

    benchmark.pedantic(run, setup=prepared, rounds=1, iterations=1)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("workload_name", EPOCH_WORKLOADS)
def test_thirteen_epochs(benchmark, workload_name, engine):
    benchmark.group = f"epochs {workload_name}"
    benchmark.name = engine
    inputs = _inputs(workload_name, benchmark)
    initial, updates = epochs(inputs.changed)

    def run():
        seconds, strategies, switches = [], [], []
        start = time.perf_counter()
        materialization = herbrand.incremental(
            inputs.program, facts=inputs.facts(initial), engine=engine)
        seconds.append(time.perf_counter() - start)
        strategies.append(materialization.stats().strategy)
        for kind, update in updates:
            start = time.perf_counter()
            materialization.update(**{kind: update.facts()})
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
def test_rule_changes(benchmark, workload_name, action):
    """The dbsp engine (rules as data) removing one rule of the workload's program (the
    recursive TC rule; RDFS's type inheritance along subClassOf) from its materialization, or
    adding it back after removing it; compare with a warm ``herbrand.materialize``."""
    benchmark.group = f"rule changes {workload_name}"
    benchmark.name = f"dbsp {action}"
    inputs = _inputs(workload_name, benchmark)
    facts = inputs.facts(inputs.changed)
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
