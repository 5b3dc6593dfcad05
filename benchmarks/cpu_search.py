"""CPU search benchmark: the engine against its BLAS floor and FAISS-cpu.

Shapes (issue defaults): N = 200,000 random unit vectors, d = 384, float32;
256 queries of 3 terms each (768 distinct terms) with the paper's ops; k = 10.

In one run it measures (median of --repeat runs after one warm-up):
  floor    the bare matmul terms (768 x d) @ docs.T: the BLAS floor of any exact scorer
  engine   the engine's search through ``--backend auto`` (backend level: term embeddings given)
  engine1  the engine with one term per query (768 single-term queries)
  faiss    FAISS-cpu IndexFlatIP on the same 768 single-term searches
and, in a child process with a memory-mapped float16 matrix of --big-n rows,
the peak resident memory of a search (the chunk-size formula bounds it).

Run (unset OpenBLAS overrides so FAISS's BLAS picks its best kernel):
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/cpu_search.py
Writes benchmarks/results/cpu_search.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from itlr_gpu import Ops, compile_queries  # noqa: E402
from itlr_gpu.backends import get_backend, resolve_device  # noqa: E402
from itlr_gpu.backends.reference import chunk_for_budget  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def unit_rows(rng, n, d, dtype=np.float32, block=1 << 18):
    out = np.empty((n, d), dtype=dtype)
    for lo in range(0, n, block):
        x = rng.standard_normal((min(block, n - lo), d), dtype=np.float32)
        out[lo:lo + len(x)] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def random_programs(rng, num_queries: int, terms_per_query: int = 3):
    """num_queries queries of three distinct terms mixing AND / OR / NOT (0-2 negations)."""
    exprs = []
    for q in range(num_queries):
        t = [f"t{q}_{i}" for i in range(terms_per_query)]
        op1, op2 = rng.choice(["AND", "OR"], 2)
        neg = rng.random(3) < 0.3
        parts = [("NOT " if neg[i] else "") + f'"{t[i]}"' for i in range(3)]
        exprs.append(f"{parts[0]} {op1} {parts[1]} {op2} {parts[2]}")
    return compile_queries(exprs)


def timed(fn, repeat: int) -> tuple[float, object]:
    result = fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def peak_memory_child(n: int, d: int, k: int, num_queries: int) -> dict:
    """Search a memory-mapped float16 matrix of n rows in a fresh process; report its peak RSS."""
    code = f"""
