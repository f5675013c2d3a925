"""Incremental engines: ``IncrementalEvaluator`` implementations, registered by name in
``INCREMENTAL_ENGINES`` (``herbrand.builtins``) and used through ``herbrand.incremental``.

Engines:

- ``recompute``: re-materialize after every update; the baseline (``recompute``).
- ``dred``: delete-rederive with semi-naive insertion (``dred``).
- ``bf``: backward/forward deletion (check for another proof before deleting), semi-naive
  insertion (``bf``, its batched checks in ``backward_forward``).
- ``counting``: per-iteration derivation counts, as differential dataflow keeps them
  (``counting``, its rewrites in ``counting_rules``).
- ``elastic``: Bootstrap / Update with the sparse state and the switch (``elastic*``).
- ``dbsp``: Z-sets and incremental operators, rules as data (``dbsp/``).

Shared helpers, usable by any engine:

- ``programs``: ``IncrementalProgram.prepare`` (inputs vs derived relations, base facts of
  derived relations behind base rules) and rule rewrites (``change_variants``,
  ``head_restricted``, ``renamed``).
- ``changes``: set changes of relations (``apply_update``, ``database_changes``,
  ``as_batch_changes``, ``visible``; ``apply_updates`` through kept hash tables).
- ``relation_sets``: ``RelationSet`` (a Relation with a hash table of its row positions that
  grows and shrinks with it) and ``RelationSets`` (one per relation name, kept across updates,
  so membership costs O(1) per probed row instead of O(n) per update).
- ``selections``: constant selections of fixed relations (``select_constants``), and
  ``KeptSelections``, which keeps them across updates and carries them by each change.
- ``weighted``: weighted batches (Z-sets) as numpy arrays (``consolidate``, ``combine``,
  ``add_sorted``, ``weights_of``).
- ``counting_merge``: numba kernels over sorted packed keys (galloping ``sorted_positions``,
  ``merge_added``, ``segments_moved``), with which the counting engine's state and dbsp's
  Z-sets and traces take a change in one pass.
- ``counting_refresh``: one iteration of a counting update (the change merged into the
  counts, the tuples entering and leaving the iteration) in one native pass over packed keys.
- ``counting_semijoins``: semi-join reductions, by an update's change, of the relations that
  change along its iterations (no index of them built again in every iteration), for the
  counting and dbsp engines.

Every engine builds its new state from immutable Relations and commits it at the end of an
update, so a failing update leaves it as it was; ``check_incremental`` checks all of them.
"""
