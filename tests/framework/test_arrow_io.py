"""The pyarrow fast path of facts reading and output writing (``herbrand.framework.arrow_io``)
against the exact numpy/Python path: the same rows, symbol ids, error messages and bytes; where
the fast path is taken; and a base install without pyarrow."""

from __future__ import annotations

import gzip
import io as stdio
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from herbrand.framework import csv_writer, io
from herbrand.framework.errors import FactsError
from herbrand.framework.spread import Spread
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Column, Declaration, Directive, Program
from tests.conformance.reader_cases import CASES, symbol_bytes

pa = pytest.importorskip("pyarrow")
arrow_io = pytest.importorskip("herbrand.framework.arrow_io")

N, S = "number", "symbol"
ENCODING = ("utf-8", "surrogateescape")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def exact_path(monkeypatch):
    monkeypatch.setattr(io, "ARROW", False)


def read_both(path: Path, types, delimiter="\t"):
    """(outcome, symbols) of ``io.read_facts`` on the fast path and on the exact path: the
    decoded rows in storage order or the error message, and the symbol table's strings."""
    results = []
    for arrow in (True, False):
        saved, io.ARROW = io.ARROW, arrow
        symbols = SymbolTable(["pre"])
        try:
            relation = io.read_facts(path, types, symbols, delimiter, "r")
            columns = [symbols.decode_many(c) if t == S else c
                       for c, t in zip(relation.columns, types, strict=True)]
            got = [tuple(map(symbol_bytes, row)) for row in zip(*columns, strict=True)]
            if not types:
                got = len(relation)
        except FactsError as error:
            got = str(error)
        finally:
            io.ARROW = saved
        results.append((got, symbols.decode_many(np.arange(len(symbols))).tolist()))
    return results


# -- where the fast path is taken ---------------------------------------------------------------

TAKEN = {
    "utf8-symbols", "invalid-utf8-symbols", "utf8-lead-byte-before-delimiter", "nul-bytes",
    "quotes-backslashes-spaces-tabs", "crlf", "no-final-newline", "blank-lines-unary-symbol",
    "trailing-delimiter-symbols", "empty-file", "only-newline-unary-symbol", "unary-numbers",
    "binary-mixed", "wide-mixed", "duplicates", "int64-min-and-max", "gzip", "file-name-with-glob-characters", "file-in-subdirectory",
    "big-numbers", "big-numbers-crlf", "big-numbers-no-final-newline", "big-numbers-comma",
    "big-numbers-gzip", "big-mixed", "big-mixed-crlf", "big-blank-lines-unary-symbol",
}
NOT_TAKEN = {
    # a byte order mark, a lone \r, a delimiter of more than one byte, a '+' sign or blanks
    # before a number
    "byte-order-mark-kept", "byte-order-mark-only", "byte-order-mark-crlf", "one-cr-dropped",
    "multi-character-delimiter", "self-overlapping-delimiter", "non-ascii-delimiter",
    "number-signs-and-zeros", "number-leading-blanks", "big-numbers-plus-signs",
    "big-mixed-lone-cr", "big-mixed-leading-blank-number",
    # every error
    "blank-line-middle-number", "blank-line-binary-symbols", "blank-crlf-line-binary-symbols",
    "only-cr-binary-symbols", "big-mixed-blank-line-far-symbols", "number-trailing-blank", "number-hex", "number-nul",
    "int64-one-past-max", "big-count-error-far", "big-blank-line-far-number",
    "big-number-error-far", "big-overflow-far", "big-mixed-trailing-blank-number-far",
    "big-mixed-hex-number-far", "big-mixed-empty-number-far", "big-mixed-count-error-far",
    "big-gzip-error-far", "missing-file", "directory", "gzip-not-gzip", "gzip-truncated",
}


@pytest.mark.parametrize("case", [c for c in CASES if c.id in TAKEN | NOT_TAKEN],
                         ids=lambda c: c.id)
def test_the_fast_path_reads_what_it_can_and_only_that(case, tmp_path):
    path = case.write(tmp_path)
    symbols = SymbolTable()
    columns = arrow_io.read_facts(path, case.types, symbols, case.delimiter)
    assert (columns is not None) == (case.id in TAKEN)
    if columns is None:
        assert len(symbols) == 0  # nothing interned when the exact path takes over


