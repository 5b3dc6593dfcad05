"""The prepared GPU benchmark stays runnable: its --smoke mode (tiny shapes; Triton's interpreter without a GPU)
runs every measurement, including the scoring options, and writes its table."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("triton")
ROOT = Path(__file__).resolve().parents[1]


def test_gpu_benchmark_smoke(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    stem = tmp_path / "gk"
    proc = subprocess.run([sys.executable, "benchmarks/gpu_kernel.py", "--smoke", "--n", "200", "--k", "1", "7",
                           "--queries", "8", "--out", str(stem)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(stem.with_suffix(".json").read_text())
    rows = out["results"]
    assert [(r["n"], r["k"]) for r in rows] == [(200, 1), (200, 7)]
    # the fused kernel agrees with the unfused torch path; the options row ran at the smallest k
    assert all(r["same_rows"] > 0.9 for r in rows)
    assert "options_s" in rows[0] and "options_s" not in rows[1]
    assert "| 200 | 7 |" in stem.with_suffix(".md").read_text()
