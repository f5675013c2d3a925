from herbrand.framework.dnf import complement, conjoin, negate
from herbrand.framework.syntax import Atom, Comparison, Literal, Var

A, B, C = (Literal(Atom(r, (Var("x"),))) for r in "abc")
LESS = Comparison("<", Var("x"), Var("y"))


def test_conjoin_distributes_and_true_false_are_units():
    assert conjoin([(A,), (B,)], [(C,)]) == [(A, C), (B, C)]
    assert conjoin([()], [(A,)]) == [(A,)]
    assert conjoin([], [(A,)]) == []


def test_negate_is_de_morgan_and_complement_is_an_involution():
    assert negate([(A, B)]) == [(complement(A),), (complement(B),)]
    assert negate([(A,), (B,)]) == [(complement(A), complement(B))]
    assert complement(LESS).op == ">=" and complement(complement(A)) == A
    assert negate([]) == [()] and negate([()]) == []
