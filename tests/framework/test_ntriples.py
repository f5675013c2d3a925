import gzip

import pytest

from herbrand.framework.errors import FactsError
from herbrand.framework.ntriples import load_ntriples, read_ntriples
from herbrand.framework.storage import Database, Relation
from herbrand.framework.symbols import SymbolTable
from herbrand.framework.syntax import SYMBOL
from herbrand.workloads import workload_path


def write(path, text: str):
    path.write_bytes(text.encode())
    return path


def decoded(relation: Relation, symbols: SymbolTable) -> set:
    return set(Database({"r": relation}, symbols, {"r": (SYMBOL,) * 3}).decoded_rows("r"))


SAMPLE = """# a comment
<http://x/a> <http://x/p> <http://x/b> .
_:b0 <http://x/p> "plain" .

<http://x/a> <http://x/name> "say \\"hi\\"\\n"@en-GB . # trailing comment
<http://x/a> <http://x/age> "42"^^<http://www.w3.org/2001/XMLSchema#integer>.
_:b0 <http://x/p> _:b1 .
<http://x/a> <http://x/p> <http://x/b> .
"""


def test_read_ntriples_keeps_term_text(tmp_path):
    triples = read_ntriples(write(tmp_path / "s.nt", SAMPLE))
    assert triples == [
        ("<http://x/a>", "<http://x/p>", "<http://x/b>"),
        ("_:b0", "<http://x/p>", '"plain"'),
        ("<http://x/a>", "<http://x/name>", '"say \\"hi\\"\\n"@en-GB'),
        ("<http://x/a>", "<http://x/age>", '"42"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        ("_:b0", "<http://x/p>", "_:b1"),
        ("<http://x/a>", "<http://x/p>", "<http://x/b>"),
    ]
    symbols = SymbolTable()
    relation = load_ntriples(tmp_path / "s.nt", symbols)
    assert relation.arity == 3 and len(relation) == 5
    assert ("_:b0", "<http://x/p>", "_:b1") in decoded(relation, symbols)


@pytest.mark.parametrize(
    "bad",
    ["<http://x/a> <http://x/p> <http://x/b>",  # no final dot
     '<http://x/a> "lit" <http://x/b> .',  # literal predicate
     "<http://x a> <http://x/p> <http://x/b> .",  # space in an IRI
     '<http://x/a> <http://x/p> "open .',  # unterminated literal
     '<http://x/a> <http://x/p> "bad \\q escape" .',
     "just words ."],
)
def test_read_ntriples_malformed_line_names_file_and_line(tmp_path, bad):
    path = write(tmp_path / "bad.nt", SAMPLE + bad + "\n")
    with pytest.raises(FactsError, match=rf"^{path}:9: malformed N-Triples"):
        read_ntriples(path)


def test_lubm1_ntriples_gz():
    path = workload_path("lubm1-ntriples", "lubm1.nt.gz")
    with gzip.open(path, "rb") as stream:
        lines = stream.read().count(b"\n")
    symbols = SymbolTable()
    relation = load_ntriples(path, symbols)
    assert len(read_ntriples(path)) == lines == 103_391
    assert 0 < len(relation) <= lines
    assert all(s.startswith(("<", "_:")) for s in symbols.decode_many(relation.column(0)))
