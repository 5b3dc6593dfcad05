"""The fused Triton backend: one kernel computes similarities, evaluates every query and keeps its top-k.

On CUDA the document matrix is uploaded once and kept resident (one matrix per
process, cached by the array's identity and shape across backend objects, so
every search, bulk batch and Ray actor call over the same index streams it from
GPU memory only; freed when the array is).  On the CPU the very same kernel source runs in
Triton's interpreter: correct but very slow, for debugging only (a warning says
so; ``--backend auto`` never picks it there).

See ``itlr_gpu/kernels/fused_logical_topk.py`` for the design and the limits
(k <= 2048; larger k falls back to the torch reference on the same device).
Scoring options (``itlr_gpu.scoring``) run in the same kernel: their statistics
come from the document sample, and ``scoring.linearize`` turns them into
per-literal affine maps and a per-query epilogue; only ``percentile`` (a lookup
table) takes the torch path.
"""

from __future__ import annotations

import threading
import weakref
from typing import Callable

import numpy as np
import torch

from ..compiler import Program
from ..errors import warn_caller
from ..ops import Ops
from ..scoring import ScoreOptions, linearize_options
from .reference import search_linear, search_reference, search_with_options

K_MAX = 2048  # the kernel's limit on k (itlr_gpu.kernels.fused_logical_topk.K_MAX)


# The resident matrix: (key, weakref to the source or None, tensor).  One per process, shared by every
# TritonBackend (get_backend makes one per search call): a second matrix replaces the first.
_LOCK = threading.RLock()   # (re-entrant: a weakref's callback may run while it is held)
_RESIDENT: list = [None]
FIT_MARGIN = 0.10   # of the matrix, beside it on the GPU: the kernel's buffers (4.5 % budget), terms, results


def _matrix_dtype(docs) -> torch.dtype:
    """The dtype the kernel reads ``docs`` in: 16-bit as stored, anything else as float32."""
    if isinstance(docs, torch.Tensor):
        return docs.dtype if docs.dtype in _DTYPES else torch.float32
    return {np.dtype(np.float16): torch.float16}.get(np.dtype(docs.dtype), torch.float32)


def _matrix_bytes(docs) -> int:
    """The bytes of the kernel's resident copy of ``docs``."""
    return int(docs.shape[0]) * int(docs.shape[1]) * torch.finfo(_matrix_dtype(docs)).bits // 8


def _key(docs, device: torch.device) -> tuple:
    if isinstance(docs, torch.Tensor):
        return ("tensor", docs.data_ptr(), tuple(docs.shape), str(docs.dtype), str(device))
    return ("array", id(docs), tuple(docs.shape), str(docs.dtype), str(device))


def _cached(docs, device: torch.device) -> torch.Tensor | None:
    held = _RESIDENT[0]
    if held is not None and held[0] == _key(docs, device) and (held[1] is None or held[1]() is docs):
        return held[2]
    return None


def resident_fits(docs, device: torch.device) -> bool:
    """Whether the kernel's resident copy of ``docs`` is on ``device`` already, or fits in its free memory
    (the allocator's cached blocks and a resident matrix it would replace count as free) with
    :data:`FIT_MARGIN` to spare.  Off CUDA: True (the interpreter reads host memory)."""
    from . import same_device

    device = torch.device(device)
    if device.type != "cuda" or docs is None or getattr(docs, "ndim", 0) != 2:
        return True
    if isinstance(docs, torch.Tensor) and same_device(docs.device, device) or _cached(docs, device) is not None:
        return True
    free, _ = torch.cuda.mem_get_info(device)
    reusable = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    held = _RESIDENT[0]
    if held is not None and same_device(held[2].device, device):
        reusable += held[2].numel() * held[2].element_size()
    return _matrix_bytes(docs) * (1 + FIT_MARGIN) <= free + reusable


def _drop_resident(_ref=None) -> None:
    """The source array is gone (a weakref's callback), or another matrix replaces it: free its GPU copy."""
    with _LOCK:
        held = _RESIDENT[0]
        if held is not None and (_ref is None or held[1] is _ref):
            _RESIDENT[0] = None


