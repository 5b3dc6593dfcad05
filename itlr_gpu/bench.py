"""``itlr bench INDEX QUERIES``: throughput of the user's own index and queries on this machine.

For every backend available here (torch on the CPU, torch on CUDA, the fused Triton kernel on
CUDA, and FAISS ``IndexFlatIP`` when installed and every query is a single term) it times the
search (term embeddings given: the encoder is timed apart) after ``--warmup`` runs, ``--repeat``
times and on until the timed runs fill ``--min-time`` seconds (as ``timeit`` ranges a short statement:
three runs of a tenth of a millisecond are mostly noise), and reports the median as queries/s and
documents x queries/s, its ratio to this machine's matmul floor (``terms @ docs.T`` in chunks, with each
BLAS on a CPU: torch's and numpy's), the peak memory, and the encoder's share of an end-to-end run
(encode + search).
Results go to a table on screen and, with ``--json OUT``, to a JSON file written atomically.
"""

from __future__ import annotations

import os
import resource
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

import numpy as np
import torch

from .cli_common import BENCH_MAX_RUNS as MAX_RUNS, BENCH_MIN_TIME_S as MIN_TIME_S

__all__ = ["measure", "render", "available_backends", "is_single_term", "faiss_available", "BenchRow"]


def is_single_term(program) -> bool:
    """Whether every query is one bare term (what FAISS can search).  Queries that repeat a term share it:
    FAISS, like the engine, searches each distinct term once."""
    return all(len(program.query_code(q)[0]) == 1 for q in range(program.num_queries))


def available_backends(single_term: bool) -> list[str]:
    """The backends that can run here: torch-cpu always; numba-cpu with numba; torch-cuda and triton with
    a CUDA GPU (and Triton); faiss when faiss is installed and every query is one term."""
    from .backends import numba_available

    out = ["torch-cpu"]
    if numba_available():
        out.append("numba-cpu")
    if torch.cuda.is_available():
        out.append("torch-cuda")
        from .backends import triton_available

        if triton_available():
            out.append("triton")
    if single_term and faiss_available():
        out.append("faiss")
    return out


def faiss_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("faiss") is not None


@dataclass
class BenchRow:
    backend: str
    median_s: float
    queries_per_s: float
    doc_queries_per_s: float
    vs_floor: float
    peak_memory_gib: float
    memory_kind: str
    times_s: list


def _device(backend: str) -> str:
    """Where a backend runs, and so which matmul floor it is measured against."""
    return "cuda" if backend in ("torch-cuda", "triton") else "cpu"


