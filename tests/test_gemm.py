"""The chunk matmul: both BLAS paths (torch, numpy) and the float16 widening equal the numpy oracle."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

from itlr_gpu import Ops, compile_queries
from itlr_gpu.backends import gemm
from itlr_gpu.backends.reference import search_linear, search_reference, search_with_options
from itlr_gpu.scoring import RECOMMENDED, linearize_options

from strategies import small_vocab_asts
from test_reference import assert_same_topk, numpy_topk, unit_rows


@settings(max_examples=40, deadline=None)
@given(st.lists(small_vocab_asts(), min_size=1, max_size=6), st.integers(1, 200), st.integers(1, 30),
       st.sampled_from([1, 5, 64]), st.sampled_from(["torch", "numpy"]), st.sampled_from(["float32", "float16"]),
       st.integers(0, 2**31 - 1))
def test_both_matmuls_equal_numpy(nodes, n, k, chunk, matmul, dtype, seed):
    rng = np.random.default_rng(seed)
    program = compile_queries(nodes)
    docs = unit_rows(rng, n, 16, np.dtype(dtype))
    terms = unit_rows(rng, len(program.terms), 16)
    got = search_reference(docs, terms, program, Ops(), k, chunk_size=chunk, matmul=matmul)
    assert_same_topk(got, numpy_topk(docs, terms, program, Ops(), k))


def test_matmuls_agree_on_memmapped_float16(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "docs.npy"
    np.save(path, unit_rows(rng, 1000, 24, np.float16))
    docs = np.load(path, mmap_mode="r")
    program = compile_queries(["a AND NOT b", "c OR a", "b"])
    terms = unit_rows(rng, len(program.terms), 24)
    a = search_reference(docs, terms, program, Ops(), 15, chunk_size=97, matmul="torch")
    b = search_reference(docs, terms, program, Ops(), 15, chunk_size=97, matmul="numpy")
    assert_same_topk(a, b)
    assert_same_topk(a, numpy_topk(np.asarray(docs), terms, program, Ops(), 15))


def test_options_paths_take_the_matmul_choice():
    rng = np.random.default_rng(4)
    program = compile_queries(["a AND NOT b", "(a OR c) AND NOT d"])
    docs = unit_rows(rng, 300, 16, np.float16)
    terms = unit_rows(rng, len(program.terms), 16)
    whole = unit_rows(rng, 2, 16)
    want = search_with_options(docs, terms, program, Ops(), 12, RECOMMENDED, whole, chunk_size=50, matmul="torch")
    got = search_with_options(docs, terms, program, Ops(), 12, RECOMMENDED, whole, chunk_size=50, matmul="numpy")
    assert_same_topk(got, want, atol=1e-4)
    lin = linearize_options(docs, terms, program, Ops(), RECOMMENDED, whole)
    assert_same_topk(search_linear(docs, lin, 12, chunk_size=33, matmul="numpy"), want, atol=1e-4)


def test_choose_rules(monkeypatch):
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    monkeypatch.delenv("ITLR_MATMUL", raising=False)   # conftest pins torch for the rest of the suite
    assert gemm.choose(768, 384, 20000, 10**6, cuda) == "torch"
    assert gemm.choose(8, 16, 64, 100, cpu) == gemm.unprobed_default()   # too small to be worth a probe
    assert gemm.choose(8, 16, 64, 100, cpu, "numpy") == "numpy"
    monkeypatch.setenv("ITLR_MATMUL", "numpy")
    assert gemm.choose(8, 16, 64, 100, cpu) == "numpy"
    monkeypatch.setenv("ITLR_MATMUL", "mkl")
    from itlr_gpu.errors import InputError

    with pytest.raises(InputError, match="ITLR_MATMUL: unknown value 'mkl'"):   # one "itlr: error:" line
        gemm.choose(8, 16, 64, 100, cpu)
    with pytest.raises(ValueError, match="matmul"):
        gemm.choose(8, 16, 64, 100, cpu, "blas")


def test_probe_is_cached_per_shape_class(monkeypatch):
    calls = []

    def fake_probe(t, d, c):
        calls.append((t, d, c))
        return {"choice": "numpy", "torch_s": 2.0, "numpy_s": 1.0}

    monkeypatch.setattr(gemm, "_probe", fake_probe)
    monkeypatch.setattr(gemm, "_cache", {})
    monkeypatch.delenv("ITLR_MATMUL", raising=False)
    cpu = torch.device("cpu")
    assert gemm.choose(700, 384, 20000, 10**6, cpu) == "numpy"
    assert gemm.choose(1000, 384, 20000, 10**6, cpu) == "numpy"    # same class: 1024 terms
    assert gemm.choose(1100, 384, 20000, 10**6, cpu) == "numpy"    # 2048 terms: a second probe
    assert calls == [(1024, 384, 20000), (2048, 384, 20000)]
    assert set(gemm.choices()) == {"1024x384x20000", "2048x384x20000"}
    # the probe (both libraries, a warm-up and PROBE_REPEAT calls each) costs about as much as the smallest
    # search it runs for
    probe = 2.0 * gemm.PROBE_TERMS * 384 * gemm.PROBE_DOCS * 2 * (gemm.PROBE_REPEAT + 1)
    assert probe <= 1.2 * gemm.PROBE_MIN_FLOPS


def test_real_probe_returns_a_choice():
    result = gemm._probe(64, 32, 256)
    assert result["choice"] in ("torch", "numpy") and result["torch_s"] > 0 and result["numpy_s"] > 0


def test_widening_reuses_one_buffer():
    rng = np.random.default_rng(5)
    docs = unit_rows(rng, 100, 8, np.float16)
    mm = gemm.ChunkMatmul(docs, torch.from_numpy(unit_rows(rng, 3, 8)), 40, torch.device("cpu"), "numpy")
    mm.chunk(0, 40)
    buf = mm._wide
    b = mm.chunk(40, 80)
    c = mm.chunk(80, 100)
    assert mm._wide is buf and c.shape == (20, 8) and b.dtype == torch.float32
    np.testing.assert_array_equal(c.numpy(), docs[80:100].astype(np.float32))


@pytest.mark.parametrize("threads", [1, 2])
def test_widening_runs_on_one_thread_and_restores_the_pool(monkeypatch, threads):
    """The float16 copy runs with torch's pool at one thread (its spinning workers slow the BLAS call
    after it) and leaves the caller's thread count as it was."""
    seen = []
    real_copy = torch.Tensor.copy_
    monkeypatch.setattr(torch.Tensor, "copy_", lambda self, src: (seen.append(torch.get_num_threads()),
                                                                   real_copy(self, src))[1])
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        rng = np.random.default_rng(6)
        docs = unit_rows(rng, 50, 8, np.float16)
        mm = gemm.ChunkMatmul(docs, torch.from_numpy(unit_rows(rng, 3, 8)), 50, torch.device("cpu"), "numpy")
        np.testing.assert_array_equal(mm.chunk(0, 50).numpy(), docs.astype(np.float32))
        assert seen == [1] and torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("vendor, want", [("AuthenticAMD", "numpy"), ("GenuineIntel", "torch"), ("", "torch")])
def test_small_searches_take_the_vendors_faster_blas(monkeypatch, vendor, want):
    from itlr_gpu import cpuinfo

    monkeypatch.setattr(cpuinfo, "cpu_vendor", lambda: vendor)
    monkeypatch.delenv("ITLR_MATMUL", raising=False)
    assert gemm.choose(8, 16, 64, 100, torch.device("cpu")) == want
    assert gemm.choose(8, 16, 64, 100, torch.device("cpu"), "torch") == "torch"   # an explicit choice wins


def test_a_bad_push_batch_switch_is_an_input_error(monkeypatch):
    from itlr_gpu.errors import InputError
    from itlr_gpu.kernels.fused_logical_topk import push_batch_default

    for value, want in (("0", False), ("1", True)):
        monkeypatch.setenv("ITLR_PUSH_BATCH", value)
        assert push_batch_default() is want
    monkeypatch.setenv("ITLR_PUSH_BATCH", "yes")
    with pytest.raises(InputError, match="ITLR_PUSH_BATCH: unknown value 'yes'"):
        push_batch_default()
