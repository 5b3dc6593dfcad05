"""The fused Triton kernel against the torch reference (``search_reference``).

Without a GPU the *unchanged* kernel source runs in Triton's interpreter
(TRITON_INTERPRET=1 is set below before triton is imported; if some earlier
test module already imported triton compiled, the file re-runs itself in a
child process).  With a GPU the same tests run the compiled kernel on CUDA.

Comparison: same top-k rows up to exact ties and near-ties (a swap is accepted
only between documents whose reference scores are within tolerance), scores
within float32 tolerance.  The term embeddings are made exactly representable
in the document dtype (the kernel's dot takes the documents' dtype), so the
only differences left are float32 summation order:

    interpreter, every dtype:     rtol 5e-4, atol 2e-5
    GPU fp16 / bf16 (one pass):   rtol 5e-4, atol 2e-5
    GPU fp32 (tf32x3):            rtol 2e-3, atol 1e-4
(rtol, not atol, dominates only for NOT=reciprocal, whose 1/x amplifies a 1e-7
similarity difference up to 1e6-fold near the 1e-3 floor.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

if "triton" not in sys.modules and not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from itlr_gpu import Ops, compile_queries  # noqa: E402
from itlr_gpu.backends.reference import search_reference  # noqa: E402
from itlr_gpu.ops import AND_FAMILIES, NOT_FAMILIES, OR_FAMILIES  # noqa: E402
from itlr_gpu.query import Not, Term, make_and, make_or  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from oracles import eval_linear  # noqa: E402
from strategies import small_vocab_asts  # noqa: E402

pytest.importorskip("triton")
from itlr_gpu.kernels import interpreter_ready, kernel_module  # noqa: E402

ON_GPU = torch.cuda.is_available()
IN_PROCESS = ON_GPU or interpreter_ready(allow_set_env=False)
DEVICE = "cuda" if ON_GPU else "cpu"
ALL_OPS = [Ops(a, o, n) for a in AND_FAMILIES for o in OR_FAMILIES for n in NOT_FAMILIES]
TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}
SMALL = dict(block_n=32, block_q=16, block_d=32)  # small tiles: fast under the interpreter

if not IN_PROCESS:
    def test_in_child_process():
        """triton was imported compiled before this module: run the file with the interpreter on (started by
        conftest.py right after collection, so that it runs beside the rest of the suite; under pytest-xdist,
        where the workers fill the cores, started here)."""
        from conftest import interpreted_kernel_child as child

        if "proc" not in child:  # pytest-xdist, or collected in an unusual way: run it now
            env = dict(os.environ, TRITON_INTERPRET="1")
            proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__],
                                  env=env, capture_output=True, text=True,
                                  cwd=os.path.dirname(os.path.dirname(__file__)))
            assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
            return
        rc = child["proc"].wait(timeout=3600)
        child["log"].seek(0)
        out = child["log"].read()
        assert rc == 0, out[-9000:]
        assert " passed" in out, out[-3000:]

    pytestmark = []
else:
    K = kernel_module(interpret=not ON_GPU)


def tolerance(dtype: str) -> tuple[float, float]:
    if ON_GPU and dtype == "float32":
        return 2e-3, 1e-4
    return 5e-4, 2e-5


def unit_rows(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def as_dtype(x: np.ndarray, dtype: str) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(TORCH_DTYPES[dtype])


def representable(terms: np.ndarray, dtype: str) -> np.ndarray:
    """Terms rounded to the document dtype (what the kernel's dot sees), back in float32."""
    return as_dtype(terms, dtype).float().numpy()


def run_both(docs: torch.Tensor, terms: np.ndarray, program, ops, k, **kw):
    got_s, got_r = K.fused_search(docs.to(DEVICE), terms, program, ops, k, **kw)
    want = search_reference(docs, terms, program, ops, k)
    return (got_s.cpu().numpy(), got_r.cpu().numpy()), want


def assert_topk_matches(got, want, docs, terms, program, ops, rtol, atol):
    """Rows equal up to (near-)ties; scores within tolerance; order (score desc, row asc)."""
    gs, gr = got
    ws, wr = want
    assert gs.shape == ws.shape and gr.shape == wr.shape, (gs.shape, ws.shape)
    assert gs.dtype == np.float32 and gr.dtype == np.int64
    n = docs.shape[0]
    np.testing.assert_allclose(gs, ws, rtol=rtol, atol=atol)
    if gr.size == 0:
        return
    all_s, all_r = search_reference(docs, terms, program, ops, n)      # every document's reference score
    ref = np.empty_like(all_s)
    np.put_along_axis(ref, all_r, all_s, axis=1)
    for q in range(gs.shape[0]):
        rows = gr[q]
        assert len(set(rows.tolist())) == len(rows), f"query {q}: duplicate rows"
        assert rows.min() >= 0 and rows.max() < n
        # every returned score is that document's score
        np.testing.assert_allclose(gs[q], ref[q, rows], rtol=rtol, atol=atol, err_msg=f"query {q}")
        # sorted by score desc, then row asc among exactly equal scores
        assert np.all(np.diff(gs[q]) <= 0), f"query {q}: not sorted"
        eq = gs[q][1:] == gs[q][:-1]
        assert np.all(rows[1:][eq] > rows[:-1][eq]), f"query {q}: ties not by ascending row"
        # rows differ from the reference only among near-ties of the k-th score
        kth = ws[q, -1]
        tol = atol + rtol * abs(kth)
        must = set(np.nonzero(ref[q] > kth + tol)[0].tolist())
        assert must <= set(rows.tolist()), f"query {q}: missing clear winners {sorted(must - set(rows.tolist()))}"
        assert np.all(ref[q, rows] >= kth - tol), f"query {q}: returned a clear loser"
        for g, w, gsc, wsc in zip(rows, wr[q], gs[q], ws[q]):
            if g != w:
                assert abs(ref[q, g] - ref[q, w]) <= atol + rtol * abs(wsc) * 2, f"query {q}: swap {g}<->{w}"


def check(docs_np, terms, program, ops, k, dtype="float32", **kw):
    docs = as_dtype(docs_np, dtype)
    terms = representable(terms, dtype)
    got, want = run_both(docs, terms, program, ops, k, **kw)
    rtol, atol = tolerance(dtype)
    assert_topk_matches(got, want, docs, terms, program, ops, rtol, atol)
    return got, want


MIXED = ['"a"', 'NOT "b"', '"a" AND "b"', '"a" OR NOT "c"', 'NOT ("b" AND "d") OR "e"',
         '("a" OR "b") AND NOT ("c" OR ("d" AND NOT "e"))', '"c" AND "d" AND "e" AND "a"',
         'NOT (NOT "d")', '("a" AND "b") OR ("c" AND "d") OR ("e" AND NOT "a")']


def mixed_program():
    return compile_queries(MIXED)


needs_kernel = pytest.mark.skipif(not IN_PROCESS, reason="runs in the child process")


# ------------------------------------------------------------------------------------------------

def test_key_encoding_orders_like_score_desc_row_asc():
    mod = kernel_module(interpret=not ON_GPU) if IN_PROCESS else pytest.skip("child process")
    scores = torch.tensor([1.0, -1.0, 0.0, -0.0, 1000.0, -3.5e-5, 1e-30, -1e-30, 1.0, float("-inf")])
    rows = torch.tensor([5, 1, 7, 2, 0, 3, 9, 4, 2, 11])
    keys = mod.encode_keys(scores, rows)
    assert len(set(keys.tolist())) == len(keys) and bool((keys > -(2**63)).all())
    order = torch.argsort(keys, descending=True)
    want = sorted(range(len(rows)), key=lambda i: (-float(scores[i]), int(rows[i])))
    assert order.tolist() == want
    s, r = mod.decode_keys(keys)
    assert torch.equal(r, rows) and torch.equal(s, scores + 0.0)


@needs_kernel
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(queries=st.lists(small_vocab_asts(vocab_size=8, max_leaves=7), min_size=1, max_size=20),
       block_q=st.sampled_from([1, 2, 4, 8]), pushes=st.integers(0, 4))
def test_block_layout_reproduces_every_program(queries, block_q, pushes):
    """plan_blocks (host, numpy): every lane's instructions are its query's, in order, NOP-padded; in the
    push-batched form (pushes > 0) the queries within the limit come first, the batched blocks are a prefix,
    and each PUSH there names its ordinal, whose term row push_rows holds; elsewhere arg is the term row."""
    program = compile_queries(queries)
    order, op, arg, steps, lanes, _, push_rows, batched = K.plan_blocks(program, block_q, pushes=pushes)
    counts = [int((program.query_code(q)[0] == 0).sum()) for q in range(program.num_queries)]
    assert sorted(order.tolist()) == list(range(program.num_queries))
    if pushes:
        over = [counts[q] > pushes for q in order]
        assert over == sorted(over)
        assert list(batched) == sorted(batched, reverse=True)
    else:
        assert push_rows is None and not batched.any()
    for b in range(len(lanes)):
        for lane in range(int(lanes[b])):
            q = int(order[b * block_q + lane])
            want_op, want_arg = program.query_code(q)
            got_op = op[steps[b]:steps[b + 1], lane]
            got_arg = arg[steps[b]:steps[b + 1], lane]
            assert list(got_op[:len(want_op)]) == list(want_op) and set(got_op[len(want_op):]) <= {K.NOP}
            is_push = want_op == 0
            if batched[b]:
                assert counts[q] <= pushes
                assert list(got_arg[:len(want_op)][is_push]) == list(range(counts[q]))
                assert list(push_rows[b, :counts[q], lane]) == list(want_arg[is_push])
            else:
                assert list(got_arg[:len(want_op)][is_push]) == list(want_arg[is_push])


@needs_kernel
@pytest.mark.parametrize("ops", ALL_OPS, ids=str)
def test_every_operator_family(ops):
    rng = np.random.default_rng(1)
    program = compile_queries(MIXED[1:7])
    check(unit_rows(rng, 75, 96), unit_rows(rng, len(program.terms), 96), program, ops, 10, nsplit=1, **SMALL)


@needs_kernel
@pytest.mark.parametrize("d,n", [(384, 150), (768, 100), (1024, 70), (4096, 20)])
def test_dims_not_power_of_two_and_tail(d, n):
    rng = np.random.default_rng(d)
    program = mixed_program()
    check(unit_rows(rng, n, d), unit_rows(rng, len(program.terms), d), program, Ops(), 7, dtype="float16",
          block_n=32, block_q=16, block_d=128 if d != 4096 else 256)


@needs_kernel
@pytest.mark.parametrize("k", [1, 10, 100, 1024])  # 1024 > N = 300
def test_k_values_and_k_above_n(k):
    rng = np.random.default_rng(k)
    program = compile_queries(['"a" AND NOT "b"', '"c" OR "a"', 'NOT "c"'])
    (gs, gr), _ = check(unit_rows(rng, 300, 40), unit_rows(rng, 3, 40), program, Ops("sum", "max", "one_minus"), k,
                        block_n=32, block_q=16, block_d=32, nsplit=1)
    assert gs.shape == (3, min(k, 300))


@needs_kernel
def test_k_1024_below_n_with_many_merges():
    rng = np.random.default_rng(7)
    program = compile_queries(['"a" AND "b"', 'NOT "a"'])
    check(unit_rows(rng, 1100, 24), unit_rows(rng, 2, 24), program, Ops(), 1024, block_n=64, block_q=16,
          block_d=32, nsplit=1)


@needs_kernel
@pytest.mark.parametrize("k", [5, 64])
def test_smallest_append_area_merges_after_every_candidate_tile(k):
    """cap = BLOCK_N (what a tight memory budget leaves): a lane is merged after every tile that appends."""
    rng = np.random.default_rng(13)
    program = compile_queries(['"a" AND NOT "b"', '"c" OR "a"', 'NOT "c"', '"b"'])
    check(unit_rows(rng, 400, 32), unit_rows(rng, 3, 32), program, Ops(), k, cap=32, nsplit=1, **SMALL)


@needs_kernel
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("ops", [Ops(), Ops("min", "max", "reciprocal")], ids=str)
def test_document_dtypes(dtype, ops):
    # One split: splits are the subject of other tests (random programs, ties, k values, many terms), and each
    # split's final merges are most of the interpreter's time.
    rng = np.random.default_rng(3)
    program = mixed_program()
    check(unit_rows(rng, 130, 72), unit_rows(rng, len(program.terms), 72), program, ops, 12, dtype=dtype,
          nsplit=1, **SMALL)


@needs_kernel
@pytest.mark.parametrize("ops,dtype", [(Ops(), "float16"), (Ops("min", "max", "reciprocal"), "float32"),
                                       (Ops("sum", "sum", "one_minus"), "bfloat16")], ids=str)
def test_exact_ties_go_to_the_lower_row(ops, dtype):
    # Entries k/16 with small integers: every product and partial sum is exact in float32, so duplicate
    # rows tie exactly whatever the summation order (the interpreter's BLAS, the tensor cores, torch).
    rng = np.random.default_rng(11)
    distinct = rng.integers(-3, 4, size=(6, 48)) / 16.0
    docs = distinct[rng.integers(0, 6, size=120)]            # many exact duplicates
    program = mixed_program()
    terms = rng.integers(-3, 4, size=(len(program.terms), 48)) / 16.0
    got, want = check(docs, terms, program, ops, 25, dtype=dtype, nsplit=3, **SMALL)
    np.testing.assert_array_equal(got[1], want[1])


@needs_kernel
def test_many_terms_mixed_lengths_several_blocks_and_launches():
    rng = np.random.default_rng(5)
    vocab = [f"t{i}" for i in range(150)]
    queries = []
    for i in range(40):
        leaves = [Term(vocab[j]) for j in rng.choice(150, size=int(rng.integers(1, 7)), replace=False)]
        node = leaves[0]
        for leaf in leaves[1:]:
            r = rng.random()
            leaf = Not(leaf) if rng.random() < 0.3 else leaf
            node = make_and([node, leaf]) if r < 0.5 else make_or([node, leaf])
        queries.append(Not(node) if rng.random() < 0.2 else node)
    program = compile_queries(queries)
    assert len(program.terms) > 80
    check(unit_rows(rng, 97, 40), unit_rows(rng, len(program.terms), 40), program, Ops("product", "max", "one_minus"),
          9, nsplit=1, max_queries_per_launch=32, **SMALL)


@needs_kernel
@pytest.mark.parametrize("ops", [Ops(), Ops("min", "max", "reciprocal")], ids=str)
def test_push_batched_form_with_queries_over_its_limit(ops):
    """push_batch: queries of 1-4 terms run the batched form (all PUSHes of a tile in one pass over d),
    those of 5-7 the per-step form, in launches of their own; both equal the reference."""
    rng = np.random.default_rng(6)
    queries = []
    for i in range(36):
        leaves = [Term(f"t{j}") for j in rng.choice(30, size=1 + i % 7, replace=False)]
        node = leaves[0]
        for leaf in leaves[1:]:
            leaf = Not(leaf) if rng.random() < 0.3 else leaf
            node = make_and([node, leaf]) if rng.random() < 0.5 else make_or([node, leaf])
        queries.append(node)
    program = compile_queries(queries)
    assert K.batch_pushes(program) == 4
    check(unit_rows(rng, 90, 40), unit_rows(rng, len(program.terms), 40), program, ops, 7, dtype="float16",
          push_batch=True, nsplit=2, **SMALL)


@needs_kernel
def test_default_tile_configuration():
    rng = np.random.default_rng(2)
    program = mixed_program()
    check(unit_rows(rng, 300, 96), unit_rows(rng, len(program.terms), 96), program, Ops(), 10, dtype="float16")


@needs_kernel
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))  # ~5 s each interpreted
@given(queries=st.lists(small_vocab_asts(vocab_size=6, max_leaves=6), min_size=1, max_size=12),
       ops=st.sampled_from(ALL_OPS), k=st.integers(1, 40), n=st.integers(1, 120), d=st.integers(16, 80),
       dtype=st.sampled_from(["float16", "bfloat16", "float32"]), nsplit=st.integers(1, 3),
       push_batch=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_random_programs(queries, ops, k, n, d, dtype, nsplit, push_batch, seed):
    rng = np.random.default_rng(seed)
    program = compile_queries(queries)
    check(unit_rows(rng, n, d), unit_rows(rng, len(program.terms), d), program, ops, k, dtype=dtype, nsplit=nsplit,
          push_batch=push_batch, **SMALL)


@needs_kernel
def test_backend_contract():
    from itlr_gpu.backends import get_backend

    rng = np.random.default_rng(9)
    docs = unit_rows(rng, 90, 32).astype(np.float16)
    program = mixed_program()
    terms = representable(unit_rows(rng, len(program.terms), 32), "float16")
    backend = get_backend("triton", torch.device(DEVICE))
    assert backend.name == "triton"
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s, r = backend.search(docs, terms, program, Ops(), 5, device=torch.device(DEVICE), on_chunk=seen.append)
    if not ON_GPU:
        assert any("interpreter" in str(w.message) for w in caught)
    assert sum(seen) == 90
    assert isinstance(s, np.ndarray) and s.dtype == np.float32 and r.dtype == np.int64 and s.shape == (9, 5)
    want = search_reference(docs, terms, program, Ops(), 5)
    assert_topk_matches((s, r), want, docs, terms, program, Ops(), *tolerance("float16"))


@needs_kernel
@pytest.mark.parametrize("negative", [False, True], ids=["nan", "-inf"])
def test_a_score_out_of_range_ranks_first_whatever_k(negative):
    """A document scoring NaN (1000 ** 13 = inf times a similarity of 0) or -inf (times a negative one) ranks first
    as +inf in the kernel as in the torch reference, so that the engine refuses the search whatever k."""
    eye = np.eye(32, dtype=np.float32)
    docs = np.zeros((40, 32), np.float32)
    docs[:, 0], docs[:, 1:14], docs[:, 20] = 1.0, 0.5, 0.5
    docs[15] = eye[0] - (0.5 if negative else 0.0) * eye[20]
    program = compile_queries([" AND ".join(f"NOT t{i}" for i in range(13)) + " AND a"])
    terms = np.stack([eye[1 + int(t[1:])] if t != "a" else eye[20] for t in program.terms])
    ops = Ops("product", "sum", "reciprocal")
    (gs, gr), (ws, wr) = run_both(torch.from_numpy(docs), terms, program, ops, 3, **SMALL)
    assert gs[0, 0] == ws[0, 0] == np.inf and gr[0, 0] == wr[0, 0] == 15
    assert np.isfinite(gs[0, 1:]).all()


@needs_kernel
@pytest.mark.parametrize("shape", ["x OR nan", "nan OR x", "NOT nan"])
@pytest.mark.parametrize("or_", ["max", "sum"])
def test_a_nan_inside_or_or_a_reciprocal_not_ranks_first(shape, or_):
    """A NaN (inf times 0) on either side of OR and under a reciprocal NOT stays NaN in the kernel, as in torch
    (tl.maximum drops a NaN unless told to propagate it), so it ranks first as +inf and the engine refuses."""
    eye = np.eye(32, dtype=np.float32)
    docs = np.zeros((40, 32), np.float32)
    docs[:, 1], docs[:, 14], docs[:, 20] = 0.5, 1.0, 0.5   # "t0", "t13" and "a" similar: every score finite
    docs[15] = eye[0]                      # but here: NOT t0 is 1000, 13 of them inf, times "a" (0) NaN
    nan = "(" + " AND ".join(["NOT t0"] * 13) + " AND a)"
    program = compile_queries([shape.replace("nan", nan).replace("x", "t13")])
    terms = np.stack([eye[1 + int(t[1:])] if t != "a" else eye[20] for t in program.terms])
    ops = Ops("product", or_, "reciprocal")
    (gs, gr), (ws, wr) = run_both(torch.from_numpy(docs), terms, program, ops, 3, **SMALL)
    assert gs[0, 0] == ws[0, 0] == np.inf and gr[0, 0] == wr[0, 0] == 15


@needs_kernel
@pytest.mark.parametrize("ops", [Ops("min", "max", "reciprocal"), Ops("min", "max", "one_minus")], ids=str)
@pytest.mark.parametrize("query", ['"n" OR "a"', '"a" OR "n"', '"n" AND "a"', '"a" AND "n"', 'NOT "n"'])
def test_a_nan_term_on_either_side_of_min_and_max(ops, query):
    """A NaN similarity (term "n"'s vector is NaN) on either side of AND = min and OR = max stays NaN, as in torch."""
    rng = np.random.default_rng(4)
    program = compile_queries([query])
    docs = torch.from_numpy(unit_rows(rng, 40, 32))
    terms = unit_rows(rng, len(program.terms), 32)
    terms[program.terms.index("n")] = np.nan
    (gs, gr), (ws, wr) = run_both(docs, terms, program, ops, 3, **SMALL)
    assert np.isinf(ws[0, 0]) and np.array_equal(gs, ws) and np.array_equal(gr, wr)


# ------------------------------------------------------------------------------------------------
# Scoring options (calibration, guard, hybrid, OR as max) in the kernel: per-literal affine maps and a
# per-query epilogue from itlr_gpu.scoring.linearize, against the chunked torch definition.

from itlr_gpu.scoring import CALIBRATIONS, RECOMMENDED, ScoreOptions, linearize_options, score_dense  # noqa: E402

LINEAR_CALIBRATIONS = [c for c in CALIBRATIONS if c != "percentile"]


def check_options(docs_np, terms, whole, program, ops, opt, k, dtype="float32", rtol=1e-3, atol=1e-4, **kw):
    """Kernel top-k with options == the dense definition: scores of the returned rows, every clear winner
    present, order (score desc, row asc). The options' statistics standardise (scores are O(1-10))."""
    docs = as_dtype(docs_np, dtype)
    docs32 = docs.float().numpy()
    lin = linearize_options(docs, terms, program, ops, opt, whole)
    extra = {"lit_affine": (lin.lit_a, lin.lit_b)}
    if lin.mix is not None:
        extra["epilogue"] = (lin.mix, lin.whole_arg)
    vectors = lin.vectors.numpy()
    if dtype != "float32":       # what the kernel's dot sees; the reference then uses the same rounded vectors
        vectors = representable(vectors, dtype)
    gs, gr = K.fused_search(docs.to(DEVICE), vectors, lin.program, lin.ops, k, **extra, **kw)
    gs, gr = gs.cpu().numpy(), gr.cpu().numpy()
    ref = score_dense(docs32, terms, program, ops, opt, whole) if dtype == "float32" else None
    if ref is None:              # same linear form, evaluated in float64 on the rounded vectors
        ref = eval_linear(docs32, lin, vectors)
    k_eff = min(k, docs_np.shape[0])
    assert gs.shape == gr.shape == (program.num_queries, k_eff)
    for q in range(program.num_queries):
        rows = gr[q]
        assert len(set(rows.tolist())) == k_eff
        np.testing.assert_allclose(gs[q], ref[q, rows], rtol=rtol, atol=atol * max(1.0, np.abs(ref[q]).max()),
                                   err_msg=f"query {q}")
        assert np.all(np.diff(gs[q]) <= 0)
        eq = gs[q][1:] == gs[q][:-1]
        assert np.all(rows[1:][eq] > rows[:-1][eq])
        kth = np.sort(ref[q])[::-1][k_eff - 1]
        tol = atol * max(1.0, np.abs(ref[q]).max()) + rtol * abs(kth)
        must = set(np.nonzero(ref[q] > kth + tol)[0].tolist())
        assert must <= set(rows.tolist()), f"query {q}: missing {sorted(must - set(rows.tolist()))}"
        assert np.all(ref[q, rows] >= kth - tol)
    return lin, (gs, gr)


@needs_kernel
@pytest.mark.parametrize("opt", [RECOMMENDED, ScoreOptions(calibration="zscore"), ScoreOptions(guard=True),
                                 ScoreOptions(hybrid=0.3, calibration="minmax", or_max=True, and_min=True),
                                 ScoreOptions(hybrid=0.6, neg_hybrid=0.9, conj_hybrid=0.2, calibration="equalize", guard=True,
                                              adaptive=True)], ids=str)
def test_options_in_the_kernel(opt):
    rng = np.random.default_rng(21)
    program = mixed_program()
    # one split (the options with splits: test_random_programs_with_options)
    check_options(unit_rows(rng, 140, 48), unit_rows(rng, len(program.terms), 48),
                  unit_rows(rng, program.num_queries, 48), program, Ops(), opt, 10, nsplit=1,
                  max_queries_per_launch=16, **SMALL)


@needs_kernel
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_options_in_the_kernel_half_precision(dtype):
    rng = np.random.default_rng(22)
    program = mixed_program()
    check_options(unit_rows(rng, 120, 40), unit_rows(rng, len(program.terms), 40),
                  unit_rows(rng, program.num_queries, 40), program, Ops(), RECOMMENDED, 15, dtype=dtype, **SMALL)


@needs_kernel
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(queries=st.lists(small_vocab_asts(vocab_size=6, max_leaves=5), min_size=1, max_size=8),
       ops=st.sampled_from(ALL_OPS), k=st.integers(1, 30), n=st.integers(16, 90),
       cal=st.sampled_from(LINEAR_CALIBRATIONS + [None]), hybrid=st.one_of(st.none(), st.floats(0, 1)),
       guard=st.booleans(), or_max=st.booleans(), push_batch=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_random_programs_with_options(queries, ops, k, n, cal, hybrid, guard, or_max, push_batch, seed):
    rng = np.random.default_rng(seed)
    program = compile_queries(queries)
    opt = ScoreOptions(hybrid=hybrid, calibration=cal, guard=guard, or_max=or_max, sample_size=64)
    check_options(unit_rows(rng, n, 24), unit_rows(rng, len(program.terms), 24),
                  unit_rows(rng, program.num_queries, 24), program, ops, opt, k, nsplit=2, push_batch=push_batch,
                  **SMALL)


@needs_kernel
def test_backend_takes_options_and_percentile_falls_back():
    from itlr_gpu.backends import get_backend
    from itlr_gpu.backends.reference import search_with_options

    rng = np.random.default_rng(23)
    docs = unit_rows(rng, 80, 32)
    program = mixed_program()
    terms = unit_rows(rng, len(program.terms), 32)
    whole = unit_rows(rng, program.num_queries, 32)
    backend = get_backend("triton", torch.device(DEVICE))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, r = backend.search_with_options(docs, terms, program, Ops(), 6, RECOMMENDED, whole,
                                           device=torch.device(DEVICE))
    ws, wr = search_with_options(docs, terms, program, Ops(), 6, RECOMMENDED, whole)
    np.testing.assert_allclose(s, ws, rtol=1e-3, atol=1e-3)
    assert (r == wr).mean() > 0.9
    with pytest.warns(RuntimeWarning, match="percentile"):
        s2, r2 = backend.search_with_options(docs, terms, program, Ops(), 6, ScoreOptions(calibration="percentile"),
                                             device=torch.device(DEVICE))
    ws2, wr2 = search_with_options(docs, terms, program, Ops(), 6, ScoreOptions(calibration="percentile"))
    np.testing.assert_array_equal(r2, wr2)
