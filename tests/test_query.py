"""Query language: precedence, chains, case, escapes, round trip and every error with its position."""

import re

import pytest
from hypothesis import given, settings, strategies as st

from itlr_gpu import InputError, QuerySyntaxError, canonical, parse
from itlr_gpu.query import MAX_DEPTH, MAX_QUERY_CHARS, And, Not, Or, Term, count_negations, terms

from strategies import asts

A, B, C, D = Term("a"), Term("b"), Term("c"), Term("d")


@pytest.mark.parametrize("text, expected", [
    ("a", A),
    ("a AND b", And((A, B))),
    ("a OR b AND c", Or((A, And((B, C))))),
    ("a AND b OR c", Or((And((A, B)), C))),
    ("NOT a AND b", And((Not(A), B))),
    ("NOT a OR NOT b AND c", Or((Not(A), And((Not(B), C))))),
    ("a AND b AND c AND d", And((A, B, C, D))),
    ("a OR b OR c", Or((A, B, C))),
    ("(a OR b) AND c", And((Or((A, B)), C))),
    ("NOT (a OR b)", Not(Or((A, B)))),
    ("NOT (NOT a)", Not(Not(A))),
    ("((a))", A),
    ("(a AND b) AND (c AND d)", And((A, B, C, D))),  # flat: AND is associative
    ("a and b Or not c", Or((And((A, B)), Not(C)))),  # keywords are case-insensitive
])
def test_precedence_chains_and_case(text, expected):
    assert parse(text) == expected


def test_bare_terms_merge_words_and_collapse_whitespace():
    assert parse("vitamin D benefits AND NOT bone health") == And(
        (Term("vitamin D benefits"), Not(Term("bone health"))))
    assert parse("  vitamin \t D\n benefits  ") == Term("vitamin D benefits")
    assert parse("Android OR notebook OR andes") == Or((Term("Android"), Term("notebook"), Term("andes")))


@pytest.mark.parametrize("space", ["\v", "\f", "\x1c", "\x85", "\u2028", "\u2029"])
def test_every_white_space_of_str_isspace_separates_and_no_term_keeps_a_line_break(space):
    """A PDF's form feed is white space (it was refused as a control character); a quoted term's U+2028 becomes a
    space, so the canonical form stays on one line for every line reader."""
    assert parse(f"page one{space}page two AND NOT x") == And((Term("page one page two"), Not(Term("x"))))
    form = canonical(parse(f'"line one{space}line two" AND x'))
    assert form == '("line one line two" AND "x")' and len(form.splitlines()) == 1


def test_other_control_characters_are_still_errors():
    with pytest.raises(QuerySyntaxError, match="control character"):
        parse("a\x01b")


def test_quoted_terms_and_escapes():
    assert parse('"a AND b"') == Term("a AND b")
    assert parse(r'"say \"hi\"" OR "back\\slash"') == Or((Term('say "hi"'), Term("back\\slash")))
    assert parse('"  spaced  " AND x') == And((Term("  spaced  "), Term("x")))
    assert parse('("not" OR "or")') == Or((Term("not"), Term("or")))


def test_typographic_double_quotes_quote_a_term():
    """Quotes pasted from a word processor quote like '"' (they were part of bare words, and the "and" inside
    an operator)."""
    want = And((Term("research and development"), Not(Term("defence"))))
    assert parse("\u201cresearch and development\u201d AND NOT \u201cdefence\u201d") == want
    assert parse("\u201eForschung und Entwicklung\u201c OR \u00abla recherche\u00bb") == \
        Or((Term("Forschung und Entwicklung"), Term("la recherche")))
    assert parse('\u201ca "b" c\u201d') == Term('a "b" c')          # no escapes inside
    assert parse("Alzheimer\u2019s disease AND '90s music") == And((Term("Alzheimer\u2019s disease"),
                                                                     Term("'90s music")))
    # apostrophes are characters of terms: elisions, possessives, inch marks
    assert parse("'90s music AND parents' guides") == And((Term("'90s music"), Term("parents' guides")))
    assert parse("'tis the season AND students' essays") == And((Term("'tis the season"), Term("students' essays")))
    assert parse("rock 'n' roll") == Term("rock 'n' roll")
    assert parse("12\u201d vinyl AND 7\u201d singles") == And((Term("12\u201d vinyl"), Term("7\u201d singles")))




def test_canonical_form():
    assert canonical(parse("a or b and not c")) == '("a" OR ("b" AND NOT "c"))'
    assert canonical(parse('x "y"'.replace(' "y"', ' AND "y\\"z"'))) == '("x" AND "y\\"z")'
    assert canonical(parse("NOT (NOT a)")) == 'NOT (NOT "a")'
    assert canonical(Term("a")) == '"a"'


