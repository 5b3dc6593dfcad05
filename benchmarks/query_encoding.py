"""Query encoding: one text per forward pass (what search does at a lossy precision) against batches.

At bf16, fp16 or int8 a text's vector depends on the texts it shares a forward pass with, so query terms are
encoded one per pass (``SentenceTransformerEncoder.encode_queries``): a query then gets the same vector, scores
and ranking whatever file or ``--batch-size`` it comes with.  This measures what that costs and what it buys, per
encoder setting available here, on the SciFact test queries embedded whole (sentence-length texts):

- seconds to encode them batched (``encode``, the document path) and one per pass (median of --repeat, after one
  warm-up of each);
- the largest difference between a query's batched and one-per-pass vector (L2-normalised), and whether two
  one-per-pass runs agree exactly.

    python benchmarks/query_encoding.py [--queries 100] [--repeat 3]
Writes benchmarks/results/query_encoding[-SUFFIX].{json,md}.
"""

from __future__ import annotations

import argparse
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

from benchmarks import DATA_DIR, TRIAL_HELP, check_stem, default_stem, positive_int  # noqa: E402
from benchmarks.encode import machine  # noqa: E402
from itlr_gpu.encoders import SentenceTransformerEncoder, l2_normalize  # noqa: E402
from itlr_gpu.encode_runtime import runtime_available  # noqa: E402
from itlr_gpu.output import atomic_file  # noqa: E402



def settings_here() -> list[tuple[str, str]]:
    from itlr_gpu.encoders import cpu_native_bf16

    out = [("torch", "fp32")]
    if cpu_native_bf16():
        out.append(("torch", "bf16"))
    if runtime_available("onnx"):
        out.append(("onnx", "int8"))
    if runtime_available("openvino") and cpu_native_bf16():
        out.append(("openvino", "bf16"))
    return out


def timed(fn, repeat: int) -> tuple[float, np.ndarray]:
    fn()  # warm-up: shapes compiled, threads started
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=positive_int, default=100, help="SciFact queries (the first N of queries.jsonl)")
    ap.add_argument("--repeat", type=positive_int, default=3, help="timed runs per option, median reported (default %(default)s)")
    ap.add_argument("--out", default=None,
                    help="file stem of the table written: STEM.md and STEM.json" + TRIAL_HELP.format(name="query_encoding"))
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR,
                    help="folder holding scifact/queries.jsonl (default: $ITLR_SHARED/data, else ../shared/data)")
    args = ap.parse_args()
    args.out = args.out or default_stem(ap, args, "query_encoding", ignore=("data_dir",))
    check_stem(ap, args.out)
    queries_file = args.data_dir / "scifact" / "queries.jsonl"
    if not queries_file.is_file():
        raise SystemExit(f"query_encoding.py: error: no SciFact queries at {queries_file} (expected --data-dir DIR "
                         "with DIR/scifact/queries.jsonl, or ITLR_SHARED set to the folder holding data/)")
    texts = [json.loads(line)["text"] for line in queries_file.open()][: args.queries]
    rows = []
    for backend, precision in settings_here():
        enc = SentenceTransformerEncoder(backend=backend, precision=precision)
        batched_s, batched = timed(lambda: enc.encode(texts), args.repeat)
        alone_s, alone = timed(lambda: enc._encode(texts, alone=True), args.repeat)
        again = enc._encode(texts, alone=True)
        b, a = (l2_normalize(np.asarray(x, dtype=np.float32), "vectors") for x in (batched, alone))
        rows.append({"backend": backend, "precision": precision, "batched_s": batched_s, "alone_s": alone_s,
                     "ratio": alone_s / batched_s, "ms_per_query_alone": 1e3 * alone_s / len(texts),
                     "max_abs_diff": float(np.abs(b - a).max()), "min_cosine": float((b * a).sum(1).min()),
                     "alone_repeatable": bool(np.array_equal(alone, again)),
                     "search_path": "one per pass" if precision != "fp32" else "batched"})
        print(rows[-1], flush=True)
    report = {"command": "python benchmarks/query_encoding.py " + shlex.join(sys.argv[1:]), "machine": machine(),
              "queries": len(texts), "loadavg_end": os.getloadavg(), "rows": rows}
    md = [f"# Query encoding: one text per forward pass vs batches ({len(texts)} SciFact queries)", "",
          f"Command: `{report['command']}`", "", f"Machine: {report['machine']['cpu']}, {report['machine']['cores']} "
          f"cores, torch {report['machine']['torch']}; load average at the end {report['loadavg_end']}", "",
          "| backend | precision | batched s | one per pass s | ratio | ms / query alone | max abs diff | "
          "min cosine | one per pass repeatable | search uses |", "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for r in rows:
        md.append(f"| {r['backend']} | {r['precision']} | {r['batched_s']:.3f} | {r['alone_s']:.3f} | {r['ratio']:.2f}x"
                  f" | {r['ms_per_query_alone']:.1f} | {r['max_abs_diff']:.2e} | {r['min_cosine']:.6f} | "
                  f"{'yes' if r['alone_repeatable'] else 'NO'} | {r['search_path']} |")
    for suffix, text in ((".json", json.dumps(report, indent=1)), (".md", "\n".join(md) + "\n")):
        with atomic_file(args.out + suffix, "w", encoding="utf-8") as f:
            f.write(text)
    print("\n".join(md))


if __name__ == "__main__":
    main()
