"""Aligning an LLM's terms with the request's words (itlr_gpu/translate/spans.py)."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from itlr_gpu.query import And, Not, Or, Term, canonical, parse
from itlr_gpu.translate import translate
from itlr_gpu.translate.llm import interpret
from itlr_gpu.translate.spans import align_term, align_terms


def test_case_and_article_come_from_the_request():
    req = "colonialism in Africa except the Belgian Congo"
    assert align_term("belgian congo", req) == "the Belgian Congo"
    assert align_term("Colonialism in africa", req) == "colonialism in Africa"
    assert align_term("the Belgian Congo", req) == "the Belgian Congo"
    assert align_term("An apple", "eat an apple a day") == "an apple"
    assert align_term("day", "eat an apple a day") == "a day"


def test_terms_not_in_the_request_are_left_alone():
    req = "Why did the Roman Republic fall?"
    assert align_term("why the Roman Republic fell", req) == "why the Roman Republic fell"
    # word boundaries: "cat" is not the start of "category", "he" not the end of "the"
    assert align_term("cat", "category theory") == "cat"
    assert align_term("he", "the sea") == "he"
    # "bathe" ends with "the" but is no article
    assert align_term("water", "bathe water") == "water"


def test_first_occurrence_wins():
    assert align_term("rome", "Rome, not the rome of legend") == "Rome"


def test_structure_is_unchanged():
    node = parse('("ming dynasty" OR NOT ("qing dynasty" AND "Art"))')
    got = align_terms(node, "either the Ming dynasty or the Qing dynasty art")
    assert canonical(got) == '("the Ming dynasty" OR NOT ("the Qing dynasty" AND "art"))'


def test_interpret_aligns_only_with_a_request():
    assert interpret('"rust memory safety"', "stop").expr == '"rust memory safety"'
    r = interpret('("rust memory safety" AND NOT "gc")', "stop", request="Rust memory safety but not GC")
    assert r.expr == '("Rust memory safety" AND NOT "GC")'
    # rewrites are sentences of the model's own: never aligned
    r = interpret("rust memory safety", "stop", mode="rewrite", request="Rust memory safety")
    assert r.expr == '"rust memory safety"'


def test_translator_aligns_each_row_with_its_own_request():
    class LLM:
        def generate(self, prompts, params, use_tqdm=False):
            return [SimpleNamespace(outputs=[SimpleNamespace(text='("world cup" AND NOT "2022 final")',
                                                             finish_reason="stop")])] * len(prompts)

    rows = translate(["World Cup history except the 2022 final", "the world cup, not the 2022 final"],
                     translator="vllm", llm=LLM(), cache=False)
    assert [r.expr for r in rows] == ['("World Cup" AND NOT "the 2022 final")',
                                      '("the world cup" AND NOT "the 2022 final")']


words = st.sampled_from(["the", "a", "an", "Rome", "rome", "Ming", "dynasty", "of", "AI", "art", "bathe", "café"])


@settings(max_examples=300, deadline=None)
@given(st.lists(words, min_size=1, max_size=10), st.data())
def test_a_span_with_its_case_changed_aligns_back(ws, data):
    """The oracle works on the word list: the first run of words equal to the span (ignoring
    case), with the article before it when the span does not start with one."""
    req = " ".join(ws)
    i = data.draw(st.integers(0, len(ws) - 1))
    j = data.draw(st.integers(i + 1, len(ws)))
    span = ws[i:j]
    flip = data.draw(st.sampled_from([str.lower, str.upper, str.title, lambda s: s]))
    got = align_term(flip(" ".join(span)), req)
    lows, n = [w.lower() for w in ws], len(span)
    k = next(k for k in range(len(ws)) if lows[k:k + n] == [w.lower() for w in span])
    if k > 0 and lows[k - 1] in ("the", "a", "an") and lows[k] not in ("the", "a", "an"):
        k, n = k - 1, n + 1
    assert got == " ".join(ws[k:k + n])
    assert align_term(got, req) == got  # idempotent


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.sampled_from(["rome", "ming dynasty", "x"]).map(Term),
                    lambda c: st.one_of(c.map(Not), st.lists(c, min_size=2, max_size=3).map(lambda k: And(tuple(k))),
                                        st.lists(c, min_size=2, max_size=3).map(lambda k: Or(tuple(k)))),
                    max_leaves=6))
def test_alignment_keeps_the_shape(node):
    def shape(n):
        if isinstance(n, Term):
            return "t"
        if isinstance(n, Not):
            return ("not", shape(n.child))
        return (type(n).__name__, tuple(shape(c) for c in n.children))

    got = align_terms(node, "Rome and the Ming dynasty")
    assert shape(got) == shape(node)