@settings(max_examples=300, deadline=None)
@given(asts())
def test_printed_asts_reparse_to_themselves(node):
    text = canonical(node)
    assert parse(text) == node
    assert canonical(parse(text)) == text


def test_helpers():
    node = parse("a AND NOT (b OR NOT c) AND a")
    assert list(terms(node)) == ["a", "b", "c", "a"]
    assert count_negations(node) == 2


@pytest.mark.parametrize("text, position, fragment", [
    ("", 0, "empty query"),
    ("   \t ", 5, "empty query"),
    ("(a", 0, "'(' never closed"),          # the caret points at the '(' left open
    ("((a) AND b", 0, "'(' never closed"),
    ("a)", 1, "unbalanced ')'"),
    ("a AND b)", 7, "unbalanced ')'"),
    ('""', 0, "empty term"),
    ('a AND "  "', 6, "empty term"),
    ("()", 1, "empty parentheses"),
    ("a AND", 5, "dangling AND"),
    ("a OR ", 5, "dangling OR"),
    ("NOT", 3, "dangling NOT"),
    ("a AND AND b", 6, "doubled operator AND"),
    ("a OR and b", 5, "doubled operator AND"),
    ("NOT NOT a", 4, "doubled NOT"),
    ("AND a", 0, "AND without a left operand"),
    ("a \x00 b", 2, "control character"),
    ("a\x1bb", 1, "control character"),
    ('"open', 0, "unterminated quoted term"),
    (r'"bad \q"', 5, "invalid escape"),
    ('a "b"', 2, "two terms without an operator"),
    ("a (b)", 2, "unexpected '('"),
    ("(a) b", 4, "after ')'"),
    ("a NOT b", 2, "unexpected NOT"),
    # single-quoted phrases (apostrophes elsewhere are characters) and typographic quotes
    ("'rock and roll' OR jazz", 0, "single-quoted term"),
    ("jazz OR \u2018rock and roll\u2019", 8, "single-quoted term"),
    ("('rock and roll')", 1, "single-quoted term"),
    ("\u201copen AND x", 0, "unterminated quoted term"),
    ("a AND \u00ab \u00bb", 6, "empty term"),
])
def test_errors_carry_position_and_expectation(text, position, fragment):
    with pytest.raises(QuerySyntaxError) as info:
        parse(text)
    err = info.value
    assert err.position == position, str(err)
    assert fragment in err.message
    assert err.expected
    assert f"position {position}" in str(err)
    caret_line = err.caret().splitlines()[1]
    assert caret_line == " " * position + "^"


def test_a_dangling_not_expects_a_term_and_the_caret_counts_wide_characters():
    with pytest.raises(QuerySyntaxError) as info:
        parse("a AND NOT")
    assert info.value.expected == "a term or '('"             # not "NOT": a doubled NOT is refused
    with pytest.raises(QuerySyntaxError) as info:
        parse("日本語 ) b")
    assert info.value.position == 4
    assert info.value.caret().splitlines()[1] == " " * 7 + "^"   # three wide characters and a space
    assert info.value.short() == "unbalanced ')' at position 4, expected AND, OR or end of query"


def test_nesting_limit():
    ok = "(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH
    assert parse(ok) == A
    with pytest.raises(QuerySyntaxError, match="nested too deeply") as info:
        parse("(" * (MAX_DEPTH + 1) + "a" + ")" * (MAX_DEPTH + 1))
    assert info.value.position == MAX_DEPTH
    with pytest.raises(QuerySyntaxError, match="nested too deeply"):
        parse("NOT (" * 40 + "a" + ")" * 40)
    # far beyond the limit: still a QuerySyntaxError, never a RecursionError
    with pytest.raises(QuerySyntaxError):
        parse("(" * 5000 + "a" + ")" * 5000)


