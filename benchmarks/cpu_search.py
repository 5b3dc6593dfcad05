"""CPU search benchmark: the engine against its BLAS floor and FAISS-cpu.

Shapes (issue defaults): N = 200,000 random unit vectors, d = 384, float32;
256 queries of 3 terms each (768 distinct terms) with the paper's ops; k = 10.

In one run it measures (median of --repeat rounds after one warm-up; every case runs once per
round, so a load change on a shared machine hits every case alike):
  floors   the bare chunked matmul terms (768 x d) @ docs.T with torch's BLAS (MKL in the CPU
           wheel) and with numpy's (OpenBLAS): the fastest is the floor of any exact scorer
  engine   the engine's search through ``--backend auto`` (backend level: term embeddings given),
           float32 and float16 document matrices; which BLAS it picked is reported
  engine1  the engine with one term per query (768 single-term queries), float32 and float16
  torch    the torch reference on the same two batches, when the engine is the fused numba loop
  faiss    FAISS-cpu IndexFlatIP on the same 768 single-term searches (float32)
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
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import TRIAL_HELP, check_stem, default_stem, non_negative_int, positive_int, seconds  # noqa: E402
from itlr_gpu import Ops, compile_queries  # noqa: E402
from itlr_gpu.backends import get_backend, resolve_device  # noqa: E402
from itlr_gpu.backends.reference import chunk_for_budget  # noqa: E402
from itlr_gpu.cpuinfo import cpu_name  # noqa: E402



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


def interleaved(cases: dict, repeat: int, settle: float = 0.0) -> tuple[dict, dict, dict]:
    """Median seconds per case: one warm-up each, then ``repeat`` rounds running every case once per round
    (round robin), so a load change on a shared machine hits every case alike.  Also every round's times.
    ``settle`` seconds of quiet before each timed case: an OpenBLAS call leaves its worker threads spinning
    for a while, and they take the cores from whatever case comes next (MKL's included)."""
    results = {name: fn() for name, fn in cases.items()}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, fn in cases.items():
            time.sleep(settle)
            t0 = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(v) for name, v in times.items()}, results, times


