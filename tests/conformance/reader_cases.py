"""The facts-reader semantics as a table of cases, shared by the local reader's tests
(``tests/framework/test_reader_cases.py``) and the Spark reader's
(``tests/spark_backend/test_reader_cases.py``): both readers must give each case's expected rows
or its expected FactsError message, so they agree with each other and with Soufflé's
ReadStreamCSV (the module doc of ``herbrand.framework.io``).

A case is a relation ``r`` with column ``types`` read through an ``.input`` directive with
``filename=`` and ``delimiter=``, from a file holding ``data`` (gzipped when the name ends in
``.gz`` unless ``gzip=False``; ``MISSING`` for no file, ``DIRECTORY`` for a directory).
An outcome is either the set of rows, each symbol as its exact bytes, or the error message with
the file's path written ``{path}``.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from herbrand.framework import io
from herbrand.framework.errors import FactsError
from herbrand.framework.storage import Database
from herbrand.framework.syntax import Column, Declaration, Directive, Program

N, S = "number", "symbol"
MISSING = None
DIRECTORY = "directory"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

Outcome = frozenset | str


@dataclass(frozen=True)
class ReaderCase:
    id: str
    data: bytes | str | None
    types: tuple[str, ...]
    expected: set | str
    delimiter: str = "\t"
    filename: str = "r.facts"
    gzip: bool = True

    def write(self, directory: Path) -> Path:
        """Create the case's file (or directory, or nothing) under ``directory``."""
        path = directory / self.filename
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.data == DIRECTORY:
            path.mkdir()
        elif self.data is not MISSING:
            compress = self.gzip and self.filename.endswith(".gz")
            path.write_bytes(gzip.compress(self.data) if compress else self.data)
        return path

    def program(self) -> Program:
        """``.decl r(...)`` of the case's types and ``.input r(filename=..., delimiter=...)``."""
        columns = tuple(Column(f"c{i}", type_) for i, type_ in enumerate(self.types))
        directive = Directive("input", "r", (("filename", self.filename),
                                             ("delimiter", self.delimiter)))
        return Program(declarations=(Declaration("r", columns),), directives=(directive,))

    def expected_outcome(self) -> Outcome:
        if isinstance(self.expected, str):
            return self.expected
        return frozenset(self.expected)


def outcome(read: Callable[[], frozenset], path: Path) -> Outcome:
    """The rows ``read()`` returns, or its FactsError message with ``path`` as ``{path}``."""
    try:
        return read()
    except FactsError as error:
        return str(error).replace(str(path), "{path}")


def symbol_bytes(value: int | str) -> int | bytes:
    """A decoded value with a symbol as its exact bytes (locally: surrogateescape)."""
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value


def local_outcome(case: ReaderCase, directory: Path) -> Outcome:
    """The case read by ``io.load_inputs`` from ``directory``."""
    path = case.write(directory)

    def read() -> frozenset:
        database = io.load_inputs(case.program(), Database({}), directory)
        return frozenset(tuple(map(symbol_bytes, row)) for row in database.decoded_rows("r"))

    return outcome(read, path)


def _count_error(line: int, found: int, arity: int = 2, delimiter: str = "\t") -> str:
    return (f"{{path}}:{line}: relation r: expected {arity} fields separated by "
            f"{delimiter!r}, found {found}")


def _number_error(line: int, column: int, shown: str, beyond: bool = False) -> str:
    suffix = ", out of the 64-bit range" if beyond else ""
    return f"{{path}}:{line}: relation r: column {column} expects a number, got {shown}{suffix}"


BOM = b"\xef\xbb\xbf"
TRUNCATED_GZIP = gzip.compress(b"".join(b"%d\n" % i for i in range(5000)), mtime=0)[:-30]

