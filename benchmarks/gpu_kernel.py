"""GPU benchmark of the fused logical top-k kernel against the unfused torch path and the floors.

Shapes (issue defaults): N in {1M, 10M} random unit vectors, d = 768, float16;
1,024 queries x 3 distinct terms (3,072 terms; random programs mixing AND, OR,
NOT; the paper's ops); k in {10, 100, 1000}.  In one run, per N:

  (a) fused    the Triton kernel (kernels/fused_logical_topk.py), docs resident on the GPU
  (a') form    the kernel's other form, timed beside (a) in every row: (a) runs the default push-batched
               form (every PUSH of a tile in one pass over d), (a') the per-step form (one dot per PUSH step)
  (b) unfused  search_reference on cuda: chunked matmul + element-wise ops + torch.topk
  (c) single   FAISS GPU flat IP search of the 3,072 single-term queries if faiss has GPU
               support, else chunked fp16 matmul + torch.topk (the same 3,072 searches)
  (d) floors   cuBLAS fp16 matmul terms (3,072 x d) @ docs.T (chunked, output reused), and
               one read of the document matrix from HBM (a float32-accumulated sum)
  (e) options  the fused kernel with the recommended scoring options (itlr_gpu.scoring.RECOMMENDED:
               per-literal affine maps + a hybrid epilogue with one whole-query vector per query),
               statistics over the 4,096-document sample included; at the smallest k only
  (f) rule     with --rule-check: fused vs torch at the corners of ``--backend auto``'s rule
               (itlr_gpu.backends.choose_cuda_backend: batch size, stack depth, k) on the first N
  (g) budget   with --rule-check: the fused kernel at the largest k on the first N with the default memory
               budget and with 8x it, and the launch plan each allows (is the budget what starves large k?)

Times are the median of --repeat runs (CUDA events) after a warm-up (which includes Triton's compile).  Reported:
queries/s, the fused kernel's TFLOP/s as a fraction of the measured matmul rate,
ratios vs (b) and vs the matmul floor, the peak GPU memory of (a) over the document matrix --
the search's own (torch.cuda.max_memory_allocated less what was allocated when it started) and the
process's (which also holds the benchmark's term matrix and the 32 MiB cuBLAS keeps after the floor's
first product) -- and how well (a)
agrees with (b) (same rows, max score difference; both get the same
fp16-rounded term embeddings).  Every row uses ``default_config`` (what users
get); a tile comparison against larger tiles that may spill runs first (N = 1M,
k = 10) and is recorded.  On a GPU every specialisation the run needs is first
compiled in parallel worker processes (benchmarks/gpu_warmup.py), so the
timed part does not wait on one compile after another.

Run from the repository root (needs only torch, triton, numpy and this repo):
    python benchmarks/gpu_kernel.py              # H100/H200: < 5 minutes
    python benchmarks/gpu_kernel.py --smoke      # tiny shapes; without a GPU under Triton's interpreter
Writes benchmarks/results/gpu_kernel.{json,md} at the default settings (any other, --smoke too:
itlr-gpu_kernel-trial.{json,md} in the system's temporary folder; --out chooses), rewritten after every
row, so an interrupted run keeps what it measured.  ``bash benchmarks/gpu_check.sh`` runs it after
the GPU tests.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--smoke", action="store_true", help="tiny shapes (CI sanity; interpreter without a GPU)")
    ap.add_argument("--n", type=int, nargs="+", default=None, help="document counts (default 1M 10M)")
    ap.add_argument("--d", type=int, default=None, help="dimension (default 768; 96 with --smoke)")
    ap.add_argument("--queries", type=int, default=None, help="queries per batch (default 1024; 16 with --smoke)")
    ap.add_argument("--k", type=int, nargs="+", default=None, help="results per query (default 10 100 1000; 1 10 50 with --smoke)")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per case, median reported (default 5; 1 with --smoke)")
    ap.add_argument("--no-autotune", action="store_true", help="take the kernel's default tiles instead of autotuning them")
    ap.add_argument("--skip-unfused", action="store_true", help="skip (b), the slowest part")
    ap.add_argument("--rule-check", action="store_true",
                    help="also time fused vs torch at the corners of --backend auto's rule (first N)")
    ap.add_argument("--out", default=None, help="output stem (default: benchmarks/results/gpu_kernel with the default settings; with others "
                    "itlr-gpu_kernel-trial in the system's temporary folder)")
    ap.add_argument("--profile-launch", action="store_true",
                    help="for a profiler: launch the fused kernel on the first N and k twice (the first compiles "
                         "and warms up; profile the second) and exit, timing nothing")
    ap.add_argument("--per-step", action="store_true",
                    help="with --profile-launch: the kernel's per-step form (default: the push-batched form)")
    args = ap.parse_args(argv)
    if args.smoke:
        defaults = dict(n=[600], d=96, queries=16, k=[1, 10, 50], repeat=1)
    else:
        defaults = dict(n=[1_000_000, 10_000_000], d=768, queries=1024, k=[10, 100, 1000], repeat=5)
    sys.path.insert(0, str(ROOT))
    from benchmarks import check_stem, default_stem

    # (before the defaults fill in: a setting given is a trial, whose table goes to the temporary folder)
    args.out = args.out or default_stem(ap, args, "gpu_kernel")
    for name, value in defaults.items():   # None: not given (an explicit 0 is checked below, not replaced)
        if getattr(args, name) is None:
            setattr(args, name, value)
    check_stem(ap, args.out)   # before minutes of work: the stem's folder must be one, and writable
    sizes = {"--n": args.n, "--d": [args.d], "--queries": [args.queries], "--k": args.k, "--repeat": [args.repeat]}
    for flag, values in sizes.items():
        if any(v < 1 for v in values):
            ap.error(f"{flag} {' '.join(map(str, values))}: at least 1")
    return args


ARGS = parse_args()

# Importing without installing the package: the repo root on sys.path; pyarrow is only used by
# itlr_gpu's Arrow I/O, so a stub lets itlr_gpu.compiler import where pyarrow is missing.
sys.path.insert(0, str(ROOT))
try:
    import pyarrow  # noqa: F401
except ImportError:
    sys.modules["pyarrow"] = types.ModuleType("pyarrow")

import torch  # noqa: E402

if not torch.cuda.is_available():
    if not ARGS.smoke:
        sys.exit("no CUDA GPU: run with --smoke (tiny shapes under Triton's interpreter)")
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported

import numpy as np  # noqa: E402
import triton  # noqa: E402

from itlr_gpu.backends.reference import search_reference  # noqa: E402
from itlr_gpu.compiler import compile_queries  # noqa: E402
from itlr_gpu.ops import Ops  # noqa: E402
from itlr_gpu.query import Not, Term, make_and, make_or  # noqa: E402
from itlr_gpu.scoring import RECOMMENDED, linearize_options  # noqa: E402
from itlr_gpu.kernels import fused_logical_topk as fk  # noqa: E402

CUDA = torch.cuda.is_available()
DEV = torch.device("cuda" if CUDA else "cpu")
OPS = Ops()
TEMPLATES = [  # 3 terms each, mixing AND / OR / NOT
    lambda a, b, c: make_and([a, b, Not(c)]),
    lambda a, b, c: make_and([make_or([a, b]), c]),
    lambda a, b, c: make_or([make_and([a, b]), Not(c)]),
    lambda a, b, c: make_and([a, make_or([b, Not(c)])]),
    lambda a, b, c: make_or([a, b, c]),
    lambda a, b, c: make_and([a, b, c]),
]


# ------------------------------------------------------------------------------------------------

def timed(fn, repeat: int, warmup: int | None = None) -> tuple[float, object]:
    """Median seconds of ``repeat`` runs after ``warmup`` runs (none under the interpreter); (seconds, result)."""
    out = None
    warmup = (1 if CUDA else 0) if warmup is None else warmup
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(repeat):
        if CUDA:
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = fn()
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1e3)
        else:
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def make_docs(n: int, d: int, seed: int = 0) -> torch.Tensor:
    """n random unit rows, float16, generated on the device in chunks."""
    g = torch.Generator(device=DEV).manual_seed(seed)
    docs = torch.empty((n, d), dtype=torch.float16, device=DEV)
    step = 1 << 20
    for lo in range(0, n, step):
        x = torch.randn((min(step, n - lo), d), generator=g, device=DEV, dtype=torch.float32)
        docs[lo:lo + x.shape[0]] = (x / x.norm(dim=1, keepdim=True)).to(torch.float16)
        del x
    return docs


def make_batch(q: int, d: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    queries = []
    for i in range(q):
        a, b, c = (Term(f"t{3 * i + j}") for j in range(3))
        queries.append(TEMPLATES[int(rng.integers(len(TEMPLATES)))](a, b, c))
    program = compile_queries(queries)
    t = rng.standard_normal((len(program.terms), d)).astype(np.float32)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    return program, t.astype(np.float16).astype(np.float32)  # fp16-representable: (a) and (b) see the same terms


def chunk_rows(n: int, width: int, budget_bytes: int) -> int:
    return int(max(1024, min(n, budget_bytes // (width * 2))))


def matmul_floor(docs: torch.Tensor, terms16: torch.Tensor, repeat: int) -> float:
    n = docs.shape[0]
    c = chunk_rows(n, terms16.shape[0], 1 << 30)
    out = torch.empty((terms16.shape[0], c), dtype=docs.dtype, device=DEV)

    def run():
        for lo in range(0, n, c):
            chunk = docs[lo:lo + c]
            torch.matmul(terms16, chunk.T, out=out[:, :chunk.shape[0]])
    sec, _ = timed(run, repeat)
    return sec


def hbm_floor(docs: torch.Tensor, repeat: int) -> float:
    sec, _ = timed(lambda: torch.sum(docs, dim=0, dtype=torch.float32), repeat)
    return sec


def single_term_search(docs: torch.Tensor, terms16: torch.Tensor, k: int, repeat: int):
    """(c): the 3,072 single-term top-k searches: FAISS GPU if available, else fp16 matmul + torch.topk."""
    try:
        import faiss  # noqa: F401
        if CUDA and faiss.get_num_gpus() > 0:
            res = faiss.StandardGpuResources()
            index = faiss.GpuIndexFlatIP(res, docs.shape[1])
            index.add(docs.float().cpu().numpy())
            xq = terms16.float().cpu().numpy()
            sec, _ = timed(lambda: index.search(xq, k), repeat)
            return "faiss-gpu IndexFlatIP", sec
    except Exception:
        pass
    n = docs.shape[0]
    c = chunk_rows(n, terms16.shape[0], 1 << 30)

    def run():
        best_v = best_i = None
        for lo in range(0, n, c):
            sims = terms16 @ docs[lo:lo + c].T
            v, i = torch.topk(sims, min(k, sims.shape[1]), dim=1)
            i = i + lo
            if best_v is not None:
                v, j = torch.topk(torch.cat((best_v, v), 1), k if k <= best_v.shape[1] + v.shape[1] else
                                  best_v.shape[1] + v.shape[1], dim=1)
                i = torch.gather(torch.cat((best_i, i), 1), 1, j)
            best_v, best_i = v, i
        return best_v, best_i
    sec, _ = timed(run, repeat)
    return "torch fp16 matmul + topk", sec


def sms_here() -> int:
    return torch.cuda.get_device_properties(DEV).multi_processor_count if CUDA else 1


def old_nsplit(docs, program, k) -> int:
    """The split count the launch planner chose until 12-04: two programs per multiprocessor."""
    const, _ = fk.specialisation(docs.dtype, OPS, program.max_depth, k, pushes=fk.batch_pushes(program))
    nb = -(-program.num_queries // const["BLOCK_Q"])
    return max(1, min(-(-2 * sms_here() // nb), -(-docs.shape[0] // const["BLOCK_N"])))


def fused(docs, terms, program, k, cfg):
    return fk.fused_search(docs, terms, program, OPS, k, **cfg)


def fused_options(docs, terms, whole, program, k, cfg):
    """(e): what the triton backend does for scoring options: sample statistics, linearize, one launch."""
    lin = linearize_options(docs, terms, program, OPS, RECOMMENDED, whole, device=docs.device)
    return fk.fused_search(docs, lin.vectors, lin.program, lin.ops, k, lit_affine=(lin.lit_a, lin.lit_b),
                           epilogue=(lin.mix, lin.whole_arg), **cfg)


def _tiles(block_n, block_q, block_d=64, push_batch=False):
    return dict(block_n=block_n, block_q=block_q, block_d=block_d, num_warps=8, num_stages=3, push_batch=push_batch)


# The per-step form at three tiles (64 x 32: the default until 12-04; 128 x 32: since), d in chunks of 128,
# and the push-batched form (every PUSH of a tile in one pass over d) at the tiles ptxas keeps spill-free.
TILE_CANDIDATES = [_tiles(128, 64), _tiles(128, 32), _tiles(64, 32), _tiles(128, 32, 128),
                   _tiles(128, 32, push_batch=True), _tiles(64, 32, push_batch=True), _tiles(64, 64, push_batch=True),
                   _tiles(128, 32, 128, push_batch=True)]
VARIANT = dict(push_batch=False)   # the per-step form, timed beside the default (push-batched) in every row
VARIANT_LABEL = "per-step form"


def tile_label(cfg: dict) -> str:
    return (f"{cfg['block_n']}x{cfg['block_q']}" + (f" d{cfg['block_d']}" if cfg.get("block_d", 64) != 64 else "")
            + (" push-batched" if cfg.get("push_batch") else ""))


def autotune(docs, terms, program, repeat) -> tuple[dict, list]:
    """Time default_config (spill-free by construction) against larger tiles that may spill (k = 10);
    the fastest is recorded, the benchmark rows keep the default (what users get)."""
    default = fk.default_config(docs, program.max_depth, 10)
    candidates = [default] + [c for c in TILE_CANDIDATES if c != default]
    rows = []
    for cfg in candidates:
        try:
            sec, _ = timed(lambda: fused(docs, terms, program, 10, cfg), repeat)
        except Exception as exc:  # a config that does not compile or fit: record and move on
            rows.append(dict(config=cfg, error=f"{type(exc).__name__}: {exc}"[:300]))
            continue
        rows.append(dict(config=cfg, seconds=sec))
    ok = [r for r in rows if "seconds" in r]
    return (min(ok, key=lambda r: r["seconds"])["config"] if ok else {}), rows


def nested(terms: list) -> object:
    """a AND (b OR (c AND ...)): stack depth = number of terms."""
    node = terms[-1]
    for i, t in enumerate(reversed(terms[:-1])):
        node = make_and([t, node]) if i % 2 else make_or([t, node])
    return node


def rule_batches(d: int, smoke: bool) -> list[tuple]:
    """(queries, depth, k, program, terms) at the corners of the --backend auto rule."""
    corners = [(2, 2, 10), (8, 2, 10), (16, 2, 10), (32, 3, 10), (1024, 2, 1000), (1024, 2, 2048), (256, 8, 100),
               (64, 12, 10)]
    if smoke:
        corners = [(1, 2, 5), (8, 3, 5)]
    out = []
    for q, depth, k in corners:
        queries = [nested([Term(f"t{depth * i + j}") for j in range(depth)]) for i in range(q)]
        program = compile_queries(queries)
        rng = np.random.default_rng(q + depth + k)
        t = rng.standard_normal((len(program.terms), d)).astype(np.float32)
        t = (t / np.linalg.norm(t, axis=1, keepdims=True)).astype(np.float16).astype(np.float32)
        out.append((q, depth, k, program, t))
    return out


def budget_check(docs, program, terms, k: int, repeat: int) -> list[dict]:
    """(g) the fused kernel at one k with the default memory budget and with 8x it, and the launch plan each
    allows: whether the key buffer's budget is what makes a large k slow on a small corpus (docs/gpu.md predicts
    the 8x plan is not starved and runs near the k = 10 time)."""
    n, d = docs.shape
    k_eff = min(k, n)

    def plan(budget):
        return fk.batch_plan(docs.dtype, program.max_depth, k_eff, n, d, program.num_queries, len(program.terms),
                             sms=sms_here(), pushes=fk.batch_pushes(program), mem_budget=budget,
                             nsplit=None if CUDA else 1)   # as fused_search plans under the interpreter

    rows = []
    default_budget = plan(None).mem_budget
    for name, budget in (("default", None), ("8x", 8 * default_budget)):
        p = plan(budget)
        if CUDA:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        sec, _ = timed(lambda: fk.fused_search(docs, terms, program, OPS, k_eff, mem_budget=budget), repeat)
        peak = torch.cuda.max_memory_allocated() / (n * d * docs.element_size()) if CUDA else None
        rows.append(dict(budget=name, mem_budget=p.mem_budget, k=k_eff, L=p.L, cap=p.cap, nsplit=p.nsplit,
                         launches=p.launches, starved=p.starved, fused_s=sec, peak_over_docs=peak))
        print(f"  budget check: k={k_eff} budget {name} ({p.mem_budget / 2**20:.0f} MiB): cap {p.cap} of L {p.L}, "
              f"{p.nsplit} splits, {p.launches} launch(es), starved {p.starved}: fused {sec * 1e3:.2f} ms"
              + (f", peak {peak:.3f}x docs" if peak is not None else ""), flush=True)
    return rows


def auto_rule(docs, program, k: int) -> str:
    """What ``--backend auto`` picks for this batch on these documents (itlr_gpu.backends.choose_cuda_backend)."""
    from itlr_gpu.backends import cuda_choice

    return cuda_choice(program, k, docs, DEV)


def rule_check(docs, batches, repeat: int) -> list[dict]:
    """(f) fused vs torch at the corners of the --backend auto rule."""
    rows = []
    for q, depth, k, program, t in batches:
        k_eff = min(k, docs.shape[0])
        sec_f, _ = timed(lambda: fk.fused_search(docs, t, program, OPS, k_eff), repeat)
        sec_t, _ = timed(lambda: search_reference(docs, t, program, OPS, k_eff, device=DEV), repeat)
        # the per-step form too where the kernel is a candidate (k <= 1024; the k = 2048 corner takes 17 s)
        sec_v = (timed(lambda: fk.fused_search(docs, t, program, OPS, k_eff, **VARIANT), repeat)[0]
                 if k_eff <= 1024 else None)
        rows.append(dict(queries=q, depth=program.max_depth, k=k_eff, fused_s=sec_f, torch_s=sec_t,
                         faster="triton" if sec_f < sec_t else "torch", variant_s=sec_v,
                         rule=auto_rule(docs, program, k_eff)))
        print(f"  rule check: {q} queries, depth {program.max_depth}, k={k_eff}: fused {sec_f * 1e3:.2f} ms, "
              f"torch {sec_t * 1e3:.2f} ms; rule says {rows[-1]['rule']}"
              + (f"; {VARIANT_LABEL} {sec_v * 1e3:.2f} ms" if sec_v is not None else ""), flush=True)
    return rows


def agreement(a, b) -> dict:
    (sa, ra), (sb, rb) = a, b
    sa, ra = sa.cpu().numpy(), ra.cpu().numpy()
    return dict(same_rows=float((ra == rb).mean()), max_abs_score_diff=float(np.abs(sa - sb).max()))


# ------------------------------------------------------------------------------------------------

def main() -> int:
    args = ARGS
    t_start = time.time()
    info = dict(
        command=" ".join(shlex.quote(a) for a in [sys.executable, *sys.argv]),
        gpu=torch.cuda.get_device_name(0) if CUDA else "none (Triton interpreter)",
        torch=torch.__version__, triton=triton.__version__, python=platform.python_version(),
        host=platform.node(), smoke=args.smoke, ops=str(OPS), d=args.d, queries=args.queries, ks=args.k,
        repeat=args.repeat, date=time.strftime("%Y-%m-%d %H:%M:%S"),
    )
    program, terms_np = make_batch(args.queries, args.d)
    if args.profile_launch:
        docs, cfg = make_docs(args.n[0], args.d), (dict(VARIANT) if args.per_step else {})
        for _ in range(2):
            fused(docs, terms_np, program, args.k[0], cfg)
        if CUDA:
            torch.cuda.synchronize()
        print(f"launched the fused kernel twice: N={args.n[0]:,}, k={args.k[0]}, {args.queries} queries, "
              f"config {fk.default_config(docs, program.max_depth, args.k[0]) | cfg}")
        return 0
    whole_np = make_batch(args.queries, args.d, seed=2)[1][:args.queries]   # one whole-query vector per query
    terms16 = torch.from_numpy(terms_np).to(DEV, torch.float16)
    info["terms"] = len(program.terms)
    info["max_depth"] = program.max_depth
    info["default_tiles"] = fk.default_config(torch.empty(0, dtype=torch.float16), program.max_depth, 10)
    push_count = int((program.opcodes == 0).sum())
    results = []
    notes = []
    try:
        import faiss  # noqa: F401
        if not (CUDA and faiss.get_num_gpus() > 0):
            notes.append("faiss has no GPU support here: (c) is torch fp16 matmul + topk")
    except ImportError:
        notes.append("faiss not installed: (c) is torch fp16 matmul + topk (the FAISS GPU row is skipped)")
    info["notes"] = notes
    cfg: dict = {}   # default_config: every row times what users get
    rules = rule_batches(args.d, args.smoke) if args.rule_check else []
    if CUDA:
        # compile every specialisation of the run in parallel processes first (Triton's disk cache)
        from gpu_warmup import warm

        t_warm = time.time()
        jobs = [dict(name=f"k={k}{' ' + str(c) if c else ''}", d=args.d, program=program, terms=terms_np, k=k,
                     cfg=c) for k in args.k for c in ({}, VARIANT)]
        jobs += [dict(name=f"options {c}", d=args.d, program=program, terms=terms_np, k=min(args.k), cfg=c,
                      whole=whole_np) for c in ({}, VARIANT)]
        if not args.no_autotune:
            jobs += [dict(name=f"tile {c}", d=args.d, program=program, terms=terms_np, k=10, cfg=c)
                     for c in TILE_CANDIDATES]
        jobs += [dict(name=f"rule q={q} depth={dp} k={k} {c}", d=args.d, program=pr, terms=t, k=k, cfg=c)
                 for q, dp, k, pr, t in rules for c in ({}, VARIANT) if k <= 1024 or not c]
        done = warm(jobs)
        info["warmup"] = dict(seconds=round(time.time() - t_warm, 1), jobs=done)
        print(f"compiled {sum(j['ok'] for j in done)}/{len(done)} specialisations in parallel in "
              f"{info['warmup']['seconds']} s", flush=True)
    for n in args.n:
        if CUDA:
            torch.cuda.empty_cache()
        docs = make_docs(n, args.d)
        doc_bytes = docs.numel() * docs.element_size()
        flops = 2.0 * n * args.d * push_count
        if not args.no_autotune and CUDA:   # at every N: a tile's advantage may change with the corpus
            best, tune_rows = autotune(docs, terms_np, program, max(2, args.repeat // 2))
            info.setdefault("autotune", dict(n=n, k=10, rows=tune_rows, fastest=best))
            info.setdefault("autotune_by_n", []).append(dict(n=n, k=10, rows=tune_rows, fastest=best))
            print(f"tile comparison (N={n:,}, k=10): fastest {best}; rows use default_config; "
                  + ", ".join(f"{tile_label(r['config'])} {r['seconds'] * 1e3:.1f} ms"
                              for r in tune_rows if "seconds" in r), flush=True)
        before_mm = torch.cuda.memory_allocated() if CUDA else 0
        floor_mm = matmul_floor(docs, terms16, args.repeat)
        if CUDA:   # what cuBLAS keeps allocated after its first product (its workspace): not the search's
            info.setdefault("kept_after_first_matmul_bytes", torch.cuda.memory_allocated() - before_mm)
        floor_hbm = hbm_floor(docs, args.repeat)
        mm_rate = 2.0 * n * args.d * terms16.shape[0] / floor_mm
        print(f"N={n:,}: matmul floor {floor_mm * 1e3:.2f} ms ({mm_rate / 1e12:.1f} TFLOP/s), "
              f"HBM read {floor_hbm * 1e3:.2f} ms ({doc_bytes / floor_hbm / 1e9:.0f} GB/s)", flush=True)
        for k in args.k:
            row = dict(n=n, k=k, doc_bytes=doc_bytes, matmul_floor_s=floor_mm, hbm_floor_s=floor_hbm,
                       matmul_tflops=mm_rate / 1e12)
            # (a) fused, with its peak memory: the process's peak (everything allocated, the documents, the
            # benchmark's own term matrix and cuBLAS's kept workspace included) and the search's own (the
            # peak above what was allocated when it started), each over the document matrix
            out_a = None
            if CUDA:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            held = torch.cuda.memory_allocated() if CUDA else 0
            sec_a, out_a = timed(lambda: fused(docs, terms_np, program, k, cfg), args.repeat)
            peak = torch.cuda.max_memory_allocated() if CUDA else 0
            row.update(fused_s=sec_a, fused_qps=args.queries / sec_a, fused_tflops=flops / sec_a / 1e12,
                       fraction_of_matmul_rate=(flops / sec_a) / mm_rate, vs_matmul_floor=sec_a / floor_mm,
                       peak_bytes=peak, peak_over_docs=(peak / doc_bytes) if CUDA else None,
                       held_before_bytes=held, search_extra_bytes=peak - held,
                       search_peak_over_docs=(doc_bytes + peak - held) / doc_bytes if CUDA else None)
            # (a') the other form of the kernel (VARIANT: the per-step form), same tiles, same batch
            sec_v, out_v = timed(lambda: fused(docs, terms_np, program, k, dict(cfg, **VARIANT)), args.repeat)
            row.update(variant=VARIANT, variant_s=sec_v, variant_vs_matmul_floor=sec_v / floor_mm,
                       variant_speedup=sec_a / sec_v, **{f"variant_{key}": v for key, v in
                                                          agreement(out_v, tuple(x.cpu().numpy() for x in out_a)).items()})
            del out_v
            # (e) the recommended scoring options in the same kernel (smallest k only), both forms
            if k == min(args.k):
                # and the split count of the planner until 12-04 (two programs per multiprocessor), for the
                # wave-quantisation change's share of the difference
                old = old_nsplit(docs, program, k)
                sec_o, _ = timed(lambda: fused(docs, terms_np, program, k, dict(cfg, nsplit=old)), args.repeat)
                row.update(old_plan_nsplit=old, old_plan_s=sec_o, plan_nsplit=fk.batch_plan(
                    docs.dtype, program.max_depth, k, n, args.d, program.num_queries, len(program.terms),
                    sms=sms_here(), pushes=fk.batch_pushes(program)).nsplit)
                sec_e, _ = timed(lambda: fused_options(docs, terms_np, whole_np, program, k, cfg), args.repeat)
                row.update(options_s=sec_e, options_over_fused=sec_e / sec_a)
                sec_ev, _ = timed(lambda: fused_options(docs, terms_np, whole_np, program, k, dict(cfg, **VARIANT)),
                                  args.repeat)
                row.update(variant_options_s=sec_ev)
            # (b) unfused torch reference on the same device
            if not args.skip_unfused:
                rep_b = 1 if (CUDA and n >= 5_000_000) else max(1, args.repeat // 2)
                sec_b, out_b = timed(lambda: search_reference(docs, terms_np, program, OPS, k, device=DEV),
                                     rep_b)
                row.update(unfused_s=sec_b, unfused_qps=args.queries / sec_b, speedup_vs_unfused=sec_b / sec_a,
                           **agreement(out_a, out_b))
            # (c) single-term searches
            name_c, sec_c = single_term_search(docs, terms16, k, max(1, args.repeat // 2))
            row.update(single_term_impl=name_c, single_term_s=sec_c,
                       single_term_qps=terms16.shape[0] / sec_c)
            row["auto"] = auto_rule(docs, program, k)   # what --backend auto runs for this batch
            results.append(row)
            write_outputs(info, results, args, quiet=True)
            print(f"  k={k:<5} fused {sec_a * 1e3:9.2f} ms  ({row['fraction_of_matmul_rate']:.0%} of matmul rate, "
                  f"{row['vs_matmul_floor']:.2f}x floor)"
                  + (f"  unfused {row['unfused_s'] * 1e3:9.2f} ms ({row['speedup_vs_unfused']:.1f}x), rows same "
                     f"{row['same_rows']:.1%}, max |ds| {row['max_abs_score_diff']:.2g}" if "unfused_s" in row else "")
                  + f"  single-term {sec_c * 1e3:.2f} ms"
                  + (f"  with options {row['options_s'] * 1e3:.2f} ms ({row['options_over_fused']:.2f}x)"
                     if "options_s" in row else "")
                  + (f"  old plan ({row['old_plan_nsplit']} splits, now {row['plan_nsplit']}) "
                     f"{row['old_plan_s'] * 1e3:.2f} ms" if "old_plan_s" in row else "")
                  + f"  {VARIANT_LABEL} {sec_v * 1e3:.2f} ms ({row['variant_speedup']:.2f}x)"
                  + (f"  search peak {row['search_peak_over_docs']:.3f}x docs (process {row['peak_over_docs']:.3f}x)"
                     if CUDA else ""), flush=True)
        del docs
    if rules:
        if CUDA:
            torch.cuda.empty_cache()
        docs = make_docs(args.n[0], args.d)
        print(f"auto rule corners (N={args.n[0]:,}):", flush=True)
        info["rule_check"] = rule_check(docs, rules, args.repeat)
        info["budget_check"] = budget_check(docs, program, terms_np, max(args.k), args.repeat)
        del docs
    info["seconds"] = round(time.time() - t_start, 1)
    write_outputs(info, results, args)
    return 0


def targets(results) -> list[tuple[str, str, bool | None]]:
    out = []
    big = max(r["n"] for r in results)
    for r in results:
        if r["n"] == big and r["k"] == min(x["k"] for x in results) and "speedup_vs_unfused" in r:
            out.append((f"(a) >= 3x faster than (b) at N={big:,}, k={r['k']}", f"{r['speedup_vs_unfused']:.2f}x",
                        r["speedup_vs_unfused"] >= 3))
    for r in results:
        if r["k"] <= 10:
            out.append((f"(a) within 1.3x of the matmul floor, N={r['n']:,}, k={r['k']}",
                        f"{r['vs_matmul_floor']:.2f}x", r["vs_matmul_floor"] <= 1.3))
        if r["k"] >= 1000:
            out.append((f"(a) within 2x of the matmul floor, N={r['n']:,}, k={r['k']}",
                        f"{r['vs_matmul_floor']:.2f}x", r["vs_matmul_floor"] <= 2.0))
    for r in results:
        if r.get("search_peak_over_docs") is not None:
            out.append((f"search's peak GPU memory <= docs + 5%, N={r['n']:,}, k={r['k']}",
                        f"{r['search_peak_over_docs']:.3f}x docs (process {r['peak_over_docs']:.3f}x)",
                        r["search_peak_over_docs"] <= 1.05))
    return out


def write_outputs(info, results, args, quiet: bool = False):
    stem = Path(args.out)
    stem.parent.mkdir(parents=True, exist_ok=True)
    tgt = targets(results)
    payload = dict(info=info, results=results, rule_check=info.get("rule_check", []),
                   budget_check=info.get("budget_check", []), notes=info.get("notes", []),
                   targets=[dict(target=t, measured=m, met=ok) for t, m, ok in tgt])
    header = ("| N | k | fused ms | q/s | % matmul rate | x floor | unfused ms | x vs unfused | auto runs | rows same "
              f"| single-term ms | peak/docs (search; process) | with options ms (x fused) | {VARIANT_LABEL} ms "
              f"(fused x faster) | {VARIANT_LABEL}, options ms |")
    lines = [header, "|" + "---|" * 15]
    for r in results:
        lines.append(
            f"| {r['n']:,} | {r['k']} | {r['fused_s'] * 1e3:.2f} | {r['fused_qps']:,.0f} | "
            f"{r['fraction_of_matmul_rate']:.0%} | {r['vs_matmul_floor']:.2f} | "
            + (f"{r['unfused_s'] * 1e3:.1f} | {r['speedup_vs_unfused']:.1f} | " if "unfused_s" in r else "- | - | ")
            + f"{r.get('auto', '-')} | "
            + (f"{r['same_rows']:.1%} | " if "unfused_s" in r else "- | ")
            + f"{r['single_term_s'] * 1e3:.2f} | "
            + (f"{r['search_peak_over_docs']:.3f}; {r['peak_over_docs']:.3f} |"
               if r.get("search_peak_over_docs") is not None else "- |")
            + (f" {r['options_s'] * 1e3:.2f} ({r['options_over_fused']:.2f}x) |" if "options_s" in r else " - |")
            + (f" {r['variant_s'] * 1e3:.2f} ({r['variant_speedup']:.2f}x) |" if "variant_s" in r else " - |")
            + (f" {r['variant_options_s'] * 1e3:.2f} |" if "variant_options_s" in r else " - |"))
    tlines = ["| target | measured | met |", "|---|---|---|"] + [
        f"| {t} | {m} | {'yes' if ok else 'NO'} |" for t, m, ok in tgt]
    rlines = []
    if info.get("rule_check"):
        rlines = [f"| auto rule: queries | depth | k | fused ms | torch ms | faster | rule says | {VARIANT_LABEL} ms |",
                  "|---|---|---|---|---|---|---|---|"] + [
            f"| {r['queries']} | {r['depth']} | {r['k']} | {r['fused_s'] * 1e3:.2f} | {r['torch_s'] * 1e3:.2f} | "
            f"{r['faster']} | {r['rule']} | "
            + (f"{r['variant_s'] * 1e3:.2f} |" if r.get("variant_s") is not None else "- |")
            for r in info["rule_check"]]
    if info.get("budget_check"):
        rlines += ["", "| memory budget (k, first N) | MiB | cap / L | splits | launches | starved | fused ms "
                   "| peak/docs |", "|---|---|---|---|---|---|---|---|"] + [
            f"| {r['budget']} (k = {r['k']}) | {r['mem_budget'] / 2**20:.0f} | {r['cap']} / {r['L']} | {r['nsplit']} "
            f"| {r['launches']} | {r['starved']} | {r['fused_s'] * 1e3:.2f} | "
            + (f"{r['peak_over_docs']:.3f} |" if r["peak_over_docs"] is not None else "- |")
            for r in info["budget_check"]]
    md = "\n".join([
        "# Fused logical top-k kernel: GPU benchmark", "",
        f"GPU: {info['gpu']}; torch {info['torch']}, triton {info['triton']}; ops {info['ops']}; "
        f"d={info['d']}, {info['queries']} queries x 3 terms ({info['terms']} terms), float16 documents.", "",
        f"Command: `{info['command']}`; tile configuration: `default_config`"
        + (f" = `{info['default_tiles']}`" if "default_tiles" in info else "")
        + (f" (fastest of the tile comparison at k = 10: `{info['autotune']['fastest']}`)"
           if "autotune" in info else ""), "",
        *lines, "", *tlines, "", *rlines, *([""] if rlines else []),
        *[f"Note: {x}" for x in info.get("notes", [])], *([""] if info.get("notes") else []),
        *(["Smoke run: tiny shapes (under Triton's interpreter without a GPU); the targets mean nothing here.", ""]
          if info["smoke"] else []),
        "Floors per N: cuBLAS fp16 matmul of all terms against all documents; one HBM read of the documents. "
        "(c) = " + (results[0]["single_term_impl"] if results else "-") + " over the single-term searches.", ""])
    for path, text in ((stem.with_suffix(stem.suffix + ".json"), json.dumps(payload, indent=2)),
                       (stem.with_suffix(stem.suffix + ".md"), md)):
        fd, tmp = tempfile.mkstemp(dir=stem.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    if quiet:
        return
    print()
    print("\n".join(lines))
    print()
    print("\n".join(tlines))
    if rlines:
        print()
        print("\n".join(rlines))
    print(f"\nwrote {stem}.json and {stem}.md")


if __name__ == "__main__":
    sys.exit(main())
