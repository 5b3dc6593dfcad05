"""The quality benchmark's composition shapes: set logic, generated families, renderings."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.quality import queries as qq  # noqa: E402
from itlr_gpu.query import parse  # noqa: E402
from itlr_gpu.translate.rules import try_translate_rules  # noqa: E402

PHRASES = ["vitamin d benefits", "bone health", "coffee consumption", "sleep quality", "heart disease",
           "air pollution", "gene expression", "insulin resistance"]


def _key(node):
    """Order-insensitive form (AND / OR operands in any order)."""
    from itlr_gpu.query import And, Not, Term

    if isinstance(node, Term):
        return ("T", node.text)
    if isinstance(node, Not):
        return ("N", _key(node.child))
    return ("A" if isinstance(node, And) else "O", tuple(sorted((_key(c) for c in node.children), key=repr)))


def test_shapes_cover_the_issue_families():
    names = {s.name for s in qq.shapes()}
    assert {"a OR b OR c", "a OR b OR c OR d", "a OR (b AND NOT c)", "NOT a AND b", "(a OR b) AND (c OR d)"} <= names
    gen = qq.generated_shapes()
    assert len(gen) == 3 and all(s.generated for s in gen)
    assert [s.name for s in gen] == [s.name for s in qq.generated_shapes()]  # fixed seed: same families every run
    assert all(4 <= len(s.slots) <= 5 and s.n_neg >= 1 for s in gen)
    every = [s.name for s in qq.shapes()] + [name for name, _, _ in qq.FAMILIES]
    keys = [_key(parse(n)) for n in every]
    assert len(set(keys)) == len(keys), "a family is listed twice"


def test_every_shape_is_anchored_and_a_broad_one_is_not():
    assert all(s.anchored() for s in qq.shapes())
    assert not qq.Shape("a OR NOT b").anchored()
    assert not qq.Shape("(a OR NOT b) AND NOT c").anchored()


qrels_st = st.lists(st.dictionaries(st.sampled_from([f"d{i}" for i in range(12)]), st.integers(1, 2), max_size=8),
                    min_size=4, max_size=4)


@settings(max_examples=200, deadline=None)
@given(qrels_st)
def test_shape_answer_equals_the_hand_written_families(rels):
    """The general set logic reproduces the six hand-written families' answers exactly (the oracle)."""
    for name, n_terms, _ in qq.FAMILIES:
        assert qq.shape_answer(qq.Shape(name), rels[:n_terms]) == qq._answer(name, rels[:n_terms]), name


@settings(max_examples=100, deadline=None)
@given(qrels_st)
def test_shape_answer_is_set_logic(rels):
    """Brute force over each document: relevant to a positive slot and satisfying the shape."""
    for shape in qq.shapes():
        if len(shape.slots) > len(rels):
            continue
        r = rels[:len(shape.slots)]
        got = qq.shape_answer(shape, r)
        pos = shape.positive()
        for d in {d for x in r for d in x}:
            truth = {qq._SLOTS[i]: d in x for i, x in enumerate(r)}
            want = any(d in r[i] for i in pos) and shape.holds(truth)
            assert (d in got) == want, (shape.name, d)
            if want:
                assert got[d] == max(r[i].get(d, 0) for i in pos)


@pytest.mark.parametrize("shape", qq.shapes(), ids=lambda s: s.name)
def test_renderings_translate_back_with_the_rules(shape):
    """The natural-language rendering means the shape: the rules translator reads it back (any phrasing)."""
    rng = random.Random(shape.name)
    for _ in range(40):
        texts = rng.sample(PHRASES, len(shape.slots))
        gold = qq.shape_expr(shape, texts)
        text = qq.shape_text(shape, texts, rng)
        ast, err = try_translate_rules(text)
        assert ast is not None, (text, err)
        assert _key(ast) == _key(gold), (text, ast, gold)


def test_negation_first_is_written_negation_first():
    rng = random.Random(0)
    text = qq.shape_text(qq.Shape("NOT a AND b"), ["x rays", "bone density"], rng)
    assert text.index("x rays") < text.index("bone density") and text.startswith("not")


def test_shape_queries_keep_no_vacuous_slot():
    rng = np.random.default_rng(0)
    n = 60
    qids = [f"q{i}" for i in range(n)]
    texts = {q: f"query {i} about topic {i % 7}" for i, q in enumerate(qids)}
    docs = [f"d{i}" for i in range(80)]
    qrels = {q: {d: int(rng.integers(1, 3)) for d in rng.choice(docs, size=6, replace=False)} for q in qids}
    vecs = rng.normal(size=(n, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    out, counts = qq.shape_queries(texts, qrels, vecs, qids, per_family=5, seed=0, prefix="t", start=100)
    assert out and set(counts) == {s.name for s in qq.shapes()}
    assert out[0].query_id == "t00101" and len({q.query_id for q in out}) == len(out)
    by_text = {qq._clean(texts[q]): q for q in qids}
    for q in out:
        shape = qq.Shape(q.family)
        assert q.qrels and len(qq._terms(q.ast)) == len(shape.slots)
        # Rebuild the slot order from the AST and check: each slot changes the answer when emptied.
        slot_texts = [None] * len(shape.slots)
        for tpl, real in zip(qq._terms(shape.ast), qq._terms(q.ast)):
            slot_texts[qq._SLOTS.index(tpl.text)] = real.text
        rels = [qrels[by_text[t]] for t in slot_texts]
        assert qq.shape_answer(shape, rels) == q.qrels
        for i in range(len(rels)):
            assert qq.shape_answer(shape, rels[:i] + [{}] + rels[i + 1:]).keys() != q.qrels.keys()
        assert q.n_neg == shape.n_neg
