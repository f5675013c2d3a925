"""SymbolTable: interning of strings to dense int64 ids and back.

Ids are dense, starting at 0, in order of first interning, so an id column decodes with one
numpy fancy-index into the table's array of strings.

``intern_many`` also takes a pyarrow string or binary column (an Array or a ChunkedArray, as
pyarrow's CSV reader makes them): Arrow dictionary-encodes it, only its distinct values are
interned (binary values decoded as UTF-8 with ``surrogateescape``, as the facts reader decodes
fields), and the ids of the rows are one numpy fancy-index. Importing this module does not
import pyarrow: a value is an Arrow column only if pyarrow is already loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from itertools import filterfalse

import numpy as np

ENCODING = ("utf-8", "surrogateescape")
"""How symbols are bytes: UTF-8, undecodable bytes kept (``surrogateescape``)."""


class SymbolTable:
    """A bidirectional map str <-> int64 id.

    ``intern`` is O(1) amortised per string; ``intern_many`` is O(n) for n strings (one dict
    lookup each, or one per distinct value of an Arrow column); ``decode_many`` is O(n) vectorised. Ids are never reused or changed, so a table can be shared
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
        """The ids of ``symbols`` as an int64 array, adding new ones in order of first
        occurrence. ``symbols`` is an iterable of str (its distinct values found by one
        ``dict.fromkeys``, the new ones added, then one C-level dict lookup per value: no
        Python call per value) or a pyarrow string or binary Array or ChunkedArray
        (``intern_arrow``)."""
        if _is_arrow_column(symbols):
            return self.intern_arrow(symbols)
        values = symbols if isinstance(symbols, list) else list(symbols)
        ids = self._ids
        fresh = list(filterfalse(ids.__contains__, dict.fromkeys(values)))
        if fresh:
            start = len(self._symbols)
            ids.update(zip(fresh, range(start, start + len(fresh)), strict=True))
            self._symbols.extend(fresh)
            self._array = None
        return np.fromiter(map(ids.__getitem__, values), dtype=np.int64, count=len(values))

    def intern_arrow(self, column, out: np.ndarray | None = None) -> np.ndarray:
        """The ids of the values of a pyarrow string or binary column (an Array or a
        ChunkedArray, without nulls) as an int64 array (``out`` when given: an int64 array of
        the column's length), adding new ones in order of first occurrence, as
        ``intern_many`` of the decoded values would. Binary values are decoded as UTF-8 with
        ``surrogateescape``.

        O(n) in Arrow (one hash pass, ``dictionary_encode``), one dict lookup per distinct
        value, and one numpy gather of the n ids. ValueError for a null value or a column of
        another type."""
        import pyarrow as pa
        import pyarrow.compute as pc

        from herbrand.framework.arrow_io import MEMORY_POOL

        if column.null_count:
            raise ValueError("a symbol column holds a null value")
        if not (pa.types.is_string(column.type) or pa.types.is_binary(column.type)
                or pa.types.is_large_string(column.type)
                or pa.types.is_large_binary(column.type)):
            raise ValueError(f"a symbol column must hold strings or bytes, not {column.type}")
        encoded = pc.dictionary_encode(column, memory_pool=MEMORY_POOL)
        chunks = encoded.chunks if isinstance(encoded, pa.ChunkedArray) else [encoded]
        chunks = [chunk for chunk in chunks if len(chunk)]
        if out is None:
            out = np.empty(len(column), dtype=np.int64)
        elif out.shape != (len(column),) or out.dtype != np.int64:
            raise ValueError(f"out must be an int64 array of shape ({len(column)},)")
        if not chunks:
            return out
        # A ChunkedArray's chunks share one dictionary, grown in order of first occurrence
        # (each chunk's is a prefix of the last one's).
        dictionary = chunks[-1].dictionary
        values = dictionary.to_pylist()
        if pa.types.is_binary(dictionary.type) or pa.types.is_large_binary(dictionary.type):
            values = [value.decode(*ENCODING) for value in values]
        ids = self.intern_many(values)
        start = 0
        for chunk in chunks:
            indices = chunk.indices  # a numpy view (to_numpy would import pandas)
            indices = np.frombuffer(indices.buffers()[1], dtype=f"i{indices.type.bit_width // 8}",
                                    count=len(indices), offset=indices.offset
                                    * (indices.type.bit_width // 8))
            out[start:start + len(indices)] = ids[indices]
            start += len(indices)
        return out

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


def _is_arrow_column(value: object) -> bool:
    """Whether ``value`` is a pyarrow Array or ChunkedArray, without importing pyarrow: when it
    is not loaded, no value can be one."""
    pyarrow = sys.modules.get("pyarrow")
    return pyarrow is not None and isinstance(value, (pyarrow.Array, pyarrow.ChunkedArray))