class TritonBackend:
    name = "triton"

    def search(self, docs, term_embeddings, program: Program, ops: Ops, k: int, *, device,
               chunk_size: int | None = None,
               on_chunk: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        device = torch.device(device)
        if min(int(k), docs.shape[0]) > K_MAX:
            warn_caller(f"k={k} is above the fused kernel's limit ({K_MAX}): "
                        "using the torch reference", RuntimeWarning)
            return search_reference(docs, term_embeddings, program, ops, k, device=device,
                                    chunk_size=chunk_size, on_chunk=on_chunk)
        return self._run(docs, term_embeddings, program, ops, int(k), device, {}, on_chunk)

    def search_with_options(self, docs, term_embeddings, program: Program, ops: Ops, k: int,
                            options: ScoreOptions, whole_embeddings=None, *, device, chunk_size: int | None = None,
                            on_chunk: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The scoring options in the fused kernel: statistics over the document sample (torch, on the
        device), folded into per-literal affine maps and a per-query epilogue (``scoring.linearize``)."""
        from ..kernels import interpreter_ready

        device = torch.device(device)
        if options.calibration == "percentile":
            warn_caller("percentile calibration is a lookup table, not an affine map: using the torch path "
                        "for the scoring options", RuntimeWarning)
            return search_with_options(docs, term_embeddings, program, ops, k, options, whole_embeddings,
                                       device=device, chunk_size=chunk_size, on_chunk=on_chunk)
        # On CUDA the statistics sample comes from the resident matrix the kernel will read (no second host
        # read); not when k sends the search to the torch path.
        kernel = min(int(k), docs.shape[0]) <= K_MAX and (device.type == "cuda" or interpreter_ready())
        source = self._upload(docs, device) if kernel else docs
        lin = linearize_options(source, term_embeddings, program, ops, options, whole_embeddings, device=device)
        return self.search_linear(docs, lin, k, device=device, chunk_size=chunk_size, on_chunk=on_chunk)

    def search_linear(self, docs, lin, k: int, *, device, chunk_size: int | None = None,
                      on_chunk: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
        device = torch.device(device)
        if min(int(k), docs.shape[0]) > K_MAX:
            warn_caller(f"k={k} is above the fused kernel's limit ({K_MAX}): using the torch path",
                        RuntimeWarning)
            return search_linear(docs, lin, k, device=device, chunk_size=chunk_size, on_chunk=on_chunk)
        extra = {"lit_affine": (lin.lit_a, lin.lit_b)}
        if lin.mix is not None:
            extra["epilogue"] = (lin.mix, lin.whole_arg)
        return self._run(docs, lin.vectors.cpu(), lin.program, lin.ops, int(k), device, extra, on_chunk)

    def _run(self, docs, term_embeddings, program, ops, k, device, extra, on_chunk):
        """One fused search (the kernel compiled on CUDA, interpreted elsewhere); ``extra``: scoring options."""
        from ..kernels import interpreter_ready, kernel_module

        interpret = device.type != "cuda"
        if interpret:
            warn_caller("triton backend on the CPU runs the kernel in Triton's interpreter: "
                        "for debugging only (very slow); use --backend torch on the CPU",
                        RuntimeWarning)
        n = docs.shape[0]
        if interpret and not interpreter_ready():
            # Triton was imported compiled in this process: run the interpreter in a child process.
            scores, rows = _search_in_subprocess(docs, term_embeddings, program, ops, k, extra)
        else:
            kernels = kernel_module(interpret)
            resident = self._upload(docs, device)
            terms = torch.as_tensor(np.asarray(term_embeddings, dtype=np.float32))
            s, r = kernels.fused_search(resident, terms, program, ops, k, **extra)
            scores, rows = s.cpu().numpy(), r.cpu().numpy()
        if on_chunk is not None:
            on_chunk(n)
        return scores, rows

    def _upload(self, docs, device: torch.device) -> torch.Tensor:
        """The document matrix on ``device`` in its own dtype, uploaded once per array (in row chunks,
        so a memory-mapped matrix never needs a second host copy) and kept for the next search."""
        from ..errors import InputError
        from . import same_device

        if isinstance(docs, torch.Tensor) and same_device(docs.device, device):
            return docs if docs.dtype in _DTYPES else docs.float()
        with _LOCK:
            tensor = _cached(docs, device)
            if tensor is not None:
                return tensor
            _RESIDENT[0] = None   # a matrix of another index makes room first
            if not resident_fits(docs, device):
                n, d = docs.shape
                free, total = torch.cuda.mem_get_info(device)
                raise InputError(f"the index's {n:,} x {d} matrix ({_matrix_bytes(docs) / 2**30:.1f} GiB) does not fit in the free "
                                 f"memory of {device} ({free / 2**30:.1f} of {total / 2**30:.1f} GiB) with "
                                 f"{FIT_MARGIN:.0%} to spare", "--backend triton",
                                 "--backend auto or torch (they stream the matrix in chunks), or --shard-rows / "
                                 "--memory-cap")
            n, d = docs.shape
            dtype = _matrix_dtype(docs)
            tensor = torch.empty((n, d), dtype=dtype, device=device)
            step = max(1, (64 << 20) // max(1, d * 4))
            for lo in range(0, n, step):
                hi = min(n, lo + step)
                if isinstance(docs, torch.Tensor):
                    part = docs[lo:hi]
                else:
                    part = torch.from_numpy(np.array(docs[lo:hi], dtype=np.float16 if dtype == torch.float16
                                                     else np.float32))
                tensor[lo:hi].copy_(part.to(dtype))
            try:
                ref = weakref.ref(docs, _drop_resident)
            except TypeError:
                ref = None
            _RESIDENT[0] = (_key(docs, device), ref, tensor)
            return tensor


_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def _search_in_subprocess(docs, term_embeddings, program, ops, k, extra):
    """Run the interpreted kernel in a child process with TRITON_INTERPRET=1 (arrays travel in a temp file)."""
    import os
    import subprocess
    import sys
    import tempfile

    docs_t = docs if isinstance(docs, torch.Tensor) else torch.from_numpy(np.array(docs))
    with tempfile.TemporaryDirectory(prefix="itlr-triton-") as tmp:
        src, dst = os.path.join(tmp, "in.pt"), os.path.join(tmp, "out.pt")
        torch.save({"docs": docs_t.cpu(), "terms": torch.from_numpy(np.asarray(term_embeddings, dtype=np.float32)),
                    "program": program, "ops": ops, "k": k, "extra": extra}, src)
        env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        proc = subprocess.run([sys.executable, "-m", "itlr_gpu.backends.triton", src, dst], env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"interpreted triton search failed:\n{proc.stderr[-4000:]}")
        out = torch.load(dst)
    return out["scores"].numpy(), out["rows"].numpy()


if __name__ == "__main__":  # the child of _search_in_subprocess
    import sys

    from ..kernels import kernel_module

    job = torch.load(sys.argv[1], weights_only=False)
    kernels = kernel_module(True)
    s, r = kernels.fused_search(job["docs"], job["terms"], job["program"], job["ops"], job["k"], **job["extra"])
    torch.save({"scores": s.cpu(), "rows": r.cpu()}, sys.argv[2])
