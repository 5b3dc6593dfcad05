"""Scoring backends behind one interface.

A backend turns (document matrix, term embeddings, compiled program, ops, k)
-- or, with scoring options, a ``scoring.LinearScoring`` -- into the top-k ``(scores float32 (Q, k'), rows int64 (Q, k'))`` with
k' = min(k, N), sorted by score descending and, within equal scores, by
ascending document row.  ``torch`` is the reference (CPU or CUDA) and the
oracle of every other backend.
"""

from __future__ import annotations

from typing import Callable, Protocol

import numpy as np
import torch

from ..compiler import Program
from ..errors import InputError
from ..ops import Ops
from .reference import search_reference

BACKENDS = ("auto", "torch", "triton")
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
        raise InputError("device cuda requested but no CUDA GPU is visible", "--device", "auto or cpu")
    if name.split(":")[0] not in ("cpu", "cuda"):
        raise InputError(f"unknown device {name!r}", "--device", " or ".join(DEVICES))
    return torch.device(name)


def get_backend(name: str, device: torch.device) -> Backend:
    """``auto`` picks the fused Triton kernel on CUDA when Triton is installed, else the torch reference."""
    if name not in BACKENDS:
        raise InputError(f"unknown backend {name!r}", "--backend", " or ".join(BACKENDS))
    if name == "auto":
        name = "triton" if device.type == "cuda" and triton_available() else "torch"
    if name == "torch":
        return TorchBackend()
    from .triton import TritonBackend  # imports triton lazily

    return TritonBackend()


def triton_available() -> bool:
    try:
        import triton  # noqa: F401
    except ImportError:
        return False
    return True
