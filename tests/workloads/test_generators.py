import numpy as np
import pytest

from herbrand.workloads import generators
from herbrand.workloads.generators import (
    ANDERSEN_PROGRAM,
    andersen,
    chain,
    gnm,
    gnp,
    random_tree,
    rdfs_ontology,
    rmat,
)

GENERATORS = {
    "rmat": lambda seed: rmat(1000, 5000, seed=seed),
    "gnp": lambda seed: gnp(300, 0.02, seed=seed),
    "gnm": lambda seed: gnm(300, 1500, seed=seed),
    "random_tree": lambda seed: random_tree(500, seed=seed),
    "rdfs_ontology": lambda seed: rdfs_ontology(30, 10, 200, seed=seed),
}


def assert_rows(rows: np.ndarray, arity: int) -> None:
    assert rows.dtype == np.int64 and rows.ndim == 2 and rows.shape[1] == arity
    assert len(np.unique(rows, axis=0)) == len(rows), "duplicate rows"
    assert np.array_equal(rows, np.unique(rows, axis=0)), "rows not in lexicographic order"


@pytest.mark.parametrize("name", GENERATORS)
def test_same_seed_same_rows_other_seed_other_rows(name):
    make = GENERATORS[name]
    assert np.array_equal(make(7), make(7))
    assert not np.array_equal(make(7), make(8))


@pytest.mark.parametrize("name", GENERATORS)
def test_rows_are_distinct_and_sorted(name):
    rows = GENERATORS[name](0)
    assert_rows(rows, 3 if name == "rdfs_ontology" else 2)


def test_chain():
    assert chain(4).tolist() == [[0, 1], [1, 2], [2, 3], [3, 4]]
    assert chain(0).shape == (0, 2)


@pytest.mark.parametrize(("nodes", "edges"), [(1000, 5000), (1 << 12, 40_000), (10, 90)])
def test_rmat_exact_edge_count_no_self_loops(nodes, edges):
    rows = rmat(nodes, edges, seed=3)
    assert_rows(rows, 2)
    assert len(rows) == edges
    assert (rows[:, 0] != rows[:, 1]).all()
    assert rows.min() >= 0 and rows.max() < nodes


@pytest.mark.parametrize(("nodes", "edges"), [(300, 1500), (10, 90), (2, 0)])
def test_gnm_exact_edge_count_no_self_loops(nodes, edges):
    rows = gnm(nodes, edges, seed=1)
    assert_rows(rows, 2)
    assert len(rows) == edges
    assert (rows[:, 0] != rows[:, 1]).all()
    assert rows.size == 0 or (rows.min() >= 0 and rows.max() < nodes)


def test_gnm_refuses_more_edges_than_pairs():
    with pytest.raises(ValueError, match="10 nodes hold at most 90 edges, not 91"):
        gnm(10, 91)


def test_rmat_is_skewed():
    degrees = np.bincount(rmat(1 << 12, 40_000, seed=0)[:, 0], minlength=1 << 12)
    assert degrees.max() > 10 * degrees.mean()


def test_rmat_rejects_impossible_requests():
    with pytest.raises(ValueError, match="at most 90"):
        rmat(10, 91)
    with pytest.raises(ValueError, match="non-negative"):
        rmat(10, 5, a=0.9, b=0.2, c=0.1)


def test_gnp_edge_count_close_to_expectation():
    nodes, p = 2000, 0.001
    rows = gnp(nodes, p, seed=1)
    assert_rows(rows, 2)
    expected = p * nodes * (nodes - 1)
    assert abs(len(rows) - expected) < 5 * np.sqrt(expected)
    assert (rows[:, 0] != rows[:, 1]).all() and rows.max() < nodes


def test_gnp_extremes():
    assert gnp(5, 0.0).shape == (0, 2)
    assert len(gnp(5, 1.0)) == 20
    assert gnp(0, 0.5).shape == (0, 2)


def test_random_tree_every_node_but_root_has_one_earlier_parent():
    rows = random_tree(1000, seed=2)
    assert len(rows) == 999
    assert sorted(rows[:, 1].tolist()) == list(range(1, 1000))
    assert (rows[:, 0] < rows[:, 1]).all()
    assert random_tree(1).shape == (0, 2)


def test_rdfs_ontology_layout():
    classes, properties, instances = 30, 10, 200
    rows = rdfs_ontology(classes, properties, instances, seed=5)
    s, p, o = rows.T
    first_property = generators.FIRST_ENTITY + classes
    first_instance = first_property + properties
    assert s.min() >= generators.FIRST_ENTITY and o.min() >= generators.FIRST_ENTITY
    codes = p <= generators.TYPE
    assert ((p[~codes] >= first_property) & (p[~codes] < first_instance)).all()
    assert (p == generators.SUBCLASS_OF).sum() == classes - 1
    assert (p == generators.DOMAIN).sum() == properties == (p == generators.RANGE).sum()
    assert (p == generators.TYPE).sum() == instances
    assert (p == generators.SUBPROPERTY_OF).sum() < properties
    assert len(rows) <= classes + 3 * properties - 2 + 3 * instances




def andersen_closure(relations: dict[str, np.ndarray]) -> set[tuple[int, int]]:
    """Andersen's points-to sets by plain Python set unions to a fixpoint (the oracle)."""
    points_to: dict[int, set[int]] = {}
    for p, o in relations["addressOf"].tolist():
        points_to.setdefault(p, set()).add(o)
    changed = True
    while changed:
        before = sum(map(len, points_to.values()))
        for p, q in relations["assign"].tolist():
            points_to.setdefault(p, set()).update(points_to.get(q, ()))
        for p, q in relations["load"].tolist():
            for r in list(points_to.get(q, ())):
                points_to.setdefault(p, set()).update(points_to.get(r, ()))
        for p, q in relations["store"].tolist():
            for r in list(points_to.get(p, ())):
                points_to.setdefault(r, set()).update(points_to.get(q, ()))
        changed = sum(map(len, points_to.values())) != before
    return {(p, o) for p, objects in points_to.items() for o in objects}


def test_andersen_sizes_and_ranges():
    variables = 1000
    relations = andersen(variables, seed=0)
    assert set(relations) == {"addressOf", "assign", "load", "store"}
    for rows in relations.values():
        assert_rows(rows, 2)
        assert rows.min() >= 0 and rows.max() < variables
    address_of = relations["addressOf"]
    assert address_of[:, 0].tolist() == list(range(variables))  # one object per variable
    assert address_of[:, 1].max() < variables // 4
    assert len(relations["assign"]) <= variables // 2
    assert len(relations["assign"]) > 0.95 * (variables // 2)  # few repeats dropped
    assert 0 < len(relations["load"]) <= variables // 20
    assert 0 < len(relations["store"]) <= variables // 20


def test_andersen_is_deterministic():
    first, again, other = andersen(500, seed=3), andersen(500, seed=3), andersen(500, seed=4)
    assert all(np.array_equal(first[name], again[name]) for name in first)
    assert not all(np.array_equal(first[name], other[name]) for name in first)
    assert all(len(rows) == 0 for rows in andersen(0).values())


def test_andersen_closure_matches_herbrand():
    import herbrand

    relations = andersen(1000, seed=0)
    expected = andersen_closure(relations)
    assert len(expected) == 15_120  # the figure the docstring gives
    database = herbrand.materialize(ANDERSEN_PROGRAM, facts=relations)
    assert set(database["pointsTo"].to_rows()) == expected
