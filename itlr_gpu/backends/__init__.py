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
        raise InputError(f"device {name} requested but no CUDA GPU is visible", "device", "auto or cpu")
    if name.split(":")[0] not in ("cpu", "cuda"):
        raise InputError(f"unknown device {name!r}", "device", " or ".join(DEVICES))
    try:
        dev = torch.device(name)
    except RuntimeError:   # "cpu:abc", "cuda:x"
        raise InputError(f"unknown device {name!r}", "device", " or ".join(DEVICES) + ", or cuda:N") from None
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        raise InputError(f"device {name!r}: this machine has {count} CUDA GPU{'s' if count != 1 else ''}", "device",
                         f"cuda:0 .. cuda:{count - 1}, auto or cpu")
    return dev


def same_device(a: torch.device, b: torch.device) -> bool:
    """Whether two devices are one: torch compares ``cuda`` and ``cuda:0`` unequal, though ``cuda`` is the
    current GPU (a tensor reports ``cuda:0``; ``--device cuda`` resolves to ``cuda``)."""
    a, b = torch.device(a), torch.device(b)
    if a.type != b.type:
        return False
    if a.type != "cuda":
        return True
    if a.index is None or b.index is None:
        current = torch.cuda.current_device()
        return (current if a.index is None else a.index) == (current if b.index is None else b.index)
    return a.index == b.index


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
    if name == "triton" and not triton_available():
        raise InputError("triton is not installed", "--backend triton",
                         "`pip install -e '.[gpu]'` (triton>=3.6) on a CUDA machine, or --backend auto|torch")
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
# From the fourth H200 run (benchmarks/results/gpu-run4/, the push-batched form and the whole-wave planner;
# docs/gpu.md): the fused kernel won every batch with k <= 1000 -- 1.2x at 2 queries, 1.3x-3.4x at 8-32, 3.1x at
# stack depth 8, 1.5x at depth 12, 6.1x-6.9x at 1,024 queries and k <= 100, 3.3x / 6.4x at k = 1000 on 1M / 10M
# documents and 1.7x at depth 2, k = 1000 on 1M (the earlier planner's starved 1M plans lost 3.6x-8.9x there:
# gpu-run2) -- and lost 2.2x at k = 2048,
# whose L = 2048 lists merge in registers.
AUTO_MAX_K = 1024          # k above: L = 2048 lists (measured 2.2x slower at k = 2048); the torch path keeps up
AUTO_MAX_DEPTH = 16        # measured faster up to depth 12 (16 stack slots); deeper stacks are unmeasured
AUTO_MIN_QUERIES = 2       # measured faster from 2 queries (9.2 vs 11.0 ms at 1M); one query is unmeasured
DEFAULT_SMS = 132          # an H100/H200, for a plan asked without a device


def choose_cuda_backend(k: int, max_depth: int, num_queries: int, *, n_docs: int | None = None,
                        dim: int | None = None, itemsize: int = 2, num_terms: int | None = None,
                        sms: int = DEFAULT_SMS, hybrid: bool = False, affine: bool = False, pushes: int = 0) -> str:
    """``"triton"`` (the fused kernel) or ``"torch"`` (the chunked torch path) for one batch on a CUDA GPU.

    The fused kernel when ``k <= AUTO_MAX_K`` (2048 is its hard limit, K_MAX), the batch's stack depth
    ``<= AUTO_MAX_DEPTH``, it has ``>= AUTO_MIN_QUERIES`` queries and -- when the document matrix's shape is
    given (``n_docs`` x ``dim``, ``itemsize`` bytes per value; ``hybrid``, ``affine``: the scoring options'
    whole-query dot and per-literal maps, ``pushes``: the kernel's push-batched accumulators
    (``batch_pushes``), which all choose tiles) -- the kernel's launch plan for it is not starved by its memory budget
    (:func:`itlr_gpu.kernels.fused_logical_topk.plan_launch`); the torch path otherwise.  On a float32 index
    both give the same top-k (up to float32 summation order), so the rule only decides speed; on a float16
    index the kernel rounds the term vectors to float16 as well (scores within about 2e-4 of torch's), so a
    near tie may swap with the path, which the rule picks per batch: pin ``--backend`` for scores that must not
    depend on a query's batch-mates.
    """
    if k > AUTO_MAX_K or max_depth > AUTO_MAX_DEPTH or num_queries < AUTO_MIN_QUERIES:
        return "torch"
    if n_docs is not None and dim is not None:
        from ..kernels import fused_logical_topk as fk

        plan = fk.batch_plan(torch.float16 if itemsize <= 2 else torch.float32, max_depth, k, n_docs, dim,
                             num_queries, num_terms if num_terms is not None else num_queries, sms=sms, hybrid=hybrid,
                             affine=affine, pushes=pushes)
        if plan.starved:
            return "torch"
    return "triton"


