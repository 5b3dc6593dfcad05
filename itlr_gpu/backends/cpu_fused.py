"""``numba`` backend: the CPU search with scoring and top-k fused into one compiled loop per chunk.

The chunk similarities come from the faster BLAS (:class:`~.gemm.ChunkMatmul`, exactly as in
the torch reference); :func:`itlr_gpu.kernels.cpu_fused_topk.fused_chunk_topk` then runs every
query's program on them and keeps its top-k.  Same inputs, same float32 arithmetic, same tie
rule as :mod:`.reference` (its oracle): the results are equal.  ``percentile`` calibration
(a lookup table, no linear form) runs on the torch reference.

**Chunk workers.**  On one thread the scoring loop runs while the other cores idle, and with a
fast BLAS it is a third of the time (benchmarks/results/cpu_search-zen5.md).  A large search
therefore splits its chunks over one worker thread per core: each multiplies its chunk with a
one-thread BLAS call and runs the (GIL-free) loop into its own top-k, and the top-ks are merged
at the end.  Total time ~ matmul + loop / workers instead of matmul + loop.  The similarities of
a one-thread BLAS call may differ from the multi-threaded reference's in the last bit, so this
path equals the reference up to float32 rounding (ties aside); small searches, below
:data:`WORKERS_MIN_FLOPS`, stay on the exact serial path.  ``ITLR_CPU_WORKERS=N`` (or
``workers=``) sets the count; 1 is the serial path.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Callable

import numpy as np
import torch

from ..compiler import PUSH, Program
from ..errors import InputError
from ..kernels import cpu_fused_topk as kernel
from ..ops import RECIPROCAL_FLOOR, Ops
from .gemm import ChunkMatmul
from .reference import _as_tensor, chunk_for_budget

__all__ = ["NumbaBackend", "available", "search_fused", "default_workers", "WORKERS_MIN_FLOPS"]

WORKERS_MIN_FLOPS = 2e10
"""Matmul flops below which a search runs serially (threads would cost more than they save)."""


def available() -> bool:
    return kernel.available()


def default_workers() -> int:
    """``ITLR_CPU_WORKERS`` when set, else the threads torch would use (``OMP_NUM_THREADS``,
    ``torch.set_num_threads``; a one-CPU Ray worker gets 1), at most the cores this process may run on."""
    env = os.environ.get("ITLR_CPU_WORKERS")
    if env is not None:
        try:
            value = int(env)
        except ValueError:
            value = 0
        if value < 1:
            raise InputError(f"ITLR_CPU_WORKERS={env!r}", "environment", "a positive integer")
        return value
    return max(1, min(torch.get_num_threads(), len(os.sched_getaffinity(0))))


def search_fused(docs, vectors, program: Program, ops: Ops, k: int, lit_a: np.ndarray, lit_b: np.ndarray,
                 mix: np.ndarray | None = None, whole: np.ndarray | None = None, chunk_size: int | None = None,
                 on_chunk: Callable[[int], None] | None = None, matmul: str = "auto",
                 workers: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (scores (Q x k'), rows (Q x k'), k' = min(k, N)) of ``program`` over ``docs`` (N x d) with
    literal i = ``lit_a[i] * <doc, vectors[operand_i]> + lit_b[i]`` and the optional hybrid epilogue.
    ``workers``: chunk worker threads (default: :func:`default_workers` for a search of at least
    :data:`WORKERS_MIN_FLOPS`, else 1)."""
    if not kernel.available():
        raise InputError("numba is not installed", "--backend numba", "`pip install numba`, or --backend torch")
    n, d = docs.shape
    vectors = _as_tensor(vectors, torch.device("cpu"))
    if chunk_size is None:
        chunk_size = chunk_for_budget(d, len(vectors), program.num_queries, program.max_depth + 2)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise InputError(f"chunk_size={chunk_size!r}", "chunk_size", "a positive integer")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, (int, np.integer))
                                or workers < 1):
        raise InputError(f"workers={workers!r}", "workers", "a positive integer")
    kk = min(int(k), n)
    if kk == 0 or program.num_queries == 0:
        return (np.zeros((program.num_queries, 0), np.float32), np.zeros((program.num_queries, 0), np.int64))
    if workers is None:
        workers = default_workers() if 2.0 * len(vectors) * d * n >= WORKERS_MIN_FLOPS else 1
    chunk = int(chunk_size)
    if workers > 1:   # the same memory in all: each worker holds a chunk's buffers
        chunk = max(1, min(chunk // workers, -(-n // workers)))
    starts = list(range(0, n, chunk))
    workers = min(int(workers), len(starts))
    fold = _Fold(docs, vectors, program, ops, kk, lit_a, lit_b, mix, whole, chunk, matmul, on_chunk)
    if workers == 1:
        with torch.inference_mode():
            return fold(starts).result()
    with _one_blas_thread(), ThreadPoolExecutor(workers, thread_name_prefix="itlr-chunk") as pool:
        states = list(pool.map(fold, [starts[w::workers] for w in range(workers)]))
    return kernel.merge_topk(states)


class _Fold:
    """Folds chunks (by their first row) into a fresh top-k state, with its own matmul buffers."""

    def __init__(self, docs, vectors, program, ops, k, lit_a, lit_b, mix, whole, chunk, matmul, on_chunk):
        self.docs, self.vectors, self.program, self.k = docs, vectors, program, k
        self.lit_a, self.lit_b, self.mix, self.whole = lit_a, lit_b, mix, whole
        self.fams = kernel.family_codes(ops)
        self.chunk, self.matmul, self.on_chunk = chunk, matmul, on_chunk
        self._lock = threading.Lock()

    def __call__(self, starts: list[int]) -> "kernel.TopKState":
        p, n = self.program, self.docs.shape[0]
        state = kernel.TopKState(p.num_queries, self.k)
        with torch.inference_mode():
            gemm = ChunkMatmul(self.docs, self.vectors, self.chunk, torch.device("cpu"), self.matmul)
            for start in starts:
                block = gemm.chunk(start, min(n, start + self.chunk))
                sims = gemm.sims(block).numpy()
                kernel.fused_chunk_topk(sims, p.opcodes, p.operands, p.offsets, self.lit_a, self.lit_b, self.fams,
                                        p.max_depth, state, start, self.mix, self.whole, RECIPROCAL_FLOOR)
                if self.on_chunk is not None:
                    with self._lock:   # progress bars are not thread-safe
                        self.on_chunk(block.shape[0])
        return state


@contextmanager
def _one_blas_thread():
    """Every BLAS and OpenMP pool (numpy's OpenBLAS, torch's) at one thread while the chunk workers run:
    each worker's product is then computed in the worker, and the cores are the workers'."""
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        torch.set_num_threads(before)


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
            chunk_size = chunk_for_budget(docs.shape[1], len(program.terms), program.num_queries, program.max_depth)
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
            chunk_size = chunk_for_budget(docs.shape[1], len(lin.vectors), prog.num_queries, prog.max_depth + 2)
        return search_fused(docs, lin.vectors, prog, lin.ops, k, lin.lit_a, lin.lit_b, lin.mix, whole,
                            chunk_size=chunk_size, on_chunk=on_chunk)


def _cpu_only(device) -> None:
    if torch.device(device).type != "cpu":
        raise InputError(f"the numba backend runs on the CPU, not {device}", "--backend numba",
                         "--device cpu, or --backend auto|torch|triton on a GPU")


assert PUSH == kernel.PUSH