CASES = [
    # -- bytes of symbols
    ReaderCase("utf8-symbols", "héllo\twörld\n日本\t語 🙂\n".encode(), (S, S),
               {("héllo".encode(), "wörld".encode()), ("日本".encode(), "語 🙂".encode())}),
    ReaderCase("invalid-utf8-symbols", b"\xff\xfe\tok\n\x80x\t\xed\xa0\x80\n", (S, S),
               {(b"\xff\xfe", b"ok"), (b"\x80x", b"\xed\xa0\x80")}),
    ReaderCase("utf8-lead-byte-before-delimiter", b"\xc3\tz\n\xe2\x82\tq\n", (S, S),
               {(b"\xc3", b"z"), (b"\xe2\x82", b"q")}),
    ReaderCase("nul-bytes", b"a\x00b\t\x00\n", (S, S), {(b"a\x00b", b"\x00")}),
    ReaderCase("byte-order-mark-kept", BOM + b"a\n" + BOM + b"b\n", (S,),
               {(BOM + b"a",), (BOM + b"b",)}),
    ReaderCase("byte-order-mark-only", BOM, (S,), {(BOM,)}),
    ReaderCase("byte-order-mark-crlf", BOM + b"\r\n", (S,), {(BOM,)}),
    ReaderCase("quotes-backslashes-spaces-tabs", b'"q",a\\b\t c ,\'s\'\n', (S, S, S),
               {(b'"q"', b"a\\b\t c ", b"'s'")}, delimiter=","),
    # -- lines
    ReaderCase("crlf", b"1\ta\r\n2\tb\r\n", (N, S), {(1, b"a"), (2, b"b")}),
    ReaderCase("one-cr-dropped", b"a\rb\r\r\nc\r", (S,), {(b"a\rb\r",), (b"c",)}),
    ReaderCase("no-final-newline", b"1\t2\n3\t4", (N, N), {(1, 2), (3, 4)}),
    ReaderCase("blank-line-start-number", b"\n1\t2\n", (N, N), _count_error(1, 1)),
    ReaderCase("blank-line-middle-number", b"1\t2\n\n3\t4\n", (N, N), _count_error(2, 1)),
    ReaderCase("blank-line-end-number", b"1\t2\n3\t4\n\n", (N, N), _count_error(3, 1)),
    ReaderCase("blank-crlf-line-end-number", b"1\t2\r\n\r\n", (N, N), _count_error(2, 1)),
    ReaderCase("blank-line-unary-number", b"1\n\n", (N,), _number_error(2, 1, "''")),
    ReaderCase("blank-lines-unary-symbol", b"\na\n\nb\n\n", (S,),
               {(b"",), (b"a",), (b"b",)}),
    ReaderCase("trailing-delimiter-numbers", b"1\t2\t\n", (N, N), _count_error(1, 3)),
    ReaderCase("trailing-delimiter-symbols", b"a\t\n", (S, S), {(b"a", b"")}),
    ReaderCase("delimiter-in-unary-line", b"a\tb\n", (S,), _count_error(1, 2, arity=1)),
    ReaderCase("empty-file", b"", (N, S), set()),
    ReaderCase("only-newline-binary", b"\n", (N, N), _count_error(1, 1)),
    ReaderCase("only-newline-unary-symbol", b"\n", (S,), {(b"",)}),
    # -- arities
    ReaderCase("nullary-empty-file", b"", (), set()),
    ReaderCase("nullary-only-newline", b"\n", (), {()}),
    ReaderCase("nullary-parentheses", b"()\n", (), {()}),
    ReaderCase("unary-numbers", b"3\n1\n2\n", (N,), {(1,), (2,), (3,)}),
    ReaderCase("binary-mixed", b"1\ta\n2\tb\n", (N, S), {(1, b"a"), (2, b"b")}),
    ReaderCase("wide-mixed", b"1\ta\t-2\tb c\t\t3\n4\td\t5\te\tf\t-6\n", (N, S, N, S, S, N),
               {(1, b"a", -2, b"b c", b"", 3), (4, b"d", 5, b"e", b"f", -6)}),
    ReaderCase("duplicates", b"1\ta\n1\ta\n2\tb\n1\ta\n", (N, S), {(1, b"a"), (2, b"b")}),
    # -- delimiters
    ReaderCase("multi-character-delimiter", b"a::b::c\nx:::y::z\n", (S, S, S),
               {(b"a", b"b", b"c"), (b"x", b":y", b"z")}, delimiter="::"),
    ReaderCase("self-overlapping-delimiter", b"xaaay\naaa\n", (S, S),
               {(b"x", b"ay"), (b"", b"a")}, delimiter="aa"),
    ReaderCase("non-ascii-delimiter", "a→b\n".encode() + b"\xff" + "→c\n".encode(),
               (S, S), {(b"a", b"b"), (b"\xff", b"c")}, delimiter="→"),
    ReaderCase("multi-character-delimiter-count", b"1::2::3\n", (N, N),
               _count_error(1, 3, delimiter="::"), delimiter="::"),
    # -- numbers
    ReaderCase("number-signs-and-zeros", b"+1\n-2\n007\n-0\n", (N,), {(1,), (-2,), (7,), (0,)}),
    ReaderCase("number-leading-blanks", b" 1,\t2\n\x0b\x0c\r3,  -4\n", (N, N),
               {(1, 2), (3, -4)}, delimiter=","),
    ReaderCase("number-trailing-blank", b"1,2 \n", (N, N), _number_error(1, 2, "'2 '"),
               delimiter=","),
    ReaderCase("number-underscore", b"1\n1_000\n", (N,), _number_error(2, 1, "'1_000'")),
    ReaderCase("number-hex", b"0x10\n", (N,), _number_error(1, 1, "'0x10'")),
    ReaderCase("number-decimal-point", b"1.5\n", (N,), _number_error(1, 1, "'1.5'")),
    ReaderCase("number-sign-only", b"-\n", (N,), _number_error(1, 1, "'-'")),
    ReaderCase("number-two-signs", b"+-1\n", (N,), _number_error(1, 1, "'+-1'")),
    ReaderCase("number-unicode-digit", "٣\n".encode(), (N,), _number_error(1, 1, "'٣'")),
    ReaderCase("number-invalid-utf8", b"1\t\xff\n", (N, N), _number_error(1, 2, "'\\xff'")),
    ReaderCase("number-nul", b"1\x00\n", (N,), _number_error(1, 1, "'1\\x00'")),
    ReaderCase("int64-min-and-max", f"{INT64_MIN}\t{INT64_MAX}\n".encode(), (N, N),
               {(INT64_MIN, INT64_MAX)}),
    ReaderCase("int64-one-past-max", f"1\t{INT64_MAX + 1}\n".encode(), (N, N),
               _number_error(1, 2, f"'{INT64_MAX + 1}'", beyond=True)),
    ReaderCase("int64-one-past-min", f"{INT64_MIN - 1}\n".encode(), (N,),
               _number_error(1, 1, f"'{INT64_MIN - 1}'", beyond=True)),
    # -- the first error in file order
    ReaderCase("first-error-is-lowest-line", b"1\t2\n3\tx\ny\t4\n5\n", (N, N),
               _number_error(2, 2, "'x'")),
    ReaderCase("number-error-before-count-error", b"1\tx\n1\t2\t3\n", (N, N),
               _number_error(1, 2, "'x'")),
    ReaderCase("count-error-before-number-error", b"1\t2\t3\n1\tx\n", (N, N),
               _count_error(1, 3)),
    ReaderCase("count-error-first-on-its-line", b"x\n", (N, N), _count_error(1, 1)),
    ReaderCase("lowest-column-first", b"a\tb\n", (N, N), _number_error(1, 1, "'a'")),
    # -- files
    ReaderCase("missing-file", MISSING, (N,),
               "{path}: cannot open facts file of relation r: no such file"),
    ReaderCase("directory", DIRECTORY, (N,),
               "{path}: cannot read facts file of relation r: is a directory"),
    ReaderCase("gzip", b"1\ta\n1\ta\n2\tb\n", (N, S), {(1, b"a"), (2, b"b")},
               filename="r.facts.gz"),
    ReaderCase("gzip-error-line", b"1\ta\nb\n", (N, S), _count_error(2, 1),
               filename="r.facts.gz"),
    ReaderCase("gzip-not-gzip", b"1\ta\n", (N, S),
               "{path}: cannot read facts file of relation r: invalid gzip data",
               filename="r.facts.gz", gzip=False),
    ReaderCase("gzip-truncated", TRUNCATED_GZIP, (N,),
               "{path}: cannot read facts file of relation r: invalid gzip data",
               filename="r.facts.gz", gzip=False),
    ReaderCase("file-name-with-underscore", b"1\n", (N,), {(1,)}, filename="_r.facts"),
    ReaderCase("file-name-with-dot", b"1\n", (N,), {(1,)}, filename=".r.facts"),
    ReaderCase("file-name-with-glob-characters", b"1\n", (N,), {(1,)},
               filename="r[1]{a,b}*.facts"),
    ReaderCase("file-in-subdirectory", b"1\n", (N,), {(1,)}, filename="sub/r.txt"),
]


def case_params() -> list:
    return [pytest.param(case, id=case.id) for case in CASES]
