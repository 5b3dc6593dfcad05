"""Benchmark the query translators; writes benchmarks/results/translate.{json,md}.

* accuracy (exact match of canonical forms) of each translator on the labelled set
  ``tests/data/translation_pairs.jsonl``;
* vLLM (SmolLM2-135M-Instruct on the CPU by default): throughput in queries/s of one
  batched ``generate`` call vs one call per query, and the parse rate of generations
  with and without the decoding grammar (with it, it must be 100%).

Run the vLLM part in the vLLM virtualenv (``bash scripts/install_vllm_cpu.sh``)::

    .venv-vllm/bin/python benchmarks/translate.py [--model DIR] [--limit N] [--single N]

Without vLLM only the rules are measured.  The translation cache is not used.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from itlr_gpu.translate import translate  # noqa: E402

PAIRS = ROOT / "tests" / "data" / "translation_pairs.jsonl"
RESULTS = ROOT / "benchmarks" / "results"


def load_pairs(limit=None):
    pairs = [json.loads(x) for x in PAIRS.read_text(encoding="utf-8").splitlines() if x.strip()]
    return pairs[:limit] if limit else pairs


def score(pairs, rows):
    exact = sum(r.expr == p["expr"] for p, r in zip(pairs, rows))
    parsed = sum(r.expr is not None for r in rows)
    truncated = sum(bool(r.error) and "max_tokens" in r.error for r in rows)
    finished = len(rows) - truncated
    return {"n": len(pairs), "exact": exact, "accuracy": exact / len(pairs), "parse_rate": parsed / len(pairs),
            "truncated": truncated, "parse_rate_of_finished": parsed / finished if finished else None,
            "errors": sorted({(r.error or "")[:60] for r in rows if r.error})[:5]}


def bench_rules(pairs):
    t = time.perf_counter()
    rows = translate([p["text"] for p in pairs])
    dt = time.perf_counter() - t
    res = score(pairs, rows)
    res["queries_per_s"] = len(pairs) / dt
    res["misses"] = [{"text": p["text"], "want": p["expr"], "got": r.expr or r.error}
                     for p, r in zip(pairs, rows) if r.expr != p["expr"]][:20]
    return res


def bench_vllm(pairs, model, single_n, max_tokens, engine_opts):
    from itlr_gpu.translate.llm import VllmTranslator

    texts = [p["text"] for p in pairs]
    t = time.perf_counter()
    eng = VllmTranslator(model=model, mode="logical", max_tokens=max_tokens, **engine_opts)
    load_s = time.perf_counter() - t
    free = VllmTranslator(llm=eng.llm, mode="logical", use_grammar=False, max_tokens=max_tokens)
    free.model_id = eng.model_id
    out = {"model": eng.model_id, "load_s": load_s, "max_tokens": max_tokens, "engine_options": engine_opts}

    eng.generate(texts[:2])  # warm-up (grammar compilation, first kernels)

    t = time.perf_counter()
    rows = translate(texts, translator="vllm", engine=eng, cache=False, batch_size=len(texts))
    dt = time.perf_counter() - t
    out["with_grammar"] = score(pairs, rows) | {"seconds": dt, "queries_per_s": len(texts) / dt}
    out["with_grammar"]["examples"] = [{"text": p["text"], "want": p["expr"], "got": r.expr or r.error}
                                       for p, r in list(zip(pairs, rows))[:12]]

    t = time.perf_counter()
    rows = translate(texts, translator="vllm", engine=free, cache=False, batch_size=len(texts))
    dt = time.perf_counter() - t
    out["without_grammar"] = score(pairs, rows) | {"seconds": dt, "queries_per_s": len(texts) / dt}

    sub = texts[:single_n]
    t = time.perf_counter()
    translate(sub, translator="vllm", engine=eng, cache=False, batch_size=len(sub))
    batched = len(sub) / (time.perf_counter() - t)
    t = time.perf_counter()
    for x in sub:
        translate([x], translator="vllm", engine=eng, cache=False)
    single = len(sub) / (time.perf_counter() - t)
    out["throughput"] = {"n": len(sub), "batched_queries_per_s": batched, "one_at_a_time_queries_per_s": single,
                         "speedup": batched / single}
    return out


def write_md(res, path):
    lines = ["# Query translation benchmark", "", f"Machine: {res['machine']}", "",
             "## Accuracy on the labelled set (exact match of canonical forms)", "",
             "Parse rate: generations that parse / all; of finished: / those not cut at max_tokens.", "",
             "| translator | n | exact | accuracy | parse rate | cut at max_tokens | parse rate of finished |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    r = res["rules"]
    lines.append(f"| rules | {r['n']} | {r['exact']} | {r['accuracy']:.3f} | {r['parse_rate']:.3f} | - | - |")
    v = res.get("vllm")
    if isinstance(v, dict):
        for k in ("with_grammar", "without_grammar"):
            s = v[k]
            lines.append(f"| {v['model'].split('@')[0]} {k.replace('_', ' ')} | {s['n']} | {s['exact']} | "
                         f"{s['accuracy']:.3f} | {s['parse_rate']:.3f} | {s['truncated']} | "
                         f"{s['parse_rate_of_finished']:.3f} |")
        tp = v["throughput"]
        lines += ["", "## vLLM throughput", "",
                  f"Engine load: {v['load_s']:.1f} s; max_tokens {v['max_tokens']}.", "",
                  "| generation | queries | queries/s |", "| --- | --- | --- |",
                  f"| batched (one generate call) | {tp['n']} | {tp['batched_queries_per_s']:.2f} |",
                  f"| one at a time | {tp['n']} | {tp['one_at_a_time_queries_per_s']:.2f} |",
                  f"| full labelled set, batched, with grammar | {v['with_grammar']['n']} | "
                  f"{v['with_grammar']['queries_per_s']:.2f} |",
                  "", f"Batched speed-up: {tp['speedup']:.1f}x.", "",
                  "Sample generations (with grammar):", ""]
        for e in v["with_grammar"]["examples"]:
            lines.append(f"- `{e['text']}` -> `{e['got']}` (want `{e['want']}`)")
    else:
        lines += ["", f"vLLM: {v}"]
    lines.append(f"\nRules: {r['queries_per_s']:.0f} queries/s.")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=None, help="vLLM model folder (default: SmolLM2-135M-Instruct)")
    ap.add_argument("--limit", type=int, default=None, help="use the first N labelled pairs for vLLM")
    ap.add_argument("--single", type=int, default=24, help="queries for the one-at-a-time comparison")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--gpu-memory-utilization", type=float, default=None)
    ap.add_argument("--no-vllm", action="store_true")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)

    pairs = load_pairs()
    res = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
           "rules": bench_rules(pairs)}
    if args.no_vllm:
        res["vllm"] = "skipped (--no-vllm)"
    elif importlib.util.find_spec("vllm") is None:
        res["vllm"] = "skipped: vllm is not importable (run in the vLLM venv)"
    else:
        opts = {k: v for k, v in {"dtype": args.dtype, "gpu_memory_utilization": args.gpu_memory_utilization}.items()
                if v is not None}
        res["vllm"] = bench_vllm(load_pairs(args.limit), args.model, args.single, args.max_tokens, opts)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "translate.json").write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    write_md(res, out / "translate.md")
    print((out / "translate.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
