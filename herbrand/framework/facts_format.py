"""Soufflé's ``.facts`` format read exactly (``read_facts_exact``: every file, every error
message), and its pieces shared with the other readers: the number syntax (``parse_number``),
the error messages, and a file's bytes (``read_bytes``). ``herbrand.framework.io`` documents
the format and chooses between this path and pyarrow's (``arrow_io``); its names re-export
these."""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

import numpy as np

from herbrand.framework.errors import FactsError, quoted
from herbrand.framework.packed_keys import distinct_rows
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import ENCODING, SymbolTable
from herbrand.framework.syntax import SYMBOL

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


NUMBER_SYNTAX = r"[ \t\n\x0B\f\r]*[+-]?[0-9]+"
"""A number field, as a regular expression that must match the whole field (the same text in
Python's ``re`` and Java's ``java.util.regex``): Soufflé's ``std::stoll(field, &pos, 10)`` with
``pos == field.size()``. The value must also fit in int64."""

_NUMBER = re.compile(NUMBER_SYNTAX)
IS_A_DIRECTORY = "is a directory"
INVALID_GZIP = "invalid gzip data"


def check_delimiter(path: object, name: str, delimiter: str) -> None:
    """FactsError unless ``delimiter`` is a non-empty string without ``\\n``."""
    if not delimiter or "\n" in delimiter:
        raise FactsError(f"{path}: relation {name}: invalid delimiter {delimiter!r}")


def missing_file_error(path: object, name: str) -> FactsError:
    """The error for a facts file of relation ``name`` that does not exist."""
    return FactsError(f"{path}: cannot open facts file of relation {name}: no such file")


def unreadable_file_error(path: object, name: str, reason: str) -> FactsError:
    """The error for a facts file that exists but cannot be read: ``IS_A_DIRECTORY``,
    ``INVALID_GZIP``, or the system's reason."""
    return FactsError(f"{path}: cannot read facts file of relation {name}: {reason}")


def field_count_error(path: object, line: int, name: str, arity: int, delimiter: str,
                      found: int) -> FactsError:
    """The error for line ``line`` (1-based) having ``found`` fields instead of ``arity``."""
    return FactsError(f"{path}:{line}: relation {name}: expected {arity} fields separated by "
                      f"{delimiter!r}, found {found}")


def number_error(path: object, line: int, name: str, column: int, value: str) -> FactsError:
    """The error for field ``value`` (decoded with surrogateescape) of line ``line`` and column
    ``column`` (both 1-based) not being a number; a value of number syntax is out of int64."""
    beyond = ", out of the 64-bit range" if _NUMBER.fullmatch(value) else ""
    return FactsError(f"{path}:{line}: relation {name}: column {column} expects a number, got "
                      f"{quoted(value)}{beyond}")


def parse_number(text: str) -> int:
    """A number field as Soufflé reads it: optional leading whitespace (space, ``\\t``,
    ``\\n``, ``\\v``, ``\\f``, ``\\r``), an optional sign, ASCII decimal digits and nothing else
    (no hex, no ``_``, no trailing blanks), within int64; ValueError otherwise. O(len(text))."""
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"{text!r} is not a decimal number")
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"{text!r} does not fit in 64 bits")
    return value


