"""bench.incremental_workloads: the changed facts' order, its parts, the epochs, and the
workloads the incremental benches read."""

from __future__ import annotations

import numpy as np
import pytest

from bench import epoch_costs, update_costs
from bench.incremental_workloads import ChangedFacts, epochs, incremental_workload

EDGES = np.array([[3, 4], [1, 2], [1, 2], [5, 6], [0, 1]])
NAMES = np.array([["b", "c"], ["a", "b"]])


def _sorted(rows: np.ndarray) -> list:
    return sorted(map(tuple, rows.tolist()))


def test_one_relation_keeps_the_order_of_a_seeded_permutation_of_its_distinct_rows():
    changed = ChangedFacts.shuffled({"e": EDGES}, seed=7)
    distinct = np.unique(EDGES, axis=0)
    expected = distinct[np.random.default_rng(7).permutation(len(distinct))]
    assert len(changed) == 4
    assert changed.facts()["e"].tolist() == expected.tolist()


def test_parts_of_several_relations_partition_their_distinct_rows():
    changed = ChangedFacts.shuffled({"e": EDGES, "name": NAMES}, seed=1)
    assert len(changed) == 6
    first, rest = changed[:3].facts(), changed[3:].facts()
    for relation, rows in (("e", EDGES), ("name", NAMES)):
        parts = [part[relation] for part in (first, rest) if relation in part]
        assert _sorted(np.concatenate(parts)) == _sorted(np.unique(rows, axis=0))
    assert changed[:0].facts() == {}


def test_a_fresh_fact_joins_nothing_already_there():
    numbers = ChangedFacts.shuffled({"e": EDGES}).fresh()
    assert numbers["e"].tolist() == [[7, 7]]
    symbols = ChangedFacts.shuffled({"name": NAMES, "e": EDGES}).fresh()
    assert list(symbols) == ["name"] and symbols["name"][0, 0] not in NAMES
    assert symbols["name"][0, 0] == symbols["name"][0, 1]


def test_the_epochs_delete_initial_facts_and_insert_the_ones_kept_back():
    changed = ChangedFacts.shuffled({"e": np.arange(4000).reshape(2000, 2)})
    initial, updates = epochs(changed)
    kinds = [kind for kind, _ in updates]
    assert kinds == ["delete", "insert"] * 3 + ["insert"] + ["delete", "insert"] * 2 + ["delete"]
    sizes = [len(batch) for _, batch in updates]
    assert sizes == [2] * 6 + [100] + [2] * 4 + [100]
    start = set(map(tuple, initial.facts()["e"].tolist()))
    assert len(start) == 2000 - 5 * 2 - 100
    for kind, batch in updates:
        rows = set(map(tuple, batch.facts()["e"].tolist()))
        assert rows <= start if kind == "delete" else not rows & start


@pytest.mark.parametrize(("name", "updated"), [
    ("andersen1000", {"assign"}),
    ("crdt", {"insert_input", "remove_input"}),
    ("galen-el", {"nf_isMainClass", "nf_isSubClass", "nf_conj", "nf_exists", "nf_subClassOf",
                  "nf_subProp", "nf_subPropChain"}),
])
def test_each_workload_changes_its_named_inputs_and_keeps_the_others(name, updated):
    workload = incremental_workload(name)
    assert set(workload.changed.names) == updated
    declared = {d.name for d in workload.program.declarations}
    assert set(workload.fixed) <= declared and not set(workload.fixed) & updated
    cut = workload.cut(50)
    assert len(cut.changed) == 50 and all(len(rows) <= 50 for rows in cut.fixed.values())


def test_the_cost_benches_run_a_workload_of_several_changed_relations():
    workload = incremental_workload("crdt")
    full, changed, results = update_costs.measure(workload, ["recompute", "bf"], repeat=1,
                                                  facts=300, clock="cpu")
    assert full > 0 and changed == 3 and [r.engine for r in results] == ["recompute", "bf"]
    runs = epoch_costs.measure(workload, ["recompute", "counting"], rounds=1, clock="cpu",
                               facts=300)
    assert all(len(run.seconds) == 13 for run in runs)