def measure(index, program, encoder, ops, k: int, backends: list[str], *, warmup: int = 1, repeat: int = 3,
            chunk_size: int | None = None, min_time: float = MIN_TIME_S) -> dict:
    """Time ``program``'s search of ``index`` with each of ``backends`` (names from :func:`available_backends`)
    and the matmul floors; the report that :func:`render` prints and ``itlr bench --json`` writes."""
    from .encoders import encode_queries

    n = len(index)
    load_at_start = os.getloadavg()[0]
    encode_queries(encoder, program.terms[:1], index.dim)       # loads the model: not part of the encoder's time
    t0 = time.perf_counter()
    terms = encode_queries(encoder, program.terms, index.dim)
    encode_s = time.perf_counter() - t0

    docs = index.embeddings
    from .backends.reference import chunk_for_budget

    # the chunk widths the backends use for this batch (theirs hold the scores beside the similarities) and the
    # widest the similarity budget allows: the floor is the fastest of them
    chunks = [chunk_size] if chunk_size else sorted({
        chunk_for_budget(index.dim, len(terms), program.num_queries, program.max_depth + 2, cpu=True),
        chunk_for_budget(index.dim, len(terms), 1, 1, cpu=True)})
    checked = next((b for b in backends if b != "faiss"), None)
    if checked is not None:   # what itlr search refuses (scores past float32) is not timed either: one untimed run
        from .engine import check_results, results_table

        scores, found = _runner(checked, docs, terms, program, ops, k, chunk_size)()
        check_results(results_table(program.query_ids, scores, found, index.doc_ids), ops, program)
        if "faiss" in backends:   # the same k scores per query, up to float32 summation order
            theirs, _ = _runner("faiss", docs, terms, program, ops, k, chunk_size)()
            ours = np.asarray(scores.cpu() if hasattr(scores, "cpu") else scores, dtype=np.float32)
            width = min(ours.shape[1], theirs.shape[1])   # k past the corpus: faiss pads its rows
            gap = float(np.max(np.abs(np.sort(theirs[:, :width], axis=1) - np.sort(ours[:, :width], axis=1)))) \
                if ours.size else 0.0
            # the CUDA paths round a float16 index's term vectors to float16 as well (about 2e-4)
            tolerance = 1e-3 if checked in ("triton", "torch-cuda") or index.dtype == np.float16 else 1e-4
            if not gap <= tolerance:
                raise RuntimeError(f"faiss's top-{k} scores differ from the {checked} backend's by {gap:.3g}")
        del scores, found
    floors = _floors(docs, terms, warmup, repeat, chunks, cuda="torch-cuda" in backends or "triton" in backends,
                     min_time=min_time)
    rows = []
    for b in backends:
        run = _runner(b, docs, terms, program, ops, k, chunk_size)
        device = _device(b)
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()
        times = _timed(run, warmup, repeat, sync=device == "cuda", min_time=min_time)
        med = statistics.median(times)
        floor = floors[device]
        peak, kind = ((torch.cuda.max_memory_allocated() / 2**30, "CUDA max allocated") if device == "cuda"
                      else (_peak_rss_gib(), "process peak RSS so far"))
        rows.append(BenchRow(b, med, program.num_queries / med, n * program.num_queries / med, med / floor["s"],
                             peak, kind, times))
    fastest = min(r.median_s for r in rows)
    return {
        "index": {"documents": n, "dim": index.dim, "dtype": str(index.dtype),
                  "encoder": index.manifest.get("encoder"), "model": index.manifest.get("model")},
        "queries": {"count": program.num_queries, "terms": len(program.terms), "max_depth": program.max_depth,
                    "single_term": is_single_term(program)},
        "k": k, "ops": str(ops), "warmup": warmup, "repeat": repeat, "min_time_s": min_time,
        "chunk_size": chunk_size, "chunks_floor": chunks,   # (None: each backend's own chunk)
        "encoder": {"name": getattr(encoder, "name", type(encoder).__name__),
                    "settings": getattr(encoder, "settings", None), "encode_terms_s": encode_s,
                    "share_of_end_to_end": encode_s / (encode_s + fastest)},
        "floors": floors,
        "rows": [asdict(r) for r in rows],
        "machine": {**machine_info(), "loadavg_1min_at_start": load_at_start},
    }


def single_term_rows(program) -> np.ndarray:
    """For a program of single-term queries, each query's row in ``program.terms``."""
    offsets = np.asarray(program.offsets, dtype=np.int64)[:program.num_queries]
    return np.asarray(program.operands, dtype=np.int64)[offsets]


def _runner(backend: str, docs, terms: np.ndarray, program, ops, k: int,
            chunk_size: int | None) -> Callable[[], Any]:
    if backend == "faiss":
        import faiss

        flat = faiss.IndexFlatIP(terms.shape[1])
        flat.add(np.ascontiguousarray(np.asarray(docs, dtype=np.float32)))
        # one vector per query, as a user of faiss searches them (the engine's distinct terms would credit faiss
        # with every repeat of a term: 500 queries of one term ran as one search)
        queries = np.ascontiguousarray(terms[single_term_rows(program)])
        return lambda: flat.search(queries, k)
    from .backends import get_backend

    device = torch.device("cuda" if backend in ("torch-cuda", "triton") else "cpu")
    engine = get_backend({"triton": "triton", "numba-cpu": "numba"}.get(backend, "torch"), device)
    if device.type == "cuda":   # the GPU's resident copy, made once (what a long-running job has)
        from .backends.gemm import host_tensor

        docs = host_tensor(docs).to(device)
    return lambda: engine.search(docs, terms, program, ops, k, device=device, chunk_size=chunk_size)


CUDA_FLOOR_BYTES = 1 << 30   # similarities per matmul of the CUDA floor

SETTLE_S = 0.2   # quiet before each backend's runs: OpenBLAS's workers spin on after a call and take the cores


def _timed(fn: Callable[[], Any], warmup: int, repeat: int, sync: bool, min_time: float = 0.0) -> list[float]:
    """``repeat`` timed runs of ``fn`` after ``warmup`` untimed ones, and more while the timed runs add up to
    less than ``min_time`` seconds (at most :data:`MAX_RUNS` in all)."""
    time.sleep(SETTLE_S)
    for _ in range(warmup):
        fn()
    times: list[float] = []
    while len(times) < repeat or (sum(times) < min_time and len(times) < MAX_RUNS):
        if sync:
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if sync:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return times


