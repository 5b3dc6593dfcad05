"""Few-shot examples chosen per request: the skeleton, the nearest-pair search (against a
brute-force oracle) and how the translator puts them into the prompt."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itlr_gpu.query import canonical, parse
from itlr_gpu.translate import grammar as g
from itlr_gpu.translate.examples import FUNCTION_WORDS, ExamplePool, default_pool, skeleton
from itlr_gpu.translate.llm import FEW_SHOT, VllmTranslator

from test_translate_vllm import ScriptedLLM

PAIRS = Path(__file__).parent / "data" / "translation_pairs.jsonl"


def test_skeleton_keeps_connectives_and_collapses_content_words():
    assert skeleton("either chemotherapy or radiotherapy for breast cancer") == \
        ["either", "_", "or", "_", "for", "_"]
    assert skeleton("Volcanoes, excluding Iceland and Hawaii") == ["_", ",", "excluding", "_", "and", "_"]
    assert skeleton("documents that don’t mention Brexit") == ["documents", "that", "don't", "mention", "_"]
    assert skeleton("") == []


def test_shipped_pool_is_the_dev_split_only_and_parses():
    rows = [json.loads(x) for x in PAIRS.read_text(encoding="utf-8").splitlines() if x.strip()]
    dev = {(r["text"], r["expr"]) for r in rows if r["split"] == "dev"}
    test = {r["text"] for r in rows if r["split"] == "test"}
    pool = default_pool()
    assert len(pool) > 100
    assert set(pool.pairs) <= dev
    assert not {t for t, _ in pool.pairs} & test
    for _, expr in pool.pairs:
        assert canonical(parse(expr)) == expr
        assert g.matches(g.QUERY_GRAMMAR, expr)


# ------------------------------------------------------------------ nearest pairs vs an oracle

def oracle_nearest(pairs, text, k):
    """Brute force, written from the definition: idf-weighted skeleton n-gram cosine + 0.1 x
    content-word Jaccard; ties by pool order; the query's own text excluded; closest last."""
    def feats(t):
        sk = ["<s>", *skeleton(t), "</s>"]
        return Counter(" ".join(sk[i:i + n]) for n in (1, 2, 3) for i in range(len(sk) - n + 1))

    def words(t):
        import re
        return {w for w in re.findall(r"[\w'’]+|[^\w\s]", t.lower()) if w[0].isalnum() and w not in FUNCTION_WORDS}

    pairs = [p for p in pairs if len(p[0]) <= 400]
    fs = [feats(t) for t, _ in pairs]
    n = len(pairs)
    idf = {key: math.log((1 + n) / (1 + sum(key in f for f in fs))) + 1 for f in fs for key in f}

    def vec(f):
        return {key: c * idf.get(key, math.log(1 + n) + 1) for key, c in f.items()}

    def cos(a, b):
        dot = sum(a[x] * b.get(x, 0) for x in a)
        na, nb = math.sqrt(sum(v * v for v in a.values())), math.sqrt(sum(v * v for v in b.values()))
        return dot / (na * nb) if na and nb else 0.0

    q = vec(feats(text))
    qw = words(text)
    scored = []
    for i, (t, e) in enumerate(pairs):
        if " ".join(t.lower().split()) == " ".join(text.lower().split()):
            continue
        w = words(t)
        jac = len(qw & w) / len(qw | w) if qw | w else 0.0
        scored.append((cos(q, vec(fs[i])) + 0.1 * jac, i))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [pairs[i] for _, i in scored[:k]][::-1]


WORDS = ["cats", "dogs", "tea", "coffee", "Rome", "Paris", "jazz", "opera", "tax", "law"]
GLUE = ["and", "or", "not", "but not", "either", "neither", "nor", "for", "in", "without", "other than", ","]
phrases = st.lists(st.sampled_from(WORDS + GLUE), min_size=1, max_size=8).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(phrases, min_size=1, max_size=12), phrases, st.integers(0, 6))
def test_nearest_matches_the_oracle(texts, query, k):
    pairs = [(t, f'"{i}"') for i, t in enumerate(texts)]
    got = ExamplePool(pairs).nearest(query, k)
    want = oracle_nearest(pairs, query, k)
    # equal up to exact score ties (float summation order may differ)
    assert len(got) == len(want) == min(k, sum(" ".join(t.lower().split()) != " ".join(query.lower().split())
                                               for t, _ in pairs))
    assert sorted(got) == sorted(want) or [skeleton(t) for t, _ in got] == [skeleton(t) for t, _ in want]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(GLUE), min_size=1, max_size=4), min_size=2, max_size=8, unique_by=tuple),
       st.data())
