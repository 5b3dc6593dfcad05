"""Every specialisation of the fused kernel compiles for sm_90 (H100/H200) without a GPU, uses the tensor
cores, and stays within the register budget: no spill for stack depth <= 4 at k <= 1000.

``benchmarks/kernel_registers.py --matrix ci`` compiles the cases with ``triton.compile(ASTSource(...),
target=GPUTarget("cuda", 90, 32))``: Triton's whole pipeline (TTIR -> TTGIR -> LLVM -> PTX -> cubin with
the ptxas the triton wheel bundles), so it catches type and layout errors the interpreter never sees,
and ptxas's own ``-v`` report of that compile gives registers and spill stores / loads.  The compiles
run in child processes with TRITON_INTERPRET unset and a fresh Triton cache (nothing cached across runs
can hide a regression).  For each specialisation the PTX must use wgmma (fp32 documents go through
tf32x3, also wgmma).

Cases (``kernel_registers.matrix("ci")``): the register-heaviest corner at every stack-slot count and
top-k list length of the budget's scope, every operator family and dtype, and three batches beyond the
budget that must compile but may spill.  The table for more batches is benchmarks/results/kernel_registers.md.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

triton = pytest.importorskip("triton")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import kernel_registers as kr  # noqa: E402

CASES = kr.matrix("ci")


def _version() -> tuple[int, int]:
    major, minor = triton.__version__.split(".")[:2]
    return int(major), int(minor)


def _case_id(b: dict) -> str:
    opts = "+".join(x for x, on in (("affine", b["affine"]), ("hybrid", b["hybrid"])) if on) or "plain"
    return f"{b['dtype']}-{','.join(b['ops'])}-depth{b['depth']}-k{b['k']}-{opts}"


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    if _version() < (3, 6):
        pytest.skip(f"triton {triton.__version__}: the kernel needs triton >= 3.6")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in sys.path if p])
    stem = tmp_path_factory.mktemp("regs") / "kernel_registers"
    workers = max(1, min(4, os.cpu_count() or 1))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "kernel_registers.py"), "--matrix", "ci",
                           "--workers", str(workers), "--out", str(stem)], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode in (0, 1), proc.stderr[-6000:]          # 1: the budget failed; the tests say where
    rows = json.loads(stem.with_suffix(".json").read_text())["rows"]
    by_batch = {}
    for row in rows:
        for b in row["batches"]:
            by_batch[_case_id(b)] = row
    return by_batch


def test_ci_cases_cover_the_budget_scope():
    """Every (dtype class, stack slots S, list length L, tile configuration) that default_config gives a batch
    with depth <= 4 and k in {1, 10, 100, 1000} is compiled in its heaviest form (AFFINE + HYBRID,
    min/max/reciprocal).  L = 256 and 512 (128 < k <= 512) are not compiled here (CI time): their merge
    vectors lie between L = 128 and 1024, both of which are."""
    def shape(b):
        const, launch = kr.specialise(b)
        return (b["dtype"] == "fp32", const["S"], const["L"], const["BLOCK_N"], const["BLOCK_Q"], const["BLOCK_D"],
                launch["num_warps"], launch["num_stages"])

    heavy = {shape(b) for b in CASES if b["affine"] and b["hybrid"] and tuple(b["ops"]) == kr.HEAVY_OPS}
    scope = {shape(kr.batch(dt, kr.HEAVY_OPS, depth, k, True, True)) for dt in kr.DTYPES
             for depth in range(1, kr.BUDGET_DEPTH + 1) for k in (1, 10, 100, 1000)}
    assert scope <= heavy, f"not compiled in the CI set: {sorted(scope - heavy)}"
    for part, values in ((0, ("product", "sum", "min")), (1, ("sum", "max")), (2, ("one_minus", "reciprocal"))):
        assert {b["ops"][part] for b in CASES} == set(values)
    assert {b["dtype"] for b in CASES} == set(kr.DTYPES)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_compiles_for_sm90_with_tensor_cores_within_the_register_budget(compiled, case):
    row = compiled[_case_id(case)]
    assert row["ok"], row.get("error")
    assert row["wgmma"] > 0, f"no wgmma in the PTX: {row}"
    assert row["cubin_bytes"] > 0
    assert 0 < row["registers"] <= 255
    if kr.in_budget_scope(case):
        assert row["spill_stores"] == 0 and row["spill_loads"] == 0, (
            f"default_config spills for depth {case['depth']}, k {case['k']}: {row['registers']} registers, "
            f"{row['spill_stores']} B spill stores, {row['spill_loads']} B spill loads, "
            f"constexprs {row['constexprs']}, launch {row['launch']}")
