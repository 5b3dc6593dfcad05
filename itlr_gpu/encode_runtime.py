"""Fast CPU inference for sentence-transformers models: ONNX Runtime (fp32 or int8) and OpenVINO (fp32 or bf16).

The torch model is exported once to ONNX (the transformer only; pooling runs here in
numpy), its BERT blocks fused by ONNX Runtime's transformer optimizer (one ``Attention`` node
per layer instead of ~20 small ones, GELU with its bias addition; LayerNorm is left apart from its
residual addition, which ONNX Runtime's CPU kernels run faster than the fused operator), quantised once
with ONNX Runtime's dynamic int8 quantisation, and cached under
``cache_root()/models/onnx/<name>-<weights hash>/`` -- offline, nothing is downloaded.
The fusion is kept only when the fused graph computes the plain export's output on a sample
(other architectures keep the plain graph); OpenVINO reads the plain graph (the fused one
uses ONNX Runtime's own operators).
Texts are tokenised once, sorted by length and batched so that a batch pads only to its
own longest text (the main cost of a BERT encoder on a CPU is the padded tokens).

Supported models: a Transformer module followed by mean or CLS pooling and optionally
Normalize (all-MiniLM-L6-v2 and most sentence-transformers retrievers).  Anything else
is refused with an :class:`~itlr_gpu.errors.InputError`; ``--encoder-backend auto`` then
stays on torch.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import shutil
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError
from .model_settings import settings_outside_the_transformer
from .output import mkdtemp_shared, temp_name

__all__ = ["RUNTIME_BACKENDS", "runtime_available", "require_runtime", "supported", "onnx_model_files",
           "int8_check", "ort_session", "RuntimeEncoderCore", "check_tokenizer"]

RUNTIME_BACKENDS = ("onnx", "openvino")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_EXPORT_VERSION = 5   # bump when the exported graphs change: a new cache folder (2: per-channel int8, 3: fused,
#                       4: LayerNorm kept apart from its residual add, 5: the int8 graph checked against fp32)
# ONNX Runtime's CPU SkipLayerNormalization (residual add + LayerNorm in one operator) took 13% of the int8
# graph's time on SciFact documents, one per pass, where the same work as Add + LayerNormalization takes 4%
# (its profiler, 2-core AVX2 EPYC, onnxruntime 1.32): the fusion is left out at export, and at session load.
_UNFUSED = ["SkipLayerNormFusion"]
_FUSION_TOLERANCE = 1e-3   # max |fused - plain| over the sample's token embeddings (float32 rounding: ~1e-6)
# Dynamic int8 does not suit every model: MiniLM's int8 vectors keep a cosine of 0.99 to fp32 on the sample
# below (0.984 at the least over SciFact's documents), all-mpnet-base-v2's come out unrelated (about 0; its FFN
# input products quantised alone already do that, per-tensor weights give 0.68-0.80).  The export records the
# check; an int8 graph under the bound is never used (``auto`` encodes in fp32, an explicit int8 is refused).
_INT8_MIN_COSINE = 0.97
_CHECK_TEXTS = (
    "Vitamin D supplementation and bone mineral density in older adults.",
    "The central bank raised interest rates to curb inflation.",
    "A short text.",
    "Oil prices fell after OPEC agreed to raise output quotas for the second quarter of the year.",
    "Does regular exercise reduce the risk of depression in teenagers?",
    "Gene expression profiling of tumour samples identified three molecular subtypes with distinct survival "
    "outcomes, independent of stage and grade.",
    "school uniforms should be banned",
    "Wheat and corn futures rose on reports of drought in the Midwest, while soybean prices held steady.",
)


@functools.lru_cache(maxsize=None)
def runtime_available(backend: str) -> bool:
    """Whether the Python packages behind ``backend`` (onnxruntime / openvino) are installed and import
    (an installation that is there but broken counts as absent: ``auto`` then picks torch)."""
    import importlib
    import importlib.util

    need = {"onnx": ("onnxruntime", "onnx"), "openvino": ("openvino", "onnxruntime", "onnx")}[backend]
    if any(importlib.util.find_spec(name) is None for name in need):
        return False
    from .console import quitting_at_once

    try:
        with quitting_at_once():   # (a Ctrl-C inside onnx's C++ import code aborts the process)
            for name in need:
                importlib.import_module(name)
    except Exception:   # noqa: BLE001 -- whatever a broken installation raises on import
        return False
    return True


class RuntimeMissing(InputError):
    """An encoder backend whose package this machine lacks: what the machine has, not a command line that cannot
    work (exit 1, as a --device this machine lacks)."""


def require_runtime(backend: str) -> None:
    """A :class:`RuntimeMissing` unless ``backend``'s runtime is installed and imports (:func:`runtime_available`)."""
    if not runtime_available(backend):
        pkg = "onnxruntime" if backend == "onnx" else "openvino"
        raise RuntimeMissing(f"encoder backend {backend} needs the package {pkg} (not installed, or it does not import)",
                         "--encoder-backend", f"pip install {pkg} (in the repository: pip install -e '.[{backend}]'), "
                         "or --encoder-backend torch")


