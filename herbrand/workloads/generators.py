"""Deterministic generators of benchmark relations.

Each generator takes its sizes and a ``seed`` (for ``numpy.random.default_rng``) and returns an
(n, arity) int64 array of distinct rows in lexicographic order: the same arguments give the same
array on every platform numpy supports. Costs are those of the vectorised numpy work; nothing
loops over rows in Python.

    >>> chain(3).tolist()
    [[0, 1], [1, 2], [2, 3]]
"""

from __future__ import annotations

import numpy as np

# The predicate codes of the dyre RDFS workload (``shared/workloads/dyre/rdfs.dl``).
SUBCLASS_OF, SUBPROPERTY_OF, DOMAIN, RANGE, TYPE = 0, 1, 2, 3, 4
FIRST_ENTITY = 5  # entity ids start above the predicate codes so they never collide

RMAT_MAX_ROUNDS = 64  # sampling rounds before rmat gives up on a too dense request


def _sorted_unique(rows: np.ndarray) -> np.ndarray:
    """Distinct rows of an (n, arity) int64 array in lexicographic order. O(n log n)."""
    return np.ascontiguousarray(np.unique(rows.astype(np.int64, copy=False), axis=0))


def _first_distinct(keys: np.ndarray) -> np.ndarray:
    """Positions of the first occurrence of each distinct key, in order of position."""
    return np.sort(np.unique(keys, return_index=True)[1])


def _check_count(name: str, value: int, minimum: int = 0) -> None:
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")


def chain(n: int) -> np.ndarray:
    """The path 0 -> 1 -> ... -> n: ``n`` edges (i, i + 1) over n + 1 nodes.

    Its transitive closure has n (n + 1) / 2 pairs. O(n).
    """
    _check_count("n", n)
    start = np.arange(n, dtype=np.int64)
    return np.column_stack([start, start + 1])


def random_tree(nodes: int, seed: int = 0) -> np.ndarray:
    """A random recursive tree rooted at 0: for each node k in 1 .. nodes - 1 an edge
    (parent, k) with the parent drawn uniformly from 0 .. k - 1.

    ``nodes - 1`` edges (none for fewer than two nodes); expected depth O(log nodes). O(nodes).
    """
    _check_count("nodes", nodes)
    rng = np.random.default_rng(seed)
    children = np.arange(1, max(nodes, 1), dtype=np.int64)
    parents = np.floor(rng.random(len(children)) * children).astype(np.int64)
    return _sorted_unique(np.column_stack([parents, children]))


def gnp(nodes: int, p: float, seed: int = 0) -> np.ndarray:
    """A directed Erdős–Rényi graph G(n, p): each ordered pair (i, j), i != j, of the ``nodes``
    nodes is an edge independently with probability ``p``.

    Expected p * nodes * (nodes - 1) edges. O(m) expected for m edges when m is a small fraction
    of the pairs (numpy samples without replacement), O(nodes²) otherwise.
    """
    _check_count("nodes", nodes)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability, got {p}")
    pairs = nodes * (nodes - 1)
    rng = np.random.default_rng(seed)
    count = int(rng.binomial(pairs, p)) if pairs else 0
    return _ordered_pairs(nodes, rng, count)


def gnm(nodes: int, edges: int, seed: int = 0) -> np.ndarray:
    """A directed uniform random graph G(n, m): exactly ``edges`` distinct ordered pairs
    (i, j), i != j, of the ``nodes`` nodes, every such set of pairs equally likely.

    G(10,000, 50,000) with seed 0 is issue 13's scale workload: mean out-degree 5, so almost
    every node lies in one giant strongly connected component and the transitive closure holds
    98,664,477 pairs. Raises ValueError when more edges are asked than the graph holds. O(m)
    when m is a small fraction of the pairs, O(nodes²) otherwise.
    """
    _check_count("nodes", nodes)
    _check_count("edges", edges)
    if edges > nodes * (nodes - 1):
        raise ValueError(f"{nodes} nodes hold at most {nodes * (nodes - 1)} edges, not {edges}")
    return _ordered_pairs(nodes, np.random.default_rng(seed), edges)


