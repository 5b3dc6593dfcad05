"""The decoding grammar agrees with the query parser."""

from __future__ import annotations

import random
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itlr_gpu.query import Term, canonical, parse
from itlr_gpu.query import parser as qp
from itlr_gpu.query.parser import _INVISIBLE
from itlr_gpu.translate import grammar as g
from strategies import asts


def test_keywords_come_from_the_parser():
    assert {g.AND_KW, g.OR_KW, g.NOT_KW} == set(qp.KEYWORDS)
    text = g.gbnf()
    for kw in qp.KEYWORDS:
        assert f'"{kw} "' in text or f'" {kw} "' in text
    assert text.startswith("root ::= ")
    assert g.lark().startswith("start: ")


@pytest.mark.parametrize("seed", range(5))
def test_every_sampled_string_parses(seed):
    rng = random.Random(seed)
    checked = 0
    for _ in range(400):
        s = g.sample(g.QUERY_GRAMMAR, rng, max_depth=rng.randint(2, 10))
        if len(s) > qp.MAX_QUERY_CHARS:  # the grammar bounds no length (max_tokens does)
            continue
        checked += 1
        node = parse(s)  # raises on any disagreement
        c = canonical(node)
        if len(c) <= qp.MAX_QUERY_CHARS:
            assert parse(c) == node
        assert g.matches(g.QUERY_GRAMMAR, s)
    assert checked > 300


def test_sampled_rewrites_are_single_terms():
    rng = random.Random(7)
    for _ in range(500):
        s = g.sample(g.REWRITE_GRAMMAR, rng)
        from itlr_gpu.query import quote

        assert parse(quote(s)) == Term(s)


# Terms a model can write: no control characters, starting with a visible character (the parser refuses a
# term of only white space or invisible characters; the grammar asks the first character to be visible).
model_terms = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=10).filter(
    lambda s: not s[0].isspace() and unicodedata.category(s[0]) not in _INVISIBLE
)


@settings(max_examples=300, deadline=None)
@given(asts(model_terms, max_leaves=8))
def test_canonical_form_is_in_the_grammar(node):
    assert g.matches(g.QUERY_GRAMMAR, canonical(node))


@pytest.mark.parametrize(
    "bad",
    ['"a" AND', '"a" "b"', 'NOT NOT "a"', '""', '" "', '"\u00a0"', "a AND b", '("a"', '"a\tb"', '"a\\x"',
     '"a"  AND "b"', 'not "a"', '"' + "x" * (g.MAX_TERM_CHARS + 1) + '"',
     " AND ".join(['"t"'] * (g.MAX_OPERANDS + 1))],
)
def test_grammar_rejects_what_the_model_must_not_write(bad):
    assert not g.matches(g.QUERY_GRAMMAR, bad)


def test_grammar_bounds_are_inclusive():
    assert g.matches(g.QUERY_GRAMMAR, '"' + "x" * g.MAX_TERM_CHARS + '"')
    assert g.matches(g.QUERY_GRAMMAR, " OR ".join(['"t"'] * g.MAX_OPERANDS))
    assert g.matches(g.QUERY_GRAMMAR, "(" + " OR ".join(['"t"'] * g.MAX_OPERANDS) + ") OR \"u\"")


def test_xgrammar_compiles_the_grammar():
    xg = pytest.importorskip("xgrammar", reason="xgrammar (vLLM's grammar backend) is not installed")
    for mode in ("logical", "rewrite"):
        xg.Grammar.from_ebnf(g.gbnf(mode))
    xg.Grammar.from_ebnf(g.to_gbnf(g.bounded_query_grammar()))


def test_llama_cpp_dialect_renames_rules_only():
    import re

    for text in (g.gbnf("logical"), g.gbnf("rewrite"), g.to_gbnf(g.bounded_query_grammar(2, 3, 8))):
        out = g.gbnf_for_llama_cpp(text)
        names = [line.split(" ::= ")[0] for line in text.splitlines()]
        new_names = [line.split(" ::= ")[0] for line in out.splitlines()]
        assert new_names == [n.replace("_", "-") for n in names]
        assert all(re.fullmatch(r"[a-zA-Z0-9-]+", n) for n in new_names)
        # every reference was renamed too: no identifier with '_' is left outside literals and classes
        stripped = re.sub(r'"(\\.|[^"\\])*"|\[(\\.|[^\]\\])*\]', "", out)
        assert "_" not in stripped
        assert out.replace("-", "_") .count('"') == text.count('"')
    # underscores inside string literals and character classes are kept
    assert g.gbnf_for_llama_cpp('my_rule ::= "a_b" [^_] other_rule\n') == 'my-rule ::= "a_b" [^_] other-rule\n'
    assert g.gbnf_for_llama_cpp('r ::= "q\\"_x" x_y\n') == 'r ::= "q\\"_x" x-y\n'