def _floors(docs, terms: np.ndarray, warmup: int, repeat: int, chunks: list[int],
            cuda: bool, min_time: float = 0.0) -> dict[str, dict]:
    """The matmul floor ``terms @ docs.T`` in chunks: on the CPU the faster of torch's BLAS and numpy's
    (both reported), each through the engine's own :class:`~itlr_gpu.backends.gemm.ChunkMatmul` (the same
    float16 widening and reused buffers: a floor that widened with numpy's slower conversion read 2x the
    fused backend's whole search), at each of ``chunks`` (documents per chunk); on CUDA torch's (cuBLAS) on
    the resident matrix."""
    from .backends.gemm import ChunkMatmul

    n = docs.shape[0]
    t = torch.from_numpy(terms)

    def cpu(kind: str, chunk: int) -> Callable[[], None]:
        gemm = ChunkMatmul(docs, t, chunk, torch.device("cpu"), matmul=kind)

        def run() -> None:
            for lo in range(0, n, chunk):
                gemm.sims(gemm.chunk(lo, min(n, lo + chunk)))
        return run

    floors: dict[str, dict] = {}
    with torch.inference_mode():
        per = {(kind, c): statistics.median(_timed(cpu(kind, c), warmup, repeat, sync=False, min_time=min_time))
               for kind in ("torch", "numpy") for c in chunks}
    best = min(per, key=per.get)
    floors["cpu"] = {"s": per[best], "blas": best[0], "chunk": min(best[1], n),
                     "torch_s": min(v for (k, _), v in per.items() if k == "torch"),
                     "numpy_s": min(v for (k, _), v in per.items() if k == "numpy")}
    if cuda:
        from .backends.gemm import host_tensor

        dev_docs = host_tensor(docs).cuda()
        dev_terms = t.cuda().to(dev_docs.dtype)
        # in row chunks of at most CUDA_FLOOR_BYTES of similarities: the search never holds all N x T of them
        # (10M documents x 3,072 terms would be 61 GB), and neither does its floor
        rows = max(1, CUDA_FLOOR_BYTES // (dev_docs.element_size() * max(1, dev_terms.shape[0])))

        def product() -> None:
            for lo in range(0, n, rows):
                dev_terms @ dev_docs[lo:lo + rows].T

        with torch.inference_mode():
            s = statistics.median(_timed(product, warmup, repeat, sync=True, min_time=min_time))
        floors["cuda"] = {"s": s, "blas": "cuBLAS", "dtype": str(dev_docs.dtype), "chunk": min(rows, n)}
        del dev_docs
    return floors


def _peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20   # KiB on Linux


def machine_info() -> dict:
    """CPU model, cores, load average, torch and the BLAS libraries loaded (threadpoolctl when installed)."""
    from .cpuinfo import cpu_name

    info: dict[str, Any] = {"cpu": cpu_name(), "cores": os.cpu_count(), "loadavg": list(os.getloadavg()),
                            "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
                            "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
                            "env": {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
                                                               "OMP_NUM_THREADS", "ITLR_MATMUL") if k in os.environ}}
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [{k: lib.get(k) for k in ("internal_api", "version", "architecture", "num_threads")}
                        for lib in threadpool_info()]
    except ImportError:
        info["blas"] = None
    from .backends.gemm import choices

    info["matmul_probes"] = choices()
    return info


def blas_summary(blas: list[dict] | None) -> str:
    """The BLAS libraries of :func:`machine_info` in a line: "openblas 0.3.31, openmp"."""
    return ", ".join(" ".join(str(x) for x in (b["internal_api"], b.get("version")) if x)
                     for b in blas or [] if b.get("internal_api"))


_BELOW_FLOOR = 0.95     # a ratio to the matmul floor that only timing noise explains
_SHORT_FLOOR_S = 0.005  # seconds: a floor this short is mostly overhead
_FEW_TERMS = 20         # below this many query vectors faiss scans without BLAS (its distance_compute_blas_threshold)
BUSY_LOAD = 0.5         # 1-minute load average per core at the start above which the machine was not idle


