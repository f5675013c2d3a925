"""Facts in and out, in Soufflé's layouts.

- ``.facts`` in (``read_facts``, ``load_inputs``), as Soufflé 2.5's ReadStreamCSV reads them;
  the Spark backend's reader (``herbrand.spark_backend.files``) follows the same rules, with the
  same messages:

  - the file is ``<facts_dir>/<filename>`` (``filename=`` of the directive, default
    ``<relation>.facts``); a name ending in ``.gz`` is read through gzip;
  - lines are separated by ``\\n``; a final ``\\n`` does not start another line; one ``\\r`` at
    the end of a line is dropped (CRLF). Every other line is a row, blank lines included
    wherever they are: a blank line is one empty field (the empty symbol of a unary symbol
    relation, an error otherwise). An empty file is an empty relation; a nullary relation is
    true iff the file has at least one line (whatever the lines hold);
  - a line is split on the delimiter (``delimiter=``, default tab; any non-empty string without
    ``\\n``; occurrences found left to right without overlap) into exactly ``arity`` fields
    (Soufflé drops extra fields; we reject them);
  - a symbol field is its bytes exactly (no quoting, no trimming; NUL and invalid UTF-8 kept:
    fields are decoded as UTF-8 with ``surrogateescape``, so undecodable bytes survive a
    read-write round trip);
  - a number field is ``NUMBER_SYNTAX`` (``std::stoll`` in base 10 over the whole field:
    optional leading whitespace, an optional sign, ASCII digits; no hex, no ``_``, no trailing
    blanks) within int64 (``parse_number``);
  - rows are a set: duplicates are dropped.

  Errors are FactsErrors: ``path: cannot open facts file of relation R: no such file``;
  ``path: cannot read facts file of relation R: is a directory`` (or ``invalid gzip data``, or
  the system's reason); and for the first malformed line in file order (a wrong field count
  before a bad number on the same line, the lowest column first)
  ``path:LINE: relation R: expected N fields separated by '\\t', found M`` or
  ``path:LINE: relation R: column C expects a number, got '<field>'`` (``, out of the 64-bit
  range`` appended to a number beyond int64; the field shown with ``errors.quoted``).
- ``.csv`` out (``write_outputs``; ``write_csv``, ``write_relation`` and the formatting are
  ``csv_writer``'s, the row sorting ``packed_keys``'): tab-separated, no header,
  one ``\\n``-terminated row per line, rows sorted by column (numbers numerically, symbols by
  their UTF-8 bytes, as Spark sorts them); a true nullary relation is the line ``()``, a false
  one an empty file. To stdout, a relation prints between Soufflé's banner lines, and
  ``.printsize`` as ``relation<TAB>count``.
- N-Triples in: ``herbrand.framework.ntriples``.

Every problem with a file is a ``FactsError`` whose message starts ``path:LINE:`` (or ``path:``
when no line applies). Text is UTF-8; undecodable bytes survive a read-write round trip
(``surrogateescape``).

Two paths, one result. With pyarrow installed (the ``frames``, ``spark`` or ``all`` extra) and
``ARROW`` true, ``herbrand.framework.arrow_io`` parses facts files with pyarrow's streaming CSV
reader and formats outputs in chunks with its CSV writer or string kernels, at 100 MB/s or more
with extra memory about the relation's size. It is imported by the first facts file of
``ARROW_MIN_BYTES`` or relation of ``csv_writer.ARROW_MIN_ROWS`` written (smaller ones take the
exact path while pyarrow is not loaded: its import costs more than it saves them). A facts file
it could read differently (a delimiter of more than one byte or not ASCII, a leading byte
order mark, a ``\\r`` not before ``\\n``, a number with a ``+`` sign, leading blanks or any
byte but digits and ``-``), and any file pyarrow rejects, is read by the exact numpy/Python
path (``facts_format``), which gives every error message. Without pyarrow, the exact path does
everything. Both paths give the same rows in the same order, the same symbol ids, the same
messages and the same bytes (tests/framework/test_arrow_io.py checks them against each other).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from os import PathLike
from pathlib import Path, PurePosixPath
from typing import TextIO

from herbrand.framework.csv_writer import (
    relation_chunks,
    relation_lines,
    row_sort_key,
    write_chunks,
    write_csv,
    write_relation,
)
from herbrand.framework.errors import FactsError, UndeclaredRelationError, quoted
from herbrand.framework.facts_format import (  # re-exported: the readers' shared pieces
    INVALID_GZIP,
    IS_A_DIRECTORY,
    NUMBER_SYNTAX,
    check_delimiter,
    field_count_error,
    missing_file_error,
    number_error,
    parse_number,
    read_bytes,
    read_facts_exact,
    unreadable_file_error,
)
from herbrand.framework.packed_keys import distinct_rows
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import ENCODING, SymbolTable
from herbrand.framework.syntax import Directive, Program

ARROW = True
"""Whether facts are read and outputs written through pyarrow (``arrow_io``) when it is
installed; False takes the exact numpy/Python path always (the results are the same)."""
_IO_PARAMS = ("IO", "filename", "delimiter")
BANNER_DASHES = "-" * 15
BANNER_EQUALS = "=" * 15


# ---------------------------------------------------------------------------------------------
# Reading .facts
# ---------------------------------------------------------------------------------------------

_ARROW_MISSING = False

ARROW_MIN_BYTES = 4 << 20
"""A facts file of fewer bytes (uncompressed) is read by the exact path while pyarrow is not
loaded yet: importing it costs about 0.05 s and 30 MB of resident memory (libarrow's pages,
kept to the end of the run), about what the exact path loses on such a file (measured per MB:
numbers 20 ms exact against 5 ms by pyarrow, so the times cross near 3.5 MB; symbols 12-18
against 7-9 ms, crossing near 8 MB). Galen EL's seven gzipped files (9.7 MB of text, the
largest 3.8 MB): 0.13 s CPU and 50 MB RSS exact against 0.19 s and 93 MB through pyarrow.
Once pyarrow is loaded (a larger file, an output being written), every file goes through it."""


def arrow_io_module():
    """The ``arrow_io`` module (importing pyarrow on first use), or None when ``ARROW`` is false
    or pyarrow is not installed."""
    global _ARROW_MISSING
    if not ARROW or _ARROW_MISSING:
        return None
    try:
        from herbrand.framework import arrow_io
    except ImportError:
        _ARROW_MISSING = True
        return None
    return arrow_io


def read_facts(
    path: str | PathLike,
    types: tuple[str, ...],
    symbols: SymbolTable,
    delimiter: str = "\t",
    relation: str = "",
) -> Relation:
    """The distinct rows of a Soufflé ``.facts`` file as a Relation of the given column
    ``types`` (the module doc gives the format); symbol fields are interned into ``symbols``
    (in order of first occurrence, column by column) only when the whole file is read without
    error.

    Raises FactsError (the module doc gives each message) for a missing, unreadable or
    directory path, and for the first malformed line in file order (wrong number of fields,
    or the lowest column whose field is not a number), naming ``relation`` (default: the file
    name).

    Two paths give the same Relation, symbol ids and errors. With pyarrow installed (and
    ``ARROW`` true; until pyarrow is loaded, only for a file of ``ARROW_MIN_BYTES`` or more), a
    file that passes ``arrow_io``'s byte checks (a one-byte ASCII delimiter,
    no byte order mark, no lone ``\\r``, numbers of digits and ``-`` only) is parsed by pyarrow's
    CSV reader: O(bytes) in C on two threads, one dict lookup per distinct symbol, extra memory
    about the relation's size. Any other file, and any file pyarrow rejects (so every error),
    takes the exact path: O(bytes) vectorised, one regular-expression match and one numpy
    conversion per number field, one dict lookup per symbol field, a line-by-line scan only on
    error; extra memory about 20 times the file's size (one Python str per field).
    """
    path = Path(path)
    name = relation or path.name
    check_delimiter(path, name, delimiter)
    fast = arrow_io_module() if types and _worth_arrow(path) else None
    if fast is not None:
        columns = fast.read_facts(path, types, symbols, delimiter)
        if columns is not None:
            return distinct_rows(columns)
    return read_facts_exact(path, types, symbols, delimiter, name)


def _worth_arrow(path: Path) -> bool:
    """Whether pyarrow should read ``path``: it is loaded already, or the file holds at least
    ``ARROW_MIN_BYTES`` (a ``.gz`` file: as many compressed, or the uncompressed size its gzip
    trailer gives, modulo 2**32, the last member's for a file of several, as the Spark
    backend's parts joined). A file that cannot be read goes to the exact path, which reports
    why. O(1): one stat, and one 4-byte read for a small ``.gz`` file."""
    if "pyarrow" in sys.modules:
        return True
    try:
        size = path.stat().st_size
        if size >= ARROW_MIN_BYTES or path.suffix != ".gz":
            return size >= ARROW_MIN_BYTES
        with path.open("rb") as stream:
            stream.seek(-4, 2)
            return int.from_bytes(stream.read(4), "little") >= ARROW_MIN_BYTES
    except OSError:
        return False


# ---------------------------------------------------------------------------------------------
# Directives
# ---------------------------------------------------------------------------------------------


def directive_place(directive: Directive) -> str:
    """Where a directive is, for error messages: "file:line:col: .kind relation"."""
    place = f"{directive.location}: " if directive.location is not None else ""
    return f"{place}.{directive.kind} {directive.relation}"


_IO_KINDS = {"input": ("file",), "output": ("file", "stdout")}


def io_parameters(directive: Directive, extension: str) -> tuple[str, str, str]:
    """(IO kind, file name, delimiter) of an ``.input`` or ``.output`` directive (the file
    name defaults to the relation's name and ``extension``). Raises FactsError at the directive
    for a parameter other than IO, filename and delimiter, an IO kind the directive cannot
    have (inputs: file; outputs: file, stdout), an empty delimiter or one holding a
    newline, or an output file name that names a folder (``""``, ``.``, ``..``, ``/``: its
    last name, as pathlib reads it, is empty or ``..``). O(parameters)."""
    place = directive_place(directive)
    for key, value in directive.params:
        if key not in _IO_PARAMS:
            raise FactsError(f"{place}: unsupported parameter {key}={quoted(value)} "
                             f"(supported: {', '.join(_IO_PARAMS)})")
    kind = directive.param("IO", "file")
    supported = _IO_KINDS[directive.kind]
    if kind not in supported:
        raise FactsError(f"{place}: unsupported IO={kind} (only {', '.join(supported)})")
    delimiter = _unescape(directive.param("delimiter", "\t"))
    if not delimiter or "\n" in delimiter:
        raise FactsError(f"{place}: invalid delimiter {quoted(delimiter)}")
    filename = directive.param("filename", directive.relation + extension)
    if directive.kind == "output" and kind == "file" and PurePosixPath(filename).name in ("", ".."):
        raise FactsError(f"{place}: filename {quoted(filename)} names a folder, not a file")
    return kind, filename, delimiter


def check_directives(program: Program) -> None:
    """Check the parameters of every ``.input`` and ``.output`` directive (``io_parameters``)
    before anything is read or computed, so that a bad one fails at once. O(directives)."""
    for directive in program.directives:
        if directive.kind in _IO_KINDS:
            io_parameters(directive, "")


_ESCAPES = {"\\t": "\t", "\\n": "\n", "\\r": "\r", "\\\\": "\\"}


def _unescape(value: str) -> str:
    """A directive's string value with ``\\t``, ``\\n``, ``\\r``, ``\\\\`` read as Soufflé reads them."""
    for escaped, plain in _ESCAPES.items():
        value = value.replace(escaped, plain)
    return value


def _types_of(program: Program, name: str) -> tuple[str, ...]:
    declaration = program.declaration_of.get(name)
    if declaration is None:
        raise UndeclaredRelationError(f"relation {name} has an I/O directive but no .decl")
    return declaration.types


def load_inputs(program: Program, database: Database, facts_dir: str | PathLike) -> Database:
    """A new Database: ``database`` plus the rows of each ``.input`` relation read from its file
    (``filename=`` relative to ``facts_dir``, default ``<relation>.facts``; ``delimiter=``,
    default tab), united with any rows already there. Only ``IO=file`` is supported. Raises
    FactsError naming the expected path of a missing file, or file and line of a bad one.
    Cost: that of ``read_facts`` per file."""
    relations = dict(database)
    types = dict(database.types)
    for directive in program.directives:
        if directive.kind != "input":
            continue
        _, filename, delimiter = io_parameters(directive, ".facts")
        name = directive.relation
        types[name] = _types_of(program, name)
        path = Path(facts_dir) / filename
        rows = read_facts(path, types[name], database.symbols, delimiter, name)
        relations[name] = relations[name].union(rows) if name in relations else rows
    if "herbrand.framework.arrow_io" in sys.modules:
        sys.modules["herbrand.framework.arrow_io"].release_memory()
    return Database(relations, database.symbols, types)


def write_stdout(name: str, lines: list[str], stdout: TextIO) -> None:
    """Print one relation's lines in Soufflé's stdout layout (a banner with its name)."""
    stdout.write(f"{BANNER_DASHES}\n{name}\n{BANNER_EQUALS}\n")
    stdout.writelines(line + "\n" for line in lines)
    stdout.write(f"{BANNER_EQUALS}\n")


def _write_stdout_chunks(name: str, chunks: Iterable[bytes | memoryview], stdout: TextIO) -> None:
    """``write_stdout`` of the text of ``relation_chunks`` (decoded with surrogateescape)."""
    stdout.write(f"{BANNER_DASHES}\n{name}\n{BANNER_EQUALS}\n")
    for chunk in chunks:
        stdout.write(str(chunk, *ENCODING))
    stdout.write(f"{BANNER_EQUALS}\n")


def write_outputs(
    program: Program, database: Database, out_dir: str | PathLike, stdout: TextIO | None = None,
    observer: Callable[[str], None] | None = None, threads: int = 1,
) -> None:
    """Carry out the ``.output`` and ``.printsize`` directives, in program order.

    ``.output``: ``<out_dir>/<relation>.csv`` (or ``filename=``, relative to ``out_dir``), with
    ``delimiter=``; to ``stdout`` in Soufflé's banner layout when ``out_dir`` is ``"-"`` or the
    directive says ``IO=stdout``. ``.printsize``: ``relation<TAB>count`` to ``stdout``.
    ``stdout`` defaults to ``sys.stdout``; ``out_dir`` is created if missing. Each file is
    written whole or not at all (``write_chunks``: a failed or interrupted write leaves the
    file as it was, and removes the folders it made for it). A relation absent
    from ``database`` is written empty. ``observer`` (a progress display's ``stage``) is told
    ``writing <file>: <n> tuples`` before each relation is written. O(n log n) per relation
    written; its text is formatted on ``threads`` threads (``relation_chunks``).
    """
    stdout = sys.stdout if stdout is None else stdout
    for directive in program.directives:
        name = directive.relation
        if directive.kind not in ("output", "printsize"):
            continue
        types = _types_of(program, name)
        relation = database.get(name, Relation.empty(len(types)))
        if directive.kind == "printsize":
            stdout.write(f"{name}\t{len(relation)}\n")
            continue
        kind, filename, delimiter = io_parameters(directive, ".csv")
        if observer is not None:
            target = "stdout" if kind == "stdout" or str(out_dir) == "-" else filename
            observer(f"writing {target}: {len(relation):,} tuples")
        chunks = relation_chunks(relation, types, database.symbols, delimiter, threads)
        if kind == "stdout" or str(out_dir) == "-":
            _write_stdout_chunks(name, chunks, stdout)
        else:
            write_chunks(Path(out_dir) / filename, chunks)


__all__ = [
    "INVALID_GZIP", "IS_A_DIRECTORY", "NUMBER_SYNTAX", "check_delimiter", "field_count_error",
    "missing_file_error", "number_error", "unreadable_file_error",
    "load_inputs", "parse_number", "read_bytes", "read_facts",
    "relation_chunks", "relation_lines", "row_sort_key", "write_csv", "write_outputs",
    "write_relation", "write_stdout",
]
