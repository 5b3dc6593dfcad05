"""The fused kernel compiles for sm_90 (H100/H200) without a GPU, uses the tensor cores, and stays within the
register budget: no spill for stack depth <= 4 at k <= 1000.

``benchmarks/kernel_registers.py --matrix ci`` compiles the cases with ``triton.compile(ASTSource(...),
target=GPUTarget("cuda", 90, 32))``: Triton's whole pipeline (TTIR -> TTGIR -> LLVM -> PTX -> cubin with
the ptxas the triton wheel bundles), so it catches type and layout errors the interpreter never sees,
and ptxas's own ``-v`` report of that compile gives registers and spill stores / loads.  The compiles
run in child processes with TRITON_INTERPRET unset and a fresh Triton cache (nothing cached across runs
can hide a regression).  For each specialisation the PTX must use wgmma (fp32 documents go through
tf32x3, also wgmma).

By default (``kernel_registers.matrix("ci")``, 10 batches): a cross-section -- every dtype, AND / OR / NOT
family and tile configuration, 2, 4 and 8 stack slots, lists of 128 and 1024 -- compiled here.  The whole
budget scope (``matrix("budget")``: the register-heaviest corner at every stack-slot count and list length
of the scope in both forms of the kernel, 44 batches, about four times the compile time) is the opt-in long test
(``python -m pytest -m long tests/test_triton_compile.py``) and lies in the committed table
(benchmarks/results/kernel_registers.{json,md}, with every depth 1-8 and k up to 2048), which the default
tests require to be of the current kernel source, to cover the budget's batches and to be within the budget.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

triton = pytest.importorskip("triton")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import kernel_registers as kr  # noqa: E402

CASES = kr.matrix("ci")
BUDGET = kr.matrix("budget")
TABLE = Path(ROOT) / "benchmarks" / "results" / "kernel_registers.json"


def _version() -> tuple[int, int]:
    major, minor = triton.__version__.split(".")[:2]
    return int(major), int(minor)


def _case_id(b: dict) -> str:
    opts = "+".join(x for x, on in (("affine", b["affine"]), ("hybrid", b["hybrid"])) if on) or "plain"
    return f"{b['dtype']}-{','.join(b['ops'])}-depth{b['depth']}-k{b['k']}-{opts}-pushes{b['pushes']}"


def _compile(matrix: str, folder: Path) -> dict:
    """kernel_registers.py --matrix MATRIX in a child process: {case id: its specialisation's row}."""
    if _version() < (3, 6):
        pytest.skip(f"triton {triton.__version__}: the kernel needs triton >= 3.6")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in sys.path if p])
    stem = folder / "kernel_registers"
    workers = max(1, min(4, os.cpu_count() or 1))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "kernel_registers.py"), "--matrix", matrix,
                           "--workers", str(workers), "--out", str(stem)], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=3600)
    assert proc.returncode in (0, 1), proc.stderr[-6000:]          # 1: the budget failed; the tests say where
    rows = json.loads(stem.with_suffix(".json").read_text())["rows"]
    return {_case_id(b): row for row in rows for b in row["batches"]}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return _compile("ci", tmp_path_factory.mktemp("regs"))


@pytest.fixture(scope="module")
def compiled_budget(tmp_path_factory):
    return _compile("budget", tmp_path_factory.mktemp("regs-budget"))


def _shape(b: dict) -> tuple:
    """(dtype class, stack slots S, list length L, tiles, warps, stages, PUSHES) of a batch's specialisation."""
    const, launch = kr.specialise(b)
    return (b["dtype"] == "fp32", const["S"], const["L"], const["BLOCK_N"], const["BLOCK_Q"], const["BLOCK_D"],
            launch["num_warps"], launch["num_stages"], const["PUSHES"])


def _tiles(shape: tuple) -> tuple:
    """A shape's dtype class and tile configuration (tiles, warps, stages), without S, L and PUSHES."""
    return shape[:1] + shape[3:8]


def _scope_shapes() -> set[tuple]:
    """The shapes of the budget scope's heaviest batches: every dtype, depth <= 4, k in {1, 10, 100, 1000},
    min/max/reciprocal with AFFINE, with and without HYBRID (which keeps smaller tiles at S = 4)."""
    return {_shape(b) for b in kr.both_forms([kr.batch(dt, kr.HEAVY_OPS, depth, k, True, hybrid) for dt in kr.DTYPES
                                              for depth in range(1, kr.BUDGET_DEPTH + 1) for k in (1, 10, 100, 1000)
                                              for hybrid in (True, False)])}


