"""What a round of the backward/forward step (``backward_forward``) makes of the rule instances
of its frontier: which of them prove their heads, and which of their stratum atoms are checked
next (``Expansion``).

A round's instances of one rule are an ``InstanceRows``: the rows (head, its position in C,
then stratum atoms) with the position in C of each row's head (read off the row: the focus
carries it) and of each of its stratum atoms, found once when the round's instances are (one
hash probe per atom; probing the heads too cost a 1% delete of TC graph10000 about 3 ms of
its 7 in ``found``). C does not grow until the
round's next frontier is checked, so the positions hold for the whole round, and every later
question is an array lookup: "are its atoms all proved?" reads P's mask at the atoms'
positions (P grows during the round's saturation, and is read after it), "all checked?" is
"no position is -1", "which fact is it an instance of?" is its head's position. (Asked through
hash probes, as before, the instances of a lazy round over TC graph10000, a 1% delete: 174k
rows, were probed three times, for P, for the heads and for C.)

Expansion checks the atoms of the rows it expands that are not in C yet, ``full``: of every
unproved fact's instances with such an atom whose ``members`` atoms (left out of the rule and
probed in the old relations, ``instance_rules``) the old relations hold (a member atom in C
is one: C holds old facts only, so only the others are probed; on TC over graph10000, a 1%
delete, the full rounds' probes and checks: next_atoms 3.6 -> 2.8 ms). Lazy: one
instance per unproved fact, none while one of its instances has its atoms all checked already
(the fact waits for them), chosen among the instances whose ``members`` atoms are old facts
(probed for the chosen rows only, again when a chosen row is no instance); the facts with an
instance whose atoms are not all checked are returned as ``partial``, to be expanded fully if
still unproved when no frontier is left. The likeliest proof first: an instance whose atoms
not in C are all copies of lower facts (``copies``: a rule such as ``tc(x, y) :- e(x, y)``;
one probe of the lower relation's hash set per such atom) is chosen before any other, even
for a fact that waits: its atoms are proved outright as soon as they are checked, and the
fact with them. On TC over graph10000, a 1% delete: 58,182 facts checked -> 47,395, 527k
saturation derivations -> 402k, 269k instance rows -> 209k, for 103k more probes of ``e``'s
small set; of the first lazy round's 2,016 atoms, 86 were such copies before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from herbrand.evaluators.incremental.checked_facts import CheckedFacts, first_per_key
from herbrand.evaluators.incremental.instance_rules import InstanceRule
from herbrand.evaluators.incremental.relation_sets import RelationSet


@dataclass(frozen=True)
class InstanceRows:
    """A round's instances of ``instance``: ``rows`` (its head, then its stratum atoms), the
    position in C of each row's head (``heads``) and of each of its stratum atoms (``atoms``,
    one array per atom of ``instance.atoms``); -1 where not in C."""

    instance: InstanceRule
    rows: np.ndarray
    heads: np.ndarray
    atoms: tuple[np.ndarray, ...]

    @classmethod
    def found(cls, instance: InstanceRule, rows: np.ndarray,
              facts: Mapping[str, CheckedFacts]) -> InstanceRows:
        """The instance rows ``rows`` with their positions in C (``facts``): the head's is
        the row's own (``instance_rules.AT``), one hash probe per row and stratum atom finds
        the others. O(rows x atoms) expected."""
        return cls(instance, rows, rows[instance.head_arity],
                   tuple(facts[relation].positions(columns)
                         for relation, columns in instance.atom_columns(rows)))

    def __len__(self) -> int:
        return self.rows.shape[1]

    def all_proved(self, facts: Mapping[str, CheckedFacts]) -> np.ndarray:
        """Whether each row's stratum atoms are all in P now. O(rows x atoms), no hashing."""
        mask = np.ones(len(self), dtype=bool)
        for (relation, _), positions in zip(self.instance.atoms, self.atoms, strict=True):
            mask &= facts[relation].proved_at(positions)
        return mask

    def all_checked(self) -> np.ndarray:
        """Whether each row's stratum atoms are all in C. O(rows x atoms)."""
        mask = np.ones(len(self), dtype=bool)
        for positions in self.atoms:
            mask &= positions >= 0
        return mask


