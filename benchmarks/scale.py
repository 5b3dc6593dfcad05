"""Scaling benchmark: Ray 1 vs 2 CPU workers, and out-of-core vs in-memory under a memory cap.

    python -m benchmarks.scale            # writes benchmarks/results/scale.{json,md}
    python -m benchmarks.scale --quick --out /tmp/scale   # smaller matrices (smoke run), elsewhere

Part 1 times :func:`itlr_gpu.scale.distributed.search_ray` on a local Ray with
one shard (1 worker) and two shards (2 workers), after a warm-up run (worker
start-up and the torch import are not timed), next to the single-process
reference with 1 and 2 torch threads.

Part 2 runs each mode in a fresh subprocess over an on-disk index larger than
the cap and reports the peak RSS above the process' baseline (after imports):
in memory (``Index.load(mmap=False)`` + reference scorer) vs
:func:`~itlr_gpu.scale.shards.search_out_of_core` with ``memory_cap``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:        # also runs as a file: python benchmarks/scale.py
    sys.path.insert(0, str(ROOT))

from benchmarks import TRIAL_HELP, check_stem, default_stem  # noqa: E402
from itlr_gpu.bench import blas_summary, machine_info  # noqa: E402
from itlr_gpu.output import atomic_file  # noqa: E402

TEMPLATES = ["{a} AND NOT {b}", "{a} OR {b}", "({a} OR {b}) AND NOT {c}", "{a} AND {b} AND {c}", "{a}",
             "NOT {a} AND ({b} OR {c})"]


def make_queries(n: int, vocab: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        a, b, c = (f"w{j}" for j in rng.choice(vocab, 3, replace=False))
        out.append(TEMPLATES[i % len(TEMPLATES)].format(a=a, b=b, c=c))
    return out


def make_index(path: Path, n: int, d: int, seed: int = 0) -> None:
    """Write an index folder block by block (never the whole float32 matrix in memory)."""
    from itlr_gpu.index import Index

    rng = np.random.default_rng(seed)
    x = np.lib.format.open_memmap(path.with_suffix(".raw.npy"), mode="w+", dtype=np.float16, shape=(n, d))
    for lo in range(0, n, 65536):
        block = rng.standard_normal((min(n, lo + 65536) - lo, d)).astype(np.float32)
        x[lo:lo + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    x.flush()
    del x
    ids = [f"d{i}" for i in range(n)]
    raw = np.load(path.with_suffix(".raw.npy"), mmap_mode="r")
    Index.from_arrays(raw, ids, dtype="float16").save(path)
    del raw
    os.unlink(path.with_suffix(".raw.npy"))


def program_terms(queries: list[str], d: int):
    from itlr_gpu import compile_queries

    program = compile_queries(queries, [f"q{i}" for i in range(len(queries))])
    rng = np.random.default_rng(1)
    terms = rng.standard_normal((len(program.terms), d)).astype(np.float32)
    return program, terms / np.linalg.norm(terms, axis=1, keepdims=True)


# --------------------------------------------------------------------------- part 1: Ray


def bench_ray(index_dir: Path, n: int, d: int, queries: list[str], repeats: int) -> dict:
    import ray
    import torch

    from itlr_gpu import Ops
    from itlr_gpu.backends.reference import search_reference
    from itlr_gpu.index import Index
    from itlr_gpu.scale.distributed import RayConfig, ShardPool, search_ray

    program, terms = program_terms(queries, d)
    index = Index.load(index_dir, verify=False)
    out: dict = {"docs": n, "dim": d, "queries": len(queries), "terms": len(program.terms), "k": 100}

    def best(fn):
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t)
        return min(times), result

    threads = torch.get_num_threads()
    for nt in (1, 2):
        torch.set_num_threads(nt)
        t, ref = best(lambda: search_reference(index.embeddings, terms, program, Ops(), 100))
        out[f"single_process_{nt}_thread_s"] = round(t, 3)
    torch.set_num_threads(threads)

    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    out["ray_init_s"] = round(time.perf_counter() - t0, 2)
    try:
        for workers in (1, 2):
            cfg = RayConfig(num_workers=workers)
            t0 = time.perf_counter()
            search_ray(index_dir, n, terms, program, Ops(), 100, cfg)  # warm-up: worker start, torch import
            out[f"ray_{workers}_workers_first_call_s"] = round(time.perf_counter() - t0, 2)
            t, got = best(lambda: search_ray(index_dir, n, terms, program, Ops(), 100, cfg))
            out[f"ray_{workers}_workers_s"] = round(t, 3)
            out[f"ray_{workers}_workers_docs_per_s"] = round(n / t)
            out[f"ray_{workers}_workers_same_rows_as_reference"] = bool(np.array_equal(got[1], ref[1]))
        # Resident shards (what `itlr search --ray` uses): each shard read once per job into an actor.
        for workers in (1, 2):
            cfg = RayConfig(num_workers=workers)
            t0 = time.perf_counter()
            with ShardPool(index_dir, n, cfg) as pool:
                pool.search(terms, program, Ops(), 100)  # warm-up
                out[f"pool_{workers}_workers_start_s"] = round(time.perf_counter() - t0, 2)
                t, got = best(lambda: pool.search(terms, program, Ops(), 100))
            out[f"pool_{workers}_workers_s"] = round(t, 3)
            out[f"pool_{workers}_workers_docs_per_s"] = round(n / t)
            out[f"pool_{workers}_workers_same_rows_as_reference"] = bool(np.array_equal(got[1], ref[1]))
    finally:
        ray.shutdown()
    out["speedup_2_vs_1_workers"] = round(out["ray_1_workers_s"] / out["ray_2_workers_s"], 2)
    out["pool_speedup_2_vs_1_workers"] = round(out["pool_1_workers_s"] / out["pool_2_workers_s"], 2)
    return out


# --------------------------------------------------------------------------- part 2: memory


CHILD = r"""
import json, sys, time
import numpy as np
mode, index_dir, cap, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
queries = json.loads(sys.argv[5])
import torch
from itlr_gpu import Ops, compile_queries
from itlr_gpu.backends.reference import search_reference
from itlr_gpu.index import Index
from itlr_gpu.scale.shards import chunk_budget_for_cap, search_out_of_core
from itlr_gpu.backends.reference import chunk_for_budget
program = compile_queries(queries, [f"q{i}" for i in range(len(queries))])
rng = np.random.default_rng(1)
terms = rng.standard_normal((len(program.terms), d)).astype(np.float32)
terms /= np.linalg.norm(terms, axis=1, keepdims=True)
def rss():
    with open("/proc/self/status") as f:
        return {l.split(":")[0]: int(l.split()[1]) * 1024 for l in f if l.startswith(("VmRSS", "VmHWM", "RssAnon", "RssFile"))}
