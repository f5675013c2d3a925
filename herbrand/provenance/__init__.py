"""Provenance: why a tuple is in a program's least model, or why it is not.

``herbrand.explain(program, "tc(1, 5)", facts=...)`` is the entry point. The parts:

- ``heights``: the model re-materialized with the height of every tuple (the semi-naive
  iteration, counted across strata, that first derived it); ``explain``'s cost alone.
- ``lookup``: ``ColumnIndex``, a relation's rows grouped by the values of some columns.
- ``matching``: rule bodies matched against the model, a set of substitutions at a time.
- ``derivations``: a program's rules over its model: head unification, prepared bodies,
  ground instances.
- ``reconstruct``: a minimal-height proof, by bounded top-down search.
- ``why_not``: for a tuple not derived, the first body element of each rule with no match.
- ``proofs``: the values returned, ``Proof`` and ``NotDerived`` (``to_dict``, ``str``).
- ``explain``: ``Explainer``, which holds one recorded model and explains goals over it.

Only ``proofs`` is imported here: the others load the evaluators when used.
"""

from herbrand.provenance.proofs import AggregateValue, NotDerived, Proof, RuleFailure

__all__ = ["AggregateValue", "NotDerived", "Proof", "RuleFailure"]
