"""The rows a user gives for a relation, checked and encoded: every value is stored exactly or
the whole batch is rejected with one HerbrandError naming the relation (and the row and column).

What is accepted for a relation declared with column ``types``:

- an iterable of rows (a list, a tuple of rows, a set, a generator), each row a tuple or a list
  of ``arity`` values: Python or numpy ints within int64 for ``number`` columns, str for
  ``symbol`` columns;
- a numpy array of shape (n, arity) (for arity 0: (n, 0)): an integer dtype whose values fit
  int64 for ``number`` columns; for ``symbol`` columns a str dtype (interned), or integers that
  are ids already in the database's SymbolTable (``0 <= id < len(symbols)``); an object array is
  checked value by value as rows are;
- a pandas DataFrame or a pyarrow Table / RecordBatch with ``arity`` columns (by position), each
  column checked as a numpy column is (nullable integer dtypes without missing values are
  integers, string columns are symbols); a missing value anywhere is rejected;
- a ``Relation`` of that arity (already encoded; its symbol ids are checked as an array's are).

Everything else is rejected rather than converted: floats (even integral ones), bools, bytes,
datetimes, ints beyond int64, 1-d arrays (no implicit reshape), ``None``, a str, a mapping, one
bare row not wrapped in a list. Wrong shapes and row lengths are ``ArityError``; wrong kinds of
values or containers are ``HerbrandTypeError``. Rows and columns are numbered from 1 in the
order given.

Checking and encoding are separate steps (``check_rows``, then ``CheckedRows.encode``), so a
transaction can check every batch before it interns any symbol. Every input kind is reduced to
1-d numpy columns checked by one column validator (``_check_column``): O(n) vectorised per column
for integer and str arrays, O(n) Python for object columns and rows of tuples (the slow path).
pandas and pyarrow are never imported here: a value is one of their types only if the module is
already loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from herbrand.framework.errors import ArityError, HerbrandTypeError, UsageError, quoted
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import SYMBOL

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# A checked column: int64 values ready to store, or the strs of a symbol column to intern.
Column = np.ndarray | list


@dataclass(frozen=True)
class CheckedRows:
    """The rows of one relation after every check, not yet encoded (no symbol interned).

    ``columns[i]`` is column i: an int64 array (numbers, or symbol ids already interned) or a
    list of str (symbols to intern). ``count`` is the number of rows (needed for arity 0);
    ``unique`` says the rows are known to be distinct (they came from a Relation)."""

    columns: tuple[Column, ...]
    count: int
    unique: bool = False

    def encode(self, symbols: SymbolTable) -> Relation:
        """The rows as a Relation, interning the symbols of str columns in ``symbols``.
        O(n) per symbol column, plus O(n log n) deduplication unless ``unique``."""
        if not self.columns:
            return Relation(np.zeros((0, self.count), dtype=np.int64), unique=self.unique)
        encoded = [column if isinstance(column, np.ndarray) else symbols.intern_many(column)
                   for column in self.columns]
        return Relation(np.vstack(encoded), unique=self.unique)


def encode_rows(relation: str, rows: object, types: tuple[str, ...],
                symbols: SymbolTable) -> Relation:
    """``rows`` given for ``relation`` (see the module doc) as a Relation of the declared column
    ``types``, symbols interned in ``symbols``. Raises ArityError or HerbrandTypeError naming the
    relation (row, column) before interning anything. Cost: ``check_rows`` plus ``encode``."""
    return check_rows(relation, rows, types, symbols).encode(symbols)


def check_rows(relation: str, rows: object, types: tuple[str, ...],
               symbols: SymbolTable) -> CheckedRows:
    """Check every value of ``rows`` given for ``relation`` (see the module doc) against the
    declared column ``types``; ``symbols`` is only read (integer symbol columns must hold its
    ids). Raises ArityError (shape, row length, column count) or HerbrandTypeError (container,
    row, value) naming the relation and, where there is one, the row and column. Cost: O(n)
    vectorised per column for arrays and frames, O(n) Python for object columns and tuples."""
    arity = len(types)
    if isinstance(rows, Relation):
        if rows.arity != arity:
            raise ArityError(f"relation {relation}: the Relation given has arity {rows.arity}, "
                             f"expected {arity}")
        columns, count = list(rows.columns), len(rows)
    elif isinstance(rows, np.ndarray):
        columns, count = _array_columns(relation, rows, arity)
    elif _instance_of(rows, "pandas", "DataFrame"):
        columns, count = _frame_columns(relation, rows, arity)
    elif _instance_of(rows, "pyarrow", "Table", "RecordBatch"):
        columns, count = _arrow_columns(relation, rows, arity)
    else:
        columns, count = _sequence_columns(relation, rows, arity)
    checked = tuple(_check_column(relation, index, values, type_, symbols)
                    for index, (values, type_) in enumerate(zip(columns, types, strict=True)))
    return CheckedRows(checked, count, unique=isinstance(rows, Relation))


def rows_by_relation(argument: str, value: object) -> Mapping[str, object]:
    """``value`` (an argument such as ``facts`` or ``insert``) checked to be None (meaning no
    rows) or a mapping whose keys are relation names (str). Raises UsageError naming
    ``argument`` otherwise. O(number of relations)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise UsageError(f"{argument} must be a mapping of relation name to rows "
                         f"(such as {{'edge': [(1, 2)]}}), got {_type_name(value)}")
    for name in value:
        if not isinstance(name, str):
            raise UsageError(f"{argument}: relation names are str, got {_shown(name)}")
    return value