def supported(model_path: Path) -> bool:
    """Whether the model's module stack is one this module runs (see :func:`_pooling`)."""
    try:
        _pooling(model_path)
    except (InputError, OSError, ValueError, KeyError, TypeError):
        return False
    return True


def _pooling(model_path: Path) -> str:
    """``mean`` or ``cls`` from the model's modules.json / pooling config; refuse other module stacks."""
    modules_file = model_path / "modules.json"
    if not modules_file.is_file():
        raise InputError("no modules.json", str(model_path), "a sentence-transformers model folder")
    modules = json.loads(modules_file.read_text())
    kinds = [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or any(k != "Normalize" for k in kinds[2:]) \
            or modules[0].get("path", "") not in ("", "."):
        raise InputError(f"module stack {kinds} is not supported by the ONNX/OpenVINO encoder", str(model_path),
                         "Transformer + Pooling (mean or cls) [+ Normalize], or --encoder-backend torch")
    unrun = settings_outside_the_transformer(model_path)
    if unrun:
        raise InputError(f"the model sets {', '.join(unrun)}, which the ONNX/OpenVINO encoder does not apply",
                         str(model_path), "--encoder-backend torch (auto takes it for such a model)")
    config = json.loads((model_path / modules[1]["path"] / "config.json").read_text())
    modes = [k for k, v in config.items() if k.startswith("pooling_mode_") and v]
    if modes == ["pooling_mode_mean_tokens"]:
        return "mean"
    if modes == ["pooling_mode_cls_token"]:
        return "cls"
    raise InputError(f"pooling {modes} is not supported by the ONNX/OpenVINO encoder", str(model_path),
                     "mean or cls pooling, or --encoder-backend torch")


def _weights_digest(model_path: Path) -> str:
    """The export cache key: the export version and the model's files."""
    from .encoders import model_fingerprint

    return hashlib.sha256(f"export-v{_EXPORT_VERSION}:{model_fingerprint(model_path)}".encode()).hexdigest()[:16]


def onnx_model_files(model_path: Path, name: str, cache_dir: Path | None = None) -> dict[str, Path]:
    """Paths of the cached fp32 and int8 ONNX exports of ``model_path``, exporting them first if missing.

    The export goes to a temporary sibling folder that is renamed into place, so an interrupted
    export leaves nothing half-written and concurrent processes agree on the result."""
    from .translate.models import cache_root

    _pooling(model_path)
    root = cache_root(cache_dir) / "models" / "onnx"
    digest = _weights_digest(model_path)
    out = root / f"{name}-{digest}"
    files = {"fp32": out / "model.onnx", "fused": out / "model.fused.onnx", "int8": out / "model.int8.onnx"}

    def complete(folder: Path) -> bool:
        return all((folder / path.name).is_file() for path in files.values()) and _export_record(folder) is not None

    existed = out.exists()
    if complete(out):
        return files
    # the same model files under another folder name (a copy) were exported already
    for other in sorted(root.glob(f"*-{digest}")) if root.is_dir() else ():
        if not other.name.startswith(".") and other != out and complete(other):
            return {kind: other / path.name for kind, path in files.items()}
    if existed and not complete(out):
        # a graph or the record missing or unreadable (a partial copy of the cache, a hand edit): export again.
        # Only a folder that was there before the lookups: one another process renamed into place meanwhile is
        # complete and kept; the broken one is moved aside first, so no reader sees it half removed
        print(f"itlr: note: the cached ONNX export {out} is incomplete; exporting it again", file=sys.stderr)
        aside = root / temp_name(out.name)
        try:
            os.rename(out, aside)
        except OSError:
            aside = out
        shutil.rmtree(aside, ignore_errors=True)
    elif complete(out):
        return files
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = mkdtemp_shared(root, out.name)
    except OSError as err:
        # a read-only home (a container, a locked-down account) must not stop a search: export for this process
        return _export_for_this_process(model_path, name, files, err)
    print(f"itlr: note: exporting {name} to ONNX once (about 10 s on 2 cores) into {out}", file=sys.stderr)
    try:
        with model_folder(model_path), _quiet():
            _export_all(model_path, name, tmp)
        try:
            os.rename(tmp, out)
        except OSError:
            if not complete(out):   # another process won the race: use theirs
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return files


@functools.lru_cache(maxsize=None)
def _process_export_dir(model_path: Path, name: str, note: str) -> Path:
    """One export per process (the encoder's settings and its session both ask for the files): the note too."""
    import atexit
    import tempfile

    print(note, file=sys.stderr)
    tmp = Path(tempfile.mkdtemp(prefix=f"itlr-onnx-{name}-"))
    atexit.register(shutil.rmtree, tmp, True)
    with model_folder(model_path), _quiet():
        _export_all(model_path, name, tmp)
    return tmp


def _export_for_this_process(model_path: Path, name: str, files: dict[str, Path], err: OSError) -> dict[str, Path]:
    """The export in a temporary folder removed at exit, when the cache cannot be written (``err``)."""
    where = err.filename or files["fp32"].parent.parent
    note = (f"itlr: note: the model cache {where} cannot be written ({err.strerror or err}): exporting {name} to "
            "ONNX for this run only, into a temporary folder (set ITLR_CACHE_DIR to a writable folder to keep it)")
    tmp = _process_export_dir(model_path, name, note)
    return {kind: tmp / path.name for kind, path in files.items()}


class _BelowErrorFromThisThread(logging.Filter):
    """Drops the records below ERROR that the exporting thread logs; other threads' records pass."""

    def __init__(self) -> None:
        super().__init__()
        self.thread = threading.get_ident()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread != self.thread or record.levelno >= logging.ERROR


@contextlib.contextmanager
def model_folder(model_path: Path):
    """A model folder that cannot be loaded (weights, tokenizer or configuration missing or corrupt) is one
    InputError naming the folder, whichever library found it: safetensors, tokenizers and transformers each
    raise errors of their own kinds, and the ONNX export loads the folder before any encoder does."""
    try:
        yield
    except (InputError, MemoryError):
        raise
    except Exception as e:   # noqa: BLE001 -- re-raised as one clear line, the cause chained
        lines = str(e).strip().splitlines() or [""]
        raise InputError(f"cannot load the model ({type(e).__name__}: {lines[0][:200]})", str(model_path),
                         "a local sentence-transformers model folder (modules.json, config.json, weights, "
                         "tokenizer)") from e


# Plain words that any text encoder's vocabulary holds some of, in a few languages and scripts.
_TOKENIZER_SAMPLE = ("the water and health study in children of the city; eau et santé; Wasser und Gesundheit; "
                     "вода и здоровье; 水与健康; 水と健康; 물과 건강; الماء والصحة")


def check_tokenizer(tokenizer: Any, model_path: Path) -> None:
    """Refuse a tokenizer that reads plain words as its unknown token only.  With its vocabulary file gone
    (tokenizer.json, vocab.txt, ...) transformers still builds a tokenizer from tokenizer_config.json, of the
    special tokens alone: every text then becomes [CLS] [UNK] ... [SEP] and gets about the same vector, an index
    that ranks nothing, built without an error."""
    ids = tokenizer(_TOKENIZER_SAMPLE, add_special_tokens=False)["input_ids"]
    unk = getattr(tokenizer, "unk_token_id", None)
    if not ids or (unk is not None and all(i == unk for i in ids)):
        raise InputError(f"its tokenizer reads every word as unknown ({len(tokenizer)} tokens in its vocabulary: "
                         "the vocabulary file is missing or empty)", str(model_path),
                         "a model folder with its tokenizer's files (tokenizer.json, or vocab.txt / vocab.json "
                         "and merges.txt / a sentencepiece model, as the model came)")


@contextlib.contextmanager
def _quiet():
    """The exporter's and quantiser's advice (tracer warnings, "consider pre-processing") is not the user's
    business: for the one-time export, warnings and the exporting thread's log records below ERROR are
    silenced.  The records are filtered at every logger and handler there is (not by a process-wide
    logging.disable), so other threads keep logging, and everything is as before afterwards."""
    from transformers.utils import logging as hf_logging

    loggers = [logging.getLogger()] + [x for x in logging.Logger.manager.loggerDict.values()
                                       if isinstance(x, logging.Logger)]
    # at the loggers too: logging.warning() on an unconfigured root adds a handler in the middle of the export
    filtered = {id(h): h for lg in loggers for h in (lg, *lg.handlers)}
    if logging.lastResort is not None:
        filtered[id(logging.lastResort)] = logging.lastResort
    quiet = _BelowErrorFromThisThread()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    for h in filtered.values():
        h.addFilter(quiet)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for h in filtered.values():
            h.removeFilter(quiet)
        if bars:
            hf_logging.enable_progress_bar()


def _export_all(model_path: Path, name: str, tmp: Path) -> None:
    """The plain graph, the fused graph and its int8 quantisation into ``tmp``, with export.json."""
    config = _export(model_path, tmp / "model.onnx")
    fusion = _fuse(tmp / "model.onnx", tmp / "model.fused.onnx", config)
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Per-channel weight scales: per-tensor int8 moved MiniLM's vectors to a mean cosine of 0.94 with
    # fp32 (min 0.91 on SciFact documents); per channel 0.992 (min 0.982).  The fused graph's own
    # operators carry no type information for the quantiser: their outputs are float32.
    quantize_dynamic(str(tmp / "model.fused.onnx"), str(tmp / "model.int8.onnx"), weight_type=QuantType.QInt8,
                     per_channel=True, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    from .index import file_sha256

    worst = _int8_min_cosine(model_path, tmp / "model.onnx", tmp / "model.int8.onnx")
    graphs = {g: file_sha256(tmp / g) for g in ("model.onnx", "model.fused.onnx", "model.int8.onnx")}
    (tmp / "export.json").write_text(json.dumps({"source": str(model_path), "name": name,
                                                 "export_version": _EXPORT_VERSION, "fusion": fusion,
                                                 "graphs": graphs,
                                                 "int8": "dynamic, per-channel QInt8 weights",
                                                 "int8_check": {"texts": len(_CHECK_TEXTS), "min_cosine": worst,
                                                                "bound": _INT8_MIN_COSINE,
                                                                "accepted": worst >= _INT8_MIN_COSINE}},
                                                indent=2))


class GraphMismatch(ValueError):
    """A cached graph that is not the one its export recorded (a graph copied over from another export)."""


def _check_graph(graph: Path) -> Path:
    """``graph``, refused where its export recorded another digest (exports before the digests were recorded
    are taken as they are); about 20 ms for MiniLM's int8 graph, once per process and graph."""
    from .index import file_sha256

    record = _export_record(graph.parent) or {}
    want = (record.get("graphs") or {}).get(graph.name)
    if want is not None and file_sha256(graph) != want:
        raise GraphMismatch(f"{graph.name} is not the graph its export.json records")
    return graph


def _int8_min_cosine(model_path: Path, fp32: Path, int8: Path) -> float:
    """The smallest cosine, over :data:`_CHECK_TEXTS` (one text a pass, as the int8 encoder runs), between
    the pooled vectors of the int8 graph and of the plain fp32 export."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_path), local_files_only=True)
    pooling = _pooling(model_path)
    runs = (_ort_runner(fp32), _ort_runner(int8))
    worst = 1.0
    for text in _CHECK_TEXTS:
        ids = np.asarray([tokenizer(text, truncation=True, max_length=128)["input_ids"]], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        a, b = (run(feed)[0, 0] if pooling == "cls" else run(feed)[0].mean(axis=0) for run in runs)
        cos = float(a @ b / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-12))
        worst = min(worst, cos)
    return worst


def int8_check(model_path: Path, name: str, cache_dir: Path | None = None) -> dict:
    """The export's int8 check (``{"texts", "min_cosine", "bound", "accepted"}``), exporting first if needed."""
    return _recorded_int8_check(onnx_model_files(model_path, name, cache_dir))


def _export_record(folder: Path) -> dict | None:
    """An export's export.json, None where it is missing, unreadable or holds no int8 check."""
    try:
        record = json.loads((folder / "export.json").read_text())
    except (OSError, ValueError):
        return None
    check = record.get("int8_check") if isinstance(record, dict) else None
    return record if isinstance(check, dict) and {"accepted", "min_cosine", "texts", "bound"} <= set(check) else None


def _recorded_int8_check(files: dict[str, Path]) -> dict:
    record = _export_record(files["fp32"].parent)
    if record is None:   # removed between the lookup and now
        raise InputError("the ONNX export's export.json is missing or damaged", str(files["fp32"].parent),
                         "a complete export: run again to export anew")
    return record["int8_check"]


def _export(model_path: Path, target: Path) -> dict:
    """The model's transformer (inputs: ids, mask, token types; output: token embeddings) as ONNX; returns
    the transformer's config (for the fusion)."""
    import torch
    from sentence_transformers import SentenceTransformer

    # Eager attention exports the textbook pattern (MatMul, Softmax, MatMul) that the fusion recognises;
    # the default SDPA path exports NaN guards around the softmax that it does not.  Same arithmetic.
    st = SentenceTransformer(str(model_path), device="cpu", local_files_only=True,
                             model_kwargs={"attn_implementation": "eager"})
    check_tokenizer(st.tokenizer, model_path)   # before minutes of export and an export cached
    transformer = st[0].auto_model.eval()
    uses_types = "token_type_ids" in st.tokenizer.model_input_names

    class Body(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = transformer

        def forward(self, input_ids, attention_mask, token_type_ids):
            extra = {"token_type_ids": token_type_ids} if uses_types else {}
            return self.m(input_ids=input_ids, attention_mask=attention_mask, **extra).last_hidden_state

    sample = st.tokenizer(["an example", "a second, longer example text"], padding=True, return_tensors="pt")
    args = tuple(sample.get(n, torch.zeros_like(sample["input_ids"])) for n in _INPUTS)
    axes = {n: {0: "batch", 1: "tokens"} for n in (*_INPUTS, "token_embeddings")}
    with torch.inference_mode():
        torch.onnx.export(Body(), args, str(target), dynamo=False, input_names=list(_INPUTS),
                          output_names=["token_embeddings"], dynamic_axes=axes, opset_version=17)
    return transformer.config.to_dict()


def _fuse(plain: Path, target: Path, config: dict) -> dict:
    """Write ONNX Runtime's fused BERT graph of ``plain`` to ``target`` if it computes the same output on a
    padded sample batch, else a copy of ``plain``; returns what was fused (for export.json)."""
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    heads, hidden = config.get("num_attention_heads"), config.get("hidden_size")
    fused: dict = {}
    if isinstance(heads, int) and isinstance(hidden, int):
        options = FusionOptions("bert")
        options.enable_skip_layer_norm = False   # slower on the CPU than its parts (_UNFUSED above)
        try:
            model = optimize_model(str(plain), model_type="bert", num_heads=heads, hidden_size=hidden, opt_level=1,
                                   optimization_options=options)
            fused = {k: v for k, v in model.get_fused_operator_statistics().items() if v}
            model.save_model_to_file(str(target))
        except Exception as e:   # noqa: BLE001 -- an unfusable graph is not an error: the plain one is kept
            fused = {"error": f"{type(e).__name__}: {e}"}
    if fused.get("Attention"):
        rng = np.random.default_rng(0)
        vocab = max(2, min(int(config.get("vocab_size") or 30000), 30000))
        ids = rng.integers(1, vocab, size=(3, 37), dtype=np.int64)
        mask = np.ones_like(ids)
        mask[1, 20:] = 0
        mask[2, 5:] = 0
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}

        fused_out, plain_out = (_ort_runner(path)(feed) * mask[:, :, None] for path in (target, plain))
        diff = float(np.abs(fused_out - plain_out).max())
        if diff <= _FUSION_TOLERANCE:
            return {"fused": fused, "max_abs_diff": diff}
        fused = {"rejected": fused, "max_abs_diff": diff}
    shutil.copyfile(plain, target)
    return {"fused": {}, "kept_plain": fused}


def ort_session(graph: Path, threads: int | None = None, optimized_to: Path | None = None):
    """An ONNX Runtime CPU session of ``graph`` as the encoders run it; ``optimized_to`` also writes the graph
    that ONNX Runtime's own optimisations made of it (what runs)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if optimized_to is not None:
        opts.optimized_model_filepath = str(optimized_to)
    return ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"], disabled_optimizers=_UNFUSED)


def _ort_runner(graph: Path, threads: int | None = None):
    """A function feed -> token embeddings running ``graph`` in ONNX Runtime (inputs it lacks are dropped)."""
    session = ort_session(graph, threads)
    names = {i.name for i in session.get_inputs()}
    return lambda feed: session.run(None, {k: v for k, v in feed.items() if k in names})[0]


def _open(files: dict[str, Path], backend: str, precision: str, threads: int):
    """A function feed -> token embeddings running the cached graph for ``backend`` / ``precision``."""
    if backend == "onnx":
        return _ort_runner(_check_graph(files["int8" if precision == "int8" else "fused"]), threads)
    import openvino as ov

    # The precision is always stated: where the CPU multiplies bfloat16, OpenVINO's own default is bf16.
    hint = {"fp32": "f32", "bf16": "bf16"}[precision]
    compiled = ov.Core().compile_model(str(_check_graph(files["fp32"])), "CPU",
                                       {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY",
                                        "INFERENCE_PRECISION_HINT": hint})
    request = compiled.create_infer_request()
    names = {p.get_any_name() for p in compiled.inputs}
    return lambda feed: request.infer({k: v for k, v in feed.items() if k in names})[0].copy()


class RuntimeEncoderCore:
    """Tokenise, length-sort, run the ONNX graph (ONNX Runtime or OpenVINO), pool: raw float32 vectors."""

    def __init__(self, model_path: Path, name: str, backend: str, precision: str, threads: int | None = None):
        if backend not in RUNTIME_BACKENDS:
            raise ValueError(backend)
        require_runtime(backend)
        from transformers import AutoTokenizer

        self.pooling = _pooling(model_path)
        files = onnx_model_files(model_path, name)
        if precision not in {"onnx": ("fp32", "int8"), "openvino": ("fp32", "bf16")}[backend]:
            raise InputError(f"precision {precision!r} with backend {backend}", "encoder",
                             "fp32 or int8 (onnx), fp32 or bf16 (openvino)")
        if backend == "onnx" and precision == "int8":
            check = _recorded_int8_check(files)   # the export just looked up
            if not check["accepted"]:
                raise InputError(f"int8 quantisation of {name} does not keep its vectors (cosine to fp32 down to "
                                 f"{check['min_cosine']:.3f} on a sample of {check['texts']} texts; at least "
                                 f"{check['bound']} needed)", "--precision",
                                 "fp32; an index built in int8 with this model is to be built again")
        with model_folder(model_path):
            self.tokenizer = AutoTokenizer.from_pretrained(str(model_path), local_files_only=True)
        check_tokenizer(self.tokenizer, model_path)
        self.backend = backend
        threads = threads or len(os.sched_getaffinity(0))
        try:
            self._run = _open(files, backend, precision, threads)
        except Exception as e:   # noqa: BLE001 -- a cached graph that does not load (truncated file): export again
            why = str(e) if isinstance(e, GraphMismatch) else type(e).__name__
            print(f"itlr: note: the cached ONNX export {files['fp32'].parent} did not load ({why}); "
                  "exporting it again", file=sys.stderr)
            shutil.rmtree(files["fp32"].parent, ignore_errors=True)
            files = onnx_model_files(model_path, name)
            try:
                self._run = _open(files, backend, precision, threads)
            except Exception as e:   # noqa: BLE001 -- the runtime's own error types; one clear line
                raise InputError(f"cannot load the ONNX export with {backend} ({type(e).__name__}: {e})",
                                 str(files["fp32"].parent), "a loadable export (or --encoder-backend torch)") from e

    def encode(self, texts: list[str], max_length: int, batch_size: int) -> np.ndarray:
        ids = self.tokenizer(texts, truncation=True, max_length=max_length, add_special_tokens=True)["input_ids"]
        order = np.argsort([-len(t) for t in ids], kind="stable")       # longest first: a too-long batch fails early
        pad = self.tokenizer.pad_token_id or 0
        out: np.ndarray | None = None
        for start in range(0, len(order), batch_size):
            rows = order[start: start + batch_size]
            width = max(len(ids[r]) for r in rows)
            input_ids = np.full((len(rows), width), pad, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for i, r in enumerate(rows):
                input_ids[i, : len(ids[r])] = ids[r]
                mask[i, : len(ids[r])] = 1
            tokens = self._run({"input_ids": input_ids, "attention_mask": mask,
                                "token_type_ids": np.zeros_like(input_ids)})
            pooled = self._pool(np.asarray(tokens, dtype=np.float32), mask)
            if out is None:
                out = np.empty((len(texts), pooled.shape[1]), dtype=np.float32)
            out[rows] = pooled
        assert out is not None
        return out

    def _pool(self, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if self.pooling == "cls":
            return tokens[:, 0]
        m = mask[:, :, None].astype(np.float32)
        return (tokens * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
