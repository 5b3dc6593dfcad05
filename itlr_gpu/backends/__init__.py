"""Scoring backends behind one interface.

A backend turns (document matrix, term embeddings, compiled program, ops, k)
-- or, with scoring options, a ``scoring.LinearScoring`` -- into the top-k ``(scores float32 (Q, k'), rows int64 (Q, k'))`` with
k' = min(k, N), sorted by score descending and, within equal scores, by
ascending document row.  ``torch`` is the reference (CPU or CUDA) and the
oracle of every other backend; ``triton`` is the fused GPU kernel, ``numba`` its CPU
twin (scoring and top-k fused after the BLAS matmul).
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np
import torch

from ..compiler import Program
from ..errors import InputError
from ..ops import Ops
from .reference import search_reference

BACKENDS = ("auto", "torch", "triton", "numba")
DEVICES = ("auto", "cpu", "cuda")


class Backend(Protocol):
    name: str

    def search(self, docs, term_embeddings, program: Program, ops: Ops, k: int, *, device: torch.device,
               chunk_size: int | None = None,
               on_chunk: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]: ...

    def search_with_options(self, docs, term_embeddings, program: Program, ops: Ops, k: int, options,
                            whole_embeddings=None, *, device: torch.device, chunk_size: int | None = None,
                            on_chunk: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]: ...

    def search_linear(self, docs, lin, k: int, *, device: torch.device, chunk_size: int | None = None,
                      on_chunk: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Scoring options already folded by ``scoring.linearize`` (statistics from the whole index), so
        every shard of a sharded search scores with the same constants."""