def _shape_of(docs) -> dict:
    """The document matrix's shape arguments of :func:`choose_cuda_backend` (numpy array or torch tensor)."""
    if docs is None or getattr(docs, "ndim", 0) != 2:
        return {}
    itemsize = docs.element_size() if isinstance(docs, torch.Tensor) else np.dtype(docs.dtype).itemsize
    # the kernel reads 16-bit matrices as they are and anything else as float32 (TritonBackend._upload)
    return dict(n_docs=int(docs.shape[0]), dim=int(docs.shape[1]), itemsize=2 if itemsize == 2 else 4)


def cuda_choice(program: Program, k: int, docs, device, *, hybrid: bool = False, affine: bool = False) -> str:
    """:func:`choose_cuda_backend` for ``program`` on ``docs`` (any 2-D array or tensor; None: no plan is
    judged) on ``device``: what ``--backend auto`` runs for that batch (``hybrid``, ``affine``: the scoring
    options' epilogue and literal maps, on their paths)."""
    device = torch.device(device)
    sms = (torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda"
           else DEFAULT_SMS)
    shape = _shape_of(docs)
    pushes = 0
    if shape:   # the plan is asked for: with the tiles the launch would take
        from ..kernels import fused_logical_topk as fk

        pushes = fk.batch_pushes(program)
    return choose_cuda_backend(int(k), int(program.max_depth), int(program.num_queries),
                               num_terms=len(program.terms), sms=sms, hybrid=hybrid, affine=affine,
                               pushes=pushes, **shape)


class AutoBackend:
    """``--backend auto`` on CUDA: each batch goes to the fused kernel or the chunked torch path by
    :func:`choose_cuda_backend` (k, stack depth, batch size, the kernel's launch plan for the documents)."""

    name = "auto"

    def __init__(self):
        self._torch = TorchBackend()
        self._triton = None
        self.last_choice: str | None = None   # what the last batch ran on (for tests and progress reports)

    def _pick(self, program: Program, k: int, docs, device, hybrid: bool = False, affine: bool = False):
        from .triton import TritonBackend, resident_fits

        choice = cuda_choice(program, k, docs, device, hybrid=hybrid, affine=affine)
        if choice == "triton" and not resident_fits(docs, torch.device(device)):
            choice = "torch"   # the kernel reads a resident matrix; the torch path streams it in chunks
        self.last_choice = choice
        if choice == "torch":
            return self._torch
        if self._triton is None:
            self._triton = TritonBackend()
        return self._triton

    def search(self, docs, term_embeddings, program, ops, k, *, device, chunk_size=None, on_chunk=None):
        return self._pick(program, k, docs, device).search(docs, term_embeddings, program, ops, k, device=device,
                                                           chunk_size=chunk_size, on_chunk=on_chunk)

    def search_with_options(self, docs, term_embeddings, program, ops, k, options, whole_embeddings=None, *,
                            device, chunk_size=None, on_chunk=None):
        return self._pick(program, k, docs, device, hybrid=options.hybrid is not None, affine=True).search_with_options(
            docs, term_embeddings, program, ops, k, options, whole_embeddings, device=device,
            chunk_size=chunk_size, on_chunk=on_chunk)

    def search_linear(self, docs, lin, k, *, device, chunk_size=None, on_chunk=None):
        return self._pick(lin.program, k, docs, device, hybrid=lin.mix is not None, affine=True).search_linear(
            docs, lin, k, device=device, chunk_size=chunk_size, on_chunk=on_chunk)


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