import json, resource, sys, tempfile, numpy as np
sys.path.insert(0, {str(ROOT)!r})
from benchmarks.cpu_search import unit_rows, random_programs
from itlr_gpu import Ops
from itlr_gpu.backends.reference import search_reference, chunk_for_budget
rng = np.random.default_rng(1)
with tempfile.TemporaryDirectory() as tmp:
    path = tmp + '/docs.npy'
    mm = np.lib.format.open_memmap(path, mode='w+', dtype=np.float16, shape=({n}, {d}))
    for lo in range(0, {n}, 1 << 18):
        mm[lo:lo + (1 << 18)] = unit_rows(rng, min(1 << 18, {n} - lo), {d}, np.float16)
    mm.flush(); del mm
    docs = np.load(path, mmap_mode='r')
    program = random_programs(rng, {num_queries})
    terms = unit_rows(rng, len(program.terms), {d})
    chunk = chunk_for_budget({d}, len(program.terms), program.num_queries, program.max_depth)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scores, rows = search_reference(docs, terms, program, Ops(), {k})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(dict(chunk=chunk, peak_rss_gib=peak / 2**20, rss_before_search_gib=before / 2**20,
                          matrix_gib=docs.nbytes / 2**30, top1=int(rows[0, 0]))))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--d", type=int, default=384)
    ap.add_argument("--queries", type=int, default=256)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--big-n", type=int, default=2_000_000, help="rows of the float16 memory test (0 = skip)")
    ap.add_argument("--out", default=str(RESULTS / "cpu_search"))
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    docs = unit_rows(rng, args.n, args.d)
    program = random_programs(rng, args.queries)
    terms = unit_rows(rng, len(program.terms), args.d)
    single = compile_queries([f'"{t}"' for t in program.terms])
    device = resolve_device("auto")
    engine = get_backend("auto", device)
    ops = Ops()

    docs_t, terms_t = torch.from_numpy(docs), torch.from_numpy(terms)
    chunk = chunk_for_budget(args.d, len(program.terms), program.num_queries, program.max_depth)
    out = torch.empty((len(program.terms), chunk))

    def chunked_matmul():
        for lo in range(0, args.n, chunk):
            block = docs_t[lo:lo + chunk]
            torch.mm(terms_t, block.T, out=out[:, : len(block)])

    with torch.inference_mode():
        t_single, _ = timed(lambda: terms_t @ docs_t.T, args.repeat)
        t_chunked, _ = timed(chunked_matmul, args.repeat)
    # The floor is the faster way of doing just the matmul (one call allocates a T x N output).
    t_floor = min(t_single, t_chunked)
    t_engine, (s3, r3) = timed(lambda: engine.search(docs, terms, program, ops, args.k, device=device), args.repeat)
    t_engine1, (s1, r1) = timed(lambda: engine.search(docs, terms, single, ops, args.k, device=device), args.repeat)

    rows = {"floor (matmul 768 terms)": t_floor, "matmul, one call": t_single, "matmul, chunked": t_chunked, f"engine ({engine.name}, 256 x 3 terms)": t_engine,
            f"engine ({engine.name}, 768 x 1 term)": t_engine1}
    faiss_info = None
    try:
        import faiss

        index = faiss.IndexFlatIP(args.d)
        index.add(docs)
        t_faiss, (fd, fi) = timed(lambda: index.search(terms, args.k), args.repeat)
        rows["faiss-cpu IndexFlatIP (768 x 1 term)"] = t_faiss
        agree = float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(fi, r1)]))
        faiss_info = {"version": faiss.__version__, "top_k_agreement_with_engine": agree}
    except ImportError:
        t_faiss = None

    memory = peak_memory_child(args.big_n, args.d, args.k, args.queries) if args.big_n else None

    try:
        from threadpoolctl import threadpool_info
        blas = [{k: v for k, v in lib.items() if k in ("prefix", "architecture", "num_threads", "version")}
                for lib in threadpool_info()]
    except ImportError:
        blas = []
    report = {
        "command": "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/cpu_search.py "
                   + " ".join(sys.argv[1:]),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(),
                    "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "blas": blas},
        "shape": {"n": args.n, "d": args.d, "queries": args.queries, "terms": len(program.terms), "k": args.k,
                  "chunk": chunk_for_budget(args.d, len(program.terms), program.num_queries, program.max_depth)},
        "median_seconds": rows,
        "ratios": {
            "engine / floor": t_engine / t_floor,
            "engine single-term / faiss": (t_engine1 / t_faiss) if t_faiss else None,
        },
        "targets": {"engine <= 1.5 x floor": t_engine <= 1.5 * t_floor,
                    "single-term engine <= faiss": (t_engine1 <= t_faiss) if t_faiss else None},
        "faiss": faiss_info,
        "memory": memory,
        "memory_target": {"peak RSS < 8 GiB at N=2M float16": memory["peak_rss_gib"] < 8} if memory else None,
    }
    write_report(report, Path(args.out))


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def write_report(report: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# CPU search benchmark", "", f"Command: `{report['command']}`", "",
             f"Machine: {report['machine']['cpu']}, {report['machine']['cores']} cores, torch {report['machine']['torch']} "
             f"({report['machine']['torch_threads']} threads)", "",
             f"Shape: {report['shape']}", "", "| what | median s | vs floor |", "|---|---:|---:|"]
    floor = report["median_seconds"]["floor (matmul 768 terms)"]
    for name, t in report["median_seconds"].items():
        lines.append(f"| {name} | {t:.3f} | {t / floor:.2f}x |")
    lines += ["", "Ratios: " + ", ".join(f"{k} = {v:.2f}" for k, v in report["ratios"].items() if v is not None),
              "", "Targets: " + ", ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in report["targets"].items()
                                          if v is not None)]
    if report["memory"]:
        m = report["memory"]
        lines += ["", f"Memory: N={m.get('n', '2M')} float16 memmap ({m['matrix_gib']:.2f} GiB on disk), chunk "
                      f"{m['chunk']} docs: peak RSS {m['peak_rss_gib']:.2f} GiB "
                      f"(target < 8 GiB: {'met' if m['peak_rss_gib'] < 8 else 'NOT met'})",
                  "Working set bound: 4 * chunk * (2d + T + Q * (S + 3)) bytes (see itlr_gpu/backends/reference.py)."]
    text = "\n".join(lines) + "\n"
    for suffix, content in ((".json", json.dumps(report, indent=2)), (".md", text)):
        tmp = out.with_suffix(suffix + ".tmp")
        tmp.write_text(content)
        os.replace(tmp, out.with_suffix(suffix))
    print(text)


if __name__ == "__main__":
    main()
