"""The pyarrow fast path of ``herbrand.framework.io``: facts read by pyarrow's CSV reader and
relations written by its CSV writer or by Arrow string kernels, with the bytes, rows, symbol ids
and error messages of the exact (numpy and Python) path.

Importing this module imports pyarrow (an optional dependency: the ``frames``, ``spark`` and
``all`` extras); ``io`` imports it only when a file is read or written, and falls back to its
exact path when pyarrow is missing.

Reading (``read_facts``) returns None, and ``io`` takes its exact path, unless pyarrow reads the
file with the exact path's meaning; what is checked before pyarrow reads the file, in one pass
over its bytes:

- the file is a regular file, or a ``.gz`` file that gunzips (else the exact path gives the
  error);
- the delimiter is one ASCII byte other than ``\\r`` (pyarrow splits on one byte);
- the file does not start with a UTF-8 byte order mark (pyarrow skips it; a field keeps it);
- every ``\\r`` is followed by ``\\n`` or is the file's last byte (pyarrow ends a line at a lone
  ``\\r``; the exact path drops one ``\\r`` before ``\\n`` and keeps the others);
- in a relation of two or more symbols only, the file holds ``arity - 1`` delimiters per line
  (pyarrow reads a blank line as a row of empty fields whatever the arity, the exact path as
  one field; with a number column, the empty number is a pyarrow error);
- in a relation of numbers only, the file holds only ASCII digits, ``-``, the delimiter and
  line ends: then pyarrow's int64 conversion accepts exactly ``NUMBER_SYNTAX`` (its conversion
  also trims blanks after a number and reads ``0x`` hexadecimal, and rejects a ``+`` sign, which
  sends a file to the exact path). In a relation with symbols, number columns are read as bytes
  and each block is checked the same way (digits and ``-`` only) before Arrow casts it to int64.

pyarrow then reads without quoting, escaping, header or null values, keeping blank lines (a
blank line is one empty field, as in the exact path), numbers as int64 and symbols as binary
(the exact bytes). Any pyarrow error (a wrong field count, an empty or malformed number, a
number beyond int64, a line longer than a block), and a row count other than the check pass's
line count, sends the file to the exact path, which reports the first bad line with its exact
message. Symbols are interned (``SymbolTable.
intern_arrow``) only after every number column has converted, so a bad file interns nothing.

Writing (``Formatter``): rows come sorted from ``io`` as numpy blocks of numbers and symbol
ranks (a number column of a narrow range is written as a symbol column is, through the texts of
its range: ``NUMBER_TEXTS_MAX``); a block becomes text in Arrow: pyarrow's CSV writer (no quoting, no header) when the
delimiter is one ASCII byte and no symbol written holds the delimiter, ``"``, ``\\r``, ``\\n``
or bytes that are not UTF-8 (the writer refuses those), else the ``binary_join_element_wise``
kernel over binary columns, which concatenates bytes exactly.
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from herbrand.framework.symbols import ENCODING, SymbolTable
from herbrand.framework.syntax import NUMBER, SYMBOL

BOM = b"\xef\xbb\xbf"

BLOCK_SIZE = 1 << 20
"""Bytes per block of pyarrow's CSV reader (a line longer than a block sends the file to the
exact path). Tests set it small to put block boundaries everywhere."""

CHECK_CHUNK = 1 << 23
"""Bytes read at a time by the check pass over an uncompressed file."""

MEMORY_POOL = pa.system_memory_pool()
"""Where herbrand's Arrow buffers come from (every reader, kernel and writer call here passes
it): the C library's allocator, which gives freed memory back to the system, where pyarrow's
default (mimalloc) kept about 20 MB after Galen EL's facts were read, resident under the
compute's peak (measured: peak RSS 253 MB against 258-279 MB). Not the process-wide default:
a user's own pyarrow work in the same process keeps pyarrow's choice."""

_NUMBER_BYTES = b"0123456789-"


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def read_facts(path: Path, types: tuple[str, ...], symbols: SymbolTable,
               delimiter: str) -> np.ndarray | None:
    """The (arity, lines) int64 columns of the file's rows in file order, duplicates included
    (``io.read_facts`` makes them a Relation), read by pyarrow; or None when the file is one
    pyarrow could read differently or not at all (the module doc lists the checks): the caller
    then takes the exact path, which also gives every error. ``types`` is not empty;
    ``delimiter`` has been checked. Symbols are interned only when columns are returned.

    Cost: one pass over the bytes in C (counts, and for numbers only one ``bytes.translate``),
    pyarrow's streaming parse (``open_csv``, blocks of ``BLOCK_SIZE`` bytes), one copy of each
    block's numbers into the result and one hash pass per symbol column (``SymbolTable.
    intern_arrow``). Extra memory: a few blocks, the symbols' bytes until they are interned,
    and for a ``.gz`` file the whole decompressed file."""
    separator = delimiter.encode(*ENCODING)
    if len(separator) != 1 or separator[0] >= 0x80 or separator == b"\r":
        return None
    numbers_only = SYMBOL not in types
    allowed = _NUMBER_BYTES + separator + b"\r\n" if numbers_only else None
    # A blank line is a row of empty fields to pyarrow: an error in a number column, a row of
    # empty symbols otherwise, so delimiters are counted when every column is a symbol.
    counted = separator if NUMBER not in types and len(types) > 1 else None
    checked = _checked_source(path, allowed, counted, len(types))
    if checked is None:
        return None
    source, lines = checked
    names = [f"c{index}" for index in range(len(types))]
    column_types = {name: pa.int64() if type_ == NUMBER and numbers_only else pa.binary()
                    for name, type_ in zip(names, types, strict=True)}
    columns = np.empty((len(types), lines), dtype=np.int64)
    symbol_blocks: dict[int, list[pa.Array]] = {
        index: [] for index, type_ in enumerate(types) if type_ == SYMBOL}
    try:
        with source:
            reader = pa_csv.open_csv(
                source,
                read_options=pa_csv.ReadOptions(column_names=names, block_size=BLOCK_SIZE),
                parse_options=pa_csv.ParseOptions(
                    delimiter=delimiter, quote_char=False, double_quote=False,
                    escape_char=False, newlines_in_values=False, ignore_empty_lines=False),
                convert_options=pa_csv.ConvertOptions(
                    column_types=column_types, null_values=[], strings_can_be_null=False,
                    quoted_strings_can_be_null=False, check_utf8=False),
                memory_pool=MEMORY_POOL,
            ) if lines else ()
            start = 0
            for batch in reader:
                stop = start + batch.num_rows
                if stop > lines:
                    return None
                for index, type_ in enumerate(types):
                    if type_ == SYMBOL:
                        symbol_blocks[index].append(batch.column(index))
                    elif not _numbers_into(batch.column(index), columns[index, start:stop]):
                        return None
                start = stop
    except Exception:  # noqa: BLE001 - any pyarrow error: the exact path reports it
        return None
    if start != lines:
        return None
    for index, blocks in symbol_blocks.items():
        column = pa.chunked_array(blocks, pa.binary())
        blocks.clear()
        symbols.intern_arrow(column, out=columns[index])
    return columns


def _checked_source(path: Path, allowed: bytes | None, separator: bytes | None,
                    arity: int) -> tuple[pa.NativeFile, int] | None:
    """(what pyarrow should read for ``path``: the open file, or a reader of the bytes of a
    gunzipped one; the number of lines), or None when the file cannot be opened or read (the
    exact path gives the error) or fails a check of ``_checked_lines``."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as stream:
                data = stream.read()
            lines = _checked_lines(iter((data,)), allowed, separator, arity)
        else:
            if not stat.S_ISREG(os.stat(path).st_mode):
                return None
            data = None
            with path.open("rb") as stream:
                chunks = iter(lambda: stream.read(CHECK_CHUNK), b"")
                lines = _checked_lines(chunks, allowed, separator, arity)
    except (OSError, EOFError, zlib.error):
        return None
    if lines is None:
        return None
    if data is not None:
        return pa.BufferReader(data), lines
    try:
        return pa.OSFile(str(path), "r"), lines
    except Exception:  # noqa: BLE001 - gone since the check: the exact path reports it
        return None