# warm the allocator / kernels on a tiny problem so the baseline includes them
search_reference(np.zeros((300, d), np.float16) + np.float16(0.05), terms, program, Ops(), 10)
base = rss()
index = Index.load(index_dir, verify=False, mmap=(mode != "memory"))
opened = rss()
# Reset the peak (VmHWM) to the current RSS: the search's own peak is measured from here (Linux >= 4.0).
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
before_search = rss()
t = time.perf_counter()
if mode == "memory":
    chunk = chunk_for_budget(d, len(program.terms), program.num_queries, program.max_depth, chunk_budget_for_cap(cap))
    scores, rows = search_reference(index.embeddings, terms, program, Ops(), 100, chunk_size=chunk)
else:
    scores, rows = search_out_of_core(index, terms, program, Ops(), 100, "cpu", memory_cap=cap)
elapsed = time.perf_counter() - t
end = rss()
peak = end["VmHWM"]  # per address space; ru_maxrss would include the parent's RSS at fork
print(json.dumps({"mode": mode, "seconds": elapsed, "baseline_rss": base["VmHWM"], "peak_rss": max(peak, opened["VmHWM"]),
                  "open_peak_rss": opened["VmHWM"], "search_start_rss": before_search["VmRSS"], "search_peak_rss": peak,
                  "end_rss_anon": end.get("RssAnon"), "end_rss_file": end.get("RssFile"),
                  "rows_checksum": int(rows.sum()), "rows0": rows[0, :5].tolist()}))
