"""Cutting an iteration: delta slices and rules dealt among tasks; bounded morsels."""

import numpy as np

import herbrand
from herbrand.evaluators.fixpoint import DELTA_PREFIX, SemiNaiveFixpoint, serial_step
from herbrand.evaluators.morsels import in_morsels, split_work
from herbrand.evaluators.relational import RelationalEvaluator
from herbrand.evaluators.row_sets import RowSet
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.workloads import gnp

TC = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z).
"""


def _reads(delta_rows: int) -> Database:
    columns = np.arange(2 * delta_rows, dtype=np.int64).reshape(2, delta_rows)
    return Database({"e": Relation(columns), DELTA_PREFIX + "tc": Relation(columns)},
                    SymbolTable(), {})


def test_large_deltas_are_cut_into_one_slice_per_worker():
    rules = herbrand.parse(TC).rules
    tasks = split_work(rules, _reads(10), parts=3, min_rows=5)
    assert len(tasks) == 3
    slices = [reads[DELTA_PREFIX + "tc"] for _, reads in tasks]
    assert sum(map(len, slices)) == 10
    assert Relation(np.concatenate([s.columns for s in slices], axis=1)) == \
        tasks[0][1]["e"]  # the slices partition the delta; the full relations are shared
    assert all(task_rules == rules for task_rules, _ in tasks)


def test_small_deltas_deal_the_rules_round_robin():
    rules = herbrand.parse(TC).rules
    tasks = split_work(rules, _reads(10), parts=3, min_rows=100)
    assert [len(task_rules) for task_rules, _ in tasks] == [1, 1]
    assert {r for task_rules, _ in tasks for r in task_rules} == set(rules)


def _tc_variant_over(edges: np.ndarray) -> tuple[list, Database]:
    """TC's recursive rule as its delta variant, and reads where e, tc and tc's delta are
    ``edges`` ((2, n) columns)."""
    rule = herbrand.parse(TC).rules[1]
    variant = herbrand.evaluators.fixpoint.delta_variants(rule, {"tc"})
    reads = Database({"e": Relation(edges), "tc": Relation(edges),
                      DELTA_PREFIX + "tc": Relation(edges)}, SymbolTable(), {})
    return variant, reads


def test_a_morselled_step_derives_what_the_whole_step_derives_less_the_known_rows():
    edges = gnp(200, 0.03, seed=1).T.astype(np.int64)
    variant, reads = _tc_variant_over(edges)
    known = {"tc": RowSet(edges[:, : edges.shape[1] // 2])}
    whole = serial_step(RelationalEvaluator())
    calls = []

    def counted(task_rules, task_reads, task_known):
        calls.append(len(task_reads[DELTA_PREFIX + "tc"]))
        return whole(task_rules, task_reads, task_known)

    morselled = in_morsels(counted, rows=100)(variant, reads, known)["tc"]
    expected = known["tc"].unseen(whole(variant, reads, known)["tc"])
    assert max(calls) <= 100 and sum(calls) == edges.shape[1] and len(calls) > 1
    assert Relation(morselled) == Relation(expected)


def test_the_fixpoint_runs_in_morsels_and_agrees_with_one_piece():
    edges = gnp(300, 0.02, seed=5)
    pieces = SemiNaiveFixpoint(RelationalEvaluator(),
                                step=in_morsels(serial_step(RelationalEvaluator()), rows=64))
    whole = SemiNaiveFixpoint(RelationalEvaluator(), step=serial_step(RelationalEvaluator()))
    program = herbrand.parse(TC)
    database = herbrand.load_database(program, {"e": edges})
    assert pieces.materialize(program, database)["tc"] == whole.materialize(program, database)["tc"]


def test_a_whole_iteration_keeps_its_known_rows_unless_asked_to_drop_them():
    variant, reads = _tc_variant_over(gnp(50, 0.1, seed=2).T.astype(np.int64))
    derived = serial_step(RelationalEvaluator())(variant, reads, {})["tc"]
    known = {"tc": RowSet(derived[:, : derived.shape[1] // 2])}
    kept = in_morsels(serial_step(RelationalEvaluator()))(variant, reads, known)["tc"]
    dropped = in_morsels(serial_step(RelationalEvaluator()), drop_known=True)(
        variant, reads, known)["tc"]
    assert Relation(kept) == Relation(derived)
    assert Relation(dropped) == Relation(known["tc"].unseen(derived))
    assert dropped.shape[1] < kept.shape[1]