def _checked_lines(chunks: Iterator[bytes], allowed: bytes | None, separator: bytes | None,
                   arity: int) -> int | None:
    """The number of lines of the bytes ``chunks`` (a final ``\\n`` ends the last line), or
    None when they fail a check of the module doc (reading only as far as the first failure):
    a leading byte order mark, a ``\\r`` neither before ``\\n`` nor last, (``allowed``
    given) a byte not in ``allowed``, or (``separator`` given) a number of delimiters other
    than ``arity - 1`` per line (pyarrow reads a blank line as a row of empty fields, whatever
    the arity; any other line with the wrong number of fields is a pyarrow error). O(bytes)
    in C."""
    size = newlines = crs = crlfs = separators = 0
    last = head = b""
    for chunk in chunks:
        if len(head) < len(BOM):
            head += chunk[:len(BOM) - len(head)]
            if head == BOM:
                return None
        if allowed is not None and chunk.translate(None, allowed):
            return None
        newlines += chunk.count(b"\n")
        if separator is not None:
            separators += chunk.count(separator)
        if b"\r" in chunk:  # memchr; counting is slower
            crs += chunk.count(b"\r")
            crlfs += chunk.count(b"\r\n")
        crlfs += last == b"\r" and chunk[:1] == b"\n"
        size += len(chunk)
        last = chunk[-1:]
    lines = newlines + (size > 0 and last != b"\n")
    if crs != crlfs + (last == b"\r"):
        return None
    if separator is not None and separators != lines * (arity - 1):
        return None
    return lines