def render(report: dict) -> str:
    q, ix = report["queries"], report["index"]
    lines = [f"{q['count']:,} quer{'y' if q['count'] == 1 else 'ies'} ({q['terms']:,} term{'' if q['terms'] == 1 else 's'})"
             f" x {ix['documents']:,} documents (d={ix['dim']}, "
             f"{ix['dtype']}), k={report['k']}, {report['warmup']} warm-up, then the median of {report['repeat']} "
             f"timed runs" + (f" or more, until they fill {report['min_time_s']:g} s" if report.get("min_time_s") else ""),
             f"{'backend':<11} {'median s':>9} {'runs':>5} {'queries/s':>11} {'docs x queries/s':>17} {'vs floor':>9} "
             f"{'peak GiB':>9}"]
    if any(r.get("memory_kind", "").startswith("process peak") for r in report["rows"]):
        lines[1] += "  (CPU rows: the process's peak so far, which only grows from row to row)"
    for r in report["rows"]:
        lines.append(f"{r['backend']:<11} {r['median_s']:>9.3g} {len(r['times_s']):>5} {r['queries_per_s']:>11,.1f} "
                     f"{r['doc_queries_per_s']:>17.3e} {r['vs_floor']:>8.2f}x {r['peak_memory_gib']:>9.2f}")
    cpu = report["floors"]["cpu"]
    lines.append(f"matmul floor (CPU): {cpu['s']:.3g} s with {cpu['blas']}, chunks of {cpu['chunk']:,} documents "
                 f"(torch {cpu['torch_s']:.3g} s, numpy {cpu['numpy_s']:.3g} s)")
    if "cuda" in report["floors"]:
        lines.append(f"matmul floor (CUDA, {report['floors']['cuda']['dtype']}): {report['floors']['cuda']['s']:.4f} s")
    # a backend that does this matmul and more cannot beat it: at such sizes the timings are mostly overhead and
    # noise (an outside review saw 0.69x on 1,200 documents), and with a few terms a scan without BLAS can (an
    # outside audit: faiss at 0.49-0.89x for 2 terms over 20,000 documents); each row against its own device's floor
    for device in sorted({_device(r["backend"]) for r in report["rows"]}):
        floor_s = report["floors"][device]["s"]
        below = [r["backend"] for r in report["rows"] if _device(r["backend"]) == device and r["vs_floor"] < _BELOW_FLOOR]
        if floor_s < _SHORT_FLOOR_S:
            lines.append(f"note: the {device.upper()} floor, {1e3 * floor_s:.3f} ms, is too short to time reliably"
                         + (f" ({', '.join(below)} below 1x)" if below else "")
                         + ": a larger index gives ratios worth comparing")
        elif below and device == "cpu" and q["terms"] < _FEW_TERMS:
            lines.append(f"note: {', '.join(below)} below 1x the CPU floor ({1e3 * floor_s:.1f} ms): with "
                         f"{q['terms']} term{'' if q['terms'] == 1 else 's'} a scan without a BLAS matrix product "
                         f"(faiss's below {_FEW_TERMS} queries, numba's loop) can beat the BLAS one the floor times; "
                         "the floor bounds batches of many terms")
        elif below:
            lines.append(f"note: {', '.join(below)} below 1x the {device.upper()} floor ({1e3 * floor_s:.1f} ms): "
                         "timing noise (the machine busy?); more --repeat or --min-time gives ratios worth comparing")
    m = report["machine"]
    busy, cores = m.get("loadavg_1min_at_start", 0.0), m.get("cores") or 1
    if busy > BUSY_LOAD * cores:
        # threads that wait for a core turn a short parallel call into a scheduler time slice (~10 ms seen); the
        # 1-minute average also carries a job that has just ended, hence "other processes" and not "now"
        lines.append(f"note: 1-minute load average {busy:.2f} on {cores} core{'s' if cores != 1 else ''} at the "
                     "start: other processes shared the CPU (or just had), so these timings may be noisy (more so "
                     "the short ones); an idle machine gives figures worth comparing")
    e = report["encoder"]
    lines.append(f"encoder: {e['encode_terms_s']:.3f} s for {q['terms']:,} terms = "
                 f"{100 * e['share_of_end_to_end']:.0f}% of encode + fastest search")
    blas = blas_summary(m.get("blas"))
    lines.append(f"machine: {m['cpu']}, {m['cores']} cores, load average {'/'.join(f'{x:.2f}' for x in m['loadavg'])}"
                 f"; torch {m['torch']}" + (f"; BLAS loaded: {blas}" if blas else ""))
    return "\n".join(lines)
