"""Cutting one fixpoint iteration's work: into delta slices or groups of rules (``split_work``,
for threads) and into bounded morsels run one after another (``in_morsels``, for memory).

A semi-naive delta variant reads exactly one delta relation (``@delta:r``), so cutting every
delta of an iteration into contiguous slices and running all its rules over slice i, for each
i, derives together exactly what the whole iteration derives. The batch executor materializes
each operator's result, so an iteration over a delta of d rows whose joins fan out by f holds an
intermediate of about d * f rows; run over morsels of at most m delta rows, it holds m * f at a
time, plus the morsels' rows not yet known (Andersen's points-to over 5,000 variables: 16.7 GB
in one piece).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from herbrand.framework.storage import Database, Relation
from herbrand.framework.syntax import Rule
from herbrand.translators.join_ordering import DELTA_PREFIX

if TYPE_CHECKING:
    from herbrand.evaluators.fixpoint import Step
    from herbrand.evaluators.row_sets import RowSet

Task = tuple[Sequence[Rule], Database]

MORSEL_ROWS = 32_768
"""The delta rows of one morsel of the local fixpoint's iterations (``in_morsels``)."""


def split_work(rules: Sequence[Rule], reads: Database, parts: int, min_rows: int) -> list[Task]:
    """The (rules, reads) tasks of one iteration: delta slices when the deltas are large,
    else the rules dealt round-robin. At most ``parts`` tasks, none empty. O(parts) views."""
    deltas = {name: reads[name] for name in reads if name.startswith(DELTA_PREFIX)}
    if parts > 1 and sum(map(len, deltas.values())) >= min_rows:
        bounds = {name: np.linspace(0, len(r), parts + 1).astype(np.int64)
                  for name, r in deltas.items()}
        return [
            (rules, reads.with_relations({
                name: Relation(r.columns[:, bounds[name][i]:bounds[name][i + 1]], unique=True)
                for name, r in deltas.items()
            }))
            for i in range(parts)
        ]
    groups = [list(rules[i::parts]) for i in range(min(parts, len(rules)))]
    return [(group, reads) for group in groups if group]


def in_morsels(step: Step, rows: int = MORSEL_ROWS, *, drop_known: bool = False) -> Step:
    """``step`` run over morsels: an iteration whose deltas hold more than ``rows`` rows in all
    is cut into ceil(delta / rows) delta slices, run one after another, each slice's derived
    rows that are already known dropped (``RowSet.unseen``) before the next runs. Same rows as
    ``step`` (repeats across morsels are left to the fixpoint's insertion); the first pass and
    iterations without deltas run whole, their known rows dropped only with ``drop_known``
    (a parallel task's, so that the calling thread inserts less). Cost: ``step``'s, plus its
    fixed cost per morsel, plus O(m) expected per m rows whose known ones are dropped."""

    def run(rules: Sequence[Rule], reads: Database,
            known: Mapping[str, RowSet]) -> dict[str, np.ndarray]:
        delta = sum(len(reads[name]) for name in reads if name.startswith(DELTA_PREFIX))
        if delta <= rows:
            derived = step(rules, reads, known)
            if not drop_known:
                return derived
            return {name: known[name].unseen(block) for name, block in derived.items()}
        parts: dict[str, list[np.ndarray]] = {}
        for task in split_work(rules, reads, -(-delta // rows), 0):
            for name, derived in step(*task, known).items():
                parts.setdefault(name, []).append(known[name].unseen(derived))
        return {name: np.concatenate(blocks, axis=1) for name, blocks in parts.items()}

    return run