def _numbers_into(column: pa.Array, out: np.ndarray) -> bool:
    """Copy an int64 block, or convert a binary block of digits and ``-`` only, into ``out``;
    False when the block holds another byte or Arrow rejects a value."""
    if column.type != pa.int64() and len(column):
        _, offsets, data = column.buffers()
        bounds = np.frombuffer(offsets, dtype=np.int32)
        first, last = bounds[column.offset], bounds[column.offset + len(column)]
        if bytes(memoryview(data)[first:last]).translate(None, _NUMBER_BYTES):
            return False
        try:
            column = pc.cast(column, pa.int64(), memory_pool=MEMORY_POOL)
        except Exception:  # noqa: BLE001 - an empty field, a misplaced sign, beyond int64
            return False
    out[:] = numpy_view(column)
    return True


# pyarrow imports pandas (when installed) the first time ``pa.array``, ``pa.scalar`` or
# ``Array.to_numpy`` is called, which costs 0.2 s and 40 MB: arrays are made from buffers.


def release_memory() -> None:
    """Give the memory ``MEMORY_POOL``'s allocator keeps after reading (freed blocks it holds
    for reuse) back to the system. O(pool)."""
    MEMORY_POOL.release_unused()


def numpy_view(array: pa.Array) -> np.ndarray:
    """A read-only numpy view of a pyarrow int64 array without nulls (no copy)."""
    return np.frombuffer(array.buffers()[1], dtype=np.int64, count=len(array),
                         offset=array.offset * 8)


