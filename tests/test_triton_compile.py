"""Every specialisation of the fused kernel compiles for sm_90 (H100/H200) without a GPU.

``triton.compile(ASTSource(...), target=GPUTarget("cuda", 90, 32))`` runs the
whole pipeline (TTIR -> TTGIR -> LLVM -> PTX -> cubin with the ptxas that the
triton wheel bundles under triton/backends/nvidia/bin), so it catches type and
layout errors the interpreter never sees.  The compiles run in a child process
with TRITON_INTERPRET unset (the kernel tests turn the interpreter on in this
process).  For each specialisation the PTX must use the tensor cores (wgmma on
sm_90; fp32 documents go through tf32x3, also wgmma).

Specialisations: each operator family with each document dtype (3 ops triples
cover AND {product, sum, min} x OR {sum, max} x NOT {one_minus, reciprocal}),
plus the stack depths / top-k list lengths that change the tile configuration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

triton = pytest.importorskip("triton")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = textwrap.dedent(r'''
    import json, re, sys, time
    from concurrent.futures import ProcessPoolExecutor

    def compile_one(case):
        import torch, triton
        from triton.backends.compiler import GPUTarget
        from itlr_gpu.kernels import fused_logical_topk as m
        fn = m.fused_logical_topk_kernel
        dtype, ops, max_depth, k, *rest = case
        options = bool(rest and rest[0])   # scoring options: per-literal affine + hybrid epilogue
        tdt = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype]
        cfg = m.default_config(torch.empty(0, dtype=tdt), max_depth)
        ptr = {"docs_ptr": "*" + dtype, "terms_ptr": "*" + dtype, "op_ptr": "*i8", "arg_ptr": "*i32",
               "block_steps_ptr": "*i32", "block_lanes_ptr": "*i32", "buf_ptr": "*i64",
               "lit_a_ptr": "*fp32", "lit_b_ptr": "*fp32", "mix_ptr": "*fp32", "whole_arg_ptr": "*i32"}
        ints = ["N", "D", "stride_doc", "stride_term", "k_eff", "cap", "tiles_per_split"]
        const = dict(AND_OP=m.AND_CODES[ops[0]], OR_OP=m.OR_CODES[ops[1]], NOT_OP=m.NOT_CODES[ops[2]],
                     S=m.next_pow2(max_depth), L=max(m.next_pow2(k), cfg["block_n"]), BLOCK_N=cfg["block_n"],
                     BLOCK_Q=cfg["block_q"], BLOCK_D=cfg["block_d"], DOT_FP32=False,
                     DOT_PRECISION="tf32x3" if dtype == "fp32" else "tf32", AFFINE=options, HYBRID=options)
        sig = dict(ptr, **{a: "i32" for a in ints}, **{c: "constexpr" for c in const})
        sig = {a: sig[a] for a in fn.arg_names}
        # what a launch with 16-aligned pointers and d, strides multiples of 16 specialises on
        aligned = list(ptr) + ["D", "stride_doc", "stride_term"]
        attrs = {(fn.arg_names.index(a),): [["tt.divisibility", 16]] for a in aligned}
        src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=const, attrs=attrs)
        t0 = time.time()
        try:
            kernel = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                                    options={"num_warps": cfg["num_warps"], "num_stages": cfg["num_stages"],
                                             "enable_fp_fusion": False})
        except Exception as exc:  # report, the parent fails the test
            return dict(case=case, ok=False, error=f"{type(exc).__name__}: {exc}"[-3000:])
        ptx = kernel.asm["ptx"]
        return dict(case=case, ok=True, seconds=round(time.time() - t0, 1), wgmma=len(re.findall(r"\bwgmma\.", ptx)),
                    mma=len(re.findall(r"\bmma\.sync", ptx)), cubin_bytes=len(kernel.asm.get("cubin", b"")),
                    shared=kernel.metadata.shared, config=cfg, constexprs={k: v for k, v in const.items()})

    if __name__ == "__main__":
        cases = json.loads(sys.argv[1])
        with ProcessPoolExecutor(max_workers=int(sys.argv[2])) as pool:
            results = list(pool.map(compile_one, [tuple(map(lambda x: tuple(x) if isinstance(x, list) else x, c))
                                                  for c in cases]))
        print("RESULTS" + json.dumps(results))
''')

OPS_TRIPLES = [("product", "sum", "one_minus"), ("sum", "max", "reciprocal"), ("min", "max", "one_minus")]
CASES = (
    [(dtype, ops, 2, 10) for dtype in ("fp16", "bf16", "fp32") for ops in OPS_TRIPLES]
    + [("fp16", OPS_TRIPLES[0], 1, 1),            # single-term queries: S = 1
       ("fp16", OPS_TRIPLES[1], 2, 1024),         # k = 1024: L = 1024
       ("bf16", OPS_TRIPLES[2], 2, 2048),         # the kernel's limit K_MAX
       ("fp16", OPS_TRIPLES[0], 3, 100),          # S = 4: 64-row tiles
       ("fp16", OPS_TRIPLES[1], 7, 100),          # S = 8: 32-row tiles
       ("fp16", ("product", "max", "one_minus"), 2, 10, True),   # scoring options (RECOMMENDED's families)
       ("bf16", ("product", "max", "one_minus"), 3, 100, True),
       ("fp32", OPS_TRIPLES[1], 2, 10, True)]
)


def _version() -> tuple[int, int]:
    major, minor = triton.__version__.split(".")[:2]
    return int(major), int(minor)


@pytest.fixture(scope="module")
def compiled():
    if _version() < (3, 3):
        pytest.skip(f"triton {triton.__version__}: ASTSource(signature, constexprs) needs triton >= 3.3")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in sys.path if p])
    workers = max(1, min(4, os.cpu_count() or 1))
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(CASES), str(workers)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-6000:]
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULTS"))
    return {tuple(tuple(x) if isinstance(x, list) else x for x in r["case"]): r for r in json.loads(line[7:])}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{','.join(c[1])}-depth{c[2]}-k{c[3]}"
                         + ("-options" if len(c) > 4 and c[4] else ""))
def test_compiles_for_sm90_with_tensor_cores(compiled, case):
    result = compiled[case]
    assert result["ok"], result.get("error")
    assert result["wgmma"] > 0 or result["mma"] > 0, f"no tensor-core instruction in the PTX: {result}"
    assert result["cubin_bytes"] > 0
