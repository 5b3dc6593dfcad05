"""The numba backend (fused CPU scoring + top-k) against its oracle, the torch reference: equal results
(same BLAS, same chunks, same float32 arithmetic, same tie rule) for every operator family, the scoring
options' linear form, ties, k > N, float16 documents, serial and parallel loops."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from itlr_gpu import Ops, compile_queries  # noqa: E402
from itlr_gpu.backends import TorchBackend, get_backend  # noqa: E402
from itlr_gpu.backends.cpu_fused import NumbaBackend, search_fused  # noqa: E402
from itlr_gpu.errors import InputError  # noqa: E402
from itlr_gpu.ops import AND_FAMILIES, NOT_FAMILIES, OR_FAMILIES  # noqa: E402
from itlr_gpu.scoring import RECOMMENDED, ScoreOptions  # noqa: E402

from strategies import small_vocab_asts  # noqa: E402
from test_scoring import options_st  # noqa: E402

ALL_OPS = [Ops(a, o, n) for a in AND_FAMILIES for o in OR_FAMILIES for n in NOT_FAMILIES]
CPU = torch.device("cpu")


def unit_rows(rng, n, d, dtype=np.float32):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(dtype)


def assert_equal_topk(got, want):
    assert got[0].shape == want[0].shape and got[1].shape == want[1].shape
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@settings(max_examples=80, deadline=None)
@given(st.lists(small_vocab_asts(), min_size=1, max_size=7), st.sampled_from(ALL_OPS), st.integers(1, 300),
       st.integers(1, 40), st.sampled_from([None, 1, 7, 64, 1000]), st.sampled_from([np.float32, np.float16]),
       st.integers(0, 5), st.booleans(), st.integers(0, 2**31 - 1))
def test_equals_the_reference(nodes, ops, n, k, chunk, dtype, dup, parallel, seed):
    rng = np.random.default_rng(seed)
    program = compile_queries(nodes)
    docs = unit_rows(rng, n, 16, dtype)
    if dup:  # repeated documents: exact ties, broken by the lower row
        docs[rng.integers(0, n, dup)] = docs[rng.integers(0, n)]
    terms = unit_rows(rng, len(program.terms), 16)
    want = TorchBackend().search(docs, terms, program, ops, k, device=CPU, chunk_size=chunk)
    got = NumbaBackend().search(docs, terms, program, ops, k, device=CPU, chunk_size=chunk)
    assert_equal_topk(got, want)
    if parallel:
        a, b = np.ones(len(program.opcodes), np.float32), np.zeros(len(program.opcodes), np.float32)
        size = chunk or 64
        want = TorchBackend().search(docs, terms, program, ops, k, device=CPU, chunk_size=size)
        assert_equal_topk(search_fused(docs, terms, program, ops, k, a, b, chunk_size=size, parallel=True), want)


@settings(max_examples=60, deadline=None)
@given(st.lists(small_vocab_asts(), min_size=1, max_size=5), options_st.filter(lambda o: o.calibration != "percentile"),
       st.sampled_from(ALL_OPS[:6]), st.integers(2, 200), st.integers(1, 25), st.sampled_from([None, 16, 128]),
       st.integers(0, 2**31 - 1))
def test_scoring_options_equal_the_reference(nodes, opt, ops, n, k, chunk, seed):
    """The linear form (calibration, guard, hybrid epilogue) runs in the fused loop with the reference's
    per-literal affines: the same numbers."""
    rng = np.random.default_rng(seed)
    program = compile_queries(nodes)
    docs = unit_rows(rng, n, 16)
    terms = unit_rows(rng, len(program.terms), 16)
    whole = unit_rows(rng, program.num_queries, 16)
    want = TorchBackend().search_with_options(docs, terms, program, ops, k, opt, whole, device=CPU, chunk_size=chunk)
    got = NumbaBackend().search_with_options(docs, terms, program, ops, k, opt, whole, device=CPU, chunk_size=chunk)
    assert_equal_topk(got, want)


def test_recommended_and_percentile():
    rng = np.random.default_rng(3)
    program = compile_queries(['"a" AND NOT "b"', '"c" OR ("a" AND "d")', '"e"'])
    docs = unit_rows(rng, 500, 32)
    terms = unit_rows(rng, len(program.terms), 32)
    whole = unit_rows(rng, 3, 32)
    for opt in (RECOMMENDED, ScoreOptions(calibration="percentile")):
        want = TorchBackend().search_with_options(docs, terms, program, Ops(), 10, opt, whole, device=CPU)
        got = NumbaBackend().search_with_options(docs, terms, program, Ops(), 10, opt, whole, device=CPU)
        assert_equal_topk(got, want)


@pytest.mark.parametrize("ops", ALL_OPS, ids=str)
@pytest.mark.parametrize("query", ['"n" OR "a"', '"a" OR "n"', '"n" AND "a"', '"a" AND "n"', 'NOT "n"',
                                   '"a" AND NOT "n"'])
def test_a_nan_on_either_side_of_every_operator_stays_nan(ops, query):
    """A NaN similarity (term "n"'s vector is NaN) survives every operator on either side, as in torch: min and max
    propagate it (Python's max(a, nan) is a, which once turned a NaN on the right of OR = max into a ranking), and
    so does the reciprocal NOT's floor.  The backends rank it first as +inf, and the engine refuses the search."""
    rng = np.random.default_rng(3)
    program = compile_queries([query])
    docs = unit_rows(rng, 40, 8)
    terms = unit_rows(rng, len(program.terms), 8)
    terms[program.terms.index("n")] = np.nan
    want = TorchBackend().search(docs, terms, program, ops, 5, device=CPU)
    got = NumbaBackend().search(docs, terms, program, ops, 5, device=CPU)
    assert np.isinf(want[0][0, 0])
    assert_equal_topk(got, want)


def test_k_above_n_and_empty_corpus_shapes():
    rng = np.random.default_rng(0)
    program = compile_queries(['"a" OR NOT "b"', '"c"'])
    docs = unit_rows(rng, 5, 8)
    terms = unit_rows(rng, 3, 8)
    s, r = NumbaBackend().search(docs, terms, program, Ops(), 50, device=CPU)
    assert s.shape == r.shape == (2, 5)
    assert sorted(r[0]) == list(range(5))
    s, r = NumbaBackend().search(docs[:0], terms, program, Ops(), 5, device=CPU)
    assert s.shape == r.shape == (2, 0)


def test_numba_backend_refuses_a_gpu():
    assert get_backend("numba", CPU).name == "numba"
    with pytest.raises(InputError, match="numba backend runs on the CPU"):
        get_backend("numba", torch.device("cuda"))


@pytest.mark.parametrize("k", [1, 100, 2500])
def test_large_k_with_many_ties(k):
    """The heap under load: k near N, scores rounded to a few values (ties everywhere), several chunks."""
    rng = np.random.default_rng(k)
    program = compile_queries(['"a" AND NOT "b"', '"c" OR "a"', '"b"'])
    docs = unit_rows(rng, 4000, 8)
    docs[::3] = docs[0]                      # a third of the corpus is one document
    terms = unit_rows(rng, 3, 8)
    want = TorchBackend().search(docs, terms, program, Ops(), k, device=CPU, chunk_size=700)
    got = NumbaBackend().search(docs, terms, program, Ops(), k, device=CPU, chunk_size=700)
    assert_equal_topk(got, want)


@settings(max_examples=25, deadline=None)
@given(st.lists(small_vocab_asts(), min_size=1, max_size=4), st.sampled_from(ALL_OPS), st.integers(257, 3000),
       st.integers(1, 12), st.sampled_from([None, 300, 1024]), st.sampled_from(["random", "rising", "ties"]),
       st.integers(0, 2**31 - 1))
def test_block_skipping_equals_the_reference(nodes, ops, n, k, chunk, layout, seed):
    """Corpora of several 256-document blocks, so that blocks are skipped once a query's top-k is full:
    random order, similarities rising along the corpus (every block holds new entrants) and long runs of
    one document (ties at the k-th score, where the strict comparison decides)."""
    rng = np.random.default_rng(seed)
    program = compile_queries(nodes)
    docs = unit_rows(rng, n, 16)
    terms = unit_rows(rng, len(program.terms), 16)
    if layout == "rising":
        docs = docs[np.argsort(docs @ terms[0])]
    elif layout == "ties":
        docs[rng.integers(0, n, n // 2)] = docs[rng.integers(0, n)]
    want = TorchBackend().search(docs, terms, program, ops, k, device=CPU, chunk_size=chunk)
    got = NumbaBackend().search(docs, terms, program, ops, k, device=CPU, chunk_size=chunk)
    assert_equal_topk(got, want)
