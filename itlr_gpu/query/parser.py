"""Parser for the ITLR query language.

Grammar (the paper's, with n-ary chains)::

    T -> U (OR U)*          U -> V (AND V)*          V -> NOT W | W
    W -> term | "(" T ")"

Precedence NOT > AND > OR; keywords are case-insensitive.  A term is either a
double-quoted string (escapes ``\\"`` and ``\\\\``; typographic quotes such as “...”, „...“,
«...» and the full-width ＂...＂ also quote, without escapes) or a run of bare words that are
not keywords (full-width parentheses group as ASCII ones do); white space inside a bare run collapses to one space, so
``vitamin D benefits AND NOT bone health`` has two terms.  Tabs, newlines and
Unicode spaces (``str.isspace``, e.g. U+3000) count as white space, and so do invisible
format characters (a BOM, U+200B, a soft hyphen) at a bare word's ends or between
words; every other control character is an error, and so is a quoted term of only
invisible characters, reported at the term's position.

Every error is a :class:`~itlr_gpu.errors.QuerySyntaxError` with the 0-based
position and what was expected.  The limits below keep the recursive descent far
from Python's recursion limit and bound the work per query.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass

from ..errors import InputError, QuerySyntaxError
from .ast import And, Node, Not, Or, Term, make_and, make_or

MAX_QUERY_CHARS = 1_000_000
"""Longest accepted query, in characters, as typed and as :func:`~itlr_gpu.query.canonical` writes it (every term
quoted, quotes and backslashes escaped), so a canonical form parses back."""

MAX_DEPTH = 64
"""Deepest accepted nesting: each '(' and each NOT counts one level, in the query as typed and as
:func:`~itlr_gpu.query.canonical` writes it (every AND/OR chain in parentheses), so a canonical form parses back."""

KEYWORDS = ("AND", "OR", "NOT")
_WHITESPACE = " \t\n\r\v\f\x1c\x1d\x1e\x1f\x85"   # the control characters str.isspace counts (a PDF's form feed)
_TERM_START = "a term, NOT or '('"


@dataclass(frozen=True)
class Token:
    kind: str  # "TERM", "AND", "OR", "NOT", "(", ")", "END"
    pos: int
    text: str = ""


class _NotAString(InputError, TypeError):
    """A query that is neither a string nor an AST."""


def tokenize(query: str) -> list[Token]:
    """Split a query into tokens; bare words are merged into one TERM token."""
    if not isinstance(query, str):   # (an InputError, as for any bad argument; a TypeError for code that expects one)
        raise _NotAString(f"query is a {type(query).__name__}", "query", "a string or a query AST")
    if len(query) > MAX_QUERY_CHARS:
        raise QuerySyntaxError(
            f"query is {len(query)} characters long", query, MAX_QUERY_CHARS, f"at most {MAX_QUERY_CHARS} characters"
        )
    for i, ch in enumerate(query):
        cat = unicodedata.category(ch) if ch not in _WHITESPACE else ""
        if cat == "Cc":
            raise QuerySyntaxError(f"control character {ch!r}", query, i, "printable text")
        if cat == "Cs":   # U+DC80-U+DCFF: a byte that is not UTF-8, as Python decodes command-line arguments
            what = (f"byte 0x{ord(ch) - 0xDC00:02X} that is not UTF-8" if "\udc80" <= ch <= "\udcff"
                    else f"lone surrogate {ch!r}")
            raise QuerySyntaxError(what, query, i, "valid Unicode text (UTF-8)")

    tokens: list[Token] = []
    words: list[str] = []  # the current run of bare words
    run_start = 0
    i, n = 0, len(query)

    def flush() -> None:
        if words:
            text = " ".join(words)
            _check_visible(text, query, run_start)
            tokens.append(Token("TERM", run_start, text))
            words.clear()

    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif ch in _PARENS:
            flush()
            tokens.append(Token(_PARENS[ch], i, ch))
            i += 1
        elif ch == '"':
            flush()
            text, i = _read_quoted(query, i)
            tokens.append(Token("TERM", text[1], text[0]))
        elif ch in _TYPOGRAPHIC:
            flush()
            text, i = _read_typographic(query, i)
            tokens.append(Token("TERM", text[1], text[0]))
        else:
            j = i
            while j < n and not query[j].isspace() and query[j] not in _WORD_END:
                j += 1
            word = query[i:j]
            if not word.isascii():   # invisible format characters at a word's ends (a BOM, U+200B, a soft hyphen)
                bare = _strip_format(word)   # are no part of it, and a word of them alone is white space
                if not bare:
                    i = j
                    continue
                if bare != word:
                    i += len(word) - len(word.lstrip(_format_chars(word)))
                    word = bare
                    j = i + len(word)
            phrase = _single_quoted(query, i, word) if word[:1] in ("'", "\u2018") else None
            if phrase is not None:
                # the user's phrase where it is plain ("rock 'n' roll" holds quotes of its own: the general hint)
                shown = phrase if len(phrase) <= 60 and not set(phrase) & set("'\u2018\u2019") else "rock and roll"
                raise QuerySyntaxError("single-quoted term", query, i,
                                       f'the term in double quotes ("{shown}"): single quotes are apostrophes')
            keyword = _keyword(word)
            if keyword:
                flush()
                tokens.append(Token(keyword, i, word))
            else:
                if not words:
                    run_start = i
                words.append(word)
            i = j
    flush()
    tokens.append(Token("END", n))
    return tokens


# Invisible characters pasted around words: zero-width space, non-joiner, joiner, the direction marks and
# embeddings, word joiner and invisible operators, BOM, soft hyphen.  (Not every format character: an emoji flag's
# tag characters and Arabic number signs are visible parts of a word.)
_INVISIBLE_EDGE = set("\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                      "\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\ufeff")


def _format_chars(word: str) -> str:
    """The invisible characters (:data:`_INVISIBLE_EDGE`) of ``word``, as a strip() set."""
    return "".join(set(word) & _INVISIBLE_EDGE)


def _strip_format(word: str) -> str:
    """``word`` without the invisible format characters at its ends (inside a word they stay: a zero-width joiner
    of an emoji sequence, the non-joiner of a Persian word)."""
    chars = _format_chars(word)
    return word.strip(chars) if chars else word


def _keyword(word: str) -> str:
    """The keyword ``word`` spells ("AND", "OR", "NOT"), or "": case-insensitive, and blind to invisible format
    characters pasted next to it ("NOT\u200b" is NOT, not a term)."""
    upper = word.upper()
    if upper in KEYWORDS or word.isascii():   # (ASCII holds no format character: most words stop here)
        return upper if upper in KEYWORDS else ""
    bare = "".join(ch for ch in word if unicodedata.category(ch) != "Cf").upper()
    return bare if bare in KEYWORDS else ""


# Typographic double quotes (pasted from a word processor) quote a term like '"': each opening mark with the
# marks that may close it (English, German, French usage).
_TYPOGRAPHIC = {"\u201c": "\u201d", "\u201e": "\u201c\u201d", "\u00ab": "\u00bb",   # not \u201d: an inch mark
               "\uff02": "\uff02"}   # the full-width quote of CJK input methods
# Parentheses, the full-width ones of CJK input methods too: read as words they would change the grouping unseen
_PARENS = {"(": "(", ")": ")", "\uff08": "(", "\uff09": ")"}
_WORD_END = '"' + "".join(_PARENS) + "".join(_TYPOGRAPHIC)


def _read_typographic(query: str, start: int) -> tuple[tuple[str, int], int]:
    """A term in typographic double quotes (no escapes inside); returns ((text, start), next index)."""
    closing = _TYPOGRAPHIC[query[start]]
    end = next((i for i in range(start + 1, len(query)) if query[i] in closing), -1)
    if end < 0:
        raise QuerySyntaxError("unterminated quoted term", query, start,
                               " or ".join(f"a closing '{c}'" for c in closing))
    text = _one_line(query[start + 1:end])
    if not text.strip():
        raise QuerySyntaxError("empty term", query, start, "a non-empty term")
    _check_visible(text, query, start)
    return (text, start), end + 1


# Words an apostrophe opens: elisions, not quotes ('tis, rock 'n' roll, 'em)
_ELISIONS = {"tis", "twas", "n", "em", "cause", "cos", "til", "till", "bout", "round", "neath", "sup", "kay", "nuff"}
_QUOTE_SPAN_WORDS = 8   # how far a closing quote is looked for (bounded: a long query stays linear)
_WORD_RE = re.compile(r"\S+")


def _single_quoted(query: str, start: int, word: str) -> str | None:
    """The phrase (quotes left out) where ``word`` at ``start`` opens a single-quoted one, else None: an
    apostrophe before a letter (not an elision such as 'tis or '90s) and, within a few words and before any
    bracket or double quote, a word that ends with the matching quote ('rock and roll' was meant as one term).
    Any other apostrophe is a character of the term (Alzheimer's, parents' guides, '90s)."""
    closing = "'" if word[0] == "'" else "\u2019"
    body = word[1:].rstrip("'\u2019")
    if not body[:1].isalpha() or body.lower() in _ELISIONS:
        return None
    if len(word) > 2 and word.endswith(closing):
        return word[1:].rstrip("'\u2019")
    end = start + len(word)
    # the next words read in place (slicing the rest of the query for each such word was quadratic)
    for found in itertools.islice(_WORD_RE.finditer(query, end), _QUOTE_SPAN_WORDS):
        nxt = found.group()
        stripped = nxt.rstrip(")")
        if stripped.endswith(closing) and len(stripped) > 1:
            return " ".join(query[start + 1: found.start() + len(stripped) - 1].split())
        if any(c in nxt for c in _WORD_END) or nxt in KEYWORDS:
            return None   # "'s-Hertogenbosch AND NOT farmers' markets": two terms (an operator in capitals
            # ends the search; "'rock and roll'" is still one single-quoted phrase)
    return None


def _one_line(text: str) -> str:
    """A quoted term's line breaks and tabs read as spaces: its canonical form stays on one line (every break
    ``str.splitlines`` knows, U+2028 and U+2029 included)."""
    return text.replace("\r\n", " ").translate(_LINE_BREAKS) if any(c in _BREAKS for c in text) else text


_BREAKS = _WHITESPACE.replace(" ", "") + "\u2028\u2029"   # every line break str.splitlines knows, and the tab
_LINE_BREAKS = str.maketrans(_BREAKS, " " * len(_BREAKS))
_INVISIBLE = ("Cf", "Cc", "Zs", "Zl", "Zp")


def _check_visible(text: str, query: str, pos: int) -> None:
    """A term must hold at least one visible character (U+200B alone is no term)."""
    if all(ch.isspace() or unicodedata.category(ch) in _INVISIBLE for ch in text):
        raise QuerySyntaxError("term has only invisible characters", query, pos,
                               "a term with letters, digits or symbols")


def whole_text(text: str) -> str:
    """A text to embed whole as one term (``--field text``, ``--fallback-text``): its line breaks, tabs and other
    control characters read as spaces, as an expression reads them (a mis-decoded U+0097 in a BEIR query, a
    spreadsheet cell of two lines), the ends stripped."""
    if text.isprintable():
        return text.strip()
    return "".join(" " if ch in _BREAKS or unicodedata.category(ch) == "Cc" else ch for ch in text).strip()


def _shown(text: str, limit: int = 80) -> str:
    """``text`` for an error line: its repr, cut to ``limit`` characters with the length named."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text):,} characters)"


def check_term(text: object) -> None:
    """Refuse the text of a term built by hand (an AST's ``Term``) that no expression can spell, so that its
    canonical form would not parse back to it: not a string, empty, only invisible characters, or holding a tab, a
    line break (an expression reads them as spaces), another control character or a lone surrogate."""
    if not isinstance(text, str):
        raise InputError(f"a term of the query AST is a {type(text).__name__} ({text!r})", "query",
                         "Term(text) with a string")
    if text.isprintable() and text.strip():   # the common case, at C speed: letters, digits, symbols, spaces
        return
    if not text.strip():
        raise InputError(f"empty term {text!r} in query AST", "query", "a non-empty string")
    for ch in text:
        if ch in _BREAKS or unicodedata.category(ch) in ("Cc", "Cs"):
            raise InputError(f"term {_shown(text)} in query AST holds {ch!r}", "query",
                             "one line of text without control characters (an expression reads a tab or a line "
                             "break as a space)")
    if all(ch.isspace() or unicodedata.category(ch) in _INVISIBLE for ch in text):
        raise InputError(f"term {_shown(text)} in query AST has only invisible characters", "query",
                         "a term with letters, digits or symbols")


def _read_quoted(query: str, start: int) -> tuple[tuple[str, int], int]:
    """Read a quoted term starting at ``start``; returns ((text, start), next index)."""
    out: list[str] = []
    i = start + 1
    while i < len(query):
        ch = query[i]
        if ch == "\\":
            if i + 1 < len(query) and query[i + 1] in '"\\':
                out.append(query[i + 1])
                i += 2
                continue
            raise QuerySyntaxError("invalid escape in quoted term", query, i, '\\" or \\\\')
        if ch == '"':
            text = _one_line("".join(out))
            if not text.strip():
                raise QuerySyntaxError("empty term", query, start, "a non-empty term")
            _check_visible(text, query, start)
            return (text, start), i + 1
        out.append(ch)
        i += 1
    raise QuerySyntaxError("unterminated quoted term", query, start, 'a closing \'"\'')


class _Parser:
    def __init__(self, query: str):
        self.query = query
        self.tokens = tokenize(query)
        self.i = 0
        self.open = 0   # parentheses open at the current token
        self.starts: dict[int, int] = {}   # id of an operator node -> where it starts in the query

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def error(self, message: str, expected: str, pos: int | None = None) -> QuerySyntaxError:
        return QuerySyntaxError(message, self.query, self.tok.pos if pos is None else pos, expected)

    def parse(self) -> Node:
        if self.tok.kind == "END":
            raise self.error("empty query", "a term")
        node = self.parse_or(0)
        if self.tok.kind != "END":
            if self.tok.kind == ")":
                raise self.error("unbalanced ')'", "AND, OR or end of query")
            raise self.error(f"unexpected {self.describe(self.tok)}", "AND, OR or end of query")
        self.check_canonical_depth(node)
        if len(self.query) > MAX_QUERY_CHARS // 3:   # (a canonical form is well under 3x the query typed)
            from .printer import printed

            written = len(printed(node))
            if written > MAX_QUERY_CHARS:   # (its quotes and escapes): then it would not parse back
                raise self.error(f"query's canonical form is {written} characters long", f"at most {MAX_QUERY_CHARS} "
                                 "characters, counted as its canonical form writes them (every term quoted, '\"' "
                                 "and '\\' escaped)", 0)
        return node

    def parse_or(self, depth: int) -> Node:
        start = self.tok.pos
        children = [self.parse_and(depth)]
        while self.tok.kind == "OR":
            self.i += 1
            children.append(self.parse_and(depth))
        return self.started(make_or(children), start)

    def parse_and(self, depth: int) -> Node:
        start = self.tok.pos
        children = [self.parse_not(depth)]
        while self.tok.kind == "AND":
            self.i += 1
            children.append(self.parse_not(depth))
        return self.started(make_and(children), start)

    def parse_not(self, depth: int) -> Node:
        if self.tok.kind == "NOT":
            start = self.tok.pos
            self.enter(depth)
            self.i += 1
            if self.tok.kind == "NOT":
                raise self.error("doubled NOT", "a term or '(' (write NOT (NOT x) to negate twice)")
            return self.started(Not(self.parse_atom(depth + 1)), start)
        return self.parse_atom(depth)

    def started(self, node: Node, start: int) -> Node:
        self.starts.setdefault(id(node), start)
        return node

    def check_canonical_depth(self, root: Node) -> None:
        """The limit holds for the query as :func:`~.printer.canonical` writes it too (every AND/OR chain in
        parentheses, ``NOT (NOT x)``), so that a parsed query's canonical form parses back: "a AND (b OR c
        AND (...))" is one level deeper per chain there than as typed."""
        node = too_deep(root)
        if node is not None:
            raise self.error("query nested too deeply", f"at most {MAX_DEPTH} levels of '(' and NOT, counted "
                             "as its canonical form writes them (every AND/OR chain in parentheses)",
                             self.starts.get(id(node), 0))

    def parse_atom(self, depth: int) -> Node:
        tok = self.tok
        if tok.kind == "TERM":
            self.i += 1
            if self.tok.kind == "TERM":
                raise self.error("two terms without an operator between them", self.next_operator())
            return Term(tok.text)
        if tok.kind == "(":
            self.enter(depth)
            self.i += 1
            self.open += 1
            if self.tok.kind == ")":
                raise self.error("empty parentheses", _TERM_START)
            node = self.parse_or(depth + 1)
            if self.tok.kind != ")":
                if self.tok.kind == "END":
                    raise self.error("'(' never closed", "')' before the end of the query", tok.pos)
                raise self.error(f"unexpected {self.describe(self.tok)}", "AND, OR or ')'")
            self.i += 1
            self.open -= 1
            if self.tok.kind == "TERM" or self.tok.kind == "(":
                raise self.error(f"unexpected {self.describe(self.tok)} after ')'", self.next_operator())
            return node
        if tok.kind == "END":
            prev = self.tokens[self.i - 1].kind if self.i else ""
            raise self.error(f"dangling {prev}" if prev in KEYWORDS else "unexpected end of query",
                             "a term or '('" if prev == "NOT" else _TERM_START)
        if tok.kind in ("AND", "OR"):
            prev = self.tokens[self.i - 1].kind if self.i else ""
            what = f"doubled operator {tok.kind}" if prev in KEYWORDS else f"{tok.kind} without a left operand"
            raise self.error(what, _TERM_START)
        raise self.error(f"unexpected {self.describe(tok)}", _TERM_START)

    def next_operator(self) -> str:
        """What may follow an operand here: a ')' only inside parentheses."""
        return "AND, OR or ')'" if self.open else "AND, OR or end of query"

    def enter(self, depth: int) -> None:
        if depth + 1 > MAX_DEPTH:
            raise self.error("query nested too deeply", f"at most {MAX_DEPTH} levels of '(' and NOT")

    @staticmethod
    def describe(tok: Token) -> str:
        if tok.kind == "TERM":
            return f"term {tok.text!r}"
        if tok.kind == "END":
            return "end of query"
        return f"'{tok.text or tok.kind}'" if tok.kind in "()" else tok.kind


def too_deep(root: Node) -> Node | None:
    """The first node nested deeper than :data:`MAX_DEPTH` levels of '(' and NOT as
    :func:`~.printer.canonical` writes them (every AND/OR chain in parentheses, ``NOT (NOT x)``), or None.
    Iterative: an AST of any depth is walked."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Not):
            depth += 2 if isinstance(node.child, Not) else 1
            children = [node.child]
        elif isinstance(node, (And, Or)) and isinstance(node.children, (tuple, list)):
            depth += 1
            children = node.children
        else:   # a term, or a malformed node: the printer and the compiler say what is wrong with it
            continue
        if depth > MAX_DEPTH:
            return node
        stack.extend((c, depth) for c in children)
    return None


def check_ast_depth(root: Node) -> None:
    """An AST given in place of an expression keeps the expression's nesting limit, so that its canonical form
    (which results and translations record) parses back."""
    if too_deep(root) is not None:
        raise InputError("query AST nested too deeply", "query", f"at most {MAX_DEPTH} levels of AND/OR and NOT, "
                         "as its canonical form writes them, every AND/OR chain in parentheses")


def parse(query: str | Node) -> Node:
    """Parse a logical query into a flat AST; an AST passes through unchanged once its nesting is checked
    (:func:`check_ast_depth`)."""
    if isinstance(query, (Term, Not)) or hasattr(query, "children"):
        check_ast_depth(query)  # type: ignore[arg-type]
        return query  # type: ignore[return-value]
    return _Parser(query).parse()