def test_every_listed_case_exists():
    assert {case.id for case in CASES} >= (TAKEN | NOT_TAKEN)


def test_crlf_across_check_chunks_and_blocks(tmp_path, monkeypatch):
    path = tmp_path / "r.facts"
    path.write_bytes(b"a\r\nbb\r\n\r\nccc\r\n" * 40)
    for chunk in (1, 2, 3, 5):
        monkeypatch.setattr(arrow_io, "CHECK_CHUNK", chunk)
        monkeypatch.setattr(arrow_io, "BLOCK_SIZE", 16)
        columns = arrow_io.read_facts(path, (S,), SymbolTable(), "\t")
        assert columns is not None and columns.shape == (1, 160)
    path.write_bytes(b"a\r\nb\rc\n")
    assert arrow_io.read_facts(path, (S,), SymbolTable(), "\t") is None


# -- the same outcome on both paths, on random files ----------------------------------------------

FIELD_BYTES = [b"0", b"1", b"7", b"-", b"+", b" ", b"\t", b",", b"x", b"a", b"\r", b"\xff",
               b"\xc3\xa9", b"\x00", b'"', b"\xef\xbb\xbf", b"9223372036854775808"]


@st.composite
def facts_files(draw):
    """(types, delimiter, bytes): half of them well-formed files of one-byte delimiters (the
    fast path's), the others with every kind of trouble."""
    types = tuple(draw(st.lists(st.sampled_from([N, S]), min_size=1, max_size=3)))
    clean = draw(st.booleans())
    delimiter = draw(st.sampled_from(["\t", ",", " ", "|"] + ([] if clean else ["::"])))
    separator = delimiter.encode()
    numbers = st.one_of(
        st.integers(INT64_MIN, INT64_MAX).map(lambda v: b"%d" % v),
        st.integers(-50, 50).map(lambda v: b"%d" % v),
        *([] if clean else [st.lists(st.sampled_from(FIELD_BYTES[:8]), max_size=4).map(b"".join)]),
    )
    pieces = [piece for piece in FIELD_BYTES + [b"sym", b"q"]
              if not clean or (separator not in piece and b"\r" not in piece)]
    symbols = st.lists(st.sampled_from(pieces), max_size=4).map(b"".join)
    lines = []
    for _ in range(draw(st.integers(0, 30))):
        width = len(types) if clean or draw(st.integers(0, 9)) else draw(st.integers(0, 4))
        fields = [draw(numbers if index < len(types) and types[index] == N else symbols)
                  for index in range(width)]
        lines.append(separator.join(fields))
    ends = [draw(st.sampled_from([b"\n", b"\n", b"\r\n"])) for _ in lines]
    data = b"".join(line + end for line, end in zip(lines, ends, strict=True))
    if data and draw(st.booleans()):
        data = data[:-1]
    if not clean and draw(st.integers(0, 9)) == 0:
        data = draw(st.sampled_from([b"\xef\xbb\xbf", b"\r", b"\n", b"\r\r\n"])) + data
    return types, delimiter, data


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(facts_files(), st.sampled_from([1 << 20, 64, 16, 4]), st.sampled_from([1 << 23, 5, 1]),
       st.booleans())
def test_both_paths_agree_on_random_files(tmp_path, monkeypatch, file, block, chunk, gz):
    types, delimiter, data = file
    monkeypatch.setattr(arrow_io, "BLOCK_SIZE", block)
    monkeypatch.setattr(arrow_io, "CHECK_CHUNK", chunk)
    path = tmp_path / ("r.facts.gz" if gz else "r.facts")
    path.write_bytes(gzip.compress(data) if gz else data)
    fast, exact = read_both(path, types, delimiter)
    assert fast == exact


def test_both_paths_agree_on_a_big_file_with_blank_lines_at_every_block_boundary(tmp_path,
                                                                                  monkeypatch):
    rng = np.random.default_rng(3)
    lines = [b"" if rng.random() < 0.3 else b"v%d" % rng.integers(1000) for _ in range(20_000)]
    path = tmp_path / "r.facts"
    path.write_bytes(b"\n".join(lines) + b"\n")
    for block in (7, 64, 1000, 4096):
        monkeypatch.setattr(arrow_io, "BLOCK_SIZE", block)
        assert arrow_io.read_facts(path, (S,), SymbolTable(), "\t") is not None
        fast, exact = read_both(path, (S,))
        assert fast == exact


