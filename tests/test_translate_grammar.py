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
