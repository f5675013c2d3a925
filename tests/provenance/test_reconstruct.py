"""Proof reconstruction: every proof of every derived tuple of random programs checks
(``proof_checker``), its height is the recorded first-derivation height, and that height is
minimal: one rule application to the tuples of lower height less one does not derive it."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herbrand.api import load_database
from herbrand.evaluators.substitution import SubstitutionEvaluator
from herbrand.framework.analysis import analyse
from herbrand.framework.parser import parse
from herbrand.framework.storage import Database, Relation
from herbrand.provenance.explain import Explainer
from tests.provenance.proof_checker import ProofChecker
from tests.strategies import programs_with_facts

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
TUPLES_PER_PROGRAM = 6


def _not_derivable_below(explainer: Explainer, relation: str, row: tuple, height: int) -> bool:
    """Whether ``row`` cannot have been derived before iteration ``height``: the stratum of
    ``relation`` starts at ``height`` (its first iteration: the least positive height of its
    tuples), or one application of its rules to the lower strata and to its tuples of height
    < ``height - 1`` does not derive ``row``."""
    stratum = next(s for s in analyse(explainer.program) if relation in s.relations)
    model = explainer.model
    first = min(int(h) for name in stratum.relations for h in model.heights[name] if h > 0)
    if height == first:
        return True
    relations = {}
    for name, rel in model.database.items():
        keep = (model.heights[name] < height - 1 if name in stratum.relations
                else np.ones(len(rel), dtype=bool))
        relations[name] = Relation(rel.columns[:, keep], unique=True)
    below = Database(relations, model.database.symbols, model.database.types)
    derived = SubstitutionEvaluator().evaluate(stratum.rules, below).get(relation)
    return derived is None or row not in derived.to_set()


@SETTINGS
@given(case=programs_with_facts(atom_expressions=True), data=st.data())
def test_every_proof_checks_and_has_the_least_height(case, data):
    program, facts = case
    explainer = Explainer(program, load_database(program, facts))
    model = explainer.model
    checker = ProofChecker(program, model.database, model.heights, facts)
    derived = [(name, row) for name in model.database for row in model.database[name].to_rows()]
    chosen = data.draw(st.lists(st.sampled_from(derived), max_size=TUPLES_PER_PROGRAM,
                                unique=True)) if derived else []
    for relation, row in chosen:
        values = explainer.derivations.decode(relation, row)
        proof = explainer.explain((relation, *values))
        assert proof.derived
        checker.check(proof)
        if proof.height > 0:
            assert _not_derivable_below(explainer, relation, row, proof.height)


def test_heights_grow_across_strata_and_within_a_recursive_one():
    program = parse("""
        .decl e(x: number, y: number)
        .decl tc(x: number, y: number)
        .decl far(x: number, y: number)
        tc(x, y) :- e(x, y).
        tc(x, z) :- tc(x, y), e(y, z).
        far(x, y) :- tc(x, y), !e(x, y).
    """)
    explainer = Explainer(program, load_database(program, {"e": [(1, 2), (2, 3), (3, 4)]}))
    proof = explainer.explain("far(1, 4)")
    assert [proof.height, *(p.height for p in proof.premises)] == [5, 3]
    assert explainer.explain("tc(1, 2)").height == 1
    assert explainer.explain("e(1, 2)").height == 0
