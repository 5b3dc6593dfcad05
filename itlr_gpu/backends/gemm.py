"""Chunk similarities ``vectors @ chunk.T`` with the fastest BLAS in the process.

torch's CPU wheel multiplies with MKL, numpy's with OpenBLAS; which one is faster depends on
the machine (MKL is slow on AMD CPUs: 1.7 s vs 1.0 s for the same product on a 2-core EPYC).
On a CPU, :func:`choose` times both once per process and *shape class* (terms rounded up to
a power of two, dimension, chunk) on a slice of that shape and caches the winner;
searches too small for the probe to pay (:data:`PROBE_MIN_FLOPS`) use :func:`unprobed_default`:
numpy on AMD CPUs (where MKL was the slower on both AMD EPYCs measured), torch elsewhere.
``ITLR_MATMUL=torch|numpy`` (or ``matmul=`` on the search functions) skips the probe.
On CUDA it is always torch.

:class:`ChunkMatmul` also owns the reused buffers: a float16/bfloat16 index chunk is widened
once into a float32 buffer (no per-chunk allocation), and the similarities go to a reused
output buffer.  Both BLAS compute the same float32 product up to summation order (the tests
compare each against a numpy oracle on random inputs).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import warnings

import numpy as np
import torch

from ..errors import InputError

__all__ = ["MATMULS", "PROBE_MIN_FLOPS", "choose", "choices", "unprobed_default", "ChunkMatmul"]

MATMULS = ("auto", "torch", "numpy")
# The probe multiplies a slice as wide as the search's chunks (up to PROBE_DOCS documents) and as tall as its
# terms (up to PROBE_TERMS): MKL's lag behind OpenBLAS on an AVX2 EPYC grows with the width (1.35x at 2,048
# documents, 2.2x at 8,192 and 21,845), so the earlier 512 x 2,048 slice called the two even where torch was 1.7x
# slower in bulk (benchmarks/results/cpu_search.md); on an AMX Xeon MKL gains on OpenBLAS with the height.
# Each library is timed in a block of its own after PROBE_SETTLE_S of quiet: a library's worker threads keep
# spinning for ~0.1 s after a call: timed alternately on the 2-core Xeon, MKL took twice OpenBLAS's time
# (benchmarks/results/cpu_search-xeon.md) although it was 1.1-1.2x faster in bulk (in a quick test outside the
# benchmarks, MKL's calls right after OpenBLAS's ran 1.5-2x slower than its calls after its own).
# Medians of 3 calls per block keep the probe's cost (up to ~5e10 flops and 0.3 s of quiet, once per process and
# shape class) near that of the smallest search it is run for (PROBE_MIN_FLOPS).
PROBE_MIN_FLOPS = 5e10
PROBE_TERMS = 1024
PROBE_DOCS = 8192
PROBE_REPEAT = 3
PROBE_SETTLE_S = 0.15

_cache: dict[tuple[int, int, int], dict] = {}
_lock = threading.Lock()


def shape_class(num_vectors: int, d: int, chunk: int) -> tuple[int, int, int]:
    """(terms rounded up to a power of two, d, chunk): searches in one class share a probe."""
    return 1 << max(0, int(num_vectors - 1).bit_length()), int(d), int(chunk)


def choices() -> dict[str, dict]:
    """The probes done in this process: ``{"T x d x C": {"choice", "torch_s", "numpy_s"}}`` (for reports)."""
    with _lock:
        return {f"{t}x{d}x{c}": dict(v) for (t, d, c), v in _cache.items()}


def choose(num_vectors: int, d: int, chunk: int, n: int, device: torch.device, matmul: str = "auto") -> str:
    """``torch`` or ``numpy`` for a search of ``n`` documents in chunks of ``chunk`` (see module docstring)."""
    if matmul not in MATMULS:
        raise ValueError(f"matmul {matmul!r} is not one of {MATMULS}")
    if device.type != "cpu":
        return "torch"
    if matmul == "auto":
        matmul = os.environ.get("ITLR_MATMUL", "auto")
        if matmul not in MATMULS:
            raise InputError(f"unknown value {matmul!r}", "ITLR_MATMUL", " or ".join(MATMULS))
    if matmul != "auto":
        return matmul
    if 2.0 * num_vectors * d * n < PROBE_MIN_FLOPS:
        return unprobed_default()
    key = shape_class(num_vectors, d, chunk)
    with _lock:
        if key not in _cache:
            _cache[key] = _probe(*key)
        return _cache[key]["choice"]


def unprobed_default() -> str:
    """The BLAS of a search too small to probe: numpy (OpenBLAS) on AMD CPUs, torch (MKL) elsewhere.  In bulk
    MKL took 1.7x OpenBLAS's time on the AVX2 EPYC (benchmarks/results/cpu_search.md) and 2.5x on the Zen 5
    EPYC (cpu_search-zen5.md), 0.9x on the Intel Xeon (cpu_search-xeon.md)."""
    from ..cpuinfo import cpu_vendor

    return "numpy" if cpu_vendor() == "AuthenticAMD" else "torch"


def _probe(t: int, d: int, chunk: int) -> dict:
    """Time both BLAS on a (min(t, PROBE_TERMS) x d) @ (d x min(chunk, PROBE_DOCS)) product, each in a block
    of its own (quiet, a warm-up call, PROBE_REPEAT timed calls), as the search runs it: one library only.

    The median of the repeats stands for each: MKL's time for the same product varies by up to 1.7x from call
    to call on an AMD EPYC, so the fastest of a few repeats can be a lucky outlier."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((min(t, PROBE_TERMS), d), dtype=np.float32)
    b = rng.standard_normal((min(chunk, PROBE_DOCS), d), dtype=np.float32)
    out = np.empty((len(a), len(b)), dtype=np.float32)
    at, bt, ot = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
    runs = {"torch": lambda: torch.mm(at, bt.T, out=ot), "numpy": lambda: np.matmul(a, b.T, out=out)}
    times: dict[str, list[float]] = {name: [] for name in runs}
    with torch.inference_mode():
        for name, fn in runs.items():
            time.sleep(PROBE_SETTLE_S)   # the other library's workers stop spinning
            fn()                         # warm-up: thread pool, packing buffers (MKL's first call is slow)
            for _ in range(PROBE_REPEAT):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    best = {name: float(np.median(v)) for name, v in times.items()}
    return {"choice": min(best, key=best.get), "torch_s": best["torch"], "numpy_s": best["numpy"]}


