"""Corpus-encoding benchmark: documents/s and SciFact nDCG@10 per encoder option (MiniLM-L6).

Options (model all-MiniLM-L6-v2, CPU): the encoder backend (torch = sentence-transformers in
fp32 or bfloat16, onnx = ONNX Runtime fp32 or dynamic int8, openvino when installed) x max
length (the library's 256 vs the model's training length 128).  The first row (torch fp32 at
256 word pieces) is the reference every speed-up is measured against; the row that
``--encoder-backend auto`` picks on this machine is marked.

- docs/s: a fixed sample of --sample SciFact documents (evenly spaced over the corpus),
  each option timed --repeat times, the options *interleaved* (round robin) so that a
  load change on a shared machine hits every option alike; the median is reported.
- nDCG@10: the whole corpus (5,183 documents) encoded with the option, the 300 SciFact test
  queries embedded whole with the same option (plain dense retrieval), scored with ir-measures.

Every result records os.getloadavg() before and after and the machine (CPU, cores, BLAS).

    python benchmarks/encode.py                      # all options, nDCG for each: hours on 2 busy cores
    python benchmarks/encode.py --ndcg "torch 256,onnx 256 int8"    # nDCG for the default (torch) and ONNX int8
    python benchmarks/encode.py --no-ndcg            # docs/s only
    python benchmarks/encode.py --batch-sweep 8,16,32,64 --only "torch 256"   # + docs/s per forward-pass batch
Writes benchmarks/results/encode.{json,md}.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import DATA_DIR, TRIAL_HELP, check_stem, default_stem, positive_int, positive_int_list, seconds  # noqa: E402
from itlr_gpu.encode_runtime import runtime_available  # noqa: E402
from itlr_gpu.encoders import SentenceTransformerEncoder, cpu_native_bf16, l2_normalize  # noqa: E402

SCIFACT = DATA_DIR / "scifact"   # --data-dir overrides

OPTIONS = [  # (label, backend, max_length, precision)
    ("torch 256 fp32 (reference)", "torch", 256, "fp32"),
    ("torch 128 fp32", "torch", 128, "fp32"),
    ("torch 256 bf16", "torch", 256, "bf16"),
    ("torch 128 bf16", "torch", 128, "bf16"),
    ("onnx 256 fp32", "onnx", 256, "fp32"),
    ("onnx 128 fp32", "onnx", 128, "fp32"),
    ("onnx 256 int8", "onnx", 256, "int8"),
    ("onnx 128 int8", "onnx", 128, "int8"),
    ("openvino 256 fp32", "openvino", 256, "fp32"),
    ("openvino 128 fp32", "openvino", 128, "fp32"),
    ("openvino 256 bf16", "openvino", 256, "bf16"),
    ("openvino 128 bf16", "openvino", 128, "bf16"),
]


def load_scifact() -> tuple[list[str], list[str], dict[str, str]]:
    ids, texts = [], []
    with gzip.open(SCIFACT / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            ids.append(d["_id"])
            texts.append(f"{d.get('title') or ''} {d['text']}".strip())
    test = set()
    with open(SCIFACT / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            test.add(line.split("\t")[0])
    queries = {}
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            if q["_id"] in test:
                queries[q["_id"]] = q["text"]
    return ids, texts, queries


def ndcg10(encoder, ids, texts, queries) -> float:
    import ir_measures
    from ir_measures import nDCG

    docs = l2_normalize(encoder.encode(texts), "corpus")
    qids = list(queries)
    q = l2_normalize(encoder.encode([queries[i] for i in qids]), "queries")
    sims = q @ docs.T
    top = np.argsort(-sims, axis=1, kind="stable")[:, :100]
    run = [ir_measures.ScoredDoc(qid, ids[j], float(sims[r, j])) for r, qid in enumerate(qids) for j in top[r]]
    qrels = list(ir_measures.read_trec_qrels(_trec_qrels()))
    return float(ir_measures.calc_aggregate([nDCG @ 10], qrels, run)[nDCG @ 10])


def _trec_qrels() -> str:
    out = []
    with open(SCIFACT / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")
            out.append(f"{qid} 0 {did} {score}")
    path = Path(os.environ.get("TMPDIR", "/tmp")) / "itlr-scifact-test.qrels"
    path.write_text("\n".join(out) + "\n")
    return str(path)


def machine() -> dict:
    from threadpoolctl import threadpool_info

    import torch

    from itlr_gpu.cpuinfo import cpu_name

    cpu = cpu_name()
    versions = {}
    for pkg in ("onnxruntime", "openvino", "sentence_transformers", "transformers"):
        try:
            versions[pkg] = __import__(pkg).__version__
        except ImportError:
            versions[pkg] = None
    caps = getattr(torch.cpu, "get_capabilities", dict)()
    return {"cpu": cpu, "cores": os.cpu_count(), "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
            "cpu_bf16": {"amx_bf16": caps.get("amx_bf16"), "avx512_bf16": caps.get("avx512_bf16"),
                         "native (cpu_native_bf16)": cpu_native_bf16()},
            "torch_blas": "MKL" if torch.backends.mkl.is_available() else "other",
            "blas": [{k: i.get(k) for k in ("internal_api", "version", "architecture", "num_threads", "prefix")}
                     for i in threadpool_info()],
            "env": {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")},
            **versions}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=positive_int, default=256, help="documents in the docs/s sample")
    ap.add_argument("--repeat", type=positive_int, default=3, help="timed runs per option, median reported (default %(default)s)")
    ap.add_argument("--batch-size", type=positive_int, default=None,
                    help="texts per forward pass (default: the encoder's own, 16 on a CPU)")
    ap.add_argument("--batch-sweep", type=positive_int_list, help="comma-separated batch sizes: also time the torch rows at each")
    ap.add_argument("--settle", type=seconds, default=0.5,
                    help="seconds of quiet before each timed encoding (0 = back to back, as before)")
    ap.add_argument("--no-ndcg", action="store_true", help="skip the nDCG@10 runs (whole corpus per option)")
    ap.add_argument("--ndcg", help="comma-separated option-label prefixes that get an nDCG@10 run (default: all)")
    ap.add_argument("--only", help="comma-separated option labels' prefixes to run (default: all available)")
    ap.add_argument("--out", default=None,
                    help="file stem of the table written: STEM.md and STEM.json" + TRIAL_HELP.format(name="encode"))
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR,
                    help="folder holding scifact/ in BEIR layout (default: $ITLR_SHARED/data, else ../shared/data)")
    args = ap.parse_args()
    args.out = args.out or default_stem(ap, args, "encode", ignore=("data_dir",))
    check_stem(ap, args.out)
    global SCIFACT
    SCIFACT = args.data_dir / "scifact"
    if not (SCIFACT / "corpus.jsonl.gz").is_file():
        raise SystemExit(f"encode.py: error: no SciFact corpus at {SCIFACT / 'corpus.jsonl.gz'} (expected a BEIR "
                         "folder: --data-dir DIR with DIR/scifact/, or ITLR_SHARED set to the folder holding data/)")

    ids, texts, queries = load_scifact()
    sample = [texts[i] for i in np.linspace(0, len(texts) - 1, args.sample).round().astype(int)]
    options = [o for o in OPTIONS if (o[1] == "torch" or runtime_available(o[1]))
               and not (o[1] == "openvino" and o[3] == "bf16" and not cpu_native_bf16())]
    if args.only:
        wanted = [w.strip() for w in args.only.split(",")]
        chosen = [o for o in options if any(o[0].startswith(w) for w in wanted)]
        if not chosen:
            ap.error(f"--only {args.only}: no option label starts with that here; available: "
                     + ", ".join(repr(o[0]) for o in options))
        options = chosen
    auto = SentenceTransformerEncoder().settings      # what --encoder-backend auto picks here
    auto_label = next((o[0] for o in options if (o[1], o[2], o[3]) ==
                       (auto["backend"], auto["max_length"], auto["precision"])), None)
    sweep = args.batch_sweep or []
    encoders = {o[0]: SentenceTransformerEncoder(backend=o[1], max_length=o[2], precision=o[3],
                                                 batch_size=args.batch_size, show_progress=False) for o in options}
    batch = {label: enc.forward_batch for label, enc in encoders.items()}
    swept = {(o[0], b): SentenceTransformerEncoder(backend=o[1], max_length=o[2], precision=o[3], batch_size=b,
                                                   show_progress=False)
             for o in options if o[1] == "torch" for b in sweep if b != batch[o[0]]}
    load_before = os.getloadavg()
    for enc in (*encoders.values(), *swept.values()):   # warm-up: loads, exports (cached), first batch
        enc.encode(sample[:16])
    # How far each option's vectors are from torch fp32 at the same max length (same sample, normalised):
    # an option at ~1e-6 gives the same ranking as its torch row.
    vecs = {label: l2_normalize(enc.encode(sample), label) for label, enc in encoders.items()}
    runs = {**{(label, batch[label]): enc for label, enc in encoders.items()}, **swept}
    times: dict[tuple[str, int], list[float]] = {key: [] for key in runs}
    for r in range(args.repeat):                  # interleaved: a load change hits every option alike
        for key, enc in runs.items():
            time.sleep(args.settle)   # the previous option's worker threads (BLAS, ONNX Runtime) stop spinning
            t0 = time.perf_counter()
            enc.encode(sample)
            times[key].append(time.perf_counter() - t0)
            print(f"repeat {r}: {key[0]} batch {key[1]}: {len(sample) / times[key][-1]:.1f} docs/s  "
                  f"load {os.getloadavg()}", flush=True)
    rows = []
    base = statistics.median(times[(options[0][0], batch[options[0][0]])])
    for label, backend, max_length, precision in options:
        med = statistics.median(times[(label, batch[label])])
        ref = next((o[0] for o in options if o[1] == "torch" and o[2] == max_length and o[3] == "fp32"), None)
        cos = None if ref is None else float(np.min(np.sum(vecs[label] * vecs[ref], axis=1)))
        rows.append({"option": label, "backend": backend, "max_length": max_length, "precision": precision,
                     "batch_size": batch[label], "auto": label == auto_label,
                     "docs_per_s": args.sample / med, "speedup_vs_first": base / med,
                     "times_s": times[(label, batch[label])], "min_cosine_to_torch_fp32": cos})
    sweep_rows = [{"option": label, "batch_size": b, "docs_per_s": args.sample / statistics.median(t),
                   "speedup_vs_first": base / statistics.median(t), "times_s": t}
                  for (label, b), t in sorted(times.items(), key=lambda kv: (kv[0][0], kv[0][1]))
                  if sweep and encoders[label].backend == "torch"]
    load_mid = os.getloadavg()
    if not args.no_ndcg:
        wanted = [w.strip() for w in args.ndcg.split(",")] if args.ndcg else None
        for row in rows:
            if wanted is not None and not any(row["option"].startswith(w) for w in wanted):
                continue
            t0 = time.perf_counter()
            row["ndcg10"] = ndcg10(encoders[row["option"]], ids, texts, queries)
            row["corpus_s"] = time.perf_counter() - t0
            row["load_after_corpus"] = os.getloadavg()
            print(f"{row['option']}: nDCG@10 {row['ndcg10']:.4f} ({row['corpus_s']:.0f} s)", flush=True)
            write(args, texts, queries, rows, sweep_rows, load_before, load_mid)   # partial results survive an interruption
    write(args, texts, queries, rows, sweep_rows, load_before, load_mid)


def write(args, texts, queries, rows, sweep_rows, load_before, load_mid) -> None:
    report = {"command": "python " + shlex.join([os.path.relpath(__file__, ROOT)] + sys.argv[1:]),
              "sample_docs": args.sample, "repeat": args.repeat,
              "corpus_docs": len(texts), "test_queries": len(queries), "machine": machine(),
              "loadavg": {"before": load_before, "after_timing": load_mid, "end": os.getloadavg()},
              "rows": rows, "batch_sweep": sweep_rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for suffix, text in ((".json", json.dumps(report, indent=2) + "\n"), (".md", markdown(report))):
        tmp = out.with_suffix(suffix + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, out.with_suffix(suffix))
    print(markdown(report))


def markdown(report: dict) -> str:
    m = report["machine"]
    la = report["loadavg"]
    bf16 = m.get("cpu_bf16") or {}
    lines = [
        "# Corpus encoding: documents/s and SciFact nDCG@10 per encoder option", "",
        f"Command: `{report['command']}`", "",
        f"Machine: {m['cpu']}, {m['cores']} cores; torch {m['torch']} ({m['torch_threads']} threads, {m['torch_blas']}), "
        f"onnxruntime {m['onnxruntime']}, openvino {m['openvino']}, sentence-transformers {m['sentence_transformers']}. "
        f"bfloat16 instructions: AMX-BF16 {bf16.get('amx_bf16')}, AVX512-BF16 {bf16.get('avx512_bf16')}.",
        f"Load average (1/5/15 min) before {fmt_load(la['before'])}, after the timings {fmt_load(la['after_timing'])}, "
        f"at the end {fmt_load(la['end'])}: compare the options within this table "
        "(timed interleaved, round robin), not across runs.", "",
        f"docs/s: median of {report['repeat']} encodings of the same {report['sample_docs']} SciFact documents "
        f"(batch: texts per forward pass). nDCG@10: all {report['corpus_docs']:,} documents and the "
        f"{report['test_queries']} test queries encoded with the option, plain dense retrieval.", "",
        "min cosine: the smallest cosine, over the sample, between the option's vector and torch fp32's at the same "
        "max length (1.000000: the same vectors up to float32 rounding). nDCG@10 '-': not run (whole corpus per "
        "option; `--ndcg` picks rows). auto: the row `--encoder-backend auto` picks on this machine.", "",
        "| option | backend | max length | precision | batch | docs/s | speed-up vs first row | min cosine | nDCG@10 |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    for r in report["rows"]:
        nd = f"{r['ndcg10']:.4f}" if "ndcg10" in r else "-"
        cos = "-" if r.get("min_cosine_to_torch_fp32") is None else f"{r['min_cosine_to_torch_fp32']:.6f}"
        label = r["option"] + (" **auto**" if r.get("auto") else "")
        lines.append(f"| {label} | {r['backend']} | {r['max_length']} | {r['precision']} | "
                     f"{r.get('batch_size', '-')} | {r['docs_per_s']:.1f} | {r['speedup_vs_first']:.2f}x | {cos} | {nd} |")
    if report.get("batch_sweep"):
        lines += ["", "Batch sweep (torch rows, same sample, timed in the same rounds):", "",
                  "| option | batch | docs/s | speed-up vs first row |", "|---|---:|---:|---:|"]
        lines += [f"| {r['option']} | {r['batch_size']} | {r['docs_per_s']:.1f} | {r['speedup_vs_first']:.2f}x |"
                  for r in report["batch_sweep"]]
    return "\n".join(lines) + "\n"


def fmt_load(v) -> str:
    return "/".join(f"{x:.2f}" for x in v)


if __name__ == "__main__":
    main()