def test_length_limit():
    long_chain = " OR ".join(['"a"'] * (MAX_QUERY_CHARS // 7))   # (its canonical form adds only the parentheses)
    assert len(long_chain) <= MAX_QUERY_CHARS
    assert isinstance(parse(long_chain), Or) and parse(canonical(parse(long_chain))) == parse(long_chain)
    with pytest.raises(QuerySyntaxError, match=r"canonical form is 1399998 characters long"):
        parse(" OR ".join(["a"] * (MAX_QUERY_CHARS // 5)))   # 999,999 characters typed, each term to be quoted
    with pytest.raises(QuerySyntaxError, match="characters long") as info:
        parse("a" * (MAX_QUERY_CHARS + 1))
    assert info.value.position == MAX_QUERY_CHARS
    # the limit counts the canonical form too (its quotes, escaped '"' and '\\'), so an accepted query's canonical
    # form is accepted: a bare term at the limit, bare words with backslashes, ASCII quotes in a typographic term
    for query in ["a" * MAX_QUERY_CHARS, "x\\y " * (MAX_QUERY_CHARS // 4 - 1) + "z",
                  "\u201c" + 'say "hi" ' * (MAX_QUERY_CHARS // 9 - 1) + "\u201d"]:
        assert len(query) <= MAX_QUERY_CHARS
        with pytest.raises(QuerySyntaxError, match=r"canonical form is \d+ characters long"):
            parse(query)
    fits = "a" * (MAX_QUERY_CHARS - 2)
    assert parse(canonical(parse(fits))) == Term(fits)


def test_canonical_form_of_any_accepted_query_parses_back():
    # "a AND (b OR c AND (...))": one '(' per step as typed, two in the canonical form (every chain in
    # parentheses); the limit counts both, so an accepted query's canonical form is accepted too
    def chain(steps: int) -> str:
        q = "z"
        for i in range(steps):
            q = f"a{i} AND (b{i} OR {q})"
        return q

    fits = parse(chain(MAX_DEPTH // 2 - 1))
    assert parse(canonical(fits)) == fits
    too_deep = chain(MAX_DEPTH // 2 + 1)
    assert too_deep.count("(") <= MAX_DEPTH   # within the limit as typed ...
    with pytest.raises(QuerySyntaxError, match="nested too deeply") as info:
        parse(too_deep)   # ... not as written canonically: refused, with where the chain too deep starts
    assert too_deep[info.value.position:].startswith("a0 AND (b0 OR z)")   # the innermost chain: level 65
    # NOT (NOT x) is two levels in the canonical form, one NOT and one '('
    n = A
    for _ in range(MAX_DEPTH // 2):
        n = Not(n)
    assert parse(canonical(n)) == n



def test_ast_deeper_than_the_parser_takes_is_refused_everywhere():
    """An AST built by hand keeps the expression's nesting limit, as its canonical form writes it, so that every
    form the engine records parses back: canonical, parse and compile (which every search calls) refuse a deeper
    one with one message."""
    from itlr_gpu.compiler import compile_queries

    nots = A
    for _ in range(MAX_DEPTH // 2):
        nots = Not(nots)      # NOT (NOT ...): two levels each, the limit exactly
    chained = A
    for i in range(MAX_DEPTH):
        chained = And((Term(f"b{i}"), chained)) if i % 2 else Or((Term(f"c{i}"), chained))
    for fits in (nots, chained):
        assert parse(canonical(fits)) == fits and compile_queries([fits]).num_queries == 1
    for deeper in (Not(nots), And((Term("x"), Or((Term("y"), chained))))):
        for call in (canonical, parse, lambda n: compile_queries([n])):
            with pytest.raises(InputError, match="query AST nested too deeply .*at most 64 levels"):
                call(deeper)
    very = A
    for _ in range(5000):
        very = Not(very)
    with pytest.raises(InputError, match="nested too deeply"):   # walked without recursion
        compile_queries([very])
    for malformed in (And(None), Not(And(None))):   # the depth walk leaves them to the printer's checks
        with pytest.raises(InputError):
            canonical(malformed)
        with pytest.raises(InputError):
            compile_queries([malformed])


@given(asts(max_leaves=12))
@settings(max_examples=200, deadline=None)
def test_parse_of_canonical_is_a_fixed_point(ast):
    assert canonical(parse(canonical(ast))) == canonical(ast)


@pytest.mark.parametrize("text, message", [
    ("a\tb", r"holds '\\t'"), ("line1\nline2", r"holds '\\n'"), ("a\u2028b", r"holds '\\u2028'"),
    ("a\x01b", r"holds '\\x01'"), ("a\ud800", r"holds '\\ud800'"), ("\u200b", "only invisible characters"),
    ("\u200b \u00a0", "only invisible characters"), ("  ", "empty term"),
])
def test_a_hand_built_term_no_expression_can_spell_is_refused(text, message):
    """canonical() and the compiler (so search()) refuse a Term whose canonical form would not parse back to it: an
    expression reads a tab or a line break as a space, and refuses other control characters and invisible terms."""
    from itlr_gpu import InputError, compile_queries

    with pytest.raises(InputError, match=message):
        canonical(And((Term("x"), Term(text))))
    with pytest.raises(InputError, match=message):
        compile_queries([Not(Term(text))])


@given(st.text(min_size=1, max_size=12))
@settings(max_examples=300, deadline=None)
def test_a_hand_built_term_is_refused_or_parses_back(text):
    """Any text: canonical(Term(text)) is an InputError or parses back to Term(text)."""
    from itlr_gpu import InputError

    try:
        form = canonical(Term(text))
    except InputError:
        return
    assert parse(form) == Term(text)


def test_full_width_parentheses_group_and_full_width_quotes_quote():
    """CJK input methods type （ ） and ＂: read as word characters they changed the grouping without a word."""
    assert parse("\uff08a OR b\uff09 AND c") == And((Or((Term("a"), Term("b"))), Term("c")))
    assert parse("\uff02a AND b\uff02 OR c") == Or((Term("a AND b"), Term("c")))
    with pytest.raises(QuerySyntaxError, match="unexpected '\uff08' at position 2"):
        parse("\u6771\u4eac\uff08\u65e5\u672c\uff09")   # a term holding them is quoted
    assert parse('"\u6771\u4eac\uff08\u65e5\u672c\uff09"') == Term("\u6771\u4eac\uff08\u65e5\u672c\uff09")


def test_operators_apostrophes_and_invisible_characters():
    # an apostrophe's closing quote is not looked for past an operator in capitals: two terms
    assert parse("'s-Hertogenbosch history AND NOT farmers' markets") == \
        And((Term("'s-Hertogenbosch history"), Not(Term("farmers' markets"))))
    assert parse("'Ndrangheta OR teachers' unions") == Or((Term("'Ndrangheta"), Term("teachers' unions")))
    with pytest.raises(QuerySyntaxError, match="single-quoted term"):
        parse("'rock and roll'")   # (a lower-case "and" is a word of the phrase)
    # the way out names the user's own phrase
    for query, phrase in [("'heart disease' OR cancer", "heart disease"), ("jazz OR \u2018vitamin  D\u2019", "vitamin D"),
                          ("('x')", "x")]:
        with pytest.raises(QuerySyntaxError, match=re.escape(f'the term in double quotes ("{phrase}")')):
            parse(query)
    # a format character pasted beside a keyword leaves it a keyword
    assert parse("x AND NOT\u200b y") == And((Term("x"), Not(Term("y"))))
    assert parse("x \u2060OR y") == Or((Term("x"), Term("y")))
    # and beside a quote, a parenthesis or a bare word (a BOM of a file read without utf-8-sig, U+200B, a soft
    # hyphen) it is white space; inside a word it stays (an emoji's zero-width joiner)
    for query in ('\ufeff"a" AND "b"', '"a" AND "b"\ufeff', '"a"\u200b AND "b"', '"a" AND \u00ad "b"',
                  'a\u200b AND b', '\ufeffa AND (\u200bb)'):
        assert parse(query) == And((Term("a"), Term("b"))), query
    assert parse("x\u200dy AND z") == And((Term("x\u200dy"), Term("z")))
    # visible format characters stay: an emoji flag's tag characters, an Arabic number sign
    england = "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"
    assert parse(f"{england} AND z") == And((Term(england), Term("z")))
    assert parse("\u0600\u0661\u0662 AND z") == And((Term("\u0600\u0661\u0662"), Term("z")))
    with pytest.raises(QuerySyntaxError, match="dangling AND"):
        parse('"a" AND \u200b')
    # line breaks and tabs inside a quoted term are spaces: the canonical form is one line
    assert parse('"a\nb" OR "c\td" OR \u201ce\r\nf\u201d') == Or((Term("a b"), Term("c d"), Term("e f")))
    assert "\n" not in canonical('"a\nb" OR c')


@pytest.mark.parametrize("text, expected", [
    ('"a" "b"', "AND, OR or end of query"),          # no '(' is open: no ')' to expect
    ("(a) b", "AND, OR or end of query"),
    ("((a) b)", "AND, OR or ')'"),
    ('("a" "b")', "AND, OR or ')'"),
])
def test_what_may_follow_an_operand(text, expected):
    with pytest.raises(QuerySyntaxError) as info:
        parse(text)
    assert info.value.expected == expected


def test_natural_text_of_a_deep_ast():
    from itlr_gpu.query import natural_text

    assert natural_text(parse('"a" AND NOT ("b" OR "c")')) == "a and not (b or c)"
    assert natural_text(parse("a OR (b AND NOT (c OR d)) OR e")) == "a or (b and not (c or d)) or e"
    n = A
    for _ in range(5000):   # deeper than Python's recursion limit: built by hand, not parsed
        n = Not(n)
    assert natural_text(n) == "not " * 5000 + "a"
