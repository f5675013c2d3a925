"""The built-in IndexBacking implementations, one module each, registered lazily by name.

- ``hash`` (``HashIndex``): dict of key -> numpy bucket, plus a row set for dedup; delete.
- ``btree`` (``BTreeIndex``): sortedcontainers ``SortedSet`` on (key, rest); ordered, delete.
- ``sorted_vector`` (``SortedVectorIndex``): one sorted numpy run, a tail merged lazily; ordered,
  delete; the fast one.
- ``persistent`` (``PersistentIndex``): pyrsistent pmap of tuple/pset buckets; O(1) snapshots,
  delete.
- ``spine`` (``SpineIndex``): geometrically merged sorted runs (an LSM); ordered, delete.
- ``open_hash`` (``OpenHashIndex``): numba open-addressing tables over a row block; delete.

``sorted_vector``, ``spine`` and ``open_hash`` are tagged ``native``: their ``native_view()``
is what the native executor's kernels probe in place.

``runs`` holds the sorted run shared by sorted_vector and spine, ``kernels`` the numpy and numba
routines shared by all. The numba kernels are compiled ahead of time with the native executor's
(``herbrand.evaluators.native.exported``), so no index loads numba. Each module's docstring
states its costs. No implementation is imported here; ``INDEXES.get(name)`` imports on first
use.
"""

from herbrand.framework.registry import INDEXES

# name -> "module:class"; herbrand.builtins registers the same names, so they resolve whether or
# not this package was imported first.
BUILTIN_INDEXES = {
    "hash": "herbrand.indexes.hash:HashIndex",
    "btree": "herbrand.indexes.btree:BTreeIndex",
    "sorted_vector": "herbrand.indexes.sorted_vector:SortedVectorIndex",
    "persistent": "herbrand.indexes.persistent:PersistentIndex",
    "spine": "herbrand.indexes.spine:SpineIndex",
    "open_hash": "herbrand.indexes.open_hash:OpenHashIndex",
}
for _name, _target in BUILTIN_INDEXES.items():
    INDEXES.register(_name, _target)
