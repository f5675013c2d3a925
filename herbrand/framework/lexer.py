"""Tokens of Datalog text in the Soufflé subset, with 1-based line and column.

Token kinds: ``ident`` (``[A-Za-z_?][A-Za-z0-9_?]*``; ``_`` included), ``number`` (decimal,
``0x`` hex, ``0b`` binary; value is the int), ``string`` (value is the text between the quotes
with ``\\"`` and ``\\\\`` unescaped; any other backslash pair is kept as written, as Soufflé
does), ``directive`` (``.decl``, ``.input``, ... for the names in ``DIRECTIVES``), ``eof``, and
punctuation, whose kind is its own text (``:-``, ``<:``, ``<=``, ``(``, ...).

Comments (``//`` to the end of the line, ``/* ... */`` across lines) and whitespace are skipped.
Errors: unterminated string or comment, a bad character, a malformed number, float and unsigned
literals, and C-preprocessor lines (``#include``), each raised as ``HerbrandSyntaxError`` at its
position. Cost: one pass over the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from herbrand.framework.errors import HerbrandSyntaxError, SourceLocation, quoted

# Names that lex as a directive token when written right after a '.'; any other '.name' is a
# '.' followed by an identifier (so that ``a(1).b(2).`` is two facts).
DIRECTIVES = frozenset({
    "decl", "type", "number_type", "symbol_type", "input", "output", "printsize", "pragma",
    "plan", "limitsize", "functor", "comp", "init", "override", "include",
})

_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\r\f\v]+)
  | (?P<newline>\n)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*)
  | (?P<number>0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)
  | (?P<ident>[A-Za-z_?][A-Za-z0-9_?]*)
  | (?P<string>")
  | (?P<punct>:-|<:|<=|>=|!=|[(){}\[\],;:.!=<>+\-*/%^|$@])
    """,
    re.VERBOSE,
)
_STRING = re.compile(r'"((?:[^"\\\n]|\\[^\n])*)"')
_ESCAPE = re.compile(r'\\(["\\])')
_IDENT = re.compile(r"[A-Za-z_?][A-Za-z0-9_?]*")
_WORD_TAIL = re.compile(r"[A-Za-z0-9_?]*")
_FLOAT_TAIL = re.compile(r"\.[0-9]+([eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class Token:
    """One token: its kind, its source text, its value (numbers and strings) and position."""

    kind: str
    text: str
    value: int | str | None
    line: int
    column: int

    @property
    def end_column(self) -> int:
        """The column just after the token (tokens never span lines)."""
        return self.column + len(self.text)

    def describe(self) -> str:
        """The token as error messages quote it."""
        return "end of input" if self.kind == "eof" else f"'{self.text}'"


class Source:
    """A text and its file name, to build errors that quote the offending line."""

    def __init__(self, text: str, file: str | None = None):
        self.text = text
        self.file = file
        self._lines = [line.rstrip("\r") for line in text.split("\n")]

    def error(self, message: str, line: int, column: int) -> HerbrandSyntaxError:
        """A HerbrandSyntaxError at (line, column) quoting that line of the text."""
        source_line = self._lines[line - 1] if 0 < line <= len(self._lines) else ""
        return HerbrandSyntaxError(message, SourceLocation(line, column, self.file), source_line)


def tokenize(source: Source) -> list[Token]:
    """Split ``source.text`` into tokens, ending with one ``eof`` token placed just after the
    last token. Raises HerbrandSyntaxError on the first lexical error."""
    text = source.text
    tokens: list[Token] = []
    pos, line, line_start = 0, 1, 0
    while pos < len(text):
        column = pos - line_start + 1
        match = _TOKEN.match(text, pos)
        if match is None:
            if text[pos] == "#" and not text[line_start:pos].strip():
                raise source.error("unsupported: preprocessor directive", line, column)
            raise source.error(f"unexpected character {quoted(text[pos])}", line, column)
        kind, lexeme = match.lastgroup, match.group()
        end = match.end()
        if kind == "newline":
            line, line_start = line + 1, end
        elif kind == "block_comment":
            close = text.find("*/", end)
            if close < 0:
                raise source.error("unterminated comment", line, column)
            end = close + 2
            newlines = text.count("\n", pos, end)
            if newlines:
                line, line_start = line + newlines, text.rindex("\n", pos, end) + 1
        elif kind == "string":
            string = _STRING.match(text, pos)
            if string is None:
                raise source.error("unterminated string", line, column)
            end = string.end()
            value = _ESCAPE.sub(r"\1", string.group(1))
            tokens.append(Token("string", string.group(), value, line, column))
        elif kind == "number":
            _check_number_end(source, text, end, lexeme, line, column)
            base = {"x": 16, "b": 2}.get(lexeme[1:2].lower(), 10)
            tokens.append(Token("number", lexeme, int(lexeme, base), line, column))
        elif kind == "ident":
            tokens.append(Token("ident", lexeme, None, line, column))
        elif kind == "punct":
            word = _IDENT.match(text, end) if lexeme == "." else None
            if word is not None and word.group() in DIRECTIVES:
                end = word.end()
                tokens.append(Token("directive", text[pos:end], None, line, column))
            else:
                tokens.append(Token(lexeme, lexeme, None, line, column))
        pos = end
    last = tokens[-1] if tokens else None
    eof_line, eof_column = (last.line, last.end_column) if last else (1, 1)
    tokens.append(Token("eof", "", None, eof_line, eof_column))
    return tokens


def _check_number_end(
    source: Source, text: str, end: int, lexeme: str, line: int, column: int
) -> None:
    """Reject a number literal that runs into letters or a fraction (``12ab``, ``5u``, ``1.5``)."""
    fraction = _FLOAT_TAIL.match(text, end)
    if fraction is not None:
        raise source.error(f"unsupported: float literal '{lexeme}{fraction.group()}'", line, column)
    tail = _WORD_TAIL.match(text, end).group()
    if tail == "u":
        raise source.error(f"unsupported: unsigned literal '{lexeme}u'", line, column)
    if tail:
        raise source.error(f"invalid number literal '{lexeme}{tail}'", line, column)
