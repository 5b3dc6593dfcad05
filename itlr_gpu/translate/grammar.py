"""The decoding grammar for LLM translation, generated from one definition.

The language is the query parser's (:mod:`itlr_gpu.query.parser`)::

    T -> U (OR U)*      U -> V (AND V)*      V -> NOT W | W      W -> term | ( T )

restricted to what a model should write: operators spelled in upper case (the
parser's ``KEYWORDS``), single spaces, every term double-quoted with the parser's
escapes (``\\"`` and ``\\\\``), at most ``MAX_OPERANDS`` operands per chain and
``MAX_TERM_CHARS`` characters per term.  A term is non-empty, starts with a
character that is not white space, and holds no control character (the parser
rejects those).  :data:`QUERY_GRAMMAR` is the one definition; it is rendered as

* GBNF / xgrammar EBNF (:func:`to_gbnf`), the format vLLM's default structured-output
  backend (xgrammar) takes in ``StructuredOutputsParams(grammar=...)``;
* Lark (:func:`to_lark`), for vLLM's ``guidance`` backend;

and sampled by :func:`sample` (a random generator over the same rules) so tests can
check that every string the grammar allows parses.  Nesting is not bounded by the
grammar (the parser's ``MAX_DEPTH`` is): a deeper generation is an error row.

Rules are tuples: ``("seq", a, b, ...)``, ``("alt", a, b, ...)``, ``("star", x)``,
``("plus", x)``, ``("rep", x, min, max)``, ``("lit", "text")``, ``("ref", "rule")`` and ``("chars", spec)``
where ``spec`` is a :class:`CharClass`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ..query import parser as _qp

__all__ = [
    "CharClass", "QUERY_GRAMMAR", "REWRITE_GRAMMAR", "bounded_query_grammar", "max_length", "to_gbnf", "to_lark", "sample", "matches", "gbnf", "lark",
    "gbnf_for_llama_cpp", "MAX_PHRASES", "span_boundaries", "span_query_grammar", "span_terms",
]

# --------------------------------------------------------------------------- shared constants

AND_KW, OR_KW, NOT_KW = (kw for kw in ("AND", "OR", "NOT") if kw in _qp.KEYWORDS)
"""The operator keywords, taken from the parser (case-insensitive there, upper case here)."""

QUOTE = '"'
ESCAPABLE = '"\\'
"""Characters the parser's quoted terms escape with a backslash."""

WHITESPACE = _qp._WHITESPACE
"""The parser's white space."""


@dataclass(frozen=True)
class CharClass:
    """A character class: any character except ``exclude`` and the ranges in ``exclude_ranges``."""

    exclude: str
    exclude_ranges: tuple[tuple[int, int], ...] = ()

    def allows(self, ch: str) -> bool:
        o = ord(ch)
        return ch not in self.exclude and not any(lo <= o <= hi for lo, hi in self.exclude_ranges)


# Control characters (Unicode category Cc) are C0, DEL and C1.
_CONTROL = ((0x00, 0x1F), (0x7F, 0x9F))
TERM_CHAR = CharClass(exclude=ESCAPABLE, exclude_ranges=_CONTROL)


def _space_ranges() -> tuple[tuple[int, int], ...]:
    """Code-point ranges of every character that is white space or invisible in the parser's sense
    (a term made only of them is rejected, so a term must start with another), merged."""
    import unicodedata

    from ..query.parser import _INVISIBLE

    cps = [i for i in range(0x110000) if chr(i).isspace() or unicodedata.category(chr(i)) in _INVISIBLE]
    ranges: list[list[int]] = []
    for cp in cps:
        if ranges and cp == ranges[-1][1] + 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return tuple((lo, hi) for lo, hi in ranges)


_SPACES = _space_ranges()
TERM_FIRST_CHAR = CharClass(exclude=ESCAPABLE, exclude_ranges=_CONTROL + _SPACES)

_escape = ("alt", *(("lit", "\\" + ch) for ch in ESCAPABLE))

MAX_TERM_CHARS = 100
"""Longest term the model may write (characters, an escape counting one)."""

MAX_OPERANDS = 8
"""Most operands in one AND or OR chain the model may write (nest to write more).  These
two bounds keep a small model from running on until ``max_tokens``."""

