"""Expansion's choice of the atoms to check next: only atoms not in C yet, and a left-out
(member) atom probed in the old relation only where it is not in C."""

from __future__ import annotations

import numpy as np

from herbrand.evaluators.incremental.checked_facts import CheckedFacts
from herbrand.evaluators.incremental.expansion import Expansion, InstanceRows
from herbrand.evaluators.incremental.instance_rules import instance_rule
from herbrand.evaluators.incremental.relation_sets import RelationSet
from herbrand.framework.parser import parse
from herbrand.framework.storage import Relation
from tests.evaluators.incremental.engine_helpers import TC


def test_a_full_expansion_probes_and_checks_only_atoms_not_in_c():
    recursive = instance_rule(parse(TC).rules[1], 1, ("tc",))  # tc(x, y) is a member
    facts = {"tc": CheckedFacts(2)}
    head, known = facts["tc"].check(np.array([[0, 0], [9, 2]]))  # tc(0, 9), tc(0, 2)
    # instances of tc(0, 9): through tc(0, 2) (in C), tc(0, 3) (an old fact), tc(0, 4) (none)
    rows = np.array([[0, 0, 0], [9, 9, 9], [head] * 3, [0, 0, 0], [2, 3, 4]])
    old = RelationSet(Relation.from_rows([(0, 2), (0, 3), (0, 9)]))
    probed = []

    def members(name: str) -> RelationSet:
        assert name == "tc"
        return _Recording(old, probed)

    expansion = Expansion(facts, members, {"tc": np.zeros((2, 0), dtype=np.int64)})
    found = InstanceRows.found(recursive, rows, facts)
    assert found.atoms[0].tolist() == [known, -1, -1]
    atoms, partial = expansion.next_atoms([found], full=True)
    assert atoms["tc"].T.tolist() == [[0, 3]]  # tc(0, 2) is in C, tc(0, 4) is no fact
    assert probed == [[(0, 3), (0, 4)]]  # tc(0, 2) needed no probe
    assert not any(partial.values())


class _Recording:
    """A RelationSet that records the rows each ``contains`` asks about."""

    def __init__(self, kept: RelationSet, probed: list):
        self._kept, self._probed = kept, probed

    def contains(self, rows: np.ndarray) -> np.ndarray:
        self._probed.append([tuple(row) for row in rows.T.tolist()])
        return self._kept.contains(rows)


def test_a_lazy_expansion_checks_an_atom_that_copies_a_lower_fact_first():
    recursive = instance_rule(parse(TC).rules[1], 1, ("tc",))
    facts = {"tc": CheckedFacts(2)}
    waits, other, checked = facts["tc"].check(np.array([[0, 0, 0], [9, 8, 2]]))
    # tc(0, 9): through tc(0, 2) (in C, unproved: it would wait), tc(0, 3), tc(0, 4);
    # tc(0, 8): through tc(0, 3), tc(0, 6); e(0, 4) and e(0, 6) are edges, e(0, 3) is none
    rows = np.array([[0] * 5, [9, 9, 9, 8, 8], [waits] * 3 + [other] * 2, [0] * 5,
                     [2, 3, 4, 3, 6]])
    sets = {"tc": RelationSet(Relation.from_rows([(0, y) for y in (2, 3, 4, 6, 8, 9)])),
            "e": RelationSet(Relation.from_rows([(0, 4), (0, 6), (4, 9), (6, 8)]))}
    found = InstanceRows.found(recursive, rows, facts)
    empty = {"tc": np.zeros((2, 0), dtype=np.int64)}
    plain = Expansion(facts, sets.__getitem__, empty)
    assert plain.next_atoms([found], full=False)[0]["tc"].T.tolist() == [[0, 3]]
    likeliest = Expansion(facts, sets.__getitem__, empty, {"tc": ("e", (0, 1))})
    atoms, partial = likeliest.next_atoms([found], full=False)
    assert sorted(atoms["tc"].T.tolist()) == [[0, 4], [0, 6]]
    assert partial["tc"][0].tolist() == [waits, other]
    assert checked not in partial["tc"][0]