def test_a_bad_line_far_into_a_big_file_has_its_exact_line_number(tmp_path):
    rng = np.random.default_rng(4)
    rows = rng.integers(0, 10**6, size=(300_000, 2))
    lines = [b"%d\t%d" % (a, b) for a, b in rows.tolist()]
    lines[287_654] = b"12\t3x"
    path = tmp_path / "r.facts"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(FactsError) as error:
        io.read_facts(path, (N, N), SymbolTable(), relation="r")
    assert str(error.value) == f"{path}:287655: relation r: column 2 expects a number, got '3x'"


def test_symbol_ids_follow_first_occurrence_column_by_column(tmp_path):
    path = tmp_path / "r.facts"
    path.write_bytes(b"b\tz\t1\na\tb\t2\nc\ty\t3\n")
    symbols = SymbolTable(["y"])
    relation = io.read_facts(path, (S, S, N), symbols)
    assert symbols.decode_many(np.arange(len(symbols))).tolist() == ["y", "b", "a", "c", "z"]
    assert relation.columns.tolist() == [[1, 2, 3], [4, 1, 0], [1, 2, 3]]


def test_the_exact_path_is_taken_when_arrow_is_off(tmp_path, exact_path, monkeypatch):
    def refuse(*args):
        raise AssertionError("the fast path was taken")

    monkeypatch.setattr(arrow_io, "read_facts", refuse)
    path = tmp_path / "r.facts"
    path.write_bytes(b"1\t2\n")
    assert io.read_facts(path, (N, N), SymbolTable()).to_set() == {(1, 2)}


# -- interning Arrow columns ---------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.binary(max_size=3), max_size=6), max_size=4),
       st.lists(st.binary(max_size=3).map(lambda b: b.decode(*ENCODING)), max_size=4),
       st.booleans())
def test_intern_arrow_is_intern_many_of_the_decoded_values(chunks, known, as_string):
    if as_string:
        chunks = [[value.decode("utf-8", "replace") for value in chunk] for chunk in chunks]
        column = pa.chunked_array(chunks, pa.string())
        decoded = [value for chunk in chunks for value in chunk]
    else:
        column = pa.chunked_array(chunks, pa.binary())
        decoded = [value.decode(*ENCODING) for chunk in chunks for value in chunk]
    by_arrow, by_python = SymbolTable(known), SymbolTable(known)
    ids = by_arrow.intern_many(column)
    assert ids.tolist() == by_python.intern_many(decoded).tolist()
    assert by_arrow._symbols == by_python._symbols
    out = np.full(len(decoded), -1, dtype=np.int64)
    assert by_arrow.intern_arrow(column, out=out) is out and out.tolist() == ids.tolist()


def test_intern_arrow_takes_arrays_and_refuses_nulls_and_other_types():
    table = SymbolTable()
    assert table.intern_many(pa.array(["a", "b", "a"]).slice(1)).tolist() == [0, 1]
    with pytest.raises(ValueError, match="null"):
        table.intern_many(pa.array(["a", None]))
    with pytest.raises(ValueError, match="strings or bytes"):
        table.intern_arrow(pa.array([1, 2]))


# -- writing: the same bytes ----------------------------------------------------------------------

SYMBOL_TEXTS = st.one_of(
    st.text(max_size=6),
    st.binary(max_size=4).map(lambda b: b.decode(*ENCODING)),
    st.sampled_from(["", "\t", ",", '"', "\\", "a b", "\n", "\r", "::", "→", "é", "\udcff"]),
)