QUERY_GRAMMAR: dict[str, tuple] = {
    "root": ("ref", "or_expr"),
    "or_expr": ("seq", ("ref", "and_expr"),
                ("rep", ("seq", ("lit", f" {OR_KW} "), ("ref", "and_expr")), 0, MAX_OPERANDS - 1)),
    "and_expr": ("seq", ("ref", "not_expr"),
                 ("rep", ("seq", ("lit", f" {AND_KW} "), ("ref", "not_expr")), 0, MAX_OPERANDS - 1)),
    "not_expr": ("alt", ("seq", ("lit", f"{NOT_KW} "), ("ref", "atom")), ("ref", "atom")),
    "atom": ("alt", ("ref", "term"), ("seq", ("lit", "("), ("ref", "or_expr"), ("lit", ")"))),
    "term": ("seq", ("lit", QUOTE), ("ref", "first_char"), ("rep", ("ref", "term_char"), 0, MAX_TERM_CHARS - 1),
             ("lit", QUOTE)),
    "first_char": ("alt", ("chars", TERM_FIRST_CHAR), _escape),
    "term_char": ("alt", ("chars", TERM_CHAR), _escape),
}
"""The logical-query decoding grammar (start symbol ``root``)."""



def bounded_query_grammar(max_depth: int = 1, max_operands: int = 2, max_term_chars: int = 32) -> dict[str, tuple]:
    """A *finite* sub-language of :data:`QUERY_GRAMMAR`: parentheses nested at most
    ``max_depth`` deep, chains of at most ``max_operands``, terms of at most
    ``max_term_chars``.  Its longest string (:func:`max_length`) bounds the tokens a
    generation can take, so a retry with it as ``max_tokens`` cannot be cut off."""
    g: dict[str, tuple] = {"root": ("ref", "or_expr_0")}
    for d in range(max_depth + 1):
        g[f"or_expr_{d}"] = ("seq", ("ref", f"and_expr_{d}"),
                             ("rep", ("seq", ("lit", f" {OR_KW} "), ("ref", f"and_expr_{d}")), 0, max_operands - 1))
        g[f"and_expr_{d}"] = ("seq", ("ref", f"not_expr_{d}"),
                              ("rep", ("seq", ("lit", f" {AND_KW} "), ("ref", f"not_expr_{d}")), 0, max_operands - 1))
        g[f"not_expr_{d}"] = ("alt", ("seq", ("lit", f"{NOT_KW} "), ("ref", f"atom_{d}")), ("ref", f"atom_{d}"))
        if d < max_depth:
            g[f"atom_{d}"] = ("alt", ("ref", "term"), ("seq", ("lit", "("), ("ref", f"or_expr_{d + 1}"), ("lit", ")")))
        else:
            g[f"atom_{d}"] = ("ref", "term")
    g["term"] = ("seq", ("lit", QUOTE), ("ref", "first_char"), ("rep", ("ref", "term_char"), 0, max_term_chars - 1),
                 ("lit", QUOTE))
    g["first_char"] = QUERY_GRAMMAR["first_char"]
    g["term_char"] = QUERY_GRAMMAR["term_char"]
    return g


def max_length(grammar: dict[str, tuple]) -> int:
    """Longest string of a finite grammar, in characters (ValueError if unbounded)."""
    memo: dict[str, int] = {}
    active: set[str] = set()

    def longest(expr: tuple) -> int:
        kind = expr[0]
        if kind == "lit":
            return len(expr[1])
        if kind == "chars":
            return 1
        if kind == "ref":
            name = expr[1]
            if name in active:
                raise ValueError(f"grammar is recursive through {name!r}")
            if name not in memo:
                active.add(name)
                memo[name] = longest(grammar[name])
                active.discard(name)
            return memo[name]
        if kind == "seq":
            return sum(longest(e) for e in expr[1:])
        if kind == "alt":
            return max(longest(e) for e in expr[1:])
        if kind == "rep":
            return expr[3] * longest(expr[1])
        raise ValueError(f"grammar is unbounded ({kind})")

    for name in reversed(list(grammar)):  # rules that chain forward (span terms) fill the memo bottom-up
        longest(("ref", name))
    return longest(grammar["root"])


