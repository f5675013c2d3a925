"""The README example: a custom numpy index in a dozen lines that passes the conformance suite."""

import numpy as np

from herbrand.framework.contracts import IndexBacking
from herbrand.framework.index_checks import check_index
from herbrand.framework.storage import Relation, row_keys
from herbrand.indexes.kernels import expand_ranges


class NumpyIndex(IndexBacking):
    """All rows in one immutable Relation; join sorts the keys and searches them. O(n log n)."""

    def __init__(self, arity: int, key: tuple[int, ...]):
        super().__init__(arity, key)
        self.relation = Relation.empty(arity)

    def insert(self, rows):
        self.relation = self.relation | Relation(rows)

    def join(self, probe, probe_key):
        stored = self.relation.columns
        mine, theirs = row_keys(stored[list(self.key)], probe[list(probe_key)])
        order = np.argsort(mine, kind="stable")
        lo, hi = (np.searchsorted(mine[order], theirs, side) for side in ("left", "right"))
        positions, matches = expand_ranges(lo, hi)
        return positions, stored[:, order[matches]]

    def __len__(self):
        return len(self.relation)

    def rows(self):
        return self.relation.columns


def test_the_readme_index_passes_check_index():
    assert set(check_index(NumpyIndex).values()) == {"passed"}


def test_the_readme_index_joins():
    index = NumpyIndex(arity=2, key=(0,))
    index.insert(np.array([[1, 1, 2], [10, 11, 20]]))
    positions, rows = index.join(np.array([[1, 3, 2]]), probe_key=(0,))
    assert sorted(zip(positions.tolist(), map(tuple, rows.T.tolist()), strict=True)) == [
        (0, (1, 10)), (0, (1, 11)), (2, (2, 20))]
    assert repr(index) == "NumpyIndex(arity=2, key=(0,))"
