import gzip
import io as stdio
import itertools
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from herbrand.framework import csv_writer, io
from herbrand.framework.errors import FactsError
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import Column, Declaration, Directive, Program
from herbrand.workloads import workload_path
from tests.folder_listing import listing

N, S = "number", "symbol"


@pytest.fixture(autouse=True, params=[True, False], ids=["arrow", "exact"])
def reader_path(request, monkeypatch):
    """Every test on both paths of reading and writing: pyarrow's where it applies (when it is
    installed) and the exact numpy/Python one."""
    monkeypatch.setattr(io, "ARROW", request.param)
    return request.param


def write(path, text: str):
    path.write_bytes(text.encode())
    return path


def decoded(relation: Relation, types, symbols: SymbolTable) -> set:
    database = Database({"r": relation}, symbols, {"r": types})
    return set(database.decoded_rows("r"))


def program_of(decls: dict, *directives: Directive) -> Program:
    declarations = tuple(
        Declaration(name, tuple(Column(f"c{i}", t) for i, t in enumerate(types)))
        for name, types in decls.items()
    )
    return Program(declarations=declarations, directives=directives)


# -- read_facts ---------------------------------------------------------------------------------


def test_read_facts_numbers_and_symbols(tmp_path):
    path = write(tmp_path / "r.facts", "1\ta b\t-3\n31\t\t+4\n1\ta b\t-3\n")
    symbols = SymbolTable()
    relation = io.read_facts(path, (N, S, N), symbols)
    assert decoded(relation, (N, S, N), symbols) == {(1, "a b", -3), (31, "", 4)}
    assert len(relation) == 2


@pytest.mark.parametrize("text", ["1\t2\n3\t4", "1\t2\r\n3\t4\r\n", "1\t2\n3\t4\r"])
def test_read_facts_line_ends(tmp_path, text):
    relation = io.read_facts(write(tmp_path / "r.facts", text), (N, N), SymbolTable())
    assert relation.to_set() == {(1, 2), (3, 4)}


def test_read_facts_empty_file_and_nullary(tmp_path):
    empty = write(tmp_path / "e.facts", "")
    assert len(io.read_facts(empty, (N, N), SymbolTable())) == 0
    assert len(io.read_facts(empty, (), SymbolTable())) == 0
    true = io.read_facts(write(tmp_path / "t.facts", "()\n"), (), SymbolTable())
    assert true.arity == 0 and len(true) == 1


def test_read_facts_other_delimiters_and_gzip(tmp_path):
    assert io.read_facts(write(tmp_path / "c.csv", "a,1\nb,2\n"), (S, N), SymbolTable(),
                         delimiter=",").to_set() == {(0, 1), (1, 2)}
    assert io.read_facts(write(tmp_path / "m.txt", "1::2\n3::4\n"), (N, N), SymbolTable(),
                         delimiter="::").to_set() == {(1, 2), (3, 4)}
    gz = tmp_path / "z.facts.gz"
    gz.write_bytes(gzip.compress(b"5\t6\n"))
    assert io.read_facts(gz, (N, N), SymbolTable()).to_set() == {(5, 6)}


def test_read_facts_reads_gzip_members_joined(tmp_path, monkeypatch):
    """Gzip files joined (the Spark backend's output of several parts, an empty one among
    them) are one file of their bytes joined; a large one whose last member is small (the
    trailer's size) still goes to pyarrow, by its compressed size."""
    joined = gzip.compress(b"1\t2\n") + csv_writer.EMPTY_GZIP + gzip.compress(b"3\t4\n")
    gz = tmp_path / "r.facts.gz"
    gz.write_bytes(joined)
    assert io.read_facts(gz, (N, N), SymbolTable()).to_set() == {(1, 2), (3, 4)}
    monkeypatch.delitem(sys.modules, "pyarrow", raising=False)
    monkeypatch.setattr(io, "ARROW_MIN_BYTES", len(joined))
    assert io._worth_arrow(gz)
    monkeypatch.setattr(io, "ARROW_MIN_BYTES", len(joined) + 1)
    assert not io._worth_arrow(gz)  # the trailer says 4 bytes


