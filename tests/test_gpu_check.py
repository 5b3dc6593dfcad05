"""The prepared GPU proof stays runnable: ``bash benchmarks/gpu_check.sh --dry-run`` runs the same steps as
on a GPU at tiny sizes -- ``pytest -m gpu`` (every GPU test must skip cleanly without CUDA), the kernel
benchmark's --smoke mode under Triton's interpreter (every measurement, the scoring options and the auto
rule check) -- writes its files to the folder it is given and prints the short table last.

A long check (``-m long``): the interpreter makes it 1.5-3 minutes of a 2-core machine, for a script that only a
GPU session runs; run it before one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.long
def test_gpu_check_dry_run(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "OUT")}
    env["PYTHON"] = sys.executable
    dest = tmp_path / "gpu"
    proc = subprocess.run(["bash", "benchmarks/gpu_check.sh", "--dry-run", str(dest)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=2400)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    for name in ("env.txt", "pytest.log", "pytest.xml", "gpu_kernel.json", "gpu_kernel.md", "summary.md"):
        assert (dest / name).is_file(), name
    # the GPU tests were collected and all skipped (no CUDA here), none failed
    log = (dest / "pytest.log").read_text()
    assert re.search(r"\d+ skipped", log) and "failed" not in log and "error" not in log.lower(), log[-2000:]
    assert "needs a CUDA GPU" in log
    out = json.loads((dest / "gpu_kernel.json").read_text())
    rows = out["results"]
    assert [(r["n"], r["k"]) for r in rows] == [(200, 1), (200, 7)]
    # the fused kernel agrees with the unfused torch path; the options row ran at the smallest k
    assert all(r["same_rows"] > 0.9 for r in rows)
    assert "options_s" in rows[0] and "options_s" not in rows[1]
    # the per-step form ran beside the default (push-batched) in every row, with the same top-k (the same math)
    assert all(r["variant"] == {"push_batch": False} and r["variant_same_rows"] > 0.9 for r in rows)
    assert "variant_options_s" in rows[0]
    assert all(r["variant_s"] is not None for r in out["rule_check"])
    per_step = (dest / "pytest-per-step.log").read_text()
    assert re.search(r"\d+ skipped", per_step) and "failed" not in per_step, per_step[-2000:]
    assert [(r["queries"], r["rule"]) for r in out["rule_check"]] == [(1, "torch"), (8, "triton")]
    assert any("faiss" in n for n in out["notes"]) or "faiss-gpu" in rows[0]["single_term_impl"]
    summary = (dest / "summary.md").read_text()
    assert "| 200 | 7 |" in summary and "auto rule" in summary and "skipped" in summary
    assert proc.stdout.rstrip().endswith(summary.rstrip().splitlines()[-1])      # the table is printed last


def test_without_a_gpu_and_without_dry_run_nothing_is_written(tmp_path):
    # the default folder holds a GPU run's evidence: a run without CUDA must not replace it with skipped tests
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is here")
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    env["PYTHON"] = sys.executable
    dest = tmp_path / "gpu"
    proc = subprocess.run(["bash", "benchmarks/gpu_check.sh", str(dest)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and not dest.exists()
    assert proc.stderr.strip().splitlines() == [f"gpu_check: no CUDA GPU here (torch sees none); nothing written "
                                                f"to {dest} (on a CPU: --dry-run)"]