REWRITE_GRAMMAR: dict[str, tuple] = {
    "root": ("seq", ("ref", "first_char"), ("star", ("ref", "text_char"))),
    "first_char": ("chars", CharClass(exclude=ESCAPABLE, exclude_ranges=_CONTROL + _SPACES)),
    "text_char": ("chars", CharClass(exclude="", exclude_ranges=_CONTROL)),
}
"""One line of plain text (``--mode rewrite``): no control characters, no leading space."""


# --------------------------------------------------------------------------- terms copied from the request


def span_boundaries(request: str) -> list[tuple[frozenset[int], frozenset[int]]]:
    """Where a term copied from ``request`` may start and end: per stretch of the request
    without a double quote, ``(starts, ends)`` with positions in ``request``.

    A term starts at the first character of a word (a run of word characters) or of a
    white-space-delimited token, and ends at the end of either: "tiny houses" and
    "(AMPK)" are terms of "minimalism, tiny houses (AMPK)", "houses (" is not.  A term never
    holds a double quote (the parser's quoted terms would need it escaped, and a model
    copying one is more likely closing the term)."""
    import re

    out = []
    pos = 0
    for piece in request.split(QUOTE):
        starts: set[int] = set()
        ends: set[int] = set()
        for rx in (r"\w+", r"\S+"):
            for m in re.finditer(rx, piece):
                if TERM_FIRST_CHAR.allows(m.group()[0]) or m.group()[0] == "\\":
                    starts.add(pos + m.start())
                ends.add(pos + m.end())
        if starts:
            out.append((frozenset(starts), frozenset(ends)))
        pos += len(piece) + 1
    return out


MAX_PHRASES = 2
"""Phrases of the request a span term may join (with a space): two let a model read "X in A or B"
as "X in A" OR "X in B" (labelled examples do), without letting it write words the request lacks."""


def span_terms(request: str, max_phrases: int = MAX_PHRASES) -> tuple[tuple, dict[str, tuple]]:
    """The ``term`` rule of :func:`span_query_grammar` and the rules it refers to: double-quoted,
    up to ``max_phrases`` stretches of ``request`` joined by a space, each from a start to an end
    of :func:`span_boundaries`, escaped as the parser reads it.  Rule ``spanK`` writes the text
    from the K-th boundary to the next one and then stops (where a phrase may end) or goes on;
    the rules form a chain, not a recursion, so the grammar is finite and :func:`max_length`
    bounds it.  Raises ValueError for a request with no word."""
    if max_phrases < 1:
        raise ValueError("max_phrases must be >= 1")
    rules: dict[str, tuple] = {}
    firsts: list[tuple] = []
    for starts, ends in span_boundaries(request):
        cuts = sorted(starts | ends)          # the last one is an end: the stretch's last token ends there
        base = len(rules)
        for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
            name, nxt = f"span{base + i}", ("ref", f"span{base + i + 1}")
            text = ("lit", request[a:b].replace("\\", "\\\\"))
            if i + 2 == len(cuts):
                rules[name] = text                                   # reached the stretch's end
            elif b in ends:
                rules[name] = ("seq", text, ("rep", nxt, 0, 1))      # may stop here or go on
            else:
                rules[name] = ("seq", text, nxt)                     # inside a token: must go on
            if a in starts:
                firsts.append(("ref", name))
    if not firsts:
        raise ValueError("the request has no word to copy into a term")
    rules = {"phrase": firsts[0] if len(firsts) == 1 else ("alt", *firsts), **rules}  # before the chain: max_length
    more = (("rep", ("seq", ("lit", " "), ("ref", "phrase")), 0, max_phrases - 1),) if max_phrases > 1 else ()
    return ("seq", ("lit", QUOTE), ("ref", "phrase"), *more, ("lit", QUOTE)), rules


def span_query_grammar(request: str, base: dict[str, tuple] | None = None,
                       max_phrases: int = MAX_PHRASES) -> dict[str, tuple]:
    """``base`` (default :data:`QUERY_GRAMMAR`, or a :func:`bounded_query_grammar`) with every term
    copied from ``request`` (:func:`span_terms`: a phrase, or up to ``max_phrases`` joined): the
    model cannot misspell, paraphrase or cut a word of the request, nor add words it does not
    hold.  ``request`` is the text the model sees (white space already collapsed)."""
    term, extra = span_terms(request, max_phrases)
    g = {name: rule for name, rule in (base or QUERY_GRAMMAR).items() if name not in ("first_char", "term_char")}
    g["term"] = term
    g.update(extra)
    return g


