"""CPU search time per chunk width: the fused engine, the torch reference and the bare product.

Why ``chunk_for_budget(..., cpu=True)`` caps a CPU chunk at ``CPU_SIMS_BYTES`` of similarities: the scoring
pass reads the T x C block right after the BLAS wrote it.  Same workload as benchmarks/cpu_search.py
(N = 200,000, d = 384, 256 queries x 3 terms, k = 10), the engine's BLAS choice fixed by ``--matmul``, every
case interleaved per round (medians).

    python benchmarks/cpu_chunks.py --matmul torch --out benchmarks/results/cpu_chunks-xeon
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import TRIAL_HELP, check_stem, default_stem, positive_int, positive_int_list  # noqa: E402
from benchmarks.cpu_search import interleaved, random_programs, unit_rows  # noqa: E402
from itlr_gpu import Ops, compile_queries  # noqa: E402
from itlr_gpu.backends import get_backend  # noqa: E402
from itlr_gpu.backends.reference import chunk_for_budget  # noqa: E402
from itlr_gpu.cpuinfo import cpu_name  # noqa: E402
from itlr_gpu.io import atomic_file  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=positive_int, default=200_000, help="documents (random unit rows; default %(default)s)")
    ap.add_argument("--d", type=positive_int, default=384, help="dimension (default %(default)s)")
    ap.add_argument("--queries", type=positive_int, default=256, help="random three-term queries (default %(default)s)")
    ap.add_argument("--chunks", type=positive_int_list, default="2048,4096,8192,16384,21845",
                    help="comma-separated document-chunk sizes to time (default %(default)s)")
    ap.add_argument("--matmul", choices=("torch", "numpy"), default="torch",
                    help="BLAS of the chunk similarities: torch's or numpy's (sets ITLR_MATMUL; default %(default)s)")
    ap.add_argument("--repeat", type=positive_int, default=3, help="timed runs per chunk size, median reported (default %(default)s)")
    ap.add_argument("--out", default=None,
                    help="file stem of the table written: STEM.md and STEM.json" + TRIAL_HELP.format(name="cpu_chunks"))
    args = ap.parse_args()
    args.out = args.out or default_stem(ap, args, "cpu_chunks")
    check_stem(ap, args.out)
    os.environ["ITLR_MATMUL"] = args.matmul

    rng = np.random.default_rng(0)
    docs = unit_rows(rng, args.n, args.d)
    docs16 = docs.astype(np.float16)
    program = random_programs(rng, args.queries)
    terms = unit_rows(rng, len(program.terms), args.d)
    single = compile_queries([f'"{t}"' for t in program.terms])
    cpu, ops = torch.device("cpu"), Ops()
    engine, ref = get_backend("numba", cpu), get_backend("torch", cpu)
    terms_t = torch.from_numpy(terms)
    chunks = args.chunks
    out = np.empty((len(terms), max(chunks)), dtype=np.float32)

    def product(c: int):
        def run():
            for lo in range(0, args.n, c):
                block = docs[lo:lo + c]
                o = out[:, : len(block)]
                if args.matmul == "numpy":
                    np.matmul(terms, block.T, out=o)
                else:
                    torch.mm(terms_t, torch.from_numpy(block).T, out=torch.from_numpy(o))
        return run

    cases = {}
    for c in chunks:
        cases[(c, "product")] = product(c)
        cases[(c, "engine, 3 terms, float32")] = lambda c=c: engine.search(docs, terms, program, ops, 10, device=cpu,
                                                                           chunk_size=c)
        cases[(c, "engine, 3 terms, float16")] = lambda c=c: engine.search(docs16, terms, program, ops, 10,
                                                                           device=cpu, chunk_size=c)
        cases[(c, "engine, 1 term, float32")] = lambda c=c: engine.search(docs, terms, single, ops, 10, device=cpu,
                                                                          chunk_size=c)
        cases[(c, "engine, 1 term, float16")] = lambda c=c: engine.search(docs16, terms, single, ops, 10, device=cpu,
                                                                          chunk_size=c)
        cases[(c, "torch reference, 3 terms")] = lambda c=c: ref.search(docs, terms, program, ops, 10, device=cpu,
                                                                        chunk_size=c)
    with torch.inference_mode():
        med, _, _ = interleaved(cases, args.repeat)
    kinds = list(dict.fromkeys(k for _, k in cases))
    default = chunk_for_budget(args.d, len(program.terms), program.num_queries, program.max_depth, cpu=True)
    lines = ["# CPU search time per chunk width", "",
             f"Command: `python benchmarks/cpu_chunks.py {' '.join(sys.argv[1:])}`", "",
             f"Machine: {cpu_name()}, {os.cpu_count()} cores, torch {torch.__version__}; BLAS for every case: "
             f"{args.matmul}. N = {args.n:,}, d = {args.d}, {args.queries} queries x 3 terms "
             f"({len(program.terms)} terms), k = 10; median s of {args.repeat} interleaved rounds. "
             f"The default CPU chunk here: {default:,} documents.", "",
             "| chunk (documents) | similarity block MiB | " + " | ".join(kinds) + " |",
             "|---:|---:|" + "---:|" * len(kinds)]
    for c in chunks:
        mib = 4 * len(program.terms) * c / 2**20
        lines.append(f"| {c:,} | {mib:.1f} | " + " | ".join(f"{med[(c, k)]:.3f}" for k in kinds) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    with atomic_file(args.out + ".md", "w", encoding="utf-8") as f:
        f.write(text)
    with atomic_file(args.out + ".json", "w", encoding="utf-8") as f:
        f.write(json.dumps({"command": sys.argv, "machine": cpu_name(), "matmul": args.matmul,
                            "default_chunk": default,
                            "median_s": {f"{c} {k}": v for (c, k), v in med.items()}}, indent=1) + "\n")


if __name__ == "__main__":
    main()