def read_bytes(path: Path, what: str) -> bytes:
    """The bytes of ``path``, gunzipped when it ends in ``.gz``. FactsError ``path: cannot open
    {what}: no such file`` when it does not exist, ``path: cannot read {what}: reason`` when
    it is a directory, not valid gzip, or unreadable."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as stream:
                return stream.read()
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        raise FactsError(f"{path}: cannot open {what}: no such file") from None
    except IsADirectoryError:
        reason = IS_A_DIRECTORY
    except (gzip.BadGzipFile, EOFError, zlib.error):
        reason = INVALID_GZIP
    except OSError as error:
        reason = error.strerror or str(error)
    raise FactsError(f"{path}: cannot read {what}: {reason}")


def _line_text(data: bytes) -> bytes:
    """The lines of non-empty ``data`` joined by ``\\n``: without the final ``\\n``, and each
    line without its one trailing ``\\r``. O(bytes)."""
    if data.endswith(b"\n"):
        data = data[:-1]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if data.endswith(b"\r"):
            data = data[:-1]
    return data


def _fields_per_line(text: bytes, delimiter: str) -> np.ndarray:
    """The number of fields (delimiters + 1) of each ``\\n``-separated line of ``text``.

    O(bytes) vectorised for a one-byte delimiter, O(lines) Python calls otherwise (occurrences
    counted left to right without overlap, as ``str.split`` splits)."""
    encoded = delimiter.encode(*ENCODING)
    if len(encoded) != 1:
        return np.fromiter((line.count(encoded) + 1 for line in text.split(b"\n")),
                           dtype=np.int64)
    buffer = np.frombuffer(text, dtype=np.uint8)
    line_ends = np.append(np.flatnonzero(buffer == ord("\n")), len(buffer))
    found = np.searchsorted(np.flatnonzero(buffer == encoded[0]), line_ends)
    return np.diff(found, prepend=0) + 1


def _split_fields(text: bytes, delimiter: str, lines: int) -> list[str]:
    """All fields of the first ``lines`` lines of ``text``, row-major, decoded with
    surrogateescape (the caller has checked each of those lines' field count). O(bytes)."""
    if lines == 0:
        return []
    if lines <= text.count(b"\n"):  # not every line
        text = b"\n".join(text.split(b"\n", lines)[:lines])
    decoded = text.decode(*ENCODING)
    if len(delimiter) == 1:
        return decoded.replace("\n", delimiter).split(delimiter)
    return [field for line in decoded.split("\n") for field in line.split(delimiter)]


_DIGITS_AND_SIGNS = b"0123456789+-"


def _plain_numbers(text: bytes, types: tuple[str, ...], delimiter: str) -> bool:
    """Whether ``text`` holds numbers only (every column a number) written with ASCII digits
    and signs alone, besides one-byte delimiters and line ends: then Python's ``int``, which
    numpy's conversion applies, accepts exactly ``NUMBER_SYNTAX``. One C pass over the bytes."""
    encoded = delimiter.encode(*ENCODING)
    return (SYMBOL not in types and len(encoded) == 1
            and not text.translate(None, _DIGITS_AND_SIGNS + encoded + b"\n"))


def _numbers(values: list[str], plain: bool) -> np.ndarray | None:
    """The int64 array of ``values`` when each is a number (``parse_number``), else None.

    O(n): one numpy conversion, after one regular-expression match per value in C unless the
    values are ``plain`` (``_plain_numbers``: only digits and signs, where ``int`` and
    ``NUMBER_SYNTAX`` agree)."""
    if not plain and not all(map(_NUMBER.fullmatch, values)):
        return None
    try:
        return np.array(values, dtype=np.int64)
    except (ValueError, OverflowError):  # misplaced signs, an empty field, beyond int64
        return None


def _first_non_number(values: list[str]) -> int:
    """The index of the first of ``values`` that ``parse_number`` rejects (there is one)."""
    for index, value in enumerate(values):
        try:
            parse_number(value)
        except ValueError:
            return index
    raise AssertionError("every value is a number")


def read_facts_exact(path: Path, types: tuple[str, ...], symbols: SymbolTable, delimiter: str,
                     name: str) -> Relation:
    """``io.read_facts`` by numpy and Python string handling: every file, every error (the
    costs are in ``io.read_facts``'s doc)."""
    data = read_bytes(path, f"facts file of relation {name}")
    arity = len(types)
    if not data:
        return Relation.empty(arity)
    if arity == 0:
        return Relation(np.zeros((0, 1), dtype=np.int64), unique=True)
    text = _line_text(data)
    counts = _fields_per_line(text, delimiter)
    wrong = np.flatnonzero(counts != arity)
    complete = int(wrong[0]) if wrong.size else len(counts)  # lines before the first wrong one
    fields = _split_fields(text, delimiter, complete)
    problems = [(complete, 0)] if wrong.size else []  # (line index, column; 0: field count)
    plain = _plain_numbers(text, types, delimiter)
    columns = []
    for column, type_ in enumerate(types):
        values = fields[column::arity]
        numbers = values if type_ == SYMBOL else _numbers(values, plain)
        if numbers is None:
            problems.append((_first_non_number(values), column + 1))
        columns.append(numbers)
    if problems:
        line, column = min(problems)
        if column == 0:
            raise field_count_error(path, line + 1, name, arity, delimiter, counts[line])
        raise number_error(path, line + 1, name, column, fields[line * arity + column - 1])
    return distinct_rows(np.vstack([symbols.intern_many(values) if type_ == SYMBOL else values
                                    for values, type_ in zip(columns, types, strict=True)]))
