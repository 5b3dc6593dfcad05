"""User-facing errors.

Every problem caused by the user's input (a query, a file, an option) raises an
:class:`ItlrError` subclass whose message is one line saying *what* is wrong,
*where*, and *what was expected*.  The CLI prints that line and exits non-zero;
anything else escaping is a bug in itlr-gpu.
"""

from __future__ import annotations


class ItlrError(Exception):
    """Base class of every error caused by user input."""

    exit_code = 1


class InputError(ItlrError, ValueError):
    """A bad file, array, option or argument (``where`` names the file/column/row)."""

    def __init__(self, what: str, where: str | None = None, expected: str | None = None):
        self.what, self.where, self.expected = what, where, expected
        msg = f"{where}: {what}" if where else what
        if expected:
            msg += f" (expected {expected})"
        super().__init__(msg)


class QuerySyntaxError(ItlrError, ValueError):
    """A logical query that does not parse.

    ``position`` is the 0-based character offset of the problem in ``query`` and
    ``expected`` says what the parser wanted there.
    """

    exit_code = 2

    def __init__(self, message: str, query: str, position: int, expected: str):
        self.message, self.query, self.position, self.expected = message, query, position, expected
        super().__init__(f"{message} at position {position} (expected {expected})")

    def caret(self) -> str:
        """The query on one line and a caret under the error position (for terminals: wide characters such as
        CJK take two columns, combining marks none)."""
        import unicodedata

        shown = "".join(ch if ch.isprintable() else " " for ch in self.query)

        def width(ch: str) -> int:
            if unicodedata.combining(ch):
                return 0
            return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1

        column = sum(width(ch) for ch in shown[:min(self.position, len(shown))])
        return f"{shown}\n{' ' * column}^"

    def short(self) -> str:
        """The message in one clause, for a line that has its own '(expected ...)': '... at position 8,
        expected ...'."""
        return f"{self.message} at position {self.position}, expected {self.expected}"


class IndexIntegrityError(InputError):
    """An index directory whose manifest or matrix checksum does not match."""


class UsageError(InputError):
    """A command line that cannot work (options that do not go together, a bad option value): exit 2."""

    exit_code = 2


class ItlrWarning(UserWarning):
    """A warning of itlr-gpu about its input or results (``itlr`` prints it as one ``itlr: warning:`` line)."""


class ItlrRuntimeWarning(RuntimeWarning):
    """A warning of itlr-gpu about how it runs (a slower path taken), printed as :class:`ItlrWarning` is."""


OWN_WARNINGS = (ItlrWarning, ItlrRuntimeWarning)


def warn_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` attributed to the first frame outside this package: the line of the user's code that
    called the API (a fixed ``stacklevel`` is right for one call path only; the CLI's frames are the package's).
    A UserWarning or RuntimeWarning goes as its itlr subclass, by which the CLI knows its own."""
    import os
    import sys
    import warnings

    category = {UserWarning: ItlrWarning, RuntimeWarning: ItlrRuntimeWarning}.get(category, category)
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level if frame is not None else 2)
