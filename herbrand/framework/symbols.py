"""SymbolTable: interning of strings to dense int64 ids and back.

Ids are dense, starting at 0, in order of first interning, so an id column decodes with one
numpy fancy-index into the table's array of strings.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


class SymbolTable:
    """A bidirectional map str <-> int64 id.

    ``intern`` is O(1) amortised per string; ``intern_many`` is O(n) for n strings;
    ``decode_many`` is O(n) vectorised. Ids are never reused or changed, so a table can be shared
    by every relation of a database and grown while relations hold ids.
    """

    def __init__(self, symbols: Iterable[str] = ()):
        self._ids: dict[str, int] = {}
        self._symbols: list[str] = []
        self._array: np.ndarray | None = None
        for symbol in symbols:
            self.intern(symbol)

    def __len__(self) -> int:
        return len(self._symbols)

    def __contains__(self, symbol: str) -> bool:
        return symbol in self._ids

    def __repr__(self) -> str:
        return f"SymbolTable({len(self)} symbols)"

    def intern(self, symbol: str) -> int:
        """The id of ``symbol``, adding it if new."""
        found = self._ids.get(symbol)
        if found is not None:
            return found
        new_id = len(self._symbols)
        self._ids[symbol] = new_id
        self._symbols.append(symbol)
        self._array = None
        return new_id

    def intern_many(self, symbols: Iterable[str]) -> np.ndarray:
        """The ids of ``symbols`` as an int64 array, adding new ones."""
        intern = self.intern
        return np.fromiter((intern(s) for s in symbols), dtype=np.int64)

    def lookup(self, symbol: str) -> int | None:
        """The id of ``symbol`` or None if it was never interned (nothing is added)."""
        return self._ids.get(symbol)

    def symbol(self, symbol_id: int) -> str:
        """The string of an id; IndexError for an id never handed out."""
        if symbol_id < 0:
            raise IndexError(symbol_id)
        return self._symbols[symbol_id]

    def decode_many(self, ids: np.ndarray) -> np.ndarray:
        """The strings of an array of ids, as an object array of the same shape."""
        if self._array is None or len(self._array) != len(self._symbols):
            self._array = np.array(self._symbols, dtype=object)
        return self._array[np.asarray(ids, dtype=np.int64)]

    def copy(self) -> SymbolTable:
        clone = SymbolTable()
        clone._ids = dict(self._ids)
        clone._symbols = list(self._symbols)
        return clone