def test_gzipped_outputs_are_named_by_their_last_suffix(tmp_path):
    assert [csv_writer.gzipped(name) for name in ("r.csv.gz", "file:///o/r.gz", "r.gz.csv",
                                                  "r.GZ", "o/.gz")] == [True, True, False,
                                                                       False, False]
    csv_writer.write_chunks(tmp_path / "r.csv", [b"1\n"], compressed=True)
    csv_writer.write_chunks(tmp_path / "r.gz", [b"2\n"], compressed=False)
    csv_writer.write_chunks(tmp_path / "d" / "r.gz", [b"3\n"])
    assert gzip.decompress((tmp_path / "r.csv").read_bytes()) == b"1\n"
    assert (tmp_path / "r.gz").read_bytes() == b"2\n"
    assert gzip.decompress((tmp_path / "d" / "r.gz").read_bytes()) == b"3\n"
    assert gzip.decompress(csv_writer.EMPTY_GZIP) == b""


@pytest.mark.parametrize(
    ("text", "line", "fragments"),
    [
        ("1\t2\n3\n", 2, ["relation r", "expected 2 fields", "found 1"]),
        ("1\t2\n3\t4\n5\t6\t7\n", 3, ["expected 2 fields", "found 3"]),
        ("1\t2\n\n3\t4\n", 2, ["found 1"]),
        ("1\t2\n3\tx\n", 2, ["column 2 expects a number", "'x'"]),
        ("1\t2\n3\t4\n1.5\t4\n", 3, ["column 1", "'1.5'"]),
        ("1\t9223372036854775808\n", 1, ["column 2", "9223372036854775808"]),
        ("1\t2\n2\t0x10\n", 2, ["column 2", "'0x10'"]),
        ("1\t2\n3\t4\n\n", 3, ["found 1"]),
        ("1\t1_000\n", 1, ["column 2", "'1_000'"]),
    ],
    ids=["too-few", "too-many", "blank-middle", "word", "float", "overflow", "hex",
         "blank-end", "underscore"],
)
def test_read_facts_reports_file_line_relation_and_column(tmp_path, text, line, fragments):
    path = write(tmp_path / "r.facts", text)
    with pytest.raises(FactsError) as error:
        io.read_facts(path, (N, N), SymbolTable(), relation="r")
    message = str(error.value)
    assert message.startswith(f"{path}:{line}: ")
    for fragment in fragments:
        assert fragment in message


def test_read_facts_missing_file_names_it(tmp_path):
    with pytest.raises(FactsError, match="nope.facts: cannot open facts file of relation "
                                         "nope.facts: no such file"):
        io.read_facts(tmp_path / "nope.facts", (N,), SymbolTable())


def test_read_facts_unreadable_file_gives_the_reason(tmp_path, monkeypatch):
    path = write(tmp_path / "r.facts", "1\n")

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(type(path), "read_bytes", denied)
    monkeypatch.setattr(type(path), "open", denied)  # the pyarrow path's check pass
    with pytest.raises(FactsError) as error:
        io.read_facts(path, (N,), SymbolTable(), relation="r")
    assert str(error.value) == f"{path}: cannot read facts file of relation r: Permission denied"


def test_read_facts_interns_no_symbol_of_a_malformed_file(tmp_path):
    symbols = SymbolTable()
    with pytest.raises(FactsError):
        io.read_facts(write(tmp_path / "r.facts", "a\t1\nb\tx\n"), (S, N), symbols)
    assert len(symbols) == 0


@pytest.mark.parametrize(("text", "value"), [
    ("0", 0), ("-12", -12), ("+7", 7), ("007", 7), (" \t\v\f\r\n5", 5),
    (str(-(2**63)), -(2**63)), (str(2**63 - 1), 2**63 - 1),
])
def test_parse_number_accepts_what_souffle_accepts(text, value):
    assert io.parse_number(text) == value