"""


def bench_memory(index_dir: Path, n: int, d: int, queries: list[str], cap: int) -> dict:
    out = {"docs": n, "dim": d, "matrix_bytes": n * d * 2, "memory_cap_bytes": cap, "queries": len(queries)}
    rows = {}
    for mode in ("memory", "out_of_core"):
        res = subprocess.run([sys.executable, "-c", CHILD, mode, str(index_dir), str(cap), str(d),
                              json.dumps(queries)], capture_output=True, text=True, check=True)
        r = json.loads(res.stdout.strip().splitlines()[-1])
        rows[mode] = r
        out[f"{mode}_seconds"] = round(r["seconds"], 2)
        out[f"{mode}_docs_per_s"] = round(n / r["seconds"])
        out[f"{mode}_baseline_rss_mib"] = round(r["baseline_rss"] / 2**20, 1)
        out[f"{mode}_peak_rss_mib"] = round(r["peak_rss"] / 2**20, 1)
        out[f"{mode}_peak_above_baseline_mib"] = round((r["peak_rss"] - r["baseline_rss"]) / 2**20, 1)
        out[f"{mode}_open_mib"] = round((r["open_peak_rss"] - r["baseline_rss"]) / 2**20, 1)
        out[f"{mode}_search_peak_mib"] = round((r["search_peak_rss"] - r["search_start_rss"]) / 2**20, 1)
    out["same_top_rows"] = rows["memory"]["rows_checksum"] == rows["out_of_core"]["rows_checksum"] and \
        rows["memory"]["rows0"] == rows["out_of_core"]["rows0"]
    # The cap bounds the search (two shard buffers + the chunk working set); opening the index (its
    # doc-id column, the memory map's header) is reported on its own line.
    out["out_of_core_search_within_cap"] = out["out_of_core_search_peak_mib"] * 2**20 <= cap
    out["scorer_working_set_mib"] = out["memory_search_peak_mib"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="small sizes (50,000 / 120,000 documents), a smoke test: its figures are no result")
    ap.add_argument("--out", default=None,
                    help="file stem of the table written: STEM.md and STEM.json" + TRIAL_HELP.format(name="scale"))
    args = ap.parse_args(argv)
    args.out = args.out or default_stem(ap, args, "scale")
    check_stem(ap, args.out)
    d = 384
    # Large enough that a Ray task (~0.1-0.3 s of scheduling and start-up) is small beside its work.
    n_ray, n_mem = (50_000, 120_000) if args.quick else (1_000_000, 300_000)
    cap = 64 << 20
    queries = make_queries(256, 400)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="itlr-scale-") as tmp:
        tmp = Path(tmp)
        make_index(tmp / "ray", n_ray, d)
        ray_res = bench_ray(tmp / "ray", n_ray, d, queries, repeats=2 if args.quick else 3)
        make_index(tmp / "mem", n_mem, d, seed=2)
        mem_res = bench_memory(tmp / "mem", n_mem, d, queries, cap)
    info = machine_info()
    results = {
        "machine": {"cpus": os.cpu_count(), "cpu": info["cpu"], "torch": info["torch"], "blas": info["blas"],
                    "python": platform.python_version(), "platform": platform.platform(),
                    "gpu": None, "load_average_1min_at_start": round(load_before, 2),
                    "load_average_1min_at_end": round(os.getloadavg()[0], 2)},
        "ray": ray_res, "out_of_core": mem_res, "quick": args.quick,
        "command": shlex.join(["python", "-m", "benchmarks.scale", *(sys.argv[1:] if argv is None else argv)]),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(args.out + ".json", "w", encoding="utf-8") as f:
        f.write(json.dumps(results, indent=2) + "\n")
    with atomic_file(args.out + ".md", "w", encoding="utf-8") as f:
        f.write(render(results))
    print(render(results))
    return 0


def render(r: dict) -> str:
    ray, mem = r["ray"], r["out_of_core"]
    lines = [
        "# Scaling benchmark (CPU)",
        "",
        f"Machine: {r['machine'].get('cpu', 'CPU')}, {r['machine']['cpus']} cores, no GPU"
        + (f"; torch {r['machine']['torch']}, BLAS loaded: {blas_summary(r['machine']['blas'])}"
           if r['machine'].get('torch') else "")
        + f"; `{r.get('command') or 'python -m benchmarks.scale' + (' --quick' if r['quick'] else '')}`.",
        "",
        f"Load average (1 min) {r['machine'].get('load_average_1min_at_start', '?')} at start, "
        f"{r['machine'].get('load_average_1min_at_end', '?')} at end (the end includes this benchmark's own "
        "work): " + ("the machine was idle at the start." if r["machine"].get("load_average_1min_at_start", 9) < 0.5
                     else "other jobs shared the cores, so the timings are noisy and the 2-worker run may not "
                          "have had two free cores."),
        "",
        f"## Ray: 1 vs 2 workers ({ray['docs']:,} docs x d={ray['dim']} float16, {ray['queries']} queries, "
        f"{ray['terms']} terms, k={ray['k']})",
        "",
        "| run | seconds | docs/s | same rows as reference |",
        "|---|---:|---:|---|",
        f"| single process, 1 torch thread | {ray['single_process_1_thread_s']} | "
        f"{round(ray['docs'] / ray['single_process_1_thread_s']):,} | - |",
        f"| single process, 2 torch threads | {ray['single_process_2_thread_s']} | "
        f"{round(ray['docs'] / ray['single_process_2_thread_s']):,} | - |",
        f"| Ray, 1 worker (1 shard) | {ray['ray_1_workers_s']} | {ray['ray_1_workers_docs_per_s']:,} | "
        f"{ray['ray_1_workers_same_rows_as_reference']} |",
        f"| Ray, 2 workers (2 shards) | {ray['ray_2_workers_s']} | {ray['ray_2_workers_docs_per_s']:,} | "
        f"{ray['ray_2_workers_same_rows_as_reference']} |",
        f"| Ray, 1 resident actor (`--ray`: shard loaded once per job) | {ray['pool_1_workers_s']} | "
        f"{ray['pool_1_workers_docs_per_s']:,} | {ray['pool_1_workers_same_rows_as_reference']} |",
        f"| Ray, 2 resident actors | {ray['pool_2_workers_s']} | {ray['pool_2_workers_docs_per_s']:,} | "
        f"{ray['pool_2_workers_same_rows_as_reference']} |",
        "",
        f"Speed-up 2 vs 1 workers: **{ray['speedup_2_vs_1_workers']}x** with tasks (each batch re-reads its "
        f"shard), **{ray['pool_speedup_2_vs_1_workers']}x** with resident actors.  Per batch times; not timed: "
        f"`ray.init` ({ray['ray_init_s']} s), each task worker's first call (start-up + torch import: "
        f"{ray['ray_1_workers_first_call_s']} s / {ray['ray_2_workers_first_call_s']} s), the actors' start "
        f"and shard load with a first batch ({ray['pool_1_workers_start_s']} s / {ray['pool_2_workers_start_s']} s, "
        "paid once per job).",
        "",
        f"## Out-of-core vs in-memory ({mem['docs']:,} docs x d={mem['dim']} float16 = "
        f"{mem['matrix_bytes'] / 2**20:.0f} MiB matrix, cap {mem['memory_cap_bytes'] / 2**20:.0f} MiB)",
        "",
        "| mode | seconds | docs/s | opening the index MiB | search peak MiB | peak above baseline MiB |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for mode, label in (("memory", "in memory (matrix loaded)"), ("out_of_core", "out of core (memory_cap)")):
        lines.append(f"| {label} | {mem[f'{mode}_seconds']} | {mem[f'{mode}_docs_per_s']:,} | "
                     f"{mem[f'{mode}_open_mib']} | {mem[f'{mode}_search_peak_mib']} | "
                     f"{mem[f'{mode}_peak_above_baseline_mib']} |")
    lines += [
        "",
        f"Same top-k rows: {mem['same_top_rows']}.  Out-of-core search peak within the cap: "
        f"**{mem['out_of_core_search_within_cap']}** ({mem['out_of_core_search_peak_mib']} MiB for "
        f"{mem['memory_cap_bytes'] / 2**20:.0f} MiB: two shard buffers and the chunk working set, half each).  "
        "Opening the index costs its doc-id column (Arrow, read and checked for duplicates by sorting) "
        "beside a memory map; the in-memory run also reads the whole matrix there.  Columns: RSS above the "
        "baseline (after imports and a tiny warm-up search) while opening; the search's own peak above the "
        "RSS it started from (the peak is reset in between through /proc/self/clear_refs); the overall peak "
        "above baseline.  The out-of-core reader uses `pread` into two reusable buffers, so the file stays in "
        "the page cache and is not counted in the process RSS.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
