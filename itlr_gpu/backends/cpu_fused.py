"""``numba`` backend: the CPU search with scoring and top-k fused into one compiled loop per chunk.

The chunk similarities come from the faster BLAS (:class:`~.gemm.ChunkMatmul`, exactly as in
the torch reference); :func:`itlr_gpu.kernels.cpu_fused_topk.fused_chunk_topk` then runs every
query's program on them and keeps its top-k.  Same inputs, same float32 arithmetic, same tie
rule as :mod:`.reference` (its oracle): the results are equal.  ``percentile`` calibration
(a lookup table, no linear form) runs on the torch reference.
"""

from __future__ import annotations

import os
from typing import Callable

import numpy as np
import torch

from ..compiler import PUSH, Program
from ..errors import InputError
from ..kernels import cpu_fused_topk as kernel
from ..ops import RECIPROCAL_FLOOR, Ops
from .gemm import ChunkMatmul
from .reference import _as_tensor, chunk_for_budget

__all__ = ["NumbaBackend", "available", "search_fused", "parallel_default"]


def available() -> bool:
    return kernel.available()


def parallel_default() -> bool:
    """Run queries on several threads only where the BLAS leaves cores to share: with 2 cores the
    single-threaded loop is faster (benchmarks/results/cpu_search.md); ``ITLR_CPU_PARALLEL=0|1`` forces."""
    env = os.environ.get("ITLR_CPU_PARALLEL")
    if env in ("0", "1"):
        return env == "1"
    return len(os.sched_getaffinity(0)) >= 8


def search_fused(docs, vectors, program: Program, ops: Ops, k: int, lit_a: np.ndarray, lit_b: np.ndarray,
                 mix: np.ndarray | None = None, whole: np.ndarray | None = None, chunk_size: int | None = None,
                 on_chunk: Callable[[int], None] | None = None, matmul: str = "auto",
                 parallel: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (scores (Q x k'), rows (Q x k'), k' = min(k, N)) of ``program`` over ``docs`` (N x d) with
    literal i = ``lit_a[i] * <doc, vectors[operand_i]> + lit_b[i]`` and the optional hybrid epilogue."""
    if not kernel.available():
        raise InputError("numba is not installed", "--backend numba", "`pip install numba`, or --backend torch")
    n, d = docs.shape
    vectors = _as_tensor(vectors, torch.device("cpu"))
    if chunk_size is None:
        chunk_size = chunk_for_budget(d, len(vectors), program.num_queries, program.max_depth + 2, cpu=True)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise InputError(f"chunk_size={chunk_size!r}", "chunk_size", "a positive integer")
    kk = min(int(k), n)
    state = kernel.TopKState(program.num_queries, max(kk, 1))
    if kk == 0 or program.num_queries == 0:
        return (np.zeros((program.num_queries, 0), np.float32), np.zeros((program.num_queries, 0), np.int64))
    fams = kernel.family_codes(ops)
    par = parallel_default() if parallel is None else parallel
    with torch.inference_mode():
        gemm = ChunkMatmul(docs, vectors, int(chunk_size), torch.device("cpu"), matmul)
        for start in range(0, n, int(chunk_size)):
            chunk = gemm.chunk(start, min(n, start + int(chunk_size)))
            sims = gemm.sims(chunk).numpy()
            kernel.fused_chunk_topk(sims, program.opcodes, program.operands, program.offsets, lit_a, lit_b, fams,
                                    program.max_depth, state, start, mix, whole, RECIPROCAL_FLOOR, parallel=par)
            if on_chunk is not None:
                on_chunk(chunk.shape[0])
    return state.result()


def _plain_literals(program: Program) -> tuple[np.ndarray, np.ndarray]:
    m = len(program.opcodes)
    return np.ones(m, np.float32), np.zeros(m, np.float32)


class NumbaBackend:
    """``--backend numba`` (and ``auto`` on a CPU when numba is installed)."""

    name = "numba"

    def search(self, docs, term_embeddings, program, ops, k, *, device, chunk_size=None, on_chunk=None):
        _cpu_only(device)
        a, b = _plain_literals(program)
        if chunk_size is None:   # the reference's chunks: the same BLAS choice, the same similarities
            chunk_size = chunk_for_budget(docs.shape[1], len(program.terms), program.num_queries, program.max_depth,
                                          cpu=True)
        return search_fused(docs, term_embeddings, program, ops, k, a, b, chunk_size=chunk_size, on_chunk=on_chunk)

    def search_with_options(self, docs, term_embeddings, program, ops, k, options, whole_embeddings=None, *,
                            device, chunk_size=None, on_chunk=None):
        _cpu_only(device)
        from .reference import search_with_options

        if options.calibration == "percentile":
            return search_with_options(docs, term_embeddings, program, ops, k, options, whole_embeddings,
                                       device=device, chunk_size=chunk_size, on_chunk=on_chunk)
        from ..scoring import linearize_options

        lin = linearize_options(docs, term_embeddings, program, ops, options, whole_embeddings, device=device)
        return self.search_linear(docs, lin, k, device=device, chunk_size=chunk_size, on_chunk=on_chunk)

    def search_linear(self, docs, lin, k, *, device, chunk_size=None, on_chunk=None):
        _cpu_only(device)
        prog = lin.program
        whole = None if lin.mix is None else np.asarray(lin.whole_arg, dtype=np.int64)
        if chunk_size is None:
            chunk_size = chunk_for_budget(docs.shape[1], len(lin.vectors), prog.num_queries, prog.max_depth + 2,
                                          cpu=True)
        return search_fused(docs, lin.vectors, prog, lin.ops, k, lin.lit_a, lin.lit_b, lin.mix, whole,
                            chunk_size=chunk_size, on_chunk=on_chunk)


def _cpu_only(device) -> None:
    if torch.device(device).type != "cpu":
        raise InputError(f"the numba backend runs on the CPU, not {device}", "--backend numba",
                         "--device cpu, or --backend auto|torch|triton on a GPU")


assert PUSH == kernel.PUSH
