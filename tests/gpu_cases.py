"""Cases of the GPU tests (tests/test_gpu.py), run in worker processes so that Triton compiles the
kernel's specialisations in parallel (one process per case; each compiles what it launches).

Every case compares the compiled fused kernel on CUDA with the torch reference on the same GPU, on the
same dtype-rounded inputs, and returns ``{"case": ..., "ok": bool, "detail": str, "seconds": float}``
instead of raising, so the parent reports every failure at once.
"""

from __future__ import annotations

import time
import traceback

import numpy as np

MIXED = ['"a"', 'NOT "b"', '"a" AND "b"', '"a" OR NOT "c"', 'NOT ("b" AND "d") OR "e"',
         '("a" OR "b") AND NOT ("c" OR ("d" AND NOT "e"))', '"c" AND "d" AND "e" AND "a"',
         'NOT (NOT "d")', '("a" AND "b") OR ("c" AND "d") OR ("e" AND NOT "a")']
DEEP = ['"a" AND ("b" OR ("c" AND ("d" OR ("e" AND ("f" OR ("g" AND "h"))))))', '"h" OR NOT "a"']
TOL = {"float16": (5e-4, 2e-5), "bfloat16": (5e-4, 2e-5), "float32": (2e-3, 1e-4)}


def unit_rows(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def compare(got_s, got_r, ref_all, k_eff, rtol, atol, name):
    """Kernel top-k vs every document's reference score (Q, N): scores of the returned rows, every clear
    winner present, no clear loser, sorted (score desc, row asc). Returns a problem or ''."""
    for q in range(ref_all.shape[0]):
        rows, sc = got_r[q], got_s[q]
        if len(rows) != k_eff or len(set(rows.tolist())) != k_eff:
            return f"{name} query {q}: {len(rows)} rows, {len(set(rows.tolist()))} distinct, want {k_eff}"
        ref = ref_all[q]
        scale = max(1.0, float(np.abs(ref).max())) if np.isfinite(ref).all() else 1.0
        tol_abs = atol * scale
        if not np.allclose(sc, ref[rows], rtol=rtol, atol=tol_abs):
            i = int(np.argmax(np.abs(sc - ref[rows])))
            return f"{name} query {q}: score {sc[i]} vs reference {ref[rows][i]} at rank {i}"
        if np.any(np.diff(sc) > 0):
            return f"{name} query {q}: not sorted"
        kth = np.sort(ref)[::-1][k_eff - 1]
        tol = tol_abs + rtol * abs(kth)
        missing = set(np.nonzero(ref > kth + tol)[0].tolist()) - set(rows.tolist())
        if missing:
            return f"{name} query {q}: clear winners missing {sorted(missing)[:5]}"
        if np.any(ref[rows] < kth - tol):
            return f"{name} query {q}: returned a clear loser"
    return ""


def run_case(case: dict) -> dict:
    t0 = time.time()
    try:
        detail = _run(case)
    except Exception:  # reported by the parent test with the traceback
        detail = "exception:\n" + traceback.format_exc()[-3000:]
    return dict(case=case, ok=not detail, detail=detail, seconds=round(time.time() - t0, 1))


def _run(case: dict) -> str:
    import torch

    from itlr_gpu import Ops, compile_queries
    from itlr_gpu.backends.reference import search_reference
    from itlr_gpu.kernels import kernel_module

    fk = kernel_module(interpret=False)
    dev = torch.device("cuda")
    rng = np.random.default_rng(case.get("seed", 0))
    dtype = case.get("dtype", "float16")
    tdt = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}[dtype]
    n, d, k = case.get("n", 20_000), case.get("d", 384), case["k"]
    queries = {"mixed": MIXED, "deep": DEEP}[case.get("queries", "mixed")] * case.get("repeat", 8)
    program = compile_queries(queries)
    ops = Ops(*case.get("ops", ("product", "sum", "one_minus")))
    docs = torch.from_numpy(unit_rows(rng, n, d)).to(dev, tdt)
    docs32 = docs.float()
    terms = torch.from_numpy(unit_rows(rng, len(program.terms), d)).to(tdt).float().numpy()  # what the dot sees
    rtol, atol = TOL[dtype]
    k_eff = min(k, n)
    if case.get("options"):
        from itlr_gpu.scoring import RECOMMENDED, ScoreOptions, linearize_options
        from itlr_gpu.backends.triton import TritonBackend

        opt = RECOMMENDED if case["options"] == "recommended" else ScoreOptions(calibration="zscore", guard=True)
        whole = unit_rows(rng, program.num_queries, d)
        lin = linearize_options(docs, terms, program, ops, opt, whole, device=dev)
        vectors = lin.vectors.to(tdt).float()
        backend = TritonBackend()
        got_s, got_r = backend.search_linear(docs, lin, k, device=dev)
        # the same linear form on the same rounded vectors, every document, in float32 on the GPU
        full = linearize_eval(docs32, vectors.to(dev), lin)
        return compare(got_s, got_r, full, k_eff, max(rtol, 1e-3), max(atol, 1e-4), f"options={case['options']}")
    got_s, got_r = fk.fused_search(docs, terms, program, ops, k)
    all_s, all_r = search_reference(docs, terms, program, ops, n, device=dev)
    full = np.empty_like(all_s)
    np.put_along_axis(full, all_r, all_s, axis=1)
    want_s, _ = search_reference(docs, terms, program, ops, k, device=dev)
    problem = compare(got_s.cpu().numpy(), got_r.cpu().numpy(), full, k_eff, rtol, atol, f"{dtype} {ops} k={k}")
    if not problem and not np.allclose(got_s.cpu().numpy(), want_s, rtol=rtol, atol=atol):
        problem = "top-k scores differ from the reference's top-k scores"
    return problem


def linearize_eval(docs32, vectors, lin) -> np.ndarray:
    """Every document's score under a LinearScoring (float64 on the host, the oracle of the kernel tests)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from oracles import eval_linear

    return eval_linear(docs32.cpu().numpy(), lin, vectors.cpu().numpy())
