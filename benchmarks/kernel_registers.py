"""Register budget of the fused kernel on sm_90, by construction: compile, read ptxas's report.

Every kernel specialisation that ``default_config`` chooses for a matrix of batches (operator
families, scoring options AFFINE / HYBRID, stack depth, k, document dtype) is compiled for sm_90
(H100/H200) without a GPU -- ``triton.compile`` with ``GPUTarget("cuda", 90, 32)``: Triton's
whole pipeline and the ptxas it bundles -- and ptxas's own ``-v`` report of that compile is read:
registers per thread, spill stores / loads (bytes), plus the shared memory Triton allocates and
whether the PTX uses the tensor cores (wgmma).  Batches that map to the same constexprs and launch
options are one specialisation and are compiled once.  Triton's cache points to a fresh temporary
folder for every run, so a regression can never hide behind a cached binary.

Matrices (``--matrix``):
  ci     what tests/test_triton_compile.py compiles by default (10 batches, a cross-section): every dtype,
         AND / OR / NOT family and tile configuration, 2, 4 and 8 stack slots, lists of 128 and 1024
  budget what its opt-in long test compiles (44 batches): the register-heaviest corner (min / max /
         reciprocal, AFFINE and HYBRID on) for fp32 documents (whose tf32x3 dot splits both operands;
         d in chunks of 16) and fp16 (d in chunks of 64) at every stack-slot count S and list length L
         of the budget's scope (depth 1, 2, 4 x k 10, 1000); the same corner with AFFINE only at depth 4
         (fp16, bf16), whose tiles differ (128 x 32: HYBRID keeps 64 x 32); the other families and bf16;
         one batch beyond the budget (depth 6: 8 stack slots) that must compile but may spill; each in the
         push-batched form's heaviest shape (4 accumulators) and the per-step form (``both_forms``), plus
         the shapes whose tiles the push-batched form changes (3 accumulators beside AFFINE at 128 x 32, AFFINE
         alone at S = 2 on fp16 and on fp32)
  table  budget + bf16 at k = 2048 + the heavy corner and the plain fp16 paper-ops kernel at every depth
         1-8 and k in {10, 100, 1000, 2048}: the committed table, which the default tests require to be
         of the current kernel source and within the budget
  issue  the issue's full product: 12 ops families x {plain, AFFINE, AFFINE+HYBRID} x depth 1-8 x
         k in {10, 100, 1000, 2048} x fp16/bf16/fp32, in both forms from depth 2 (6,480 batches; before the
         push-batched form 3,456 and ~1,400 specialisations after deduplication: many hours on a small
         machine, about an hour on 16 cores)

    python benchmarks/kernel_registers.py            # --matrix table; writes benchmarks/results/kernel_registers.{json,md}

The budget (``within_budget``): no spill store or load for stack depth <= 4 at k <= 1000.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

OPS_FAMILIES = [(a, o, n) for a in ("product", "sum", "min") for o in ("sum", "max") for n in ("one_minus", "reciprocal")]
HEAVY_OPS = ("min", "max", "reciprocal")
PAPER_OPS = ("product", "sum", "one_minus")
DTYPES = ("fp16", "bf16", "fp32")
OPTION_SETS = ((False, False), (True, False), (True, True))   # (AFFINE, HYBRID) as the backend launches them
DEPTHS = tuple(range(1, 9))
KS = (10, 100, 1000, 2048)
BUDGET_DEPTH, BUDGET_K = 4, 1000


PER_STEP = 5   # a batch whose queries have this many terms runs the per-step form (over PUSH_BATCH_MAX = 4)


def batch(dtype: str, ops: tuple, depth: int, k: int, affine: bool, hybrid: bool, pushes: int | None = None) -> dict:
    """One batch: ``pushes`` the most terms of one query (default: the push-batched form's heaviest, 4
    accumulators; 1 at depth 1, which holds one term; PER_STEP: the per-step form)."""
    if pushes is None:
        pushes = 1 if depth == 1 else 4
    return dict(dtype=dtype, ops=list(ops), depth=depth, k=k, affine=affine, hybrid=hybrid, pushes=pushes)


def both_forms(batches: list[dict]) -> list[dict]:
    """Each batch in the push-batched form's heaviest shape and, where a query can hold more terms than it
    takes (depth >= 2), in the per-step form."""
    return batches + [dict(b, pushes=PER_STEP) for b in batches if b["depth"] >= 2]


def matrix(name: str) -> list[dict]:
    """The batches of a matrix (before deduplication by specialisation)."""
    if name == "budget":
        corner = [batch(dt, HEAVY_OPS, depth, k, True, True) for dt in ("fp32", "fp16") for depth in (1, 2, 4)
                  for k in (10, 1000)]
        # the heaviest form of the tiles that HYBRID does not take (S = 4 on 16-bit documents: 128 x 32)
        affine_only = [batch(dt, HEAVY_OPS, 4, k, True, False) for dt in ("fp16", "bf16") for k in (10, 1000)]
        families = [batch("fp16", PAPER_OPS, 2, 10, False, False),
                    batch("bf16", ("sum", "sum", "one_minus"), 3, 100, True, False)]
        # AFFINE at 4 accumulators takes 64 x 32 tiles; with 3 (or the per-step form) it keeps 128 x 32
        affine_3 = [batch(dt, HEAVY_OPS, 4, k, True, False, pushes=3) for dt in ("fp16", "bf16") for k in (10, 1000)]
        # without HYBRID, S <= 2 on 16-bit documents keeps 64-lane tiles in the push-batched form; float32 with
        # HYBRID and 4 terms runs the per-step form, so its push-batched form's heaviest is AFFINE alone
        affine_3 += [batch("fp16", HEAVY_OPS, 2, k, True, False) for k in (10, 1000)]
        affine_3 += [batch("fp32", HEAVY_OPS, depth, k, True, False) for depth in (2, 4) for k in (10, 1000)]
        beyond = [batch("fp16", PAPER_OPS, 6, 100, False, False)]
        return both_forms(corner + affine_only + families + beyond) + affine_3
    if name == "ci":
        return [batch("fp32", HEAVY_OPS, 4, 1000, True, True), batch("fp16", HEAVY_OPS, 4, 1000, True, True),
                batch("fp16", HEAVY_OPS, 2, 10, True, True), batch("fp16", PAPER_OPS, 2, 10, False, False),
                batch("fp16", HEAVY_OPS, 4, 1000, True, False),
                batch("fp16", HEAVY_OPS, 4, 1000, True, False, pushes=3),
                batch("fp16", HEAVY_OPS, 4, 1000, True, False, pushes=PER_STEP),
                batch("fp32", HEAVY_OPS, 4, 1000, True, True, pushes=PER_STEP),
                batch("bf16", ("sum", "sum", "one_minus"), 3, 100, True, False),
                batch("fp16", PAPER_OPS, 6, 100, False, False)]
    if name == "table":
        heavy = [batch("fp32", HEAVY_OPS, depth, k, True, True) for depth in DEPTHS for k in KS]
        plain = [batch("fp16", PAPER_OPS, depth, k, False, False) for depth in DEPTHS for k in KS]
        return matrix("budget") + both_forms([batch("bf16", HEAVY_OPS, 2, 2048, True, True)] + heavy + plain)
    if name == "issue":
        return both_forms([batch(dt, ops, depth, k, a, h) for dt in DTYPES for ops in OPS_FAMILIES
                           for a, h in OPTION_SETS for depth in DEPTHS for k in KS])
    raise ValueError(f"unknown matrix {name!r}")


def _torch_dtype(name: str):
    import torch

    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[name]


TILES: dict = {}   # --tiles: forced tile sizes (what-if tables); empty: default_config's, what users get


def specialise(b: dict) -> tuple[dict, dict]:
    """(constexprs, launch options) that fused_search launches for batch ``b`` (with ``TILES`` forced)."""
    from itlr_gpu.kernels import fused_logical_topk as fk
    from itlr_gpu.ops import Ops

    return fk.specialisation(_torch_dtype(b["dtype"]), Ops(*b["ops"]), b["depth"], b["k"], affine=b["affine"],
                             hybrid=b["hybrid"], pushes=b.get("pushes", 0), **TILES)


def dedupe(batches: list[dict]) -> list[tuple[dict, list[dict]]]:
    """[(specialisation, batches mapping to it)] in first-seen order; a specialisation is its dtype,
    constexprs and launch options."""
    groups: dict[str, tuple[dict, list[dict]]] = {}
    for b in batches:
        const, launch = specialise(b)
        spec = dict(dtype=b["dtype"], constexprs=const, launch=launch)
        key = json.dumps(spec, sort_keys=True)
        groups.setdefault(key, (spec, []))[1].append(b)
    return list(groups.values())


PTXAS_RE = dict(
    registers=re.compile(r"Used (\d+) registers"),
    spills=re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads"),
    stack=re.compile(r"(\d+) bytes stack frame"),
)


def parse_ptxas(log: str) -> dict:
    regs, spills, stack = (PTXAS_RE[k].search(log) for k in ("registers", "spills", "stack"))
    if regs is None or spills is None:
        raise RuntimeError(f"no register report in ptxas's output:\n{log[-2000:]}")
    return dict(registers=int(regs.group(1)), spill_stores=int(spills.group(1)), spill_loads=int(spills.group(2)),
                stack_frame=int(stack.group(1)) if stack else 0)


def compile_spec(spec: dict) -> dict:
    """Compile one specialisation for sm_90; ptxas's report of that very compile (Triton prints it with
    knobs.nvidia.dump_ptxas_log), shared memory, tensor-core instructions, seconds."""
    import triton
    from triton.backends.compiler import GPUTarget

    from itlr_gpu.kernels import fused_logical_topk as fk

    fn = fk.fused_logical_topk_kernel
    dtype, const, launch = spec["dtype"], spec["constexprs"], spec["launch"]
    ptr = {"docs_ptr": "*" + dtype, "terms_ptr": "*" + dtype, "op_ptr": "*i8", "arg_ptr": "*i32",
           "block_steps_ptr": "*i32", "block_lanes_ptr": "*i32", "buf_ptr": "*i64",
           "lit_a_ptr": "*fp32", "lit_b_ptr": "*fp32", "mix_ptr": "*fp32", "whole_arg_ptr": "*i32", "push_rows_ptr": "*i32"}
    ints = ["N", "D", "stride_doc", "stride_term", "k_eff", "cap", "tiles_per_split"]
    sig = dict(ptr, **{a: "i32" for a in ints}, **{c: "constexpr" for c in const})
    sig = {a: sig[a] for a in fn.arg_names}
    # what a launch with 16-aligned pointers and d, strides multiples of 16 specialises on
    aligned = list(ptr) + ["D", "stride_doc", "stride_term"]
    attrs = {(fn.arg_names.index(a),): [["tt.divisibility", 16]] for a in aligned}
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=const, attrs=attrs)
    triton.knobs.nvidia.dump_ptxas_log = True
    out = io.StringIO()
    t0 = time.time()
    try:
        with contextlib.redirect_stdout(out):
            kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32), options=dict(launch))
    except Exception as exc:  # reported; the caller (test or table) fails on it
        return dict(spec, ok=False, error=f"{type(exc).__name__}: {exc}"[-3000:])
    ptx = kernel.asm["ptx"]
    report = parse_ptxas(out.getvalue())
    return dict(spec, ok=True, seconds=round(time.time() - t0, 1), **report, shared=int(kernel.metadata.shared),
                wgmma=len(re.findall(r"\bwgmma\.mma_async", ptx)), mma=len(re.findall(r"\bmma\.sync", ptx)),
                cubin_bytes=len(kernel.asm.get("cubin", b"")))


def in_budget_scope(b: dict) -> bool:
    return b["depth"] <= BUDGET_DEPTH and b["k"] <= BUDGET_K


def kernel_key() -> str:
    """Triton's hash of the kernel's source and everything it calls: equal keys, equal device code."""
    from itlr_gpu.kernels import fused_logical_topk as fk

    return fk.fused_logical_topk_kernel.cache_key


def spec_key(spec: dict) -> str:
    return json.dumps({k: spec[k] for k in ("dtype", "constexprs", "launch")}, sort_keys=True)


def compile_all(batches: list[dict], workers: int, reuse: dict | None = None) -> list[dict]:
    """Compile every distinct specialisation of ``batches`` (in worker processes, with a fresh Triton cache
    and the interpreter off); one row per specialisation with the batches it serves.  ``reuse``: rows of an
    earlier run of the same kernel source, triton and ptxas (``load_reusable``), by specialisation."""
    groups = dedupe(batches)
    reuse = reuse or {}
    todo = [spec for spec, _ in groups if spec_key(spec) not in reuse]
    env_old = {k: os.environ.get(k) for k in ("TRITON_CACHE_DIR", "TRITON_INTERPRET")}
    with tempfile.TemporaryDirectory(prefix="itlr-regs-") as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        os.environ.pop("TRITON_INTERPRET", None)
        try:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                fresh = dict(zip(map(spec_key, todo), pool.map(compile_spec, todo)))
        finally:
            for k, v in env_old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    rows = []
    for spec, members in groups:
        key = spec_key(spec)
        row = dict(fresh[key]) if key in fresh else dict(reuse[key], reused=True)
        rows.append(row)
        row["batches"] = members
        row["in_budget_scope"] = any(in_budget_scope(b) for b in members)
    return rows


def load_reusable(path: str, info: dict) -> dict:
    """Rows of an earlier table whose kernel source (Triton's cache key), triton and ptxas match this run's."""
    old = json.loads(Path(path).read_text())
    same = all(old["info"].get(k) == info[k] for k in ("kernel_key", "triton", "ptxas"))
    if not same:
        print(f"--reuse {path}: another kernel source, triton or ptxas; compiling everything", file=sys.stderr)
        return {}
    return {spec_key(r): {k: v for k, v in r.items() if k not in ("batches", "in_budget_scope", "reused")}
            for r in old["rows"] if r.get("ok")}


def spills(row: dict) -> bool:
    return row.get("spill_stores", 0) > 0 or row.get("spill_loads", 0) > 0


def machine_info() -> dict:
    import triton
    from triton.backends.nvidia.compiler import get_ptxas

    ptxas = get_ptxas(90).path
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    from itlr_gpu.cpuinfo import cpu_name

    cpu = cpu_name()
    return dict(triton=triton.__version__, ptxas=version[-1] if version else "?", python=platform.python_version(),
                cpu=cpu, cores=os.cpu_count(), load_average=os.getloadavg(), target="cuda sm_90 (sm_90a), warp 32")


def write_table(rows: list[dict], info: dict, stem: Path) -> str:
    def fmt_batches(members):
        depths = sorted({b["depth"] for b in members})
        ks = sorted({b["k"] for b in members})
        return f"depth {depths[0]}-{depths[-1]}, k {'/'.join(map(str, ks))}"

    head = ("| dtype | S | L | BLOCK_N x BLOCK_Q x BLOCK_D | warps | stages | AND/OR/NOT | AFFINE | HYBRID | PUSHES "
            "| registers | spill stores | spill loads | shared KiB | wgmma | compile s | batches | budget |")
    lines = [head, "|" + "---|" * 18]
    for r in sorted(rows, key=lambda r: (not r["in_budget_scope"], r["constexprs"]["S"], r["constexprs"]["L"],
                                         r["dtype"], r["constexprs"]["AFFINE"], r["constexprs"]["HYBRID"],
                                         r["constexprs"].get("PUSHES", 0))):
        c, ln = r["constexprs"], r["launch"]
        ops = "/".join(str(c[x]) for x in ("AND_OP", "OR_OP", "NOT_OP"))
        if not r["ok"]:
            lines.append(f"| {r['dtype']} | {c['S']} | {c['L']} | | | | {ops} | | | FAILED: {r['error'][:80]} |")
            continue
        verdict = ("spills (FAIL)" if spills(r) else "ok") if r["in_budget_scope"] else ("spills" if spills(r) else "-")
        lines.append(
            f"| {r['dtype']} | {c['S']} | {c['L']} | {c['BLOCK_N']} x {c['BLOCK_Q']} x {c['BLOCK_D']} | "
            f"{ln['num_warps']} | {ln['num_stages']} | {ops} | {int(c['AFFINE'])} | {int(c['HYBRID'])} | "
            f"{c.get('PUSHES', 0)} | "
            f"{r['registers']} | {r['spill_stores']} | {r['spill_loads']} | {r['shared'] / 1024:.0f} | {r['wgmma']} | "
            f"{'*%s*' % r['seconds'] if r.get('reused') else r['seconds']} | {fmt_batches(r['batches'])} | {verdict} |")
    bad = [r for r in rows if r["in_budget_scope"] and (not r["ok"] or spills(r))]
    md = "\n".join([
        "# Fused kernel: registers and spills per specialisation (sm_90, ptxas)", "",
        f"Command: `{info['command']}` ({info['seconds']} s; {info['specialisations']} specialisations from "
        f"{info['batches']} batches, matrix `{info['matrix']}`"
        + (f"; {info['reused']} rows (compile s in italics) reused from the earlier run of the same kernel source "
           f"(Triton cache key `{info['kernel_key'][:16]}`), triton and ptxas" if info.get("reused") else "") + ")", "",
        f"triton {info['triton']}; ptxas: {info['ptxas']}; target {info['target']}; compiled on {info['cpu']}, "
        f"{info['cores']} cores, load average at start {', '.join(f'{x:.2f}' for x in info['load_average'])}.", "",
        "Ops codes: AND 0 product / 1 sum / 2 min; OR 0 sum / 1 max; NOT 0 one_minus / 1 reciprocal. "
        "S = stack slots (next power of two >= depth), L = sorted top-k list length, PUSHES = the push-batched "
        "form's accumulators (0: the per-step form, one dot per PUSH step). `budget`: the "
        f"specialisation serves a batch with stack depth <= {BUDGET_DEPTH} and k <= {BUDGET_K}, where no spill is "
        "allowed. 255 registers is the hardware maximum per thread.", "",
        *([f"**What-if table**: every batch forced to {info['tiles']} tiles (`--tiles`), not what `default_config` "
           "gives; see benchmarks/results/kernel_registers.md for the defaults.", ""] if info.get("tiles") else []),
        *lines, "",
        f"Budget: {'met' if not bad else 'NOT met'} ({len(bad)} specialisation(s) in scope spill or fail).", ""])
    stem.parent.mkdir(parents=True, exist_ok=True)
    for path, text in ((stem.with_suffix(".json"), json.dumps(dict(info=info, rows=rows), indent=1)),
                       (stem.with_suffix(".md"), md)):
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    return md


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrix", choices=("ci", "budget", "table", "issue"), default="table",
                    help="which specialisations to compile: ci (ten, the tests' set), budget (the register-budget corners), "
                         "table (budget plus depth x k sweeps; default), issue (every dtype x op family x option set)")
    ap.add_argument("--workers", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                    help="parallel compile processes (default %(default)s)")
    ap.add_argument("--out", default=None,
                    help="output stem (.json and .md are added; default: benchmarks/results/kernel_registers for "
                         "--matrix table with the default tiles, otherwise a stem in the system's temporary folder, so "
                         "that a what-if table never replaces the committed one)")
    ap.add_argument("--reuse", default=None, metavar="JSON",
                    help="take the rows of specialisations that an earlier table of the same kernel source, "
                         "triton and ptxas compiled (marked 'reused'); the tests never reuse")
    ap.add_argument("--tiles", default=None, metavar="NxQ",
                    help="force BLOCK_N x BLOCK_Q (e.g. 128x32) instead of default_config's: a what-if table for "
                         "other tiles; its budget verdicts are about those tiles, not the defaults")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks import check_stem, default_stem

    args.out = args.out or default_stem(ap, args, "kernel_registers", ignore=("workers", "reuse"))
    check_stem(ap, args.out)
    if args.workers < 1:
        ap.error(f"--workers {args.workers}: at least 1")
    if args.reuse and not Path(args.reuse).is_file():
        ap.error(f"--reuse {args.reuse}: no such file")
    if args.tiles:
        try:
            bn, bq = (int(x) for x in args.tiles.lower().split("x"))
        except ValueError:
            ap.error(f"--tiles {args.tiles!r}: expected BLOCK_NxBLOCK_Q, e.g. 128x32")
        TILES.update(block_n=bn, block_q=bq)
    t0 = time.time()
    info = dict(command=" ".join(shlex.quote(a) for a in ["python", *sys.argv]), matrix=args.matrix,
                **machine_info(), kernel_key=kernel_key(), tiles=args.tiles)
    batches = matrix(args.matrix)
    reuse = load_reusable(args.reuse, info) if args.reuse else {}
    rows = compile_all(batches, args.workers, reuse)
    info.update(seconds=round(time.time() - t0, 1), batches=len(batches), specialisations=len(rows),
                reused=sum(bool(r.get("reused")) for r in rows))
    md = write_table(rows, info, Path(args.out))
    print(md)
    bad = [r for r in rows if r["in_budget_scope"] and (not r["ok"] or spills(r))]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
