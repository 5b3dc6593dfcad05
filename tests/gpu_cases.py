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


class SeededTermEncoder:
    """A stand-in query encoder for ``itlr bench`` where no model is installed (the GPU machine): each text
    maps to a fixed unit vector drawn from a seed derived from the text, so repeated runs embed alike."""

    name = "seeded-test-encoder"

    def __init__(self, dim: int):
        self.dim = dim

    def encode(self, texts):
        import zlib

        return np.stack([unit_rows(np.random.default_rng(zlib.crc32(t.encode())), 1, self.dim)[0] for t in texts])


def bench_report(tmp_path, monkeypatch, backends: list[str], n: int, dim: int = 384, queries: int = 24):
    """``itlr bench`` of a random float16 index of ``n`` rows and ``queries`` mixed queries with ``backends``
    (``--json``), the query encoder replaced by :class:`SeededTermEncoder`; returns (report, stdout text)."""
    import io
    import json
    from contextlib import redirect_stdout

    from itlr_gpu import cli_common
    from itlr_gpu.cli import main

    rng = np.random.default_rng(n)
    np.save(tmp_path / "emb.npy", unit_rows(rng, n, dim).astype(np.float16))
    (tmp_path / "ids.txt").write_text("".join(f"d{i}\n" for i in range(n)))
    assert main(["index", "--embeddings", str(tmp_path / "emb.npy"), "--ids", str(tmp_path / "ids.txt"),
                 "-o", str(tmp_path / "idx")]) == 0
    exprs = [MIXED[i % len(MIXED)].replace('"a"', f'"a{i}"') for i in range(queries)]
    (tmp_path / "q.jsonl").write_text("".join(json.dumps({"query_id": f"q{i}", "expr": e}) + "\n"
                                              for i, e in enumerate(exprs)))
    monkeypatch.setattr(cli_common, "query_encoder", lambda model, index: SeededTermEncoder(dim))
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["bench", str(tmp_path / "idx"), str(tmp_path / "q.jsonl"), "-k", "10", "--repeat", "3",
                     "--backends", ",".join(backends), "--json", str(tmp_path / "bench.json")])
    assert code == 0
    return json.loads((tmp_path / "bench.json").read_text()), out.getvalue()