@st.composite
def relations(draw):
    arity = draw(st.integers(0, 5))
    types = tuple(draw(st.lists(st.sampled_from([N, S]), min_size=arity, max_size=arity)))
    numbers = st.one_of(st.integers(INT64_MIN, INT64_MAX), st.integers(-3, 3),
                        st.sampled_from([INT64_MIN, INT64_MAX, 0, -1]))
    strings = draw(st.lists(SYMBOL_TEXTS, min_size=1, max_size=12, unique=True))
    symbols = SymbolTable(strings)
    rows = draw(st.lists(st.tuples(*[numbers if t == N else st.integers(0, len(strings) - 1)
                                     for t in types]), max_size=40))
    if arity == 0:
        relation = Relation(np.zeros((0, draw(st.integers(0, 1)))), unique=True)
    else:
        relation = Relation.from_rows(np.array(rows, dtype=np.int64).reshape(-1, arity), arity)
    return relation, types, symbols


def reference_bytes(relation, types, symbols, delimiter) -> bytes:
    """The bytes today's writer wrote: ``relation_lines``, each line and ``\\n``."""
    lines = io.relation_lines(relation, types, symbols, delimiter)
    return "".join(line + "\n" for line in lines).encode(*ENCODING)


def chunk_bytes(relation, types, symbols, delimiter, arrow, threads=1) -> bytes:
    saved, io.ARROW = io.ARROW, arrow
    try:
        return b"".join(bytes(chunk) for chunk in
                        io.relation_chunks(relation, types, symbols, delimiter, threads))
    finally:
        io.ARROW = saved


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(relations(), st.sampled_from(["\t", ",", "::", "→", '"', " ", "\udcff", "-", "1"]),
       st.sampled_from([1, 3, 10, 1 << 21]), st.sampled_from([1, 3]))
def test_both_writers_write_todays_bytes(monkeypatch, case, delimiter, chunk, threads):
    relation, types, symbols = case
    monkeypatch.setattr(csv_writer, "WRITE_CHUNK_VALUES", chunk)
    monkeypatch.setattr(Spread, "MIN_LENGTH", 1)  # keys packed in parts when on threads
    expected = reference_bytes(relation, types, symbols, delimiter)
    assert chunk_bytes(relation, types, symbols, delimiter, True, threads) == expected
    assert chunk_bytes(relation, types, symbols, delimiter, False, threads) == expected


@pytest.mark.parametrize("delimiter", ["\t", "::", "-", "\udcff"])
@pytest.mark.parametrize("texts_max", [1 << 20, 5])
def test_numbers_of_a_narrow_range_are_written_through_their_texts(monkeypatch, delimiter,
                                                                    texts_max):
    monkeypatch.setattr(arrow_io, "NUMBER_TEXTS_MAX", texts_max)
    generator = np.random.default_rng(7)
    rows = np.stack([generator.integers(-40, 40, 5000), generator.integers(0, 9, 5000),
                     generator.integers(INT64_MAX - 3, INT64_MAX, 5000, endpoint=True),
                     generator.integers(0, 3, 5000)], axis=1)
    types, symbols = (N, N, N, S), SymbolTable(["b", "a", "é"])
    relation = Relation.from_rows(rows, 4)
    expected = reference_bytes(relation, types, symbols, delimiter)
    monkeypatch.setattr(csv_writer, "WRITE_CHUNK_VALUES", 4000)
    assert chunk_bytes(relation, types, symbols, delimiter, True, 2) == expected