# -- one source of columns per kind of input -----------------------------------------------------


def _instance_of(value: object, module: str, *names: str) -> bool:
    """Whether ``value`` is one of the classes ``names`` of ``module``, without importing it:
    when the module is not loaded, no value can be one of its types."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, tuple(getattr(loaded, n) for n in names))


def _array_columns(relation: str, array: np.ndarray, arity: int) -> tuple[list, int]:
    """The columns of an (n, arity) array (views, no copy). Any other shape is an ArityError:
    a 1-d array is never reshaped into rows."""
    if array.ndim != 2:
        hint = f" (for example array.reshape(-1, {arity}))" if array.ndim == 1 and arity else ""
        raise ArityError(f"relation {relation}: an array of shape {array.shape} is not rows; "
                         f"give an (n, {arity}) array{hint}")
    if array.shape[1] != arity:
        raise ArityError(f"relation {relation}: the array's rows have {array.shape[1]} "
                         f"columns, expected {arity}")
    return list(array.T), array.shape[0]


def _frame_columns(relation: str, frame, arity: int) -> tuple[list, int]:
    """The columns of a pandas DataFrame, by position, as numpy arrays. O(n) vectorised per
    column (an object column stays an object array)."""
    _check_width(relation, "DataFrame", frame.shape[1], arity)
    columns = []
    for index in range(arity):
        series = frame.iloc[:, index]
        _reject_missing(relation, index, series.isna().to_numpy())
        columns.append(series.to_numpy())
    return columns, len(frame)


def _arrow_columns(relation: str, table, arity: int) -> tuple[list, int]:
    """The columns of a pyarrow Table or RecordBatch, by position, as numpy arrays (strings
    become object arrays of str). O(n) vectorised per column."""
    import pyarrow.compute

    _check_width(relation, type(table).__name__, table.num_columns, arity)
    columns = []
    for index in range(arity):
        column = table.column(index)
        if column.null_count:
            _reject_missing(relation, index, np.asarray(pyarrow.compute.is_null(column)))
        columns.append(column.to_numpy(zero_copy_only=False))
    return columns, table.num_rows


def _sequence_columns(relation: str, rows: object, arity: int) -> tuple[list, int]:
    """The columns of an iterable of rows (tuples or lists of ``arity`` values), as object
    arrays. O(n) Python."""
    _check_container(relation, rows)
    rows = list(rows)
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, (tuple, list)):
            raise HerbrandTypeError(f"relation {relation}: row {number} is not a tuple or a "
                                    f"list of values, got {_shown(row)}")
        if len(row) != arity:
            raise ArityError(f"relation {relation}: row {number} {_shown(row)} has "
                             f"{len(row)} values, expected {arity}")
    transposed = zip(*rows, strict=True) if rows else [()] * arity
    count = len(rows)
    return [np.fromiter(column, dtype=object, count=count) for column in transposed], count


def _check_container(relation: str, rows: object) -> None:
    """Reject what is not a collection of rows, or is one only by accident: None, a str or
    bytes (iterating would make one row per character), a mapping, one bare row."""
    if rows is None or isinstance(rows, (str, bytes, bytearray, Mapping)) \
            or not isinstance(rows, Iterable):
        raise HerbrandTypeError(
            f"relation {relation}: rows must be an iterable of tuples, a numpy array, a pandas "
            f"DataFrame, a pyarrow Table or a Relation, got {_type_name(rows)}")
    if isinstance(rows, tuple) and rows and not isinstance(rows[0], (tuple, list)):
        raise HerbrandTypeError(
            f"relation {relation}: rows must be a collection of rows, got the single row "
            f"{_shown(rows)}; one row must be wrapped: [{_shown(rows)}]")


def _check_width(relation: str, kind: str, width: int, arity: int) -> None:
    if width != arity:
        raise ArityError(f"relation {relation}: the {kind} has {width} columns, expected {arity}")


def _reject_missing(relation: str, index: int, missing: np.ndarray) -> None:
    """HerbrandTypeError at the first True of the boolean mask ``missing``, if any."""
    if missing.any():
        row = int(missing.argmax()) + 1
        raise HerbrandTypeError(f"relation {relation}: row {row} column {index + 1} is a "
                                f"missing value")


# -- the column validator ------------------------------------------------------------------------


def _check_column(relation: str, index: int, values: np.ndarray, type_: str,
                  symbols: SymbolTable) -> Column:
    """One 1-d column of any input kind checked against its declared type (see ``Column``).

    Integer dtypes must fit int64 and, in a symbol column, be ids of ``symbols``; str dtypes
    are symbols; object columns are checked value by value; every other dtype (float, bool,
    bytes, datetime, complex, ...) is rejected. O(n) vectorised, O(n) Python for objects."""
    kind = values.dtype.kind
    if kind in "iu":
        numbers = _int64(relation, index, values)
        return _symbol_ids(relation, index, numbers, symbols) if type_ == SYMBOL else numbers
    if kind == "U" and type_ == SYMBOL:
        return values.tolist()
    if kind == "O":
        items = values.tolist()
        if type_ == SYMBOL:
            return _strs(relation, index, items)
        return _int64(relation, index, np.array(_ints(relation, index, items), dtype=object))
    raise HerbrandTypeError(f"relation {relation}: column {index + 1} expects "
                            f"{_expected(type_)}, got {_DTYPE_KINDS.get(kind, values.dtype)} "
                            f"values")


def _int64(relation: str, index: int, values: np.ndarray) -> np.ndarray:
    """Integer ``values`` (or an object array of Python ints) as int64, each checked to fit:
    only uint64 and object columns can hold values outside int64."""
    if not np.can_cast(values.dtype, np.int64):
        outside = (values > INT64_MAX) | (values < INT64_MIN)
        if outside.any():
            row = int(np.argmax(outside))
            raise HerbrandTypeError(
                f"relation {relation}: row {row + 1} column {index + 1} expects a number "
                f"between -2**63 and 2**63-1, got {values[row]}")
    return values.astype(np.int64, copy=False)


def _symbol_ids(relation: str, index: int, ids: np.ndarray, symbols: SymbolTable) -> np.ndarray:
    """``ids`` of a symbol column, each checked to be an id of ``symbols``."""
    invalid = (ids < 0) | (ids >= len(symbols))
    if invalid.any():
        row = int(np.argmax(invalid))
        raise HerbrandTypeError(
            f"relation {relation}: row {row + 1} column {index + 1} expects a symbol, got the "
            f"integer {ids[row]}, which is not an id of the database's SymbolTable (it holds "
            f"{len(symbols)} symbols, ids from 0); give symbols as str")
    return ids


def _ints(relation: str, index: int, items: list) -> list[int]:
    """``items`` as Python ints, each an int or a numpy integer (not a bool). O(n); the check
    of types is one C-level pass when every item is a plain int."""
    if set(map(type, items)) <= {int}:
        return items
    for row, item in enumerate(items, start=1):
        if not isinstance(item, (int, np.integer)) or isinstance(item, bool):
            raise HerbrandTypeError(f"relation {relation}: row {row} column {index + 1} "
                                    f"expects a number, got {_shown(item)}")
    return [int(item) for item in items]


def _strs(relation: str, index: int, items: list) -> list[str]:
    """``items`` checked to be str. O(n); one C-level pass when every item is a plain str."""
    if not set(map(type, items)) <= {str}:
        for row, item in enumerate(items, start=1):
            if not isinstance(item, str):
                raise HerbrandTypeError(f"relation {relation}: row {row} column {index + 1} "
                                        f"expects a symbol, got {_shown(item)}")
    return items


# -- message helpers -----------------------------------------------------------------------------


_DTYPE_KINDS = {"U": "str", "S": "bytes", "b": "bool"}  # the rest print well as dtypes


def _expected(type_: str) -> str:
    if type_ == SYMBOL:
        return "a symbol (str values, or integer ids of the database's SymbolTable)"
    return "a number (an integer dtype within int64)"


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _shown(value: object, limit: int = 60) -> str:
    """``value`` on one line, at most about ``limit`` characters, for a message."""
    if isinstance(value, str):
        return quoted(value) if len(value) <= limit else quoted(value[:limit]) + "..."
    text = " ".join(repr(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
