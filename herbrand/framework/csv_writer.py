"""Relations written in Soufflé's output layout (``io.write_outputs`` chooses the files):
tab-separated, no header, one ``\\n``-terminated row per line, rows sorted by column (numbers
numerically, symbols by their UTF-8 bytes, as Spark sorts them); a true nullary relation is the
line ``()``, a false one an empty file. Formatted in chunks by pyarrow (``arrow_io``) when
``io.ARROW`` allows (on several threads when the run has them), else by Python string joins,
with the same bytes.
"""

from __future__ import annotations

import gzip
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from os import PathLike
from pathlib import Path, PurePosixPath

import numpy as np

from herbrand.framework.packed_keys import SortedBlocks, sorted_blocks, value_range
from herbrand.framework.spread import Spread
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import ENCODING, SymbolTable
from herbrand.framework.syntax import NUMBER, SYMBOL
from herbrand.framework.whole_outputs import made_folders, whole_file


def row_sort_key(row: tuple[int | str, ...]) -> tuple:
    """Sort key of a decoded row: by column, numbers numerically before symbols, symbols by
    the bytes of their UTF-8 encoding (code point order for valid text; an undecodable byte
    kept by ``surrogateescape`` sorts as that byte, as Spark sorts it)."""
    return tuple((True, value.encode(*ENCODING)) if isinstance(value, str) else (False, value)
                 for value in row)


def _join_columns(columns: list[list[str]], delimiter: str) -> list[str]:
    return list(map(delimiter.join, zip(*columns, strict=True)))


def relation_lines(
    relation: Relation, types: tuple[str, ...], symbols: SymbolTable, delimiter: str = "\t"
) -> list[str]:
    """The lines Soufflé writes for ``relation`` (without ``\\n``), sorted by column: numbers
    numerically, symbols by their UTF-8 bytes (``row_sort_key``). O(n log n) vectorised, plus
    O(n) string joins."""
    if not len(relation):
        return []
    if relation.arity == 0:
        return ["()"]
    decoded, keys = [], []
    for column, type_ in zip(relation.columns, types, strict=True):
        if type_ == SYMBOL:
            strings, ranks = _symbols_in_order(column, symbols)
            decoded.append(strings)
            keys.append(ranks)
        else:
            decoded.append(column.astype(str))
            keys.append(column)
    order = np.lexsort(keys[::-1])
    return _join_columns([c[order].tolist() for c in decoded], delimiter)


def _symbols_in_order(column: np.ndarray, symbols: SymbolTable) -> tuple[np.ndarray, np.ndarray]:
    """The strings of a column of symbol ids and their ranks in the order of ``row_sort_key``
    (by UTF-8 bytes). O(n log n) on the ids, then O(u log u) on the u distinct strings, encoded
    to bytes only when one of them is not ASCII (where code point and byte order agree)."""
    ids, inverse = np.unique(column, return_inverse=True)
    strings = symbols.decode_many(ids)
    if not all(map(str.isascii, strings)):
        strings_as_bytes = np.array([text.encode(*ENCODING) for text in strings], dtype=object)
        order = np.argsort(strings_as_bytes, kind="stable")
    else:
        order = np.argsort(strings, kind="stable")
    ranks = np.empty(len(ids), dtype=np.int64)
    ranks[order] = np.arange(len(ids))
    inverse = inverse.reshape(-1)
    return strings[inverse], ranks[inverse]


WRITE_CHUNK_VALUES = 1 << 19
"""Values (rows times arity) formatted at a time when a relation is written: the text of one
chunk (about 4 MB for two columns of 6-digit numbers) is the writer's memory per row, per
thread. pyarrow formats as fast per row in chunks of 16,384 rows as of a million."""


ARROW_MIN_ROWS = 1 << 15
"""A relation of fewer rows is formatted by Python string joins while pyarrow is not loaded:
importing it costs about 0.05 s and 30 MB of resident memory, what the joins take for about
40,000 rows of numbers (measured per 100,000 rows: numbers 0.12 s by joins against 0.012 s by
pyarrow, symbols 0.025 against 0.032 s), so a run with small outputs stays off pyarrow."""