@pytest.mark.parametrize("spans", [(10, 10, 10), (2**40, 2**40), (2**62, 3), (2**63, 2**63)])
def test_sorting_packs_what_fits_and_lexsorts_the_rest(spans):
    rng = np.random.default_rng(6)
    columns = np.vstack([rng.integers(-(span // 2), span // 2, size=2000, dtype=np.int64)
                         if span < 2**63 else rng.integers(INT64_MIN, INT64_MAX, size=2000,
                                                            dtype=np.int64)
                         for span in spans])
    relation = Relation(columns)
    types = (N,) * len(spans)
    expected = reference_bytes(relation, types, SymbolTable(), "\t")
    assert chunk_bytes(relation, types, SymbolTable(), "\t", arrow=True) == expected
    assert chunk_bytes(relation, types, SymbolTable(), "\t", arrow=False) == expected


def test_writer_threads_stop_when_the_chunks_are_dropped(monkeypatch):
    monkeypatch.setattr(csv_writer, "WRITE_CHUNK_VALUES", 2)
    relation = Relation(np.arange(200, dtype=np.int64).reshape(2, 100))
    chunks = io.relation_chunks(relation, (N, N), SymbolTable(), "\t", threads=2)
    assert bytes(next(chunks)) == b"0\t100\n"
    chunks.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("herbrand-writer")]


def _outputs_program(filename: str, params=()) -> Program:
    declaration = Declaration("r", (Column("a", N), Column("b", S)))
    directive = Directive("output", "r", (("filename", filename), *params))
    return Program(declarations=(declaration,), directives=(directive,))


def _outputs_database() -> Database:
    symbols = SymbolTable(["b", "a", "\udcff", "x\ty"])
    rows = Relation.from_rows([(3, 0), (-1, 1), (3, 2), (2**63 - 1, 3), (3, 1)])
    return Database({"r": rows}, symbols, {"r": (N, S)})


@pytest.mark.parametrize("arrow", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_write_outputs_files_gzip_stdout_and_observer(tmp_path, monkeypatch, arrow, threads):
    monkeypatch.setattr(io, "ARROW", arrow)
    monkeypatch.setattr(csv_writer, "WRITE_CHUNK_VALUES", 4)
    database = _outputs_database()
    expected = b"-1\ta\n3\ta\n3\tb\n3\t\xff\n9223372036854775807\tx\ty\n"
    told = []
    io.write_outputs(_outputs_program("r.csv"), database, tmp_path, observer=told.append,
                     threads=threads)
    assert (tmp_path / "r.csv").read_bytes() == expected
    assert told == ["writing r.csv: 5 tuples"]
    io.write_outputs(_outputs_program("deep/r.csv.gz"), database, tmp_path, threads=threads)
    assert gzip.decompress((tmp_path / "deep" / "r.csv.gz").read_bytes()) == expected
    out = stdio.StringIO()
    io.write_outputs(_outputs_program("r.csv", (("IO", "stdout"),)), database, tmp_path,
                     stdout=out, observer=told.append, threads=threads)
    assert out.getvalue() == ("---------------\nr\n===============\n"
                              + expected.decode(*ENCODING) + "===============\n")
    assert told[-1] == "writing stdout: 5 tuples"
    io.write_relation(tmp_path / "w.csv", database, "r", delimiter="::")
    assert (tmp_path / "w.csv").read_bytes() == b"".join(
        line.replace(b"\t", b"::", 1) + b"\n" for line in expected.split(b"\n")[:-1])


@pytest.mark.parametrize("arrow", [True, False])
def test_write_csv_of_an_array(tmp_path, monkeypatch, arrow):
    monkeypatch.setattr(io, "ARROW", arrow)
    io.write_csv(tmp_path / "a.csv", np.array([[3, -4], [1, 2], [3, -4], [-9, 0]]), ",")
    assert (tmp_path / "a.csv").read_bytes() == b"-9,0\n1,2\n3,-4\n"
    io.write_csv(tmp_path / "a.csv.gz", np.array([[3, -4], [1, 2], [3, -4], [-9, 0]]))
    assert gzip.decompress((tmp_path / "a.csv.gz").read_bytes()) == b"-9\t0\n1\t2\n3\t-4\n"
    io.write_csv(tmp_path / "n.csv.gz", np.zeros((2, 0), dtype=np.int64))
    assert gzip.decompress((tmp_path / "n.csv.gz").read_bytes()) == b"()\n"


def test_a_bad_symbol_id_fails_before_the_file_is_touched(tmp_path):
    database = Database({"r": Relation.from_rows([(0, 7)])}, SymbolTable(["a"]), {"r": (N, S)})
    (tmp_path / "r.csv").write_bytes(b"old\n")
    with pytest.raises(IndexError):
        io.write_outputs(_outputs_program("r.csv"), database, tmp_path)
    assert (tmp_path / "r.csv").read_bytes() == b"old\n"


# -- without pyarrow ------------------------------------------------------------------------------


def _run(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_reading_and_writing_without_pyarrow(tmp_path):
    output = _run(f"""
        import sys
        sys.modules["pyarrow"] = None  # import pyarrow raises ImportError
        from pathlib import Path
        import numpy as np
        from herbrand.framework import csv_writer, io
        from herbrand.framework.symbols import SymbolTable
        from herbrand.framework.storage import Database
        facts = Path({str(tmp_path)!r}) / "r.facts"
        facts.write_bytes(b"2\\tb\\r\\n1\\ta\\n2\\tb\\n")
        symbols = SymbolTable()
        relation = io.read_facts(facts, ("number", "symbol"), symbols)
        database = Database({{"r": relation}}, symbols, {{"r": ("number", "symbol")}})
        io.write_relation(Path({str(tmp_path)!r}) / "r.csv", database, "r")
        try:
            io.read_facts(facts, ("number", "number"), SymbolTable(), relation="r")
        except Exception as error:
            print(type(error).__name__, str(error).split(": ", 1)[1])
        print("arrow_io loaded:", "herbrand.framework.arrow_io" in sys.modules)
    """)
    assert output == ("FactsError relation r: column 2 expects a number, got 'b'\n"
                      "arrow_io loaded: False\n")
    assert (tmp_path / "r.csv").read_bytes() == b"1\ta\n2\tb\n"


def test_pyarrow_is_imported_only_to_read_or_write_files(tmp_path):
    (tmp_path / "p.dl").write_text(".decl e(x: number)\ne(1).\n.decl t(x: number)\n"
                                   "t(x) :- e(x).\n.output t\n")
    output = _run(f"""
        import sys
        import herbrand
        from herbrand import cli
        assert "pyarrow" not in sys.modules, "import herbrand"
        assert cli.main(["run", {str(tmp_path / "p.dl")!r}, "-D", {str(tmp_path)!r},
                         "--no-progress"]) == 0
        print("after a run writing a small output:", "pyarrow" in sys.modules)
        from herbrand.framework import csv_writer, io
        from herbrand.framework.symbols import SymbolTable
        from pathlib import Path
        facts = Path({str(tmp_path)!r}) / "e.facts"
        symbols = SymbolTable()
        facts.write_bytes(b"1\\tb\\n2\\ta\\n")
        relation = io.read_facts(facts, ("number", "symbol"), symbols)
        import gzip
        packed = Path({str(tmp_path)!r}) / "e.facts.gz"
        packed.write_bytes(gzip.compress(b"1\\tb\\n2\\ta\\n3\\tc\\n"))
        io.read_facts(packed, ("number", "symbol"), symbols)
        print("after reading small files:", "pyarrow" in sys.modules)
        io.ARROW_MIN_BYTES = 12  # the gzipped file's text (its trailer says so)
        relation = io.read_facts(packed, ("number", "symbol"), symbols)
        print("after reading a file of ARROW_MIN_BYTES:", "pyarrow" in sys.modules)
        relation = io.read_facts(facts, ("number", "symbol"), symbols)
        from herbrand.framework.storage import Database
        database = Database({{"e": relation}}, symbols, {{"e": ("number", "symbol")}})
        io.write_relation(Path({str(tmp_path)!r}) / "e.csv", database, "e")
        io.write_relation(Path({str(tmp_path)!r}) / "f.csv", database, "e", delimiter="::")
        # pyarrow imports pandas on its first pa.array, pa.scalar or to_numpy: 0.2 s
        print("pandas:", "pandas" in sys.modules)
    """)
    assert output.splitlines()[-4:] == ["after a run writing a small output: False",
                                        "after reading small files: False",
                                        "after reading a file of ARROW_MIN_BYTES: True",
                                        "pandas: False"]
    assert (tmp_path / "f.csv").read_bytes() == b"1::b\n2::a\n"


@pytest.mark.parametrize("arrow", [True, False])
def test_a_write_on_threads_imports_pyarrow_beside_the_sort(arrow):
    output = _run(f"""
        import sys
        import numpy as np
        from herbrand.framework import csv_writer, io
        from herbrand.framework.storage import Relation
        from herbrand.framework.symbols import SymbolTable
        io.ARROW = {arrow}
        csv_writer.ARROW_MIN_ROWS = 2
        relation = Relation.from_rows(np.array([[3, 0], [1, 1], [2, 0]]), 2)
        text = b"".join(map(bytes, csv_writer.relation_chunks(
            relation, ("number", "symbol"), SymbolTable(["b", "a"]), threads=2)))
        print("pyarrow" in sys.modules, text)
    """)
    assert output.splitlines()[-1] == f"{arrow} b'1\\ta\\n2\\tb\\n3\\tb\\n'"