def int64_array(values: np.ndarray) -> pa.Array:
    """A pyarrow int64 array over an int64 numpy array (no copy)."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def binary_array(values: list[bytes], type_: pa.DataType | None = None) -> pa.Array:
    """A pyarrow large binary array of ``values`` (or of ``type_``: large string, for valid
    UTF-8)."""
    type_ = pa.large_binary() if type_ is None else type_
    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=len(values)),
              out=offsets[1:])
    return pa.Array.from_buffers(type_, len(values),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(values))])


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------

_STRUCTURAL = ('"', "\r", "\n")


NUMBER_TEXTS_MAX = 1 << 20
"""The widest value range of a number column whose texts ``Formatter`` makes once (one Arrow
cast, about 8 bytes of text and offset per value) to write the column as a symbol column is
written, by ``take``: 2.4x faster than formatting each value (Gnutella's 13.1M rows: 0.29
against 0.71 s CPU)."""


class Formatter:
    """Text of sorted rows, block by block, in Arrow: ``formatter(values)`` is the bytes of the
    rows whose columns are ``values`` (int64 arrays: numbers, or ranks into the column's
    dictionary), each row its fields joined by the delimiter and ended by ``\\n``.

    ``dictionaries[i]`` is, for a symbol column, its distinct symbols in rank order (str,
    undecodable bytes as surrogate escapes), None for a number column. ``ranges[i]`` (when
    given) is a number column's ``(lowest, span)`` when its values are better written through
    the texts of the whole range (the caller says so: a span of at most ``NUMBER_TEXTS_MAX``,
    small beside the rows), None otherwise. O(distinct symbols + spans) to build, O(rows)
    vectorised per call: pyarrow's CSV writer when it writes every value as its bytes
    (``_csv_safe``), else ``binary_join_element_wise`` over binary columns (the last column's
    values ending in ``\\n``: a symbol column's dictionary holds them so)."""

    def __init__(self, dictionaries: list[list[str] | None], delimiter: str,
                 ranges: list[tuple[int, int] | None] | None = None):
        self._csv = (len(delimiter.encode(*ENCODING)) == 1 and delimiter.isascii()
                     and delimiter not in _STRUCTURAL
                     and all(_csv_safe(strings, delimiter)
                             for strings in dictionaries if strings is not None))
        self._lowest = [None] * len(dictionaries)
        if ranges is not None and not set(delimiter) & set("0123456789-"):
            self._lowest = [None if range_ is None or strings is not None else range_[0]
                            for strings, range_ in zip(dictionaries, ranges, strict=True)]
        last = len(dictionaries) - 1
        self._dictionaries = [
            self._dictionary(strings, lowest, ranges and ranges[index], index == last)
            for index, (strings, lowest) in enumerate(zip(dictionaries, self._lowest,
                                                          strict=True))]
        if self._csv:
            self._options = pa_csv.WriteOptions(include_header=False, delimiter=delimiter,
                                                quoting_style="none")
            return
        self._separator, self._empty, self._newline = binary_array(
            [delimiter.encode(*ENCODING), b"", b"\n"])

    def _dictionary(self, strings: list[str] | None, lowest: int | None,
                    range_: tuple[int, int] | None, last: bool) -> pa.Array | None:
        """A column's texts in rank order (symbols, or numbers from ``lowest``), as the path
        taken writes them: large strings for the CSV writer, else binary with ``\\n`` after
        each text of the last column; None for a number column formatted value by value."""
        newline = not self._csv and last
        if lowest is not None:
            return _number_texts(lowest, range_[1], binary=not self._csv, newline=newline)
        if strings is None:
            return None
        if self._csv:
            return binary_array([text.encode() for text in strings], pa.large_string())
        return binary_array([text.encode(*ENCODING) + (b"\n" if newline else b"")
                             for text in strings])

    def _column(self, index: int, column: np.ndarray, text: pa.DataType) -> pa.Array:
        """Column ``index`` of a block as Arrow: its values, or their texts (``text``: the
        type numbers are cast to without a dictionary) taken from the column's dictionary."""
        dictionary, lowest = self._dictionaries[index], self._lowest[index]
        if dictionary is None:
            values = int64_array(column)
            if text == pa.int64():
                return values
            return pc.cast(pc.cast(values, pa.large_string(), memory_pool=MEMORY_POOL), text,
                           memory_pool=MEMORY_POOL)
        ranks = column if lowest is None else column - np.int64(lowest)
        return pc.take(dictionary, int64_array(ranks), memory_pool=MEMORY_POOL)

    def __call__(self, values: list[np.ndarray]) -> pa.Buffer | memoryview:
        if self._csv:
            arrays = [self._column(index, column, pa.int64())
                      for index, column in enumerate(values)]
            sink = pa.BufferOutputStream(memory_pool=MEMORY_POOL)
            table = pa.Table.from_arrays(arrays, names=[str(i) for i in range(len(arrays))])
            pa_csv.write_csv(table, sink, write_options=self._options, memory_pool=MEMORY_POOL)
            return sink.getvalue()
        fields = [self._column(index, column, pa.large_binary())
                  for index, column in enumerate(values)]
        if self._dictionaries[-1] is None:  # a number last: its text and "\n"
            fields[-1] = pc.binary_join_element_wise(fields[-1], self._empty, self._newline,
                                                     memory_pool=MEMORY_POOL)
        lines = fields[0] if len(fields) == 1 else pc.binary_join_element_wise(
            *fields, self._separator, memory_pool=MEMORY_POOL)
        if isinstance(lines, pa.ChunkedArray):
            lines = lines.combine_chunks(memory_pool=MEMORY_POOL)
        _, offsets, data = lines.buffers()
        bounds = np.frombuffer(offsets, dtype=np.int64)
        first, last = bounds[lines.offset], bounds[lines.offset + len(lines)]
        return memoryview(data)[first:last]


def _number_texts(lowest: int, span: int, binary: bool, newline: bool) -> pa.Array:
    """The decimal texts of ``lowest .. lowest + span - 1``: a large string array, or (``binary``)
    a large binary one, each text then ending in ``\\n`` when ``newline``. Arrow casts:
    O(span) in C."""
    numbers = int64_array(np.arange(span, dtype=np.int64) + np.int64(lowest))  # no overflow
    texts = pc.cast(numbers, pa.large_string(), memory_pool=MEMORY_POOL)
    if not binary:
        return texts
    texts = pc.cast(texts, pa.large_binary(), memory_pool=MEMORY_POOL)
    if not newline:
        return texts
    empty, end = binary_array([b"", b"\n"])  # scalars (pa.scalar would import pandas)
    return pc.binary_join_element_wise(texts, empty, end, memory_pool=MEMORY_POOL)


def _csv_safe(strings: list[str], delimiter: str) -> bool:
    """Whether pyarrow's CSV writer without quoting writes each of ``strings`` as its UTF-8
    bytes: valid UTF-8 (no surrogate escape) without the delimiter, ``"``, ``\\r``, ``\\n``."""
    for text in strings:
        if delimiter in text or '"' in text or "\r" in text or "\n" in text:
            return False
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return False
    return True