class TorchBackend:
    name = "torch"

    def search(self, docs, term_embeddings, program, ops, k, *, device, chunk_size=None, on_chunk=None):
        return search_reference(docs, term_embeddings, program, ops, k, device=device,
                                chunk_size=chunk_size, on_chunk=on_chunk)

    def search_with_options(self, docs, term_embeddings, program, ops, k, options, whole_embeddings=None, *,
                            device, chunk_size=None, on_chunk=None):
        from .reference import search_with_options

        return search_with_options(docs, term_embeddings, program, ops, k, options, whole_embeddings,
                                   device=device, chunk_size=chunk_size, on_chunk=on_chunk)

    def search_linear(self, docs, lin, k, *, device, chunk_size=None, on_chunk=None):
        from .reference import search_linear

        return search_linear(docs, lin, k, device=device, chunk_size=chunk_size, on_chunk=on_chunk)


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``auto`` -> cuda when a GPU is visible, else cpu; asking for cuda without one is an error."""
    name = str(device)
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise InputError("device cuda requested but no CUDA GPU is visible", "device", "auto or cpu")
    if name.split(":")[0] not in ("cpu", "cuda"):
        raise InputError(f"unknown device {name!r}", "device", " or ".join(DEVICES))
    return torch.device(name)


def get_backend(name: str, device: torch.device) -> Backend:
    """``auto``: on CUDA with Triton installed, :class:`AutoBackend` (fused kernel or chunked torch path per
    batch, by :func:`choose_cuda_backend`); on a CPU with numba :class:`CpuAutoBackend` (the fused numba
    loop for large searches); otherwise the torch reference."""
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}", "backend", " or ".join(BACKENDS))
    if name == "auto":
        if device.type == "cuda" and triton_available():
            return AutoBackend()
        if device.type == "cpu" and numba_available():
            return CpuAutoBackend()
        name = "torch"
    if name == "torch":
        return TorchBackend()
    if name == "numba":
        if device.type != "cpu":
            raise InputError(f"the numba backend runs on the CPU, not {device}", "--backend numba",
                             "--device cpu, or --backend auto|torch|triton on a GPU")
        if not numba_available():
            raise InputError("numba is not installed", "--backend numba",
                             "`pip install numba`, or --backend torch")
        from .cpu_fused import NumbaBackend

        return NumbaBackend()
    from .triton import TritonBackend  # imports triton lazily

    return TritonBackend()


# ---- ``--backend auto`` on CUDA -----------------------------------------------------------------------
# PROVISIONAL: these thresholds come from the kernel's register budget on sm_90 (ptxas's report,
# benchmarks/results/kernel_registers.md) and its design, not from GPU timings yet.  benchmarks/gpu_kernel.py
# times both paths at the rule's corners ("auto rule" table); the GPU results confirm or correct them here.
AUTO_MAX_K = 1024          # k above: the merge's L = 2048 list spills registers; the torch path keeps up
AUTO_MAX_DEPTH = 8         # deeper stacks: S = 16 register tiles per lane cannot stay in registers
AUTO_MIN_QUERIES = 4       # fewer queries fill < 1/16 of a 64-lane block; the torch matmul is HBM-bound alike


def choose_cuda_backend(k: int, max_depth: int, num_queries: int) -> str:
    """``"triton"`` (the fused kernel) or ``"torch"`` (the chunked torch path) for one batch on a CUDA GPU.

    The rule (provisional until the GPU benchmark confirms it; see the constants above):
    the fused kernel when ``k <= AUTO_MAX_K`` (2048 is its hard limit, K_MAX), the batch's stack depth
    ``<= AUTO_MAX_DEPTH`` and it has ``>= AUTO_MIN_QUERIES`` queries; the torch path otherwise.
    Both give the same top-k (up to float32 summation order), so the rule only decides speed.
    """
    if k > AUTO_MAX_K or max_depth > AUTO_MAX_DEPTH or num_queries < AUTO_MIN_QUERIES:
        return "torch"
    return "triton"


class AutoBackend:
    """``--backend auto`` on CUDA: each batch goes to the fused kernel or the chunked torch path by
    :func:`choose_cuda_backend` (k, stack depth, batch size)."""

    name = "auto"

    def __init__(self):
        self._torch = TorchBackend()
        self._triton = None
        self.last_choice: str | None = None   # what the last batch ran on (for tests and progress reports)

    def _pick(self, program: Program, k: int):
        choice = choose_cuda_backend(int(k), int(program.max_depth), int(program.num_queries))
        self.last_choice = choice
        if choice == "torch":
            return self._torch
        if self._triton is None:
            from .triton import TritonBackend

            self._triton = TritonBackend()
        return self._triton

    def search(self, docs, term_embeddings, program, ops, k, *, device, chunk_size=None, on_chunk=None):
        return self._pick(program, k).search(docs, term_embeddings, program, ops, k, device=device,
                                             chunk_size=chunk_size, on_chunk=on_chunk)

    def search_with_options(self, docs, term_embeddings, program, ops, k, options, whole_embeddings=None, *,
                            device, chunk_size=None, on_chunk=None):
        return self._pick(program, k).search_with_options(docs, term_embeddings, program, ops, k, options,
                                                          whole_embeddings, device=device, chunk_size=chunk_size,
                                                          on_chunk=on_chunk)

    def search_linear(self, docs, lin, k, *, device, chunk_size=None, on_chunk=None):
        return self._pick(lin.program, k).search_linear(docs, lin, k, device=device, chunk_size=chunk_size,
                                                        on_chunk=on_chunk)


# ---- ``--backend auto`` on a CPU ------------------------------------------------------------------------
CPU_FUSED_MIN_PAIRS = 10_000_000
"""Documents x queries below which ``auto`` keeps the torch path on a CPU: there the whole search takes
milliseconds either way, and the numba loop would add its import (and, once per machine, its compilation)."""


class CpuAutoBackend:
    """``--backend auto`` on a CPU with numba: the fused loop for searches of at least
    ``CPU_FUSED_MIN_PAIRS`` document x query pairs, the torch reference below (equal results)."""

    name = "auto"

    def __init__(self):
        self._torch = TorchBackend()
        self._numba = None
        self.last_choice: str | None = None

    def _pick(self, n: int, num_queries: int):
        if n * num_queries < CPU_FUSED_MIN_PAIRS:
            self.last_choice = "torch"
            return self._torch
        if self._numba is None:
            from .cpu_fused import NumbaBackend

            self._numba = NumbaBackend()
        self.last_choice = "numba"
        return self._numba

    def search(self, docs, term_embeddings, program, ops, k, *, device, chunk_size=None, on_chunk=None):
        return self._pick(docs.shape[0], program.num_queries).search(
            docs, term_embeddings, program, ops, k, device=device, chunk_size=chunk_size, on_chunk=on_chunk)

    def search_with_options(self, docs, term_embeddings, program, ops, k, options, whole_embeddings=None, *,
                            device, chunk_size=None, on_chunk=None):
        return self._pick(docs.shape[0], program.num_queries).search_with_options(
            docs, term_embeddings, program, ops, k, options, whole_embeddings, device=device,
            chunk_size=chunk_size, on_chunk=on_chunk)

    def search_linear(self, docs, lin, k, *, device, chunk_size=None, on_chunk=None):
        return self._pick(docs.shape[0], lin.program.num_queries).search_linear(
            docs, lin, k, device=device, chunk_size=chunk_size, on_chunk=on_chunk)


def numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def triton_available() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True
