"""Where batched llama.cpp decoding spends its time: one decode step of S sequences (one token each) over the
translator's shared prompt head, against one sequence, per weight format and head length.

    python benchmarks/llamacpp_steps.py                       # the installed 1.5B model, its full head
    python benchmarks/llamacpp_steps.py --requantize q8_0 q4_0 --head 500 1500 full --suffix avx2

Per row: the head's prefill rate (512-token batches: the most tokens per weight read, so the CPU's compute-bound
rate), then per S the median ms of --repeat steps (after one warm-up step), tokens/s, and the batching gain per
token, S x (one sequence's step) / (S sequences' step): the most that batching can give a request whose tokens
are all decoded this way. A request's own prompt tokens (~14 per labelled request) are decoded in one batch
whether or not other requests run beside it, so the whole-request gain (benchmarks/translate.py) is below it.

``--requantize TYPE``: the model is also rewritten into TYPE (q8_0, q4_0, ...) with llama.cpp's quantiser into a
temporary folder (deleted afterwards) and measured the same way: is the step bound by the Q4_K kernels or by
arithmetic that any weight format pays? Needs the `llamacpp` extra (scripts/install_llamacpp.sh).
Writes benchmarks/results/llamacpp_steps[-SUFFIX].{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import TRIAL_FOLDER_HELP, check_writable, default_folder  # noqa: E402
from itlr_gpu.output import atomic_file  # noqa: E402



def requantize(src: Path, kind: str, folder: Path) -> Path:
    """``src`` rewritten into llama.cpp type ``kind`` (its log goes to /dev/null)."""
    import llama_cpp as lc

    ftype = getattr(lc, f"LLAMA_FTYPE_MOSTLY_{kind.upper()}", None)
    if ftype is None:
        raise SystemExit(f"llamacpp_steps: --requantize {kind}: llama.cpp has no type LLAMA_FTYPE_MOSTLY_{kind.upper()}")
    out = folder / f"{src.stem}-{kind}.gguf"
    params = lc.llama_model_quantize_default_params()
    params.ftype, params.allow_requantize, params.nthread = ftype, True, len(os.sched_getaffinity(0))
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        rc = lc.llama_model_quantize(str(src).encode(), str(out).encode(), params)
    finally:
        os.dup2(saved, 2)
        os.close(null)
        os.close(saved)
    if rc != 0:
        raise SystemExit(f"llamacpp_steps: requantizing {src.name} to {kind} failed (llama.cpp returned {rc})")
    return out


def step_rows(steps: dict[int, float]) -> list[dict]:
    """{sequences: seconds per step} -> rows with ms, tokens/s and the gain per token over one sequence."""
    one = steps.get(1)
    return [{"seqs": n, "ms": sec * 1e3, "tok_s": n / sec, "gain_per_token": (n * one / sec) if one else None}
            for n, sec in sorted(steps.items())]


def measure(gguf: Path, head_tokens: list[int], heads: list[str], seqs: list[int], repeat: int,
            threads: int | None) -> list[dict]:
    """One row per head length: prefill rate and step times per number of sequences."""
    import numpy as np

    from itlr_gpu.translate.llamacpp import LlamaCppEngine

    eng = LlamaCppEngine(gguf, n_seq=max(seqs), n_threads=threads, prefix_dir=None)
    rng = np.random.default_rng(0)
    rows = []
    try:
        for h in heads:
            head = head_tokens if h == "full" else head_tokens[:int(h)]
            eng.seq_rm(-1, -1, -1)
            eng.decoder.prefix = []
            t = time.perf_counter()
            eng.decoder._ensure_prefix(list(head))
            prefill = len(head) / (time.perf_counter() - t)
            pos = {s: len(head) for s in range(1, max(seqs) + 1)}
            for s in pos:
                eng.seq_cp(0, s, 0, len(head))
            steps = {}
            for n in seqs:
                times = []
                for i in range(repeat + 1):
                    ids = list(range(1, n + 1))
                    toks = rng.integers(1000, 20000, size=n).tolist()
                    t = time.perf_counter()
                    eng.decode(toks, [pos[s] for s in ids], ids, [True] * n)
                    if i:                       # the first step warms up
                        times.append(time.perf_counter() - t)
                    for s in ids:
                        pos[s] += 1
                steps[n] = statistics.median(times)
            rows.append({"head_tokens": len(head), "prefill_tok_s": prefill, "steps": step_rows(steps)})
            last = rows[-1]["steps"][-1]
            gain = last["gain_per_token"]
            print(f"  head {len(head):5d}: prefill {prefill:5.1f} tok/s; "
                  + "; ".join(f"{r['seqs']} seq {r['ms']:.0f} ms" for r in rows[-1]["steps"])
                  + (f"; gain at {last['seqs']}: {gain:.2f}x" if gain else ""), flush=True)
            for s in pos:
                eng.seq_rm(s, -1, -1)
    finally:
        eng.close()
    return rows


def write_md(doc: dict, path: Path) -> None:
    seqs = doc["seqs"]
    lines = ["# llama.cpp decode steps: one sequence against many", "",
             f"Command: `{doc['command']}`", "",
             f"Machine: {doc['machine']['cpu']}, {doc['machine']['cores']} cores, {doc['machine']['threads']} threads, "
             f"Python {doc['machine']['python']}, llama-cpp-python {doc['machine']['llama_cpp']} "
             f"({doc['machine']['system_info']}). Load average before {doc['load_before']}, after {doc['load_after']}.",
             "",
             "ms: median of the steps (one token per sequence, every sequence over the same shared head, logits for "
             "each). gain: S x (one sequence's step) / (S sequences' step), per token. prefill: the head decoded in "
             "512-token batches.", "",
             "| weights | head tokens | prefill tok/s | " + " | ".join(f"{n} seq ms" for n in seqs)
             + f" | tok/s at {seqs[-1]} | gain at {seqs[-1]} |",
             "|---|---:|---:|" + "---:|" * len(seqs) + "---:|---:|"]
    for run in doc["runs"]:
        for row in run["rows"]:
            last = row["steps"][-1]
            gain = f"{last['gain_per_token']:.2f}x" if last["gain_per_token"] else "-"
            lines.append(f"| {run['weights']} | {row['head_tokens']} | {row['prefill_tok_s']:.1f} | "
                         + " | ".join(f"{s['ms']:.0f}" for s in row["steps"])
                         + f" | {last['tok_s']:.1f} | {gain} |")
    with atomic_file(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b", help="registry name or GGUF file")
    ap.add_argument("--requantize", nargs="*", default=[], metavar="TYPE", help="also measure the model in TYPE")
    ap.add_argument("--head", nargs="+", default=["full"], help="head lengths in tokens, or full")
    ap.add_argument("--seqs", nargs="+", type=int, default=[1, 4, 8, 16], help="sequences decoded together, one case each (default 1 4 8 16)")
    ap.add_argument("--repeat", type=int, default=6, help="timed steps per case, median reported (default %(default)s)")
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the CPUs this process may use)")
    ap.add_argument("--suffix", default=None, help="results file suffix: llamacpp_steps-SUFFIX.md/.json")
    ap.add_argument("--out", default=None, help=TRIAL_FOLDER_HELP.format(name="llamacpp_steps"))
    args = ap.parse_args(argv)
    for h in args.head:
        if h != "full" and not (h.isdigit() and int(h) > 0):
            ap.error(f"--head {h}: a number of tokens > 0, or full")
    if any(n < 1 for n in args.seqs) or args.repeat < 1:
        ap.error("--seqs and --repeat take numbers >= 1")
    args.seqs = sorted(set(args.seqs))
    if args.threads is not None and args.threads < 1:
        ap.error(f"--threads {args.threads}: at least 1")
    args.out = args.out or default_folder(ap, args, "llamacpp_steps")
    check_writable(ap, args.out)
    try:
        import llama_cpp
    except ImportError:
        sys.exit("llamacpp_steps: llama-cpp-python is not installed (bash scripts/install_llamacpp.sh)")
    for kind in args.requantize:   # before minutes of measuring the original weights
        if getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{kind.upper()}", None) is None:
            known = sorted(n[len("LLAMA_FTYPE_MOSTLY_"):].lower() for n in dir(llama_cpp)
                           if n.startswith("LLAMA_FTYPE_MOSTLY_"))
            ap.error(f"--requantize {kind}: llama.cpp has no such type (expected one of {', '.join(known)})")
    from itlr_gpu.cpuinfo import cpu_name
    from itlr_gpu.errors import InputError
    from itlr_gpu.translate.llamacpp import LlamaCppTranslator, resolve_gguf

    try:
        gguf = resolve_gguf(args.model)
        tr = LlamaCppTranslator(model=str(gguf), prefix_cache=False)
        tr._start_engine()
    except InputError as e:
        sys.exit(f"llamacpp_steps: error: {e}")
    head_tokens = tr.llm.encode(tr.shared_head())
    system_info = tr.llm.lc.llama_print_system_info().decode(errors="replace").strip(" |")
    tr.llm.close()
    threads = args.threads or len(os.sched_getaffinity(0))
    doc = {"command": "python benchmarks/llamacpp_steps.py " + " ".join(sys.argv[1:] if argv is None else argv),
           "machine": {"cpu": cpu_name(), "cores": len(os.sched_getaffinity(0)), "threads": threads,
                       "python": platform.python_version(), "llama_cpp": llama_cpp.__version__,
                       "system_info": system_info},
           "load_before": "/".join(f"{x:.2f}" for x in os.getloadavg()), "seqs": args.seqs, "runs": []}
    with tempfile.TemporaryDirectory(prefix="itlr-requant-") as tmp:
        for kind in [None] + list(args.requantize):
            path = gguf if kind is None else requantize(gguf, kind, Path(tmp))
            name = gguf.stem if kind is None else f"{gguf.stem} -> {kind}"
            print(f"{name}:", flush=True)
            doc["runs"].append({"weights": name, "rows": measure(path, head_tokens, args.head, args.seqs,
                                                                  args.repeat, threads)})
            if kind is not None:
                path.unlink()
    doc["load_after"] = "/".join(f"{x:.2f}" for x in os.getloadavg())
    stem = Path(args.out) / ("llamacpp_steps" + (f"-{args.suffix}" if args.suffix else ""))
    with atomic_file(stem.with_suffix(".json"), "w") as f:
        json.dump(doc, f, indent=1)
    write_md(doc, stem.with_suffix(".md"))
    print(f"wrote {stem}.json and {stem}.md")


if __name__ == "__main__":
    main()
