"""Reference scorer: equals a direct numpy evaluation on random data for every operator family; ties; k > N."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from itlr_gpu import Ops, compile_queries
from itlr_gpu.backends.reference import chunk_for_budget, chunk_top, search_reference
from itlr_gpu.compiler import evaluate_postfix
from itlr_gpu.ops import AND_FAMILIES, NOT_FAMILIES, OR_FAMILIES

from strategies import small_vocab_asts

ALL_OPS = [Ops(a, o, n) for a in AND_FAMILIES for o in OR_FAMILIES for n in NOT_FAMILIES]


def unit_rows(rng, n, d, dtype=np.float32):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(dtype)


def numpy_topk(docs, terms, program, ops, k):
    """The direct evaluation: full score matrix in numpy, lexsort by (-score, row)."""
    sims = terms.astype(np.float32) @ docs.astype(np.float32).T  # T x N
    k = min(k, docs.shape[0])
    scores, rows = [], []
    for q in range(program.num_queries):
        s = np.asarray(evaluate_postfix(program, q, sims, ops), dtype=np.float32)
        order = np.lexsort((np.arange(len(s)), -s))[:k]
        scores.append(s[order])
        rows.append(order)
    return np.array(scores), np.array(rows)


def assert_same_topk(got, want, atol=1e-5, rtol=1e-5):
    gs, gr = got
    ws, wr = want
    assert gs.shape == ws.shape and gr.shape == wr.shape
    np.testing.assert_allclose(gs, ws, rtol=rtol, atol=atol)
    for q in range(len(wr)):
        if not np.array_equal(gr[q], wr[q]):
            # only documents with (numerically) equal scores may swap places
            diff = gr[q] != wr[q]
            assert np.allclose(gs[q][diff], ws[q][diff], rtol=rtol, atol=atol), (q, gr[q], wr[q])


def rtol_for(ops: Ops) -> float:
    """Tolerance between two float32 matmuls (torch vs numpy sum in different orders, ~1e-7 apart).
    ``reciprocal`` NOT amplifies that: d(1/x) = -dx / x^2, so next to its floor (x = 1e-3, NOT = 1000)
    a 1e-7 difference in a similarity is a 1e-4 relative difference in the score."""
    return 1e-3 if ops.not_ == "reciprocal" else 1e-5


@settings(max_examples=60, deadline=None)
@given(st.lists(small_vocab_asts(), min_size=1, max_size=7), st.sampled_from(ALL_OPS),
       st.integers(1, 300), st.integers(1, 40), st.sampled_from([1, 7, 64]), st.integers(0, 2**31 - 1))
def test_reference_equals_numpy(nodes, ops, n, k, chunk, seed):
    rng = np.random.default_rng(seed)
    program = compile_queries(nodes)
    docs = unit_rows(rng, n, 16)
    terms = unit_rows(rng, len(program.terms), 16)
    got = search_reference(docs, terms, program, ops, k, chunk_size=chunk)
    assert_same_topk(got, numpy_topk(docs, terms, program, ops, k), rtol=rtol_for(ops))


@pytest.mark.parametrize("ops", ALL_OPS, ids=str)
def test_every_family_on_float16_index(ops):
    rng = np.random.default_rng(0)
    program = compile_queries(["a AND NOT b", "(a OR c) AND NOT (b OR d)", "a", "NOT a OR b AND c"])
    docs = unit_rows(rng, 500, 32, np.float16)
    terms = unit_rows(rng, len(program.terms), 32)
    got = search_reference(docs, terms, program, ops, 20, chunk_size=96)
    assert_same_topk(got, numpy_topk(docs, terms, program, ops, 20), rtol=rtol_for(ops))


def test_ties_go_to_the_lower_row_across_chunks():
    rng = np.random.default_rng(1)
    base = unit_rows(rng, 4, 8)
    docs = np.repeat(base, 25, axis=0)  # rows 0..24 identical, 25..49 identical, ...
    rng.shuffle(docs)
    program = compile_queries(["a", "a AND NOT b", "a OR b"])
    terms = unit_rows(rng, 2, 8)
    for chunk in (1, 3, 10, 100):
        scores, rows = search_reference(docs, terms, program, Ops(), 30, chunk_size=chunk)
        for q in range(3):
            for i in range(29):
                assert scores[q, i] > scores[q, i + 1] or (scores[q, i] == scores[q, i + 1] and rows[q, i] < rows[q, i + 1])
        want = numpy_topk(docs, terms, program, Ops(), 30)
        np.testing.assert_array_equal(rows, want[1])


def test_all_equal_scores_give_rows_in_order():
    docs = np.tile(np.array([[1.0, 0.0]], np.float32), (50, 1))
    program = compile_queries(["x"])
    terms = np.array([[0.0, 1.0]], np.float32)  # similarity 0 everywhere
    scores, rows = search_reference(docs, terms, program, Ops(), 10, chunk_size=7)
    assert rows.tolist() == [list(range(10))]
    assert np.all(scores == 0)


def test_k_larger_than_corpus_returns_whole_corpus():
    rng = np.random.default_rng(2)
    docs = unit_rows(rng, 13, 8)
    program = compile_queries(["a AND NOT b"])
    terms = unit_rows(rng, 2, 8)
    scores, rows = search_reference(docs, terms, program, Ops(), 1000, chunk_size=4)
    assert rows.shape == (1, 13)
    assert sorted(rows[0].tolist()) == list(range(13))
    assert np.all(np.diff(scores[0]) <= 0)


def test_single_term_query_is_dense_retrieval():
    rng = np.random.default_rng(3)
    docs = unit_rows(rng, 200, 16)
    q = unit_rows(rng, 1, 16)
    scores, rows = search_reference(docs, q, compile_queries(["only"]), Ops(), 5)
    want = np.argsort(-(docs @ q[0]), kind="stable")[:5]
    np.testing.assert_array_equal(rows[0], want)
    np.testing.assert_allclose(scores[0], (docs @ q[0])[want], rtol=1e-6)


def test_chunk_top_with_ties_at_the_boundary():
    scores = torch.tensor([[0.5, 0.9, 0.5, 0.5, 0.1, 0.9]])
    values, cols = chunk_top(scores, 3)
    assert cols.tolist() == [[1, 5, 0]]
    assert values[0].tolist() == pytest.approx([0.9, 0.9, 0.5])


def test_chunk_budget_formula():
    c = chunk_for_budget(d=384, num_terms=768, num_queries=256, max_depth=2, budget_bytes=256 << 20)
    assert 4 * c * (2 * 384 + 768 + 256 * 5) <= 256 << 20
    assert chunk_for_budget(4, 1, 1, 1, budget_bytes=1) == 256  # floor


def test_cpu_chunks_keep_the_similarity_block_in_cache():
    from itlr_gpu.backends.reference import CPU_SIMS_BYTES, MIN_CHUNK

    budget = chunk_for_budget(384, 768, 256, 2)
    cpu = chunk_for_budget(384, 768, 256, 2, cpu=True)
    assert cpu < budget and 4 * 768 * cpu <= CPU_SIMS_BYTES < 4 * 768 * (cpu + 1)
    assert chunk_for_budget(384, 8, 8, 1, cpu=True) == chunk_for_budget(384, 8, 8, 1)   # few terms: the budget's
    assert chunk_for_budget(384, 10**6, 1, 1, cpu=True) == MIN_CHUNK                   # the floor still holds
