"""``TokenCursor``: a program's tokens read one at a time, with the parser's error reporting.

The recursive-descent parser (``herbrand.framework.parser``) is built on it: ``peek`` looks
ahead, ``advance``/``accept``/``expect`` consume, and every error is a HerbrandSyntaxError at a
token's ``file:line:col`` (``expected ... but found ...``). Each step is O(1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn, TypeVar

from herbrand.framework.errors import HerbrandSyntaxError, SourceLocation
from herbrand.framework.lexer import Source, Token, tokenize

_T = TypeVar("_T")


class TokenCursor:
    """The tokens of ``source`` (``tokenize``) and ``pos``, the index of the next one."""

    def __init__(self, source: Source):
        self.source = source
        self.tokens = tokenize(source)
        self.pos = 0

    def peek(self, ahead: int = 0) -> Token:
        """The token ``ahead`` positions after the next one (``eof`` past the end)."""
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        """Consume and return the next token."""
        token = self.peek()
        self.pos += 1
        return token

    def accept(self, kind: str) -> bool:
        """Consume the next token if it is of ``kind``."""
        if self.peek().kind == kind:
            self.pos += 1
            return True
        return False

    def expect(self, kind: str, expected: str | None = None) -> Token:
        """Consume a token of ``kind`` or fail with ``expected ... but found ...``."""
        if self.peek().kind != kind:
            self.fail(f"expected {expected or repr(kind)}")
        return self.advance()

    def fail(self, expected: str) -> NoReturn:
        """Raise ``{expected} but found <next token>`` at the next token."""
        token = self.peek()
        raise self.error(f"{expected} but found {token.describe()}", token)

    def error(self, message: str, token: Token) -> HerbrandSyntaxError:
        """A syntax error located at ``token``."""
        return self.source.error(message, token.line, token.column)

    def location(self, token: Token) -> SourceLocation:
        """The source location of ``token``."""
        return SourceLocation(token.line, token.column, self.source.file)

    def name(self, what: str) -> Token:
        """Consume an identifier (not ``_``), described as ``what`` in the error."""
        if self.peek().kind != "ident" or self.peek().text == "_":
            self.fail(f"expected {what}")
        return self.advance()

    def sequence(self, item: Callable[[], _T], close: str, *, empty_ok: bool = True) -> list[_T]:
        """Items separated by ',' up to and including the ``close`` token."""
        if empty_ok and self.accept(close):
            return []
        items = [item()]
        while not self.accept(close):
            self.expect(",", f"',' or '{close}'")
            items.append(item())
        return items