def _decode_gbnf_class(body: str) -> list[tuple[int, int]]:
    """The ranges of a GBNF character class body (after ``[^``), decoded the way llama.cpp's and
    xgrammar's parsers read escapes: ``\\xHH``, ``\\uHHHH``, ``\\UHHHHHHHH`` (exactly that many digits),
    ``\\`` + one character; ``a-b`` a range.  An independent reader of what the renderer writes."""
    def one(i: int) -> tuple[int, int]:
        if body[i] != "\\":
            return ord(body[i]), i + 1
        width = {"x": 2, "u": 4, "U": 8}.get(body[i + 1])
        if width is None:
            return ord(body[i + 1]), i + 2
        return int(body[i + 2:i + 2 + width], 16), i + 2 + width

    out, i = [], 0
    while i < len(body):
        lo, i = one(i)
        hi = lo
        if i + 1 < len(body) and body[i] == "-":
            hi, i = one(i + 1)
        out.append((lo, hi))
    return out


@pytest.mark.parametrize("rule,cc", [("first_char", g.TERM_FIRST_CHAR), ("term_char", g.TERM_CHAR)])
def test_rendered_character_classes_mean_what_the_grammar_says(rule, cc):
    """Every code point is excluded by the rendered GBNF class exactly when the Python grammar excludes
    it (a code point above U+FFFF written as \\uXXXXX once excluded '0'-U+1343 from a term's first
    character: letters and digits)."""
    line = next(x for x in g.gbnf("logical").splitlines() if x.startswith(rule + " ::= "))
    body = line.split("[^", 1)[1]
    end, i = None, 0
    while end is None:
        if body[i] == "\\":
            i += 2 if body[i + 1] not in "xuU" else 2 + {"x": 2, "u": 4, "U": 8}[body[i + 1]]
        elif body[i] == "]":
            end = i
        else:
            i += 1
    ranges = _decode_gbnf_class(body[:end])
    assert all(lo <= hi for lo, hi in ranges)
    for o in list(range(0x3000)) + list(range(0xFFF0, 0x110000, 97)) + [0x110BD, 0x13430, 0x13438, 0xE0001]:
        excluded = any(lo <= o <= hi for lo, hi in ranges)
        assert excluded == (not cc.allows(chr(o))), hex(o)
    for ch in "aZ0é中😀":
        assert cc.allows(ch)


# --------------------------------------------------------------------------- terms copied from the request


def _span_oracle(request: str) -> set[str]:
    """Every term a span grammar must allow, by definition (character by character, independent of
    :func:`~itlr_gpu.translate.grammar.span_boundaries`): a stretch of the request with no double
    quote that starts where a word or a white-space-delimited token starts (not at an invisible or
    white-space character) and ends where one ends."""
    def word(c: str) -> bool:
        return c.isalnum() or c == "_" or unicodedata.category(c)[0] in "LNM" and c.isidentifier()

    n = len(request)
    is_w = [bool(__import__("re").match(r"\w", c)) for c in request]
    starts, ends = set(), set()
    for i, c in enumerate(request):
        if c == '"':
            continue
        prev = request[i - 1] if i else " "
        nxt = request[i + 1] if i + 1 < n else " "
        if (is_w[i] and (i == 0 or not is_w[i - 1])) or (not c.isspace() and (prev.isspace() or prev == '"')):
            if g.TERM_FIRST_CHAR.allows(c) or c == "\\":
                starts.add(i)
        if (is_w[i] and (i + 1 == n or not is_w[i + 1])) or (not c.isspace() and (nxt.isspace() or nxt == '"')):
            ends.add(i + 1)
    return {request[s:e] for s in starts for e in ends if s < e and '"' not in request[s:e]}


def _quoted(term: str) -> str:
    return '"' + term.replace("\\", "\\\\") + '"'


_request_chars = st.sampled_from(list("abcXY01 ,.-()/'\"\\é中\u200b") + ["the ", " and ", "(AMPK) "])