def paired(times: dict, num: str, den) -> float:
    """Median over rounds of num's time / den's time in the same round (den: a name or a list of names,
    their minimum): a ratio that a load change between rounds does not move."""
    dens = [den] if isinstance(den, str) else den
    return statistics.median(a / min(times[d][i] for d in dens) for i, a in enumerate(times[num]))


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
    chunk = chunk_for_budget({d}, len(program.terms), program.num_queries, program.max_depth, cpu=True)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    scores, rows = search_reference(docs, terms, program, Ops(), {k})
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(dict(chunk=chunk, peak_rss_gib=peak / 2**20, rss_before_search_gib=before / 2**20,
                          matrix_gib=docs.nbytes / 2**30, n=int(docs.shape[0]), top1=int(rows[0, 0]))))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=positive_int, default=200_000, help="documents (random unit rows; default %(default)s)")
    ap.add_argument("--d", type=positive_int, default=384, help="dimension (default %(default)s)")
    ap.add_argument("--queries", type=positive_int, default=256, help="random three-term queries (default %(default)s)")
    ap.add_argument("-k", type=positive_int, default=10, help="results per query (default %(default)s)")
    ap.add_argument("--repeat", type=positive_int, default=5, help="timed runs per case, interleaved; medians reported (default %(default)s)")
    ap.add_argument("--settle", type=seconds, default=0.5,
                    help="seconds of quiet before each timed case (0 = back to back, as before)")
    ap.add_argument("--big-n", type=non_negative_int, default=2_000_000, help="rows of the float16 memory test (0 = skip)")
    ap.add_argument("--out", default=None,
                    help="file stem of the table written: STEM.md and STEM.json" + TRIAL_HELP.format(name="cpu_search"))
    args = ap.parse_args()
    args.out = args.out or default_stem(ap, args, "cpu_search")
    check_stem(ap, args.out)

    rng = np.random.default_rng(0)
    docs = unit_rows(rng, args.n, args.d)
    program = random_programs(rng, args.queries)
    terms = unit_rows(rng, len(program.terms), args.d)
    single = compile_queries([f'"{t}"' for t in program.terms])
    many, one = f"{program.num_queries} x 3 terms", f"{single.num_queries} x 1 term"   # the cases' shapes
    device = resolve_device("cpu")   # a CPU benchmark, on a GPU machine too
    engine = get_backend("auto", device)
    ops = Ops()

    docs16 = docs.astype(np.float16)
    terms_t = torch.from_numpy(terms)
    chunk = chunk_for_budget(args.d, len(program.terms), program.num_queries, program.max_depth, cpu=True)
    out = np.empty((len(program.terms), chunk), dtype=np.float32)

    def chunked_matmul(kind: str):
        def run():
            for lo in range(0, args.n, chunk):
                block = docs[lo:lo + chunk]
                o = out[:, : len(block)]
                if kind == "numpy":
                    np.matmul(terms, block.T, out=o)
                else:
                    torch.mm(terms_t, torch.from_numpy(block).T, out=torch.from_numpy(o))
        return run

    cases = {
        "matmul torch (MKL), chunked": chunked_matmul("torch"),
        "matmul numpy (OpenBLAS), chunked": chunked_matmul("numpy"),
        f"engine ({engine.name}, {many}, float32)": lambda: engine.search(docs, terms, program, ops, args.k,
                                                                                 device=device),
        f"engine ({engine.name}, {many}, float16)": lambda: engine.search(docs16, terms, program, ops, args.k,
                                                                                 device=device),
        f"engine ({engine.name}, {one}, float32)": lambda: engine.search(docs, terms, single, ops, args.k,
                                                                                device=device),
        f"engine ({engine.name}, {one}, float16)": lambda: engine.search(docs16, terms, single, ops, args.k,
                                                                                device=device),
    }
    if engine.name != "torch":   # the torch reference beside the fused loop: what the fusion wins
        ref = get_backend("torch", device)
        cases[f"torch reference ({many}, float32)"] = lambda: ref.search(docs, terms, program, ops, args.k,
                                                                              device=device)
        cases[f"torch reference ({one}, float32)"] = lambda: ref.search(docs, terms, single, ops, args.k,
                                                                             device=device)
    faiss_info = None
    try:
        import faiss

        index = faiss.IndexFlatIP(args.d)
        index.add(docs)
        cases[f"faiss-cpu IndexFlatIP ({one})"] = lambda: index.search(terms, args.k)
        faiss_info = {"version": faiss.__version__}
    except ImportError:
        pass
    load_before = os.getloadavg()
    with torch.inference_mode():
        rows, results, times = interleaved(cases, args.repeat, args.settle)
    load_after = os.getloadavg()
    t_torch, t_numpy = rows["matmul torch (MKL), chunked"], rows["matmul numpy (OpenBLAS), chunked"]
    t_floor = min(t_torch, t_numpy)
    rows = {"floor: fastest matmul": t_floor, **rows}
    floors = ["matmul torch (MKL), chunked", "matmul numpy (OpenBLAS), chunked"]
    name3 = {dt: f"engine ({engine.name}, {many}, {dt})" for dt in ("float32", "float16")}
    name1 = {dt: f"engine ({engine.name}, {one}, {dt})" for dt in ("float32", "float16")}
    fname = f"faiss-cpu IndexFlatIP ({one})"
    t_faiss = rows.get(fname)
    # ratios: the median over rounds of the same round's ratio (robust to load drifting between rounds)
    e3 = {dt: paired(times, name3[dt], floors) for dt in name3}
    e1 = {dt: paired(times, name1[dt], fname) if t_faiss else None for dt in name1}
    if faiss_info is not None:
        fi = results[f"faiss-cpu IndexFlatIP ({one})"][1]
        r1 = results[f"engine ({engine.name}, {one}, float32)"][1]
        faiss_info["top_k_agreement_with_engine"] = float(np.mean([len(set(a) & set(b)) / args.k
                                                                   for a, b in zip(fi, r1)]))
    from itlr_gpu.backends.gemm import choices

    memory = peak_memory_child(args.big_n, args.d, args.k, args.queries) if args.big_n else None

    try:
        from threadpoolctl import threadpool_info
        blas = [{k: v for k, v in lib.items() if k in ("prefix", "internal_api", "architecture", "num_threads", "version")}
                for lib in threadpool_info()]
    except ImportError:
        blas = []
    report = {
        "command": "env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/cpu_search.py "
                   + " ".join(sys.argv[1:]),
        "machine": {"cpu": cpu_name(), "cores": os.cpu_count(),
                    "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "blas": blas,
                    "env": {k: os.environ.get(k) for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS",
                                                           "ITLR_MATMUL")},
                    "loadavg_before": load_before, "loadavg_after": load_after},
        "engine_matmul": choices(),
        "settle_s": args.settle,
        "shape": {"n": args.n, "d": args.d, "queries": args.queries, "terms": len(program.terms), "k": args.k,
                  "chunk": chunk},
        "median_seconds": rows,
        "round_seconds": times,
        "ratios": {
            **{f"engine {dt} / fastest matmul": e3[dt] for dt in e3},
            **{f"engine single-term {dt} / faiss": e1[dt] for dt in e1},
            "torch matmul / numpy matmul": paired(times, floors[0], floors[1]),
        },
        "targets": {**{f"engine {dt} <= 1.3 x fastest matmul": e3[dt] <= 1.3 for dt in e3},
                    **{f"single-term engine {dt} <= faiss": (e1[dt] <= 1.0) if t_faiss else None for dt in e1}},
        "faiss": faiss_info,
        "memory": memory,
        "memory_target": {"peak RSS < 8 GiB at N=2M float16": memory["peak_rss_gib"] < 8} if memory else None,
    }
    write_report(report, Path(args.out))


