"""The probe rewrite: variants, reported columns, and derivations that say where they came
from."""

from __future__ import annotations

import doctest

from herbrand.evaluators.incremental import elastic_rules
from herbrand.evaluators.incremental.elastic_rules import NegatedSlot, ProbeRule
from herbrand.framework.parser import parse


def test_doctests():
    assert doctest.testmod(elastic_rules).failed == 0


def test_variants_and_slots():
    rule = parse("h(x, z + 1) :- a(x, y), y < 3, !q(_, y), a(y, z).").rules[0]
    probe = ProbeRule.of(rule)
    assert probe.positives == ("a", "a")
    assert probe.negatives == (NegatedSlot("q", (1,)),)
    assert len(probe.seeded) == 3
    assert str(probe.full) == ("@probe(x, (z + 1), @pos0, @pos1, y) :- @U:a(x, y, @pos0), "
                               "y < 3, !@keep:q:1(y), @U:a(y, z, @pos1).")
    assert str(probe.seeded[2]).startswith("@probe(x, (z + 1), @pos0, @pos1, y) :- "
                                           "@delta:nseed:q:1(y), @U:a(x, y, @pos0)")
    # the head's position, given by the seed, comes back last
    assert str(probe.head_seeded).startswith("@probe(x, (z + 1), @pos0, @pos1, y, @head) :- "
                                             "@delta:head:h(x, (z + 1), @head), "
                                             "@U:a(x, y, @pos0)")