def test_same_connectives_with_other_topics_is_the_closest(glues, data):
    """A request whose connective pattern equals one pool entry's, about unrelated topics, gets
    that entry as its closest example."""
    def fill(glue, words):
        return " ".join(f"{w} {c}" for w, c in zip(words, glue)) + f" {words[-1]}"

    pairs = [(fill(gl, ["alpha"] * 5), f'"{i}"') for i, gl in enumerate(glues)]
    pick = data.draw(st.integers(0, len(glues) - 1))
    query = fill(glues[pick], ["zeta"] * 5)
    best = ExamplePool(pairs).nearest(query, 1)
    assert skeleton(best[0][0]) == skeleton(pairs[pick][0])


def test_nearest_excludes_the_request_itself_and_long_examples():
    pool = ExamplePool([("cats but not dogs", '("cats" AND NOT "dogs")'), ("x " * 300, '"x"'),
                        ("tea but not coffee", '("tea" AND NOT "coffee")')])
    assert len(pool) == 2
    assert pool.nearest("Cats  but not DOGS", 5) == [("tea but not coffee", '("tea" AND NOT "coffee")')]
    assert pool.nearest("anything", 0) == []


def test_representatives_cover_the_patterns_before_repeating_one():
    pairs = [("cats but not dogs", "1"), ("tea but not coffee", "2"), ("either jazz or opera", "3"),
             ("neither tax nor law", "4"), ("Rome and Paris", "5"), ("Rome, Paris and jazz", "6")]
    reps = ExamplePool(pairs).representatives(4)
    assert len(reps) == 4 and len(set(reps)) == 4
    # the two "_ but not _" requests have one skeleton: the other patterns come first
    assert not {("cats but not dogs", "1"), ("tea but not coffee", "2")} <= set(reps)
    assert ExamplePool(pairs).representatives(10) == ExamplePool(pairs).representatives(6)
    assert ExamplePool(pairs).representatives(0) == []


# ------------------------------------------------------------------ in the translator's prompt

def test_prompt_order_shared_then_fixed_then_nearest_then_request():
    llm = ScriptedLLM({"either chemotherapy or radiotherapy for breast cancer": '("a" OR "b")',
                       "cats but not dogs": '("cats" AND NOT "dogs")'})
    tr = VllmTranslator(llm=llm, examples=5, nearest=3)
    prompts = [tr.prompt(t) for t in llm.answers]
    pool = default_pool()
    shared = pool.representatives(5)
    for p, t in zip(prompts, llm.answers):
        near = pool.nearest(t, 3)
        assert len(near) == 3
        idx = [p.index(f"Request: {q}\nQuery: {a}\n") for q, a in (*shared, *FEW_SHOT, *near)]
        assert idx == sorted(idx)
        assert p.endswith(f"Request: {t}\nQuery:")
    # the shared and fixed examples sit in the prefix every request shares (batched engines prefill it once)
    common = next(i for i, (a, b) in enumerate(zip(*prompts)) if a != b)
    assert all(f"Request: {q}\n" in prompts[0][:common] for q, _ in (*shared, *FEW_SHOT))
    rows = tr.generate(list(llm.answers))
    assert [r.expr for r in rows] == ['("a" OR "b")', '("cats" AND NOT "dogs")']


def test_examples_are_in_the_cache_key_and_zero_gives_the_fixed_prompt():
    llm = ScriptedLLM({})
    fixed = VllmTranslator(llm=llm, examples=0, nearest=0)
    shared, near = VllmTranslator(llm=llm, examples=6), VllmTranslator(llm=llm, examples=0, nearest=4)
    assert len({fixed.prompt_version, shared.prompt_version, near.prompt_version}) == 3
    assert ":e=" not in fixed.prompt_version
    assert fixed.prompt("cats").count("Request: ") == len(FEW_SHOT) + 1
    assert shared.prompt("cats").count("Request: ") == len(FEW_SHOT) + 7
    assert near.prompt("cats").count("Request: ") == len(FEW_SHOT) + 5
    rewrite = VllmTranslator(llm=llm, mode="rewrite", examples=6, nearest=4)
    assert rewrite.examples == rewrite.nearest == 0 and ":e=" not in rewrite.prompt_version


@pytest.mark.parametrize("field", ["examples", "nearest"])
@pytest.mark.parametrize("bad", [-1, 1.5, "4", True])
def test_bad_example_counts_are_refused(field, bad):
    with pytest.raises(ValueError, match=field):
        VllmTranslator(llm=ScriptedLLM({}), **{field: bad})


def test_cli_refuses_a_negative_example_count(capsys):
    from itlr_gpu.cli import main

    assert main(["translate", "q.jsonl", "-o", "out.arrow", "--examples", "-2"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--examples" in err[0] and ">= 0" in err[0]