def relation_chunks(
    relation: Relation, types: tuple[str, ...], symbols: SymbolTable, delimiter: str = "\t",
    threads: int = 1,
) -> Iterator[bytes | memoryview]:
    """The bytes Soufflé writes for ``relation`` (``relation_lines``, each line ended by
    ``\\n``, encoded as UTF-8 with ``surrogateescape``), in consecutive chunks of at most
    ``WRITE_CHUNK_VALUES`` values: their concatenation is the file.

    The rows are sorted before this returns (so a bad symbol id fails before anything is
    written): one numpy sort of one int64 key per row when the columns' value ranges (a symbol
    column's: its number of distinct symbols, ranked by UTF-8 bytes) pack into 63 bits, else
    a lexsort over as few packed keys as fit. Each chunk is then unpacked and formatted by
    pyarrow (``arrow_io.Formatter``; a number column whose value range is at most a quarter of
    the rows and ``arrow_io.NUMBER_TEXTS_MAX`` through the texts of its range, made once) when
    it is installed, ``ARROW`` is true and the relation has ``ARROW_MIN_ROWS`` rows or pyarrow
    is loaded already, the keys packed and the chunks formatted on ``threads`` threads at once
    (pyarrow and numpy release the GIL; the chunks still come in order; pyarrow's first import
    runs on one of them beside the sort), else by Python string joins in this thread, with the
    same bytes. O(n log n) vectorised, one Python call per distinct symbol; extra memory O(n) int64s
    for the sort and the text of ``threads + 1`` chunks."""
    if not len(relation):
        return iter(())
    if relation.arity == 0:
        return iter((b"()\n",))
    values, dictionaries, ranges = [], [], []
    for column, type_ in zip(relation.columns, types, strict=True):
        if type_ == SYMBOL:
            ranks, strings = symbol_ranks(column, symbols)
            values.append(ranks)
            dictionaries.append(strings)
            ranges.append((0, len(strings)))
        else:
            values.append(column)
            dictionaries.append(None)
            ranges.append(value_range(column))
    from herbrand.framework.io import arrow_io_module  # the ARROW switch lives there

    rows_per_block = max(1, WRITE_CHUNK_VALUES // relation.arity)
    wants_arrow = len(relation) >= ARROW_MIN_ROWS or "pyarrow" in sys.modules
    if threads <= 1 or not wants_arrow:
        fast = arrow_io_module() if wants_arrow else None
        format_chunk = _formatter(fast, dictionaries, ranges, delimiter, len(relation))
        return map(format_chunk, sorted_blocks(values, ranges, rows_per_block))
    with ThreadPoolExecutor(threads, thread_name_prefix="herbrand-writer") as pool:
        # pyarrow's first import (Python, holding the GIL) beside the sort (numpy, without it)
        importing = pool.submit(arrow_io_module)
        blocks = sorted_blocks(values, ranges, rows_per_block, Spread(pool, threads))
        fast = importing.result()
    format_chunk = _formatter(fast, dictionaries, ranges, delimiter, len(relation))
    if fast is None or len(blocks) == 1:  # Python joins stay in this thread
        return map(format_chunk, blocks)
    return _formatted_on_threads(format_chunk, blocks, threads)


def _formatter(fast, dictionaries: list[list[str] | None], ranges: list[tuple[int, int]],
               delimiter: str, rows: int) -> Callable[[list[np.ndarray]], bytes | memoryview]:
    """The chunk formatter: ``arrow_io.Formatter`` when ``fast`` (the ``arrow_io`` module) is
    given, a number column of a range at most a quarter of the ``rows`` and
    ``NUMBER_TEXTS_MAX`` written through its texts; else Python string joins."""
    if fast is None:
        return _PythonFormatter(dictionaries, delimiter)
    texts_worth = [None if strings is not None or span > min(fast.NUMBER_TEXTS_MAX, rows // 4)
                   else (lowest, span)
                   for strings, (lowest, span) in zip(dictionaries, ranges, strict=True)]
    return fast.Formatter(dictionaries, delimiter, texts_worth)


def _formatted_on_threads(format_chunk: Callable[[list[np.ndarray]], bytes | memoryview],
                          blocks: SortedBlocks, threads: int) -> Iterator[bytes | memoryview]:
    """``format_chunk`` of each block (unpacked in the same task), in order, computed on
    ``threads`` threads: at most ``threads + 1`` chunks are formatted or waiting at a time.
    The threads stop when the caller stops iterating (pending chunks are cancelled)."""
    pool = ThreadPoolExecutor(threads, thread_name_prefix="herbrand-writer")
    pending: deque[Future] = deque()
    try:
        for index in range(len(blocks)):
            pending.append(pool.submit(lambda i: format_chunk(blocks[i]), index))
            if len(pending) > threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(cancel_futures=True)


def symbol_ranks(column: np.ndarray, symbols: SymbolTable) -> tuple[np.ndarray, list[str]]:
    """(the rank of each id of a symbol column among its distinct symbols sorted by UTF-8
    bytes, the writers' order; those symbols in rank order). O(n + table) through a mask over the table when the
    column is not much smaller than the table, else O(n log n); O(u log u) on the u distinct."""
    if len(symbols) <= 4 * len(column):
        present = np.zeros(len(symbols), dtype=bool)
        present[column] = True
        ids = np.flatnonzero(present)
        inverse = None
    else:
        ids, inverse = np.unique(column, return_inverse=True)
    strings = symbols.decode_many(ids).tolist()
    if all(map(str.isascii, strings)):  # code point and byte order agree
        order = sorted(range(len(strings)), key=strings.__getitem__)
    else:
        encoded = [text.encode(*ENCODING) for text in strings]
        order = sorted(range(len(strings)), key=encoded.__getitem__)
    order = np.array(order, dtype=np.int64)
    if inverse is None:
        rank_of = np.zeros(len(symbols), dtype=np.int64)
        rank_of[ids[order]] = np.arange(len(ids))
        ranks = rank_of[column]
    else:
        rank_of = np.empty(len(ids), dtype=np.int64)
        rank_of[order] = np.arange(len(ids))
        ranks = rank_of[inverse.reshape(-1)]
    return ranks, [strings[index] for index in order]


class _PythonFormatter:
    """The text of a block of sorted rows by Python string joins (without pyarrow)."""

    def __init__(self, dictionaries: list[list[str] | None], delimiter: str):
        self._dictionaries = [None if strings is None else np.array(strings, dtype=object)
                              for strings in dictionaries]
        self._delimiter = delimiter

    def __call__(self, values: list[np.ndarray]) -> bytes:
        columns = [column.astype(str).tolist() if dictionary is None
                   else dictionary[column].tolist()
                   for column, dictionary in zip(values, self._dictionaries, strict=True)]
        lines = _join_columns(columns, self._delimiter)
        lines.append("")
        return "\n".join(lines).encode(*ENCODING)


def gzipped(path: str | PathLike) -> bool:
    """Whether the output file ``path`` (a local path or a URI) is written gzipped: its last
    suffix is ``.gz`` (``r.csv.gz``; not ``r.GZ``, nor a file named ``.gz``). Pure.

    >>> gzipped("out/r.csv.gz"), gzipped("hdfs://name/out/r.gz"), gzipped("out/.gz")
    (True, True, False)
    """
    return PurePosixPath(str(path)).suffix == ".gz"


GZIP_LEVEL = 6
"""The compression level of a gzipped output (zlib's default, as gzip(1)'s and Spark's gzip
codec's). Measured on 32 MB of Gnutella TC's text, one core: level 1 0.18 s CPU (8.94 MB),
6 0.79 s (8.71 MB), 9, gzip.open's default, 2.77 s (8.71 MB: no smaller)."""


EMPTY_GZIP = gzip.compress(b"", mtime=0)
"""A gzip file of no bytes: what a gzipped output of no rows holds. Gzip files concatenated
are one gzip file of their bytes concatenated (members, RFC 1952), so the parts of an output
written by several tasks, each gzipped, join as the plain parts do."""


def write_chunks(path: Path, chunks: Iterable[bytes | memoryview],
                 compressed: bool | None = None, make_folder: bool = True) -> None:
    """Write ``chunks`` as the file ``path``, whole or not at all (``whole_outputs``: written
    beside it and renamed; on failure or interruption removed, ``path`` left as it was, and
    the folders this call made for it removed), making its folder unless not ``make_folder``
    (then a missing folder is a FileNotFoundError): as one gzip member (``GZIP_LEVEL``, its
    header naming ``path``) when ``compressed`` (None: when ``gzipped(path)``), else as they
    are."""
    compress = gzipped(path) if compressed is None else compressed
    with made_folders() as folders:
        if make_folder:
            folders.make(path.parent)
        with whole_file(path) as file, (gzip.GzipFile(str(path), "wb", GZIP_LEVEL, file)
                                        if compress else nullcontext(file)) as stream:
            for chunk in chunks:
                stream.write(chunk)


def _write_lines(path: Path, lines: list[str]) -> None:
    write_chunks(path, ["".join(line + "\n" for line in lines).encode(*ENCODING)])


def write_csv(
    path: str | PathLike, rows: np.ndarray | Iterable[tuple[int | str, ...]], delimiter: str = "\t"
) -> None:
    """Write rows in Soufflé's output layout: ``rows`` is an (n, arity) integer array (its
    distinct rows are written) or an iterable of decoded tuples (int and str). Rows are sorted (``row_sort_key``) and written one
    per line; a nullary row is ``()``. ``.gz`` paths are gzipped; parent folders are created.
    O(n log n); vectorised for arrays (``relation_chunks``), one Python tuple per row
    otherwise."""
    if isinstance(rows, np.ndarray):
        relation = Relation.from_rows(rows.reshape(rows.shape[0], -1))
        chunks = relation_chunks(relation, (NUMBER,) * relation.arity, SymbolTable(), delimiter)
        write_chunks(Path(path), chunks)
        return
    ordered = sorted(rows, key=row_sort_key)
    if ordered and not ordered[0]:
        lines = ["()"]
    else:
        lines = [delimiter.join(map(str, row)) for row in ordered]
    _write_lines(Path(path), lines)


def write_relation(
    path: str | PathLike, database: Database, name: str, delimiter: str = "\t"
) -> None:
    """Write ``database[name]`` (decoded with the database's symbols and column types) in
    Soufflé's output layout. O(n log n) vectorised (``relation_chunks``)."""
    chunks = relation_chunks(database[name], database.column_types(name), database.symbols,
                             delimiter)
    write_chunks(Path(path), chunks)