@pytest.mark.parametrize("text", [
    "", " ", "-", "+-1", "1 ", "1\r", "1_000", "0x10", "1.0", "1e3", "\u0663", "\x001",
    str(2**63), str(-(2**63) - 1),
])
def test_parse_number_rejects_everything_else(text):
    with pytest.raises(ValueError):
        io.parse_number(text)


def test_read_facts_on_100k_lines(tmp_path):
    """Correctness at size; the throughput is bench/bench_io.py's (no timed unit tests)."""
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 50_000, size=(100_000, 3))
    path = tmp_path / "big.facts"
    path.write_text("\n".join("\t".join(map(str, r)) for r in rows.tolist()) + "\n")
    relation = io.read_facts(path, (N, N, N), SymbolTable())
    assert relation == Relation.from_rows(rows)


# -- writing ------------------------------------------------------------------------------------


def test_write_csv_sorts_numbers_numerically_and_symbols_lexicographically(tmp_path):
    path = tmp_path / "out.csv"
    io.write_csv(path, [(10, "b"), (9, "b"), (9, "B"), (-1, "a b")])
    assert path.read_text() == "-1\ta b\n9\tB\n9\tb\n10\tb\n"
    io.write_csv(path, np.array([[10, 1], [9, 2], [-3, 0]]))
    assert path.read_text() == "-3\t0\n9\t2\n10\t1\n"


def test_write_csv_nullary_matches_souffle(tmp_path):
    expected = workload_path("souffle-conformance", "tierB_arith_agg", "cprog1", "Res.csv")
    io.write_csv(tmp_path / "true.csv", [()])
    io.write_csv(tmp_path / "false.csv", [])
    assert (tmp_path / "true.csv").read_bytes() == expected.read_bytes() == b"()\n"
    assert (tmp_path / "false.csv").read_bytes() == b""


symbol_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\n\r"), max_size=8
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), symbol_text), max_size=20))
def test_read_facts_round_trips_write_csv(tmp_path_factory, rows):
    path = tmp_path_factory.mktemp("roundtrip") / "r.facts"
    io.write_csv(path, rows)
    symbols = SymbolTable()
    relation = io.read_facts(path, (N, S), symbols)
    assert decoded(relation, (N, S), symbols) == set(rows)


def test_write_relation_decodes_and_sorts(tmp_path):
    symbols = SymbolTable(["zeta", "alpha"])
    database = Database({"r": Relation.from_rows([(0, 2), (1, 2), (1, 1)])}, symbols,
                        {"r": (S, N)})
    io.write_relation(tmp_path / "r.csv", database, "r", delimiter=",")
    assert (tmp_path / "r.csv").read_text() == "alpha,1\nalpha,2\nzeta,2\n"


# -- directives ---------------------------------------------------------------------------------


def test_load_inputs_reads_params_and_unites_with_existing_rows(tmp_path):
    write(tmp_path / "edge.facts", "1\t2\n2\t3\n")
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "names.txt", "a|1\nb|2\n")
    program = program_of(
        {"edge": (N, N), "name": (S, N)},
        Directive("input", "edge"),
        Directive("input", "name", (("IO", "file"), ("filename", "sub/names.txt"),
                                    ("delimiter", "|"))),
    )
    start = Database({"edge": Relation.from_rows([(9, 9)])}, SymbolTable(), {})
    database = io.load_inputs(program, start, tmp_path)
    assert database["edge"].to_set() == {(9, 9), (1, 2), (2, 3)}
    assert set(database.decoded_rows("name")) == {("a", 1), ("b", 2)}
    assert database.column_types("name") == (S, N)
    assert len(start["edge"]) == 1  # the input database is unchanged


def test_load_inputs_missing_file_names_expected_path(tmp_path):
    program = program_of({"edge": (N, N)}, Directive("input", "edge"))
    with pytest.raises(FactsError, match=f"{tmp_path / 'edge.facts'}: cannot open"):
        io.load_inputs(program, Database({}), tmp_path)