def test_ci_cases_are_a_cross_section():
    """Every dtype, every AND / OR / NOT family, every tile configuration of the budget's scope, 2, 4 and 8
    stack slots and lists of 128 and 1024 are compiled by default."""
    for part, values in ((0, ("product", "sum", "min")), (1, ("sum", "max")), (2, ("one_minus", "reciprocal"))):
        assert {b["ops"][part] for b in CASES} == set(values)
    assert {b["dtype"] for b in CASES} == set(kr.DTYPES)
    shapes = {_shape(b) for b in CASES}
    assert {_tiles(s) for s in _scope_shapes()} <= {_tiles(s) for s in shapes}
    assert {s[1] for s in shapes} >= {2, 4, 8} and {s[2] for s in shapes} >= {128, 1024}
    assert {s[8] for s in shapes} >= {0, 3, 4}          # both forms, 3 and 4 accumulators


def test_the_committed_register_table_is_of_this_kernel_source_and_within_the_budget():
    """benchmarks/results/kernel_registers.{json,md} (the budget's batches, every depth 1-8, k up to 2048) was
    made from the current kernel source (Triton's hash of the kernel and everything it calls), covers every
    specialisation of the table's matrix, and no specialisation in the budget's scope spills."""
    data = json.loads(TABLE.read_text())
    info, rows = data["info"], data["rows"]
    if info["triton"] != triton.__version__:     # the hash covers triton.language's own functions too
        pytest.skip(f"the committed table is of triton {info['triton']}, this is {triton.__version__}")
    assert info["kernel_key"] == kr.kernel_key(), (
        "the kernel changed since the committed register table: rerun `python benchmarks/kernel_registers.py "
        "--reuse benchmarks/results/kernel_registers.json` and commit benchmarks/results/kernel_registers.*")
    have = {kr.spec_key(row) for row in rows}
    want = {kr.spec_key(spec) for spec, _ in kr.dedupe(kr.matrix("table"))}
    assert want <= have, f"not in the committed table: {sorted(want - have)[:3]}"
    assert all(row["ok"] and row["wgmma"] > 0 and 0 < row["registers"] <= 255 for row in rows)
    in_scope = [row for row in rows if any(kr.in_budget_scope(b) for b in row["batches"])]
    for row in in_scope:
        assert row["spill_stores"] == 0 and row["spill_loads"] == 0, row


def test_budget_cases_cover_the_budget_scope():
    """Every (dtype class, stack slots S, list length L, tile configuration) that default_config gives a batch
    with depth <= 4 and k in {1, 10, 100, 1000} is in the budget matrix in its heaviest form (min/max/reciprocal
    with AFFINE, and HYBRID where the tiles are those HYBRID gets).  L = 512 (256 < k <= 512) is not: its merge
    vectors lie between L = 256 and 1024, both of which are."""
    heavy = {_shape(b) for b in BUDGET if b["affine"] and tuple(b["ops"]) == kr.HEAVY_OPS}
    scope = _scope_shapes()
    assert scope <= heavy, f"not in the budget matrix: {sorted(scope - heavy)}"
    assert {b["dtype"] for b in BUDGET} == set(kr.DTYPES)


def _check_row(row: dict, case: dict) -> None:
    assert row["ok"], row.get("error")
    assert row["wgmma"] > 0, f"no wgmma in the PTX: {row}"
    assert row["cubin_bytes"] > 0
    assert 0 < row["registers"] <= 255
    if kr.in_budget_scope(case):
        assert row["spill_stores"] == 0 and row["spill_loads"] == 0, (
            f"default_config spills for depth {case['depth']}, k {case['k']}: {row['registers']} registers, "
            f"{row['spill_stores']} B spill stores, {row['spill_loads']} B spill loads, "
            f"constexprs {row['constexprs']}, launch {row['launch']}")


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_compiles_for_sm90_with_tensor_cores_within_the_register_budget(compiled, case):
    _check_row(compiled[_case_id(case)], case)


@pytest.mark.long
@pytest.mark.parametrize("case", BUDGET, ids=_case_id)
def test_the_whole_budget_scope_compiles_within_the_register_budget(compiled_budget, case):
    _check_row(compiled_budget[_case_id(case)], case)