@contextlib.contextmanager
def _one_torch_thread():
    """torch's intra-op pool at one thread for the block (process-wide: a concurrent torch call in
    another thread runs single-threaded meanwhile), restored after."""
    before = torch.get_num_threads()
    if before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def host_tensor(array) -> torch.Tensor:
    """A host array (a read-only memory map too: an index is mapped read-only) as a tensor sharing its memory,
    for a copy to a device.  torch warns that a non-writable array's tensor may be written through; it is only
    read here, so the warning would name a hazard that cannot occur."""
    array = np.ascontiguousarray(array)
    if array.dtype.kind != "f" or array.dtype.itemsize not in (2, 4, 8) or array.dtype.name == "bfloat16":
        array = np.asarray(array, dtype=np.float32)   # (ml_dtypes' bfloat16 and other types torch cannot map)
    if array.flags.writeable:
        return torch.from_numpy(array)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.from_numpy(array)


class ChunkMatmul:
    """``sims(lo, hi)``: (V x C) float32 similarities of ``vectors`` to rows lo:hi of ``docs``, plus
    the float32 chunk itself, with reused buffers on the CPU.

    The returned tensors are views of buffers reused by the next call: callers fold them into
    their result before asking for the next chunk (the streaming top-k does)."""

    def __init__(self, docs, vectors: torch.Tensor, chunk_size: int, device: torch.device, matmul: str = "auto"):
        self.docs = docs
        self.device = device
        self.vectors = vectors.to(device=device, dtype=torch.float32).contiguous()
        v, d = self.vectors.shape
        n = docs.shape[0]
        c = min(chunk_size, max(n, 1))
        self.kind = choose(v, d, c, n, device, matmul)
        self._on_cpu = device.type == "cpu"
        self._wide: np.ndarray | None = None
        self._out = np.empty(v * c, dtype=np.float32) if self._on_cpu else None
        self._vectors_np = self.vectors.numpy() if self._on_cpu else None
        self._chunk = c

    def chunk(self, lo: int, hi: int) -> torch.Tensor:
        """Rows lo:hi of the documents as a float32 (C x d) tensor on the device."""
        docs = self.docs
        if isinstance(docs, torch.Tensor):
            return docs[lo:hi].to(device=self.device, dtype=torch.float32)
        block = docs[lo:hi]
        if block.dtype == np.float32 and isinstance(block, np.ndarray) and block.flags.writeable \
                and block.flags.c_contiguous:
            return torch.from_numpy(block).to(self.device)
        if not self._on_cpu:   # a GPU copies anyway: the rows as stored (half the bytes for float16), widened there
            return host_tensor(block).to(self.device).to(torch.float32)
        if self._wide is None:
            self._wide = np.empty((self._chunk, docs.shape[1]), dtype=np.float32)
        wide = self._wide[: hi - lo]
        if block.dtype == np.float16:
            # torch's conversion is vectorised (F16C): ~5x numpy's on the 2-core AVX2 machine.  Before a numpy
            # (OpenBLAS) product on one thread: torch's OpenMP workers keep spinning after a parallel copy and
            # slow the OpenBLAS call that follows (86 ms -> 144 ms), while one thread widens at memory speed
            # anyway.  Before torch's own product the same workers run it, and the one-thread switch cost more
            # than it saved (a chunk's widen + MKL product 23.3 ms vs 21.8 ms on all threads, 2-core Xeon).
            # A read-only memmap is only read here, hence the silenced "not writable" warning.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                src = torch.from_numpy(np.ascontiguousarray(block))
            with _one_torch_thread() if self.kind == "numpy" else contextlib.nullcontext():
                torch.from_numpy(wide).copy_(src)
        else:
            np.copyto(wide, block, casting="same_kind")   # e.g. bfloat16 -> float32, once, no allocation
        return torch.from_numpy(wide)

    def sims(self, chunk: torch.Tensor) -> torch.Tensor:
        """``vectors @ chunk.T`` (V x C float32) with the chosen BLAS."""
        if not self._on_cpu:
            return self.vectors @ chunk.T
        c = chunk.shape[0]
        out = self._out[: self.vectors.shape[0] * c].reshape(self.vectors.shape[0], c)
        if self.kind == "numpy":
            np.matmul(self._vectors_np, chunk.numpy().T, out=out)
            return torch.from_numpy(out)
        result = torch.from_numpy(out)
        torch.mm(self.vectors, chunk.T, out=result)
        return result
