"""N-Triples in: RDF statements as a ternary relation of symbols (``read_ntriples``,
``load_ntriples``), each term kept as its exact source text, so terms round-trip.

A malformed statement is a FactsError ``path:LINE: malformed N-Triples statement: ...``; a file
that cannot be read gets ``io.read_bytes``'s messages, as facts files do.
"""

from __future__ import annotations

import re
from os import PathLike
from pathlib import Path

from herbrand.framework.errors import FactsError
from herbrand.framework.io import read_bytes
from herbrand.framework.storage import Relation
from herbrand.framework.symbols import ENCODING, SymbolTable

_IRI_ESCAPE = r"\\(?:u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})"
_IRI_CHARS = r'[^\x00-\x20<>"{}|^`\\]*'
_IRI = rf"<{_IRI_CHARS}(?:{_IRI_ESCAPE}{_IRI_CHARS})*>"  # an unrolled loop: fast on long IRIs
_BLANK = r"_:\w(?:[\w.\-]*[\w\-])?"
_STRING_CHARS = r'[^"\\\n\r]*'
_STRING_ESCAPE = r"\\(?:[tbnrf\"'\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})"
_LITERAL = (
    rf'"{_STRING_CHARS}(?:{_STRING_ESCAPE}{_STRING_CHARS})*"'
    rf"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^{_IRI})?"
)
_TRIPLE = re.compile(
    rf"[ \t]*({_IRI}|{_BLANK})[ \t]*({_IRI})[ \t]*({_IRI}|{_BLANK}|{_LITERAL})"
    r"[ \t]*\.[ \t]*(?:#.*)?"
)


def read_ntriples(path: str | PathLike) -> list[tuple[str, str, str]]:
    """The (subject, predicate, object) statements of an N-Triples file, in file order.

    Each term is its exact source text (``<iri>``, ``_:label``, ``"literal"@lang``,
    ``"literal"^^<type>``; escapes left as written), so terms round-trip. Blank lines and
    ``#`` comment lines are skipped; ``.gz`` files are gunzipped. A malformed line raises
    FactsError ``path:LINE: ...``. O(bytes), one regular-expression match per line.
    """
    path = Path(path)
    text = read_bytes(path, "N-Triples file").decode(*ENCODING)
    triples = []
    match = _TRIPLE.fullmatch
    for number, line in enumerate(text.split("\n"), start=1):
        found = match(line.rstrip("\r"))
        if found is not None:
            triples.append(found.groups())
            continue
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            raise FactsError(f"{path}:{number}: malformed N-Triples statement: {stripped[:80]!r}")
    return triples


def load_ntriples(path: str | PathLike, symbols: SymbolTable) -> Relation:
    """The distinct statements of an N-Triples file as a ternary Relation of symbol ids
    (every term interned into ``symbols``). Cost: ``read_ntriples`` plus O(n log n)."""
    triples = read_ntriples(path)
    ids = symbols.intern_many(term for triple in triples for term in triple)
    return Relation.from_rows(ids.reshape(-1, 3), 3)