# --------------------------------------------------------------------------- rendering


def _gbnf_char(o: int) -> str:
    ch = chr(o)
    if ch in "\\]^-[":
        return "\\" + ch
    if o < 0x20 or 0x7F <= o <= 0xA0:
        return f"\\x{o:02X}"
    if not ch.isprintable() or ch.isspace():
        # \u takes exactly four hex digits in GBNF (llama.cpp and xgrammar alike): a code point above
        # U+FFFF written that way reads as another character plus a literal digit
        return f"\\u{o:04X}" if o <= 0xFFFF else f"\\U{o:08X}"
    return ch


def _char_class_gbnf(cc: CharClass) -> str:
    parts = [_gbnf_char(ord(c)) for c in cc.exclude]
    parts += [_gbnf_char(lo) if lo == hi else f"{_gbnf_char(lo)}-{_gbnf_char(hi)}" for lo, hi in cc.exclude_ranges]
    return "[^" + "".join(parts) + "]"


def _lit_gbnf(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _render(expr: tuple, fmt: str) -> str:
    kind = expr[0]
    if kind == "lit":
        return _lit_gbnf(expr[1])  # Lark string literals use the same escapes
    if kind == "ref":
        return expr[1]
    if kind == "chars":
        cc = _char_class_gbnf(expr[1])
        return cc if fmt == "gbnf" else "/" + cc.replace("/", "\\/") + "/"
    if kind == "seq":
        return " ".join(_wrap(e, fmt) for e in expr[1:])
    if kind == "alt":
        return " | ".join(_wrap(e, fmt, in_alt=True) for e in expr[1:])
    if kind in ("star", "plus"):
        return _wrap(expr[1], fmt, atom=True) + ("*" if kind == "star" else "+")
    if kind == "rep":
        inner = _wrap(expr[1], fmt, atom=True)
        return f"{inner}{{{expr[2]},{expr[3]}}}" if fmt == "gbnf" else f"{inner} ~ {expr[2]}..{expr[3]}"
    raise ValueError(f"unknown grammar node {kind!r}")


def _wrap(expr: tuple, fmt: str, in_alt: bool = False, atom: bool = False) -> str:
    """Parenthesise where precedence needs it: an alternative inside a sequence or a
    repeat, a sequence inside a repeat."""
    s = _render(expr, fmt)
    needs = (expr[0] == "alt" and not in_alt) or (expr[0] == "seq" and atom and len(expr) > 2) \
        or (expr[0] == "rep" and fmt == "lark" and atom)
    return f"({s})" if needs else s


def to_gbnf(grammar: dict[str, tuple]) -> str:
    """GBNF (llama.cpp / xgrammar EBNF); the start rule is ``root``."""
    return "\n".join(f"{name} ::= {_render(rule, 'gbnf')}" for name, rule in grammar.items()) + "\n"


def to_lark(grammar: dict[str, tuple]) -> str:
    """Lark, as vLLM's guidance backend reads it; the start rule is ``start``."""
    lines = []
    for name, rule in grammar.items():
        body = _render(rule, "lark")
        lines.append(f"{'start' if name == 'root' else name}: {body}")
    return "\n".join(lines).replace("ref:root", "start") + "\n"


def gbnf(mode: str = "logical") -> str:
    """The decoding grammar for ``mode`` (``logical`` or ``rewrite``) as GBNF."""
    return to_gbnf(QUERY_GRAMMAR if mode == "logical" else REWRITE_GRAMMAR)


def lark(mode: str = "logical") -> str:
    return to_lark(QUERY_GRAMMAR if mode == "logical" else REWRITE_GRAMMAR)


# --------------------------------------------------------------------------- sampling


_SAMPLE_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ()'-.,:;!?/&+*=<>#%@$_"
    "\"\\\u00e9\u00fc\u00df\u4e2d\u6587\u03bb\u0416\u00a0\u2014\U0001f600\t\n\x7f\x85"
    " ANDORNOTandornot"
)


def _sample_char(cc: CharClass, rng: random.Random) -> str:
    for _ in range(1000):
        ch = rng.choice(_SAMPLE_ALPHABET) if rng.random() < 0.9 else chr(rng.randrange(0x20, 0x3000))
        if cc.allows(ch):
            return ch
    raise RuntimeError("character class allows nothing in the sample alphabet")