def write_report(report: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = ["# CPU search benchmark", "", f"Command: `{report['command']}`", "",
             f"Machine: {report['machine']['cpu']}, {report['machine']['cores']} cores, torch {report['machine']['torch']} "
             f"({report['machine']['torch_threads']} threads); BLAS: "
             + ", ".join(f"{b.get('internal_api') or b.get('prefix')} {b.get('version') or ''} "
                         f"({b.get('architecture') or '-'}, {b.get('num_threads')} threads)"
                         for b in report['machine']['blas'])
             + f"; environment {report['machine']['env']}", "",
             "Load average (1/5/15 min) before " + "/".join(f"{x:.2f}" for x in report['machine']['loadavg_before'])
             + ", after " + "/".join(f"{x:.2f}" for x in report['machine']['loadavg_after'])
             + ": the machine may be shared; every case runs once per round, rounds interleaved, medians; "
             + f"{report.get('settle_s', 0):g} s of quiet before each timed case.", "",
             "Engine's matmul (probed once per process and shape class, itlr_gpu/backends/gemm.py): "
             + (", ".join(f"{k}: {v['choice']} (probe torch {v['torch_s'] * 1e3:.1f} ms, numpy "
                          f"{v['numpy_s'] * 1e3:.1f} ms)" for k, v in report['engine_matmul'].items()) or "no probe"),
             "",
             f"Shape: {report['shape']}", "", "| what | median s | vs floor |", "|---|---:|---:|"]
    floor = report["median_seconds"]["floor: fastest matmul"]
    for name, t in report["median_seconds"].items():
        lines.append(f"| {name} | {t:.3f} | {t / floor:.2f}x |")
    lines += ["", "Ratios (median over rounds of the same round's ratio; floor: the faster BLAS that round): "
              + ", ".join(f"{k} = {v:.2f}" for k, v in report["ratios"].items() if v is not None),
              "", "Targets: " + ", ".join(f"{k}: {'met' if v else 'NOT met'}" for k, v in report["targets"].items()
                                          if v is not None)]
    if report["memory"]:
        m = report["memory"]
        lines += ["", f"Memory: N={m['n']:,} float16 memmap ({m['matrix_gib']:.2f} GiB on disk), chunk "
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