class Expansion:
    """The proofs and the next atoms of a round's instances (see the module doc) over the
    checked facts ``facts`` (by relation: C and P) and ``members``: the hash set of a relation
    as the instances read it (old relations of the stratum, new lower ones); ``copies``: per
    relation of the stratum, a lower relation whose facts' copies are proved outright and the
    columns of the copy (``StepRules.copies``)."""

    def __init__(self, facts: Mapping[str, CheckedFacts],
                 members: Callable[[str], RelationSet], empty: Mapping[str, np.ndarray],
                 copies: Mapping[str, tuple[str, tuple[int, ...]]] | None = None):
        self._facts, self._members, self._empty = facts, members, empty
        self._copies = {} if copies is None else copies

    def proving(self, instances: Sequence[InstanceRows]) -> dict[str, list[np.ndarray]]:
        """The heads (a bag, by relation) of the instances whose stratum atoms are all
        proved now. O(rows x atoms)."""
        heads: dict[str, list[np.ndarray]] = {}
        for found in instances:
            instance = found.instance
            rows = found.rows[:instance.head_arity, found.all_proved(self._facts)]
            heads.setdefault(instance.head, []).append(rows)
        return heads

    def next_atoms(self, instances: Sequence[InstanceRows], full: bool
                   ) -> tuple[dict[str, np.ndarray], dict[str, list[np.ndarray]]]:
        """``(atoms, partial)``: the stratum atoms to check next (a bag, by relation: those of
        the rows expanded that are not in C yet), and (lazy) the unproved facts that may have
        instances with atoms left unchecked (their positions in C). ``full``: the rows of
        every held instance of an unproved fact with an atom not in C; lazy: of one per
        unproved fact (see the module doc). O(rows x atoms), plus a hash probe per member
        atom not in C of the rows expanded (full) or chosen (lazy)."""
        out: dict[str, list[np.ndarray]] = {n: [] for n in self._facts}
        partial: dict[str, list[np.ndarray]] = {n: [] for n in self._facts}
        for head in {found.instance.head for found in instances}:
            facts = self._facts[head]
            group = [found for found in instances if found.instance.head == head]
            unproved = [~facts.proved_at(found.heads) for found in group]
            if full:
                chosen = [self._held(found, np.flatnonzero(mask & ~found.all_checked()))
                          for found, mask in zip(group, unproved, strict=True)]
            else:
                chosen = self._one_per_fact(facts, group, np.concatenate(unproved),
                                            partial[head])
            for found, rows in zip(group, chosen, strict=True):
                atoms = found.instance.atom_columns(found.rows)
                for (relation, columns), positions in zip(atoms, found.atoms, strict=True):
                    out[relation].append(columns[:, rows[positions[rows] < 0]])
        return {n: concat_batches(parts, self._empty[n]) for n, parts in out.items()}, partial

    def _held(self, found: InstanceRows, rows: np.ndarray) -> np.ndarray:
        """The ``rows`` (indices into ``found``) whose ``members`` atoms the old relations
        hold: probed where not in C (C holds old facts only). O(rows) expected."""
        instance = found.instance
        if not instance.members or not len(rows):
            return rows
        mask = np.ones(len(rows), dtype=bool)
        atoms = instance.atom_columns(found.rows)
        for position in instance.members:
            relation, columns = atoms[position]
            unchecked = found.atoms[position][rows] < 0
            mask[unchecked] &= self._members(relation).contains(columns[:, rows[unchecked]])
        return rows[mask]

    def _one_per_fact(self, facts: CheckedFacts, group: Sequence[InstanceRows],
                      unproved: np.ndarray, partial: list[np.ndarray]) -> list[np.ndarray]:
        """The rows (indices into each of ``group``, the instances of one head relation;
        ``unproved``: whether a row's head is unproved, over the rows of all, concatenated)
        to expand lazily: one per unproved fact whose ``members`` atoms the old relations
        hold (probed for the chosen rows only), a row whose atoms not in C are copies of
        lower facts first (``_copied``), else none when one has its atoms all checked
        (such a row is held: C holds old facts only); appends to ``partial`` the unproved
        facts with a row not all checked (their positions in C; held or not: a superset,
        expanded fully, and so probed, if still unproved). O(rows), no copy of them."""
        keys = np.concatenate([found.heads for found in group])
        ready = np.concatenate([found.all_checked() for found in group])
        waiting = np.zeros(facts.checked_count, dtype=bool)
        waiting[keys[unproved & ready]] = True
        candidate = unproved & ~waiting[keys]
        likely = self._copied(group, unproved & ~ready)
        candidate |= likely
        while True:  # one pass per instance a fact's first choices lacked: usually one or two
            take = first_per_key(keys, likely, facts.checked_count)
            taken = np.zeros(facts.checked_count, dtype=bool)
            taken[keys[take]] = True
            take |= first_per_key(keys, candidate & ~taken[keys], facts.checked_count)
            unheld = self._unheld(group, take)
            if not len(unheld):
                break
            candidate[unheld] = False
            likely[unheld] = False
        unready = np.zeros(facts.checked_count, dtype=bool)
        unready[keys[unproved & ~ready]] = True
        partial.append(np.flatnonzero(unready))
        chosen, start = [], 0
        for found in group:
            chosen.append(np.flatnonzero(take[start:start + len(found)]))
            start += len(found)
        return chosen

    def _copied(self, group: Sequence[InstanceRows], rows: np.ndarray) -> np.ndarray:
        """Whether each of the ``rows`` (a mask over ``group``'s rows, concatenated) has every
        atom not in C a copy of a lower fact (``copies``): checked next, it is proved
        outright. O(rows masked x atoms) expected."""
        out, start = np.zeros(len(rows), dtype=bool), 0
        for found in group:
            at = np.flatnonzero(rows[start:start + len(found)])
            mask = np.ones(len(at), dtype=bool)
            atoms = found.instance.atom_columns(found.rows)
            for (relation, columns), positions in zip(atoms, found.atoms, strict=True):
                unchecked = positions[at] < 0
                copy = self._copies.get(relation)
                if copy is None:
                    mask &= ~unchecked
                    continue
                lower, order = copy
                copies = columns[:, at[unchecked]]
                if order != tuple(range(len(order))):
                    copies = copies[list(order)]
                mask[unchecked] &= self._members(lower).contains(copies)
            out[start + at[mask]] = True
            start += len(found)
        return out

    def _unheld(self, group: Sequence[InstanceRows], take: np.ndarray) -> np.ndarray:
        """The indices (into ``group``'s rows, concatenated) of the ``take`` rows whose
        ``members`` atoms the old relations do not all hold. O(taken rows) expected."""
        out, start = [], 0
        for found in group:
            if found.instance.members:
                taken = np.flatnonzero(take[start:start + len(found)])
                held = np.zeros(len(found), dtype=bool)
                held[self._held(found, taken)] = True
                out.append(start + taken[~held[taken]])
            start += len(found)
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def concat_batches(parts: Sequence[np.ndarray], empty: np.ndarray) -> np.ndarray:
    """The (arity, n) batches ``parts`` side by side; ``empty`` if none. O(rows), none for
    one part."""
    if not parts:
        return empty
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