def sample(grammar: dict[str, tuple], rng: random.Random, max_depth: int = 8, max_repeat: int = 4) -> str:
    """A random string of ``grammar`` (from ``root``); recursion is cut at ``max_depth``
    by taking, in alternatives, the branch that does not recurse."""
    out: list[str] = []

    def recurses(expr: tuple) -> bool:
        # Whether expr can reach a rule that leads back into nesting (used to cut depth).
        return expr[0] == "seq" and any(e == ("lit", "(") for e in expr[1:])

    def gen(expr: tuple, depth: int) -> None:
        kind = expr[0]
        if kind == "lit":
            out.append(expr[1])
        elif kind == "ref":
            gen(grammar[expr[1]], depth + 1)
        elif kind == "chars":
            out.append(_sample_char(expr[1], rng))
        elif kind == "seq":
            for e in expr[1:]:
                gen(e, depth)
        elif kind == "alt":
            options = list(expr[1:])
            if depth > max_depth:
                options = [o for o in options if not recurses(o)] or options
            gen(rng.choice(options), depth)
        elif kind in ("star", "plus", "rep"):
            lo = {"star": 0, "plus": 1}.get(kind, expr[2] if kind == "rep" else 0)
            cap = expr[3] if kind == "rep" else max_repeat
            hi = min(cap, max_repeat if rng.random() < 0.95 else cap) if depth <= max_depth else lo
            for _ in range(rng.randint(lo, max(lo, hi))):
                gen(expr[1], depth)
        else:
            raise ValueError(kind)

    gen(grammar["root"], 0)
    return "".join(out)


# --------------------------------------------------------------------------- recognising


def matches(grammar: dict[str, tuple], text: str) -> bool:
    """Whether ``grammar`` (from ``root``) derives exactly ``text`` (a small backtracking
    recogniser over end-position sets; for tests on short strings)."""
    memo: dict[tuple[str, int], frozenset[int]] = {}

    def ends(expr: tuple, pos: int) -> frozenset[int]:
        kind = expr[0]
        if kind == "lit":
            return frozenset([pos + len(expr[1])]) if text.startswith(expr[1], pos) else frozenset()
        if kind == "chars":
            return frozenset([pos + 1]) if pos < len(text) and expr[1].allows(text[pos]) else frozenset()
        if kind == "ref":
            key = (expr[1], pos)
            if key not in memo:
                memo[key] = frozenset()  # no left recursion in these grammars
                memo[key] = ends(grammar[expr[1]], pos)
            return memo[key]
        if kind == "seq":
            cur = frozenset([pos])
            for e in expr[1:]:
                cur = frozenset(q for p in cur for q in ends(e, p))
                if not cur:
                    break
            return cur
        if kind == "alt":
            return frozenset(q for e in expr[1:] for q in ends(e, pos))
        if kind in ("star", "plus", "rep"):
            lo, hi = {"star": (0, None), "plus": (1, None)}.get(kind, (expr[2], expr[3]) if kind == "rep" else (0, None))
            result: set[int] = {pos} if lo == 0 else set()
            frontier, count = {pos}, 0
            seen_at: set[int] = {pos}
            while frontier and (hi is None or count < hi):
                count += 1
                nxt = {q for p in frontier for q in ends(expr[1], p) if q > p}
                if hi is None:  # unbounded: positions already reached add nothing new
                    nxt -= seen_at
                    seen_at |= nxt
                if count >= lo:
                    result |= nxt
                frontier = nxt
            return frozenset(result)
        raise ValueError(kind)

    return len(text) in ends(grammar["root"], 0)


# --------------------------------------------------------------------------- llama.cpp dialect


def gbnf_for_llama_cpp(text: str) -> str:
    """GBNF as llama.cpp's parser reads it: rule names may hold letters, digits and '-' only, so
    every '_' in a rule name becomes '-'.  String literals and character classes (with their
    escapes) are copied unchanged."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in '"[':
            close = '"' if ch == '"' else "]"
            j = i + 1
            while j < n and text[j] != close:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif ch.isalnum() or ch == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_-"):
                j += 1
            out.append(text[i:j].replace("_", "-"))
            i = j
        else:
            out.append(ch)
            i += 1
    return "".join(out)
