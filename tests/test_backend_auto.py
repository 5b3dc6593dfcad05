"""``--backend auto``: on the CPU the fused numba loop (the torch reference without numba); on CUDA the per-batch rule ``choose_cuda_backend``
(k, stack depth, batch size) between the fused kernel and the chunked torch path, applied by AutoBackend to
every entry point (plain search, scoring options, pre-folded linear options)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from itlr_gpu import Ops, compile_queries
from itlr_gpu import backends as B
from itlr_gpu.backends.reference import search_reference


def test_auto_on_cpu_is_numba_when_installed(monkeypatch):
    monkeypatch.setattr(B, "numba_available", lambda: False)
    assert isinstance(B.get_backend("auto", torch.device("cpu")), B.TorchBackend)
    monkeypatch.setattr(B, "numba_available", lambda: True)
    assert isinstance(B.get_backend("auto", torch.device("cpu")), B.CpuAutoBackend)


def test_cpu_auto_uses_numba_for_large_searches_only(monkeypatch):
    pytest.importorskip("numba")
    rng = np.random.default_rng(0)
    program = compile_queries(['"a" AND NOT "b"', '"c"'])
    docs = rng.standard_normal((300, 8)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    terms = docs[:3].copy()
    auto = B.CpuAutoBackend()
    small = auto.search(docs, terms, program, Ops(), 5, device=torch.device("cpu"))
    assert auto.last_choice == "torch"
    monkeypatch.setattr(B, "CPU_FUSED_MIN_PAIRS", 600)
    large = auto.search(docs, terms, program, Ops(), 5, device=torch.device("cpu"))
    assert auto.last_choice == "numba"
    np.testing.assert_array_equal(small[0], large[0])
    np.testing.assert_array_equal(small[1], large[1])


def test_auto_on_cuda_is_the_rule_backend(monkeypatch):
    monkeypatch.setattr(B, "triton_available", lambda: True)
    assert isinstance(B.get_backend("auto", torch.device("cuda")), B.AutoBackend)
    monkeypatch.setattr(B, "triton_available", lambda: False)   # no Triton: the torch path, no rule
    assert isinstance(B.get_backend("auto", torch.device("cuda")), B.TorchBackend)


@pytest.mark.parametrize("k,depth,queries,want", [
    (10, 2, 1024, "triton"),
    (1, 1, B.AUTO_MIN_QUERIES, "triton"),
    (B.AUTO_MAX_K, B.AUTO_MAX_DEPTH, 64, "triton"),
    (B.AUTO_MAX_K + 1, 2, 1024, "torch"),        # large k: merges of 2048-long lists
    (2048, 2, 1024, "torch"),
    (5000, 2, 1024, "torch"),                    # above the kernel's hard limit K_MAX
    (10, B.AUTO_MAX_DEPTH + 1, 1024, "torch"),   # deep stacks do not fit the registers
    (10, 2, B.AUTO_MIN_QUERIES - 1, "torch"),    # tiny batches
])
def test_rule_corners(k, depth, queries, want):
    assert B.choose_cuda_backend(k, depth, queries) == want


def test_rule_is_monotone():
    """Raising k or the depth, or shrinking the batch, never moves a batch from torch to the fused kernel."""
    order = {"torch": 0, "triton": 1}
    for k in (1, 10, 100, 1000, 1024, 1025, 2048):
        for depth in range(1, 12):
            for q in (1, 3, 4, 64, 5000):
                here = order[B.choose_cuda_backend(k, depth, q)]
                assert order[B.choose_cuda_backend(k * 2, depth, q)] <= here
                assert order[B.choose_cuda_backend(k, depth + 1, q)] <= here
                assert order[B.choose_cuda_backend(k, depth, max(1, q // 2))] <= here


class Recorder:
    def __init__(self, name):
        self.name, self.calls = name, []

    def search(self, *a, **kw):
        self.calls.append("search")
        return self.name

    def search_with_options(self, *a, **kw):
        self.calls.append("options")
        return self.name

    def search_linear(self, *a, **kw):
        self.calls.append("linear")
        return self.name


class Lin:
    def __init__(self, program):
        self.program = program


@pytest.mark.parametrize("queries,k,want", [
    (['"a" AND NOT "b"'] * 8, 10, "triton"),
    (['"a" AND NOT "b"'] * 8, 2048, "torch"),
    (['"a"', '"b"'], 10, "torch"),                                             # 2 queries < AUTO_MIN_QUERIES
    (['"a" AND ("b" OR ("c" AND ("d" OR ("e" AND ("f" OR ("g" AND ("h" OR ("i" AND "j")))))))) '] * 8, 10,
     "torch"),                                                                 # depth 10
])
def test_auto_backend_dispatches_every_entry_point(queries, k, want):
    program = compile_queries(queries)
    assert B.choose_cuda_backend(k, program.max_depth, program.num_queries) == want
    auto = B.AutoBackend()
    auto._torch, auto._triton = Recorder("torch"), Recorder("triton")
    dev = torch.device("cpu")
    assert auto.search(None, None, program, Ops(), k, device=dev) == want
    assert auto.search_with_options(None, None, program, Ops(), k, None, device=dev) == want
    assert auto.search_linear(None, Lin(program), k, device=dev) == want
    assert auto.last_choice == want
    used = auto._triton if want == "triton" else auto._torch
    assert used.calls == ["search", "options", "linear"]


def test_auto_backend_torch_choice_equals_the_reference():
    rng = np.random.default_rng(0)
    docs = rng.standard_normal((200, 16)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    program = compile_queries(['"a" AND NOT "b"', '"a" OR "c"'])
    terms = rng.standard_normal((len(program.terms), 16)).astype(np.float32)
    terms /= np.linalg.norm(terms, axis=1, keepdims=True)
    auto = B.AutoBackend()
    s, r = auto.search(docs, terms, program, Ops(), 7, device=torch.device("cpu"))
    assert auto.last_choice == "torch"            # 2 queries
    ws, wr = search_reference(docs, terms, program, Ops(), 7)
    np.testing.assert_array_equal(r, wr)
    np.testing.assert_array_equal(s, ws)
