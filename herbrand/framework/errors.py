"""The error hierarchy: every error herbrand raises on bad input is a ``HerbrandError``.

Each error carries a one-line message that names the place (file:line:col, rule, relation,
file and line of a facts file), so the CLI can print it without a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """A position in a source text: 1-based line and column, and the file name if any."""

    line: int
    column: int
    file: str | None = None

    def __str__(self) -> str:
        return f"{self.file or '<input>'}:{self.line}:{self.column}"


class HerbrandError(Exception):
    """Base class of every error herbrand reports about its input or its use."""


def os_reason(error: OSError) -> str:
    """The reason of a failed file operation as messages give it: ``no such file``, ``is a
    directory``, ``permission denied``, ... (lower case, no errno, no path)."""
    if isinstance(error, FileNotFoundError):
        return "no such file"
    return (error.strerror or str(error) or type(error).__name__).lower()


def quoted(text: str) -> str:
    """``text`` in single quotes for an error message, every character visible: undecodable
    bytes kept by ``surrogateescape`` as ``\\xNN``, other unprintable characters (NUL, tab,
    ...) as Python escapes, quotes and backslashes escaped. O(len(text))."""
    shown = []
    for char in text:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            shown.append(f"\\x{code - 0xDC00:02x}")
        elif char in "'\\":
            shown.append("\\" + char)
        elif char.isprintable():
            shown.append(char)
        else:
            shown.append(repr(char)[1:-1])
    return "'" + "".join(shown) + "'"


class HerbrandSyntaxError(HerbrandError):
    """Datalog text that does not parse.

    ``str(error)`` is ``file:line:col: message`` followed by the source line and a caret under
    the offending column.
    """

    def __init__(self, message: str, location: SourceLocation, source_line: str = ""):
        self.message = message
        self.location = location
        self.source_line = source_line
        text = f"{location}: {message}"
        if source_line:
            # Keep the line's tabs so that the caret lines up under it.
            indent = "".join(c if c == "\t" else " " for c in source_line[: location.column - 1])
            caret = indent.ljust(location.column - 1) + "^"
            text += f"\n{source_line}\n{caret}"
        super().__init__(text)


class HerbrandAnalysisError(HerbrandError):
    """A program that parses but is not a valid stratified Datalog program."""


class UndeclaredRelationError(HerbrandAnalysisError):
    """A rule, fact or directive uses a relation that has no ``.decl``."""


class RedefinitionError(HerbrandAnalysisError):
    """A relation declared twice, or a declaration naming two columns alike; the message names
    both places."""


class ArityError(HerbrandAnalysisError):
    """An atom or a batch of rows has a different arity than its relation's declaration."""


class HerbrandTypeError(HerbrandAnalysisError):
    """A symbol is used where a number is expected, or the other way round."""


class UnsafeRuleError(HerbrandAnalysisError):
    """A variable in a head, negation, comparison or aggregate is not bound by a positive atom."""


class StratificationError(HerbrandAnalysisError):
    """Negation or aggregation through recursion; the message names the cycle of relations."""


class UnknownRelationError(HerbrandError, KeyError):
    """A relation looked up in a Database that holds none of that name; also a KeyError, so
    that ``in``, ``get`` and other Mapping lookups behave as on a dict."""

    __str__ = Exception.__str__  # KeyError would quote the message


class FactsError(HerbrandError):
    """A facts file is missing or has a malformed line (the message names file and line)."""


class OutputError(HerbrandError):
    """An output directory or file that cannot be written (the message names the path)."""


class ReportError(HerbrandError):
    """A benchmark results file that cannot be read or holds no benchmarks."""


class ProgramFileError(HerbrandError):
    """A program file that does not exist or cannot be read (the message names the path)."""


class UsageError(HerbrandError):
    """A malformed call or command line: an argument of the wrong kind (``facts=[...]`` where
    a mapping is expected, ``parse(None)``), or options that do not go together; the message
    names the argument or the flags."""


class UnknownComponentError(HerbrandError):
    """A registry lookup for a name that is not registered; the message lists the known names."""


class MissingDependencyError(HerbrandError):
    """An optional dependency is not installed; the message names the extra to install."""


class EvaluationError(HerbrandError):
    """Evaluation cannot proceed (for example a relation that is not an input is given facts)."""


class RowLimitError(EvaluationError):
    """A stratum that would derive more rows than its evaluator's ``row_limit`` allows
    (``NativeEvaluator(row_limit=...)``); its evaluation was abandoned."""


class UpdateError(HerbrandError):
    """An update a materialization cannot apply (facts for a derived relation, rule changes on
    an engine without dynamic rules); the message names the relation or the engines."""


class BackendUnavailableError(HerbrandError):
    """A backend whose runtime cannot start here (the Spark backend without Java)."""


class BackendMemoryError(HerbrandError):
    """A backend's runtime ran out of memory (a Spark JVM's heap); the message names the
    setting to raise."""
