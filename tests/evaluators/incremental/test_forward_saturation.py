"""The backward/forward engine's forward half (``forward_saturation``): a saturation round
reads only the rows that can derive a checked head (``near_heads``' cuts) once enough facts
are proved, and its relations whole before."""

from __future__ import annotations

from herbrand.evaluators.incremental.bf import BFEngine
from herbrand.evaluators.incremental.near_heads import NearHeads
from herbrand.framework.testing import IncrementalSession

# TC whose saturation rule is no pair (``pair_saturation``): the rule evaluator runs it
TC_WITHOUT_LOOPS = """
.decl e(x: number, y: number)
.decl tc(x: number, y: number)
tc(x, y) :- e(x, y).
tc(x, z) :- tc(x, y), e(y, z), x != z.
"""


def test_the_saturation_reads_only_the_edges_into_checked_heads(checks, monkeypatch):
    monkeypatch.setattr(NearHeads, "MIN_DELTA", 1)  # every saturation round cuts
    # a chain with two shortcuts: deleting e(3, 4) checks tc(x, y) for x <= 3 < y and more
    # (more facts than e has rows, so the saturation's e is cut): the edges into a node that
    # no checked fact ends at derive no checked head and are left out of the cut
    edges = [(i, i + 1) for i in range(20)] + [(0, 5), (7, 3)]
    session = IncrementalSession(BFEngine, TC_WITHOUT_LOOPS, {"e": edges})
    session.update(delete={"e": [(3, 4)]})
    check, = checks
    targets = set(check._facts["tc"].checked_rows()[1].tolist())
    cut = set(map(tuple, check._forward._near._cuts["@near0.1:e"].relation.columns.T.tolist()))
    # (C as its last saturation saw it: a prefix of the final C)
    assert cut and cut <= {(y, z) for y, z in edges if z in targets and (y, z) != (3, 4)}
    assert len(cut) < len(edges) - 1


def test_a_saturation_round_from_few_proved_facts_reads_its_relations_whole(checks):
    edges = [(i, i + 1) for i in range(20)] + [(0, 5), (7, 3)]
    session = IncrementalSession(BFEngine, TC_WITHOUT_LOOPS, {"e": edges})
    session.update(delete={"e": [(3, 4)]})
    check, = checks
    assert check._facts["tc"].proved_count < NearHeads.MIN_DELTA and check._forward._near is None