@settings(max_examples=150, deadline=None)
@given(st.lists(_request_chars, min_size=1, max_size=14).map("".join))
def test_span_terms_are_exactly_the_phrases_of_the_request(raw):
    request = " ".join(raw.split())
    want = _span_oracle(request)
    if not want:
        with pytest.raises(ValueError):
            g.span_terms(request, max_phrases=1)
        return
    term, extra = g.span_terms(request, max_phrases=1)
    only_terms = {"root": term, **extra}
    for t in want:  # every phrase is allowed ...
        assert g.matches(only_terms, _quoted(t)), (request, t)
    rng = random.Random(len(request))
    for _ in range(40):  # ... and every string the grammar writes is one of them, parsed back unchanged
        s = g.sample(only_terms, rng, max_depth=10_000)
        node = parse(s)
        assert isinstance(node, Term) and node.text in want, (request, s)
    # near misses are refused: a phrase with a character dropped, a letter changed or a space added at an end
    for t in want:
        for bad in (t[:-1], t[1:], t + " ", "z" + t, t.replace("a", "q")):
            if bad and bad not in want:
                assert not g.matches(only_terms, _quoted(bad)), (request, bad)


@settings(max_examples=60, deadline=None)
@given(st.lists(_request_chars, min_size=1, max_size=10).map("".join), st.integers(1, 3))
def test_span_terms_join_up_to_max_phrases(raw, max_phrases):
    request = " ".join(raw.split())
    phrases = sorted(_span_oracle(request))
    if not phrases:
        return
    term, extra = g.span_terms(request, max_phrases)
    only_terms = {"root": term, **extra}
    rng = random.Random(len(request) * max_phrases)
    for _ in range(20):
        parts = [rng.choice(phrases) for _ in range(rng.randint(1, max_phrases + 1))]
        joined = " ".join(parts)
        if len(parts) <= max_phrases:
            assert g.matches(only_terms, _quoted(joined)), (request, parts)
        elif not g.matches({"root": g.span_terms(request, len(parts) - 1)[0], **extra}, _quoted(joined)):
            # not also writable with fewer phrases (a phrase may itself hold spaces)
            assert not g.matches(only_terms, _quoted(joined)), (request, parts)


def test_span_grammar_keeps_the_operators_and_parses():
    request = "either Gothic or Romanesque churches, but not Baroque (17th century)"
    sg = g.span_query_grammar(request, g.bounded_query_grammar(2, 3, 8))
    assert g.matches(sg, '(("Gothic" OR "Romanesque churches") AND NOT "Baroque (17th century)")')
    assert g.matches(sg, '"either Gothic or Romanesque churches, but not Baroque (17th century)"')
    assert not g.matches(sg, '"gothic"')                 # case is the request's
    assert not g.matches(sg, '"Romanesque church"')      # a word cut short
    assert g.matches(sg, '"Gothic churches"')            # two phrases joined ("X or Y churches": "X churches")
    assert not g.matches(sg, '"Gothic Romanesque Baroque"')  # three
    assert not g.matches(sg, '"Gothic  churches"')       # joined by one space only
    assert not g.matches(sg, '"Baroque (17th cent"')     # an end inside a word
    rng = random.Random(0)
    for _ in range(200):
        parse(g.sample(sg, rng, max_depth=10_000))
    # the longest string: the bounded chains, each term the whole request twice
    whole = {**g.bounded_query_grammar(2, 3, 8), "term": ("lit", _quoted(request + " " + request))}
    assert g.max_length(sg) == g.max_length(whole)


def test_span_grammar_of_a_long_text_is_bounded_without_deep_recursion():
    words = [f"w{i}" for i in range(3000)]
    request = " ".join(words)
    sg = g.span_query_grammar(request, g.bounded_query_grammar(0, 1, 1))
    assert g.max_length(sg) == len("NOT ") + 2 * len(request) + 1 + 2  # two phrases, each the whole text
    text = g.to_gbnf(sg)
    assert text.count("::=") == len(sg)
    span_lines = [line for line in text.splitlines() if line.startswith("span")]
    assert len(span_lines) == 2 * len(words) - 1 and "phrase ::= " in text
    assert g.gbnf_for_llama_cpp("\n".join(span_lines)) == "\n".join(span_lines)  # span rule names need no renaming


def test_xgrammar_compiles_a_span_grammar():
    xg = pytest.importorskip("xgrammar", reason="xgrammar (vLLM's grammar backend) is not installed")
    xg.Grammar.from_ebnf(g.to_gbnf(g.span_query_grammar('cats, "dogs" and back\\slash (AMPK) \u00e9t\u00e9 中文')))