def test_load_inputs_directory_is_not_a_missing_file(tmp_path):
    (tmp_path / "edge.facts").mkdir()
    program = program_of({"edge": (N, N)}, Directive("input", "edge"))
    with pytest.raises(FactsError) as error:
        io.load_inputs(program, Database({}), tmp_path)
    assert str(error.value) == (f"{tmp_path / 'edge.facts'}: cannot read facts file of "
                                f"relation edge: is a directory")


@pytest.mark.parametrize(
    ("params", "message"),
    [((("IO", "sqlite"),), "unsupported IO=sqlite"),
     ((("rfc4180", "true"),), "unsupported parameter rfc4180")],
)
def test_load_inputs_rejects_unsupported_params(tmp_path, params, message):
    program = program_of({"edge": (N, N)}, Directive("input", "edge", params))
    with pytest.raises(FactsError, match=message):
        io.load_inputs(program, Database({}), tmp_path)


def test_load_inputs_bad_line_names_file_and_line(tmp_path):
    path = write(tmp_path / "edge.facts", "1\t2\n3\tfour\n")
    program = program_of({"edge": (N, N)}, Directive("input", "edge"))
    with pytest.raises(FactsError, match=rf"^{path}:2: relation edge: column 2"):
        io.load_inputs(program, Database({}), tmp_path)


def _output_case():
    symbols = SymbolTable(["b", "a"])
    database = Database(
        {"p": Relation.from_rows([(1, 0), (1, 1)]), "flag": Relation(np.zeros((0, 1)))},
        symbols, {"p": (N, S), "flag": ()},
    )
    program = program_of(
        {"p": (N, S), "flag": (), "none": (N,)},
        Directive("output", "p"),
        Directive("output", "flag"),
        Directive("output", "none", (("filename", "deep/none.tsv"),)),
        Directive("printsize", "p"),
    )
    return program, database


def test_write_outputs_to_files(tmp_path):
    program, database = _output_case()
    out = stdio.StringIO()
    io.write_outputs(program, database, tmp_path / "out", stdout=out)
    assert (tmp_path / "out" / "p.csv").read_text() == "1\ta\n1\tb\n"
    assert (tmp_path / "out" / "flag.csv").read_text() == "()\n"
    assert (tmp_path / "out" / "deep" / "none.tsv").read_text() == ""
    assert out.getvalue() == "p\t2\n"


def test_write_outputs_to_stdout_in_souffle_layout():
    program, database = _output_case()
    out = stdio.StringIO()
    io.write_outputs(program, database, "-", stdout=out)
    assert out.getvalue() == (
        "---------------\np\n===============\n1\ta\n1\tb\n===============\n"
        "---------------\nflag\n===============\n()\n===============\n"
        "---------------\nnone\n===============\n===============\n"
        "p\t2\n"
    )


def test_write_outputs_io_stdout_param(tmp_path, capsys):
    program = program_of({"p": (N,)}, Directive("output", "p", (("IO", "stdout"),)))
    io.write_outputs(program, Database({"p": Relation.from_rows([(2,), (1,)])}), tmp_path)
    assert capsys.readouterr().out == "---------------\np\n===============\n1\n2\n===============\n"
    assert not list(tmp_path.iterdir())


class Failure(Exception):
    pass


@pytest.mark.parametrize("failure", [Failure, KeyboardInterrupt])
def test_write_outputs_that_fail_leave_the_old_files_and_no_new_folder(tmp_path, monkeypatch,
                                                                       failure):
    """Each relation's text fails after its first chunk (a failure or Ctrl-C half-way): the
    outputs written before stay as they were, and a folder the write made is removed."""
    program, database = _output_case()
    io.write_outputs(program, database, tmp_path / "out", stdout=stdio.StringIO())
    before = listing(tmp_path / "out")
    chunks = io.relation_chunks

    def failing(*args):
        yield from itertools.islice(chunks(*args), 1)
        raise failure

    monkeypatch.setattr(io, "relation_chunks", failing)
    for out in (tmp_path / "out", tmp_path / "new"):
        with pytest.raises(failure):
            io.write_outputs(program, database, out, stdout=stdio.StringIO())
    assert listing(tmp_path) == {"out": None, **{f"out/{name}": data
                                                 for name, data in before.items()}}
