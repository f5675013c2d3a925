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

The ``big-`` cases are files of one to three MB, larger than a block of pyarrow's CSV reader
(the local reader's fast path, ``herbrand.framework.arrow_io``): blank lines, CRLF and symbols
across block boundaries, and bad lines far into the file, whose line numbers must stay exact.
Their data and rows are made when a test asks for them (``data`` and ``expected`` may be
functions), so importing the table stays cheap.
"""

from __future__ import annotations

import gzip
import random
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
    data: bytes | str | None | Callable[[], bytes]
    types: tuple[str, ...]
    expected: set | str | Callable[[], set | str]
    delimiter: str = "\t"
    filename: str = "r.facts"
    gzip: bool = True

    def write(self, directory: Path) -> Path:
        """Create the case's file (or directory, or nothing) under ``directory``."""
        path = directory / self.filename
        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.data() if callable(self.data) else self.data
        if data == DIRECTORY:
            path.mkdir()
        elif data is not MISSING:
            compress = self.gzip and self.filename.endswith(".gz")
            path.write_bytes(gzip.compress(data) if compress else data)
        return path

    def program(self) -> Program:
        """``.decl r(...)`` of the case's types and ``.input r(filename=..., delimiter=...)``."""
        columns = tuple(Column(f"c{i}", type_) for i, type_ in enumerate(self.types))
        directive = Directive("input", "r", (("filename", self.filename),
                                             ("delimiter", self.delimiter)))
        return Program(declarations=(Declaration("r", columns),), directives=(directive,))

    def expected_outcome(self) -> Outcome:
        expected = self.expected() if callable(self.expected) else self.expected
        if isinstance(expected, str):
            return expected
        return frozenset(expected)


def outcome(read: Callable[[], frozenset], path: Path) -> Outcome:
    """The rows ``read()`` returns, or its FactsError message with ``path`` as ``{path}``."""
    try:
        return read()
    except FactsError as error:
        return str(error).replace(str(path), "{path}")


def symbol_bytes(value: int | str) -> int | bytes:
    """A decoded value with a symbol as its exact bytes (locally: surrogateescape)."""
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value


def local_outcome(case: ReaderCase, directory: Path, arrow: bool | None = None) -> Outcome:
    """The case read by ``io.load_inputs`` from ``directory``; ``arrow`` True or False sets
    ``io.ARROW`` meanwhile (pyarrow's path where its checks allow it, or the exact path
    always), None leaves it."""
    path = case.write(directory)

    def read() -> frozenset:
        database = io.load_inputs(case.program(), Database({}), directory)
        return frozenset(tuple(map(symbol_bytes, row)) for row in database.decoded_rows("r"))

    saved = io.ARROW
    if arrow is not None:
        io.ARROW = arrow
    try:
        return outcome(read, path)
    finally:
        io.ARROW = saved


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
    ReaderCase("blank-line-binary-symbols", b"a\tb\n\nc\td\n", (S, S), _count_error(2, 1)),
    ReaderCase("blank-crlf-line-binary-symbols", b"a\tb\r\n\r\n", (S, S), _count_error(2, 1)),
    ReaderCase("only-cr-binary-symbols", b"\r", (S, S), _count_error(1, 1)),
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


# -- big files: beyond one block of pyarrow's CSV reader (1 MB), made on demand ---------------

BIG_LINES = 120_000  # about 1.5 MB of two 6-digit numbers


def _big_numbers(seed: int, lines: int = BIG_LINES, delimiter: bytes = b"\t") -> list[tuple]:
    """``lines`` rows of two numbers (negative ones, zero, int64 extremes, some duplicates)."""
    rng = random.Random(seed)
    rows = [(rng.randrange(-999_999, 1_000_000), rng.randrange(0, 1_000_000))
            for _ in range(lines)]
    rows[lines // 3] = (INT64_MIN, INT64_MAX)
    rows[lines // 2] = rows[lines // 4]
    return rows


def _number_lines(rows: list[tuple], delimiter: bytes = b"\t") -> list[bytes]:
    return [delimiter.join(b"%d" % value for value in row) for row in rows]


_BIG_SYMBOLS = [
    b"a", b"", b"hello world", b'"quoted"', b"back\\slash", "h\u00e9llo \u65e5\u672c \U0001f642".encode(),
    b"\xff\xfe", b"\x80x", b"nul\x00byte", b" spaced ", b"comma,semicolon;", b"0x10", b"-5", b"+7",
] + [b"sym%d" % index for index in range(2_000)]


def _big_mixed(seed: int, lines: int = BIG_LINES // 2) -> list[tuple]:
    """``lines`` rows (number, symbol, number) with symbols of every kind of byte."""
    rng = random.Random(seed)
    return [(rng.randrange(-10**9, 10**9), rng.choice(_BIG_SYMBOLS), rng.randrange(0, 100))
            for _ in range(lines)]


def _mixed_lines(rows: list[tuple]) -> list[bytes]:
    return [b"%d\t%s\t%d" % row for row in rows]


def _joined(lines: list[bytes], end: bytes = b"\n") -> bytes:
    return b"".join(line + end for line in lines)


def _with_line(lines: list[bytes], number: int, line: bytes) -> bytes:
    """The lines with line ``number`` (1-based) replaced by ``line``."""
    lines = list(lines)
    lines[number - 1] = line
    return _joined(lines)


def _big_blank_lines() -> tuple[bytes, set]:
    """A unary symbol file of short lines, every third one blank, so that blank lines fall on
    block boundaries, some of them CRLF."""
    rng = random.Random(7)
    lines = [b"" if index % 3 == 0 else b"s%d" % rng.randrange(50_000) for index in range(400_000)]
    ends = [b"\r\n" if index % 5 == 0 else b"\n" for index in range(len(lines))]
    data = b"".join(line + end for line, end in zip(lines, ends, strict=True))
    return data, {(line,) for line in lines}


BIG_CASES = [
    ReaderCase("big-numbers", lambda: _joined(_number_lines(_big_numbers(1))), (N, N),
               lambda: set(_big_numbers(1))),
    ReaderCase("big-numbers-crlf", lambda: _joined(_number_lines(_big_numbers(2)), b"\r\n"),
               (N, N), lambda: set(_big_numbers(2))),
    ReaderCase("big-numbers-no-final-newline",
               lambda: _joined(_number_lines(_big_numbers(3)))[:-1], (N, N),
               lambda: set(_big_numbers(3))),
    ReaderCase("big-numbers-comma", lambda: _joined(_number_lines(_big_numbers(4), b",")),
               (N, N), lambda: set(_big_numbers(4)), delimiter=","),
    ReaderCase("big-numbers-gzip", lambda: _joined(_number_lines(_big_numbers(5))), (N, N),
               lambda: set(_big_numbers(5)), filename="r.facts.gz"),
    ReaderCase("big-numbers-plus-signs",
               lambda: _joined([line if line.startswith(b"-") else b"+" + line
                                for line in _number_lines(_big_numbers(6))]),
               (N, N), lambda: set(_big_numbers(6))),
    ReaderCase("big-mixed", lambda: _joined(_mixed_lines(_big_mixed(8))), (N, S, N),
               lambda: set(_big_mixed(8))),
    ReaderCase("big-mixed-crlf", lambda: _joined(_mixed_lines(_big_mixed(9)), b"\r\n"),
               (N, S, N), lambda: set(_big_mixed(9))),
    ReaderCase("big-mixed-lone-cr",
               lambda: _with_line(_mixed_lines(_big_mixed(10)), 50_000, b"1\ta\rb\t2"),
               (N, S, N),
               lambda: set(_big_mixed(10)[:49_999] + [(1, b"a\rb", 2)] + _big_mixed(10)[50_000:])),
    ReaderCase("big-mixed-leading-blank-number",
               lambda: _with_line(_mixed_lines(_big_mixed(11)), 40_000, b" \x0b5\tx\t1"),
               (N, S, N),
               lambda: set(_big_mixed(11)[:39_999] + [(5, b"x", 1)] + _big_mixed(11)[40_000:])),
    ReaderCase("big-blank-lines-unary-symbol", lambda: _big_blank_lines()[0], (S,),
               lambda: _big_blank_lines()[1]),
    ReaderCase("big-mixed-blank-line-far-symbols",
               lambda: _joined([b"%s\t%s" % (row[1], row[1]) for row in _big_mixed(21, 100_000)]
                               + [b""] + [b"a\tb"] * 10),
               (S, S), _count_error(100_001, 1)),
    ReaderCase("big-count-error-far",
               lambda: _with_line(_number_lines(_big_numbers(12)), 110_001, b"1\t2\t3"),
               (N, N), _count_error(110_001, 3)),
    ReaderCase("big-blank-line-far-number",
               lambda: _with_line(_number_lines(_big_numbers(13)), 99_999, b""),
               (N, N), _count_error(99_999, 1)),
    ReaderCase("big-number-error-far",
               lambda: _with_line(_number_lines(_big_numbers(14)), 119_998, b"5\t12x"),
               (N, N), _number_error(119_998, 2, "'12x'")),
    ReaderCase("big-overflow-far",
               lambda: _with_line(_number_lines(_big_numbers(15)), 77_777,
                                  b"9223372036854775808\t1"),
               (N, N), _number_error(77_777, 1, "'9223372036854775808'", beyond=True)),
    ReaderCase("big-mixed-trailing-blank-number-far",
               lambda: _with_line(_mixed_lines(_big_mixed(16)), 59_000, b"7 \tfoo\t1"),
               (N, S, N), _number_error(59_000, 1, "'7 '")),
    ReaderCase("big-mixed-hex-number-far",
               lambda: _with_line(_mixed_lines(_big_mixed(17)), 58_000, b"0x10\tfoo\t1"),
               (N, S, N), _number_error(58_000, 1, "'0x10'")),
    ReaderCase("big-mixed-empty-number-far",
               lambda: _with_line(_mixed_lines(_big_mixed(18)), 57_000, b"1\tfoo\t"),
               (N, S, N), _number_error(57_000, 3, "''")),
    ReaderCase("big-mixed-count-error-far",
               lambda: _with_line(_mixed_lines(_big_mixed(19)), 56_000, b"1\tfoo"),
               (N, S, N), _count_error(56_000, 2, arity=3)),
    ReaderCase("big-gzip-error-far",
               lambda: _with_line(_number_lines(_big_numbers(20)), 100_000, b"1\t-"),
               (N, N), _number_error(100_000, 2, "'-'"), filename="r.facts.gz"),
]
CASES += BIG_CASES


def case_params() -> list:
    return [pytest.param(case, id=case.id) for case in CASES]