def _ordered_pairs(nodes: int, rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` distinct ordered pairs of distinct nodes of 0 .. nodes - 1, drawn uniformly by
    ``rng`` without replacement, as sorted rows."""
    pairs = nodes * (nodes - 1)
    index = rng.choice(pairs, size=count, replace=False) if count else np.zeros(0, np.int64)
    source = index // max(nodes - 1, 1)
    target = index % max(nodes - 1, 1)
    target += target >= source  # skip the diagonal
    return _sorted_unique(np.column_stack([source, target]))


def rmat(
    nodes: int, edges: int, a: float = 0.57, b: float = 0.19, c: float = 0.19, seed: int = 0
) -> np.ndarray:
    """An R-MAT graph: exactly ``edges`` distinct directed edges without self loops over nodes
    0 .. nodes - 1.

    Each edge picks one quadrant of the adjacency matrix per bit level with probabilities
    ``a, b, c`` and ``d = 1 - a - b - c`` (the Graph500 defaults give a skewed, power-law
    degree distribution); draws outside the node range, self loops and repeats are dropped and
    the first ``edges`` distinct draws kept. O(edges · log nodes) per sampling round; raises
    ValueError when more edges are asked than the graph can hold or the skew makes them
    unreachable within RMAT_MAX_ROUNDS rounds.
    """
    _check_count("nodes", nodes)
    _check_count("edges", edges)
    d = 1.0 - a - b - c
    if min(a, b, c, d) < 0:
        raise ValueError(f"quadrant probabilities must be non-negative, got {a}, {b}, {c}, {d}")
    if edges > nodes * (nodes - 1):
        raise ValueError(f"{nodes} nodes hold at most {nodes * (nodes - 1)} edges, not {edges}")
    levels = max(int(np.ceil(np.log2(max(nodes, 2)))), 1)
    rng = np.random.default_rng(seed)
    keys = np.zeros(0, dtype=np.int64)
    for _ in range(RMAT_MAX_ROUNDS):
        if len(keys) >= edges:
            break
        batch = max(2 * (edges - len(keys)), 1024)
        source = np.zeros(batch, dtype=np.int64)
        target = np.zeros(batch, dtype=np.int64)
        for _level in range(levels):  # quadrants a, b, c, d = (0, 0), (0, 1), (1, 0), (1, 1)
            u = rng.random(batch)
            source = (source << 1) | (u >= a + b)
            target = (target << 1) | (((u >= a) & (u < a + b)) | (u >= a + b + c))
        keep = (source < nodes) & (target < nodes) & (source != target)
        drawn = np.concatenate([keys, source[keep] * nodes + target[keep]])
        keys = drawn[_first_distinct(drawn)]
    if len(keys) < edges:
        raise ValueError(f"R-MAT found only {len(keys)} of {edges} distinct edges; "
                         "ask for fewer edges or a less skewed a, b, c")
    keys = np.sort(keys[:edges])  # the order of the keys is the order of the rows
    return np.column_stack([keys // nodes, keys % nodes])


def rdfs_ontology(
    classes: int,
    properties: int,
    instances: int,
    seed: int = 0,
    assertions_per_instance: int = 2,
) -> np.ndarray:
    """Triples (s, p, o) of a random RDFS ontology with instance data, in the dyre encoding.

    Predicates 0..4 are the RDFS codes (SUBCLASS_OF, SUBPROPERTY_OF, DOMAIN, RANGE, TYPE);
    classes, properties and instances get consecutive ids from FIRST_ENTITY on, in that order,
    so a property id used as a predicate never collides with a code. The schema: each class
    but the first has one superclass among the earlier classes (a tree); each property but the
    first has, with probability 1/2, a superproperty among the earlier ones; each property has
    one domain and one range class. The data: each instance has one type, and
    ``assertions_per_instance`` triples (instance, property, instance). Duplicate draws are
    dropped, so there are at most ``classes + 3 · properties - 2 + (1 +
    assertions_per_instance) · instances`` triples (about 2.5 · properties expected for the
    schema). O(that count).
    """
    for name, value in (("classes", classes), ("properties", properties),
                        ("instances", instances)):
        _check_count(name, value, 1)
    _check_count("assertions_per_instance", assertions_per_instance)
    rng = np.random.default_rng(seed)
    class_ids = FIRST_ENTITY + np.arange(classes, dtype=np.int64)
    property_ids = FIRST_ENTITY + classes + np.arange(properties, dtype=np.int64)
    instance_ids = FIRST_ENTITY + classes + properties + np.arange(instances, dtype=np.int64)

    def earlier(ids: np.ndarray) -> np.ndarray:  # for ids[1:], a uniform pick among ids[:k]
        return ids[np.floor(rng.random(len(ids) - 1) * np.arange(1, len(ids))).astype(np.int64)]

    def triples(subjects, predicate, objects) -> np.ndarray:
        predicates = np.broadcast_to(np.asarray(predicate, dtype=np.int64), subjects.shape)
        return np.column_stack([subjects, predicates, objects])

    super_properties = earlier(property_ids)
    has_super = rng.random(properties - 1) < 0.5
    subjects = np.repeat(instance_ids, assertions_per_instance)
    blocks = [
        triples(class_ids[1:], SUBCLASS_OF, earlier(class_ids)),
        triples(property_ids[1:][has_super], SUBPROPERTY_OF, super_properties[has_super]),
        triples(property_ids, DOMAIN, rng.choice(class_ids, properties)),
        triples(property_ids, RANGE, rng.choice(class_ids, properties)),
        triples(instance_ids, TYPE, rng.choice(class_ids, instances)),
        triples(subjects, rng.choice(property_ids, len(subjects)),
                rng.choice(instance_ids, len(subjects))),
    ]
    return _sorted_unique(np.concatenate(blocks))


ANDERSEN_PROGRAM = """\
.decl addressOf(p: number, o: number)
.decl assign(p: number, q: number)
.decl load(p: number, q: number)
.decl store(p: number, q: number)
.decl pointsTo(p: number, o: number)
pointsTo(p, o) :- addressOf(p, o).
pointsTo(p, o) :- assign(p, q), pointsTo(q, o).
pointsTo(p, o) :- load(p, q), pointsTo(q, r), pointsTo(r, o).
pointsTo(r, o) :- store(p, q), pointsTo(p, r), pointsTo(q, o).
"""
"""Andersen's points-to analysis (inclusion-based), the program ``andersen``'s relations are
the inputs of."""


def andersen(variables: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The input relations of Andersen's points-to analysis over ``variables`` variables:
    ``{"addressOf", "assign", "load", "store"}``, each an (n, 2) int64 array of distinct rows
    in lexicographic order, for ``ANDERSEN_PROGRAM``.

    Variables are 0 .. variables - 1 and objects 0 .. variables // 4 - 1, in the same id
    space (an object is also a location that can hold pointers, as a heap cell is). Each
    variable takes the address of one object drawn uniformly (``addressOf``: exactly
    ``variables`` rows); ``assign`` draws ``variables // 2`` pairs of variables, ``load`` and
    ``store`` ``variables // 20`` each, uniformly, repeats dropped. The closure's size depends
    on whether a giant component forms, so it jumps with the seed at a few thousand variables:
    seed 0 gives 15,120 ``pointsTo`` rows for 1,000 variables and 1,707,548 for 5,000.
    O(variables).
    """
    _check_count("variables", variables)
    rng = np.random.default_rng(seed)
    objects = max(variables // 4, 1)

    def pairs(count: int) -> np.ndarray:
        return _sorted_unique(rng.integers(0, max(variables, 1), size=(count, 2),
                                           dtype=np.int64))

    address_of = np.column_stack([np.arange(variables, dtype=np.int64),
                                  rng.integers(0, objects, size=variables, dtype=np.int64)])
    return {
        "addressOf": np.ascontiguousarray(address_of),
        "assign": pairs(variables // 2),
        "load": pairs(variables // 20),
        "store": pairs(variables // 20),
    }
