"""The quality benchmark's quick mode runs end to end and writes sane outputs (CI keeps the pipeline alive)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parents[1].parent / "shared" / "data"


@pytest.mark.skipif(not (DATA / "reuters21578").is_dir() or not (DATA / "scifact").is_dir(),
                    reason=f"evaluation data not found at {DATA} (the shared data folder is absent)")
def test_quick_benchmark_writes_sane_outputs(tmp_path):
    out = tmp_path / "quality"
    env = dict(os.environ, PYTHONUNBUFFERED="1", TQDM_DISABLE="1")
    cmd = [sys.executable, str(REPO / "benchmarks" / "quality.py"), "--quick", "--out", str(out),
           "--data-dir", str(DATA)]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ("results.json", "report.md", "ndcg_by_negations.png", "ops_ablation.png"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    res = json.loads((out / "results.json").read_text())
    assert set(res["datasets"]) == {"reuters", "scifact", "nfcorpus", "arguana"}
    assert res["settings"]["quick"] is True
    sel = res["selected"]
    for name, ds in res["datasets"].items():
        s = ds["test"]["summary"]
        assert ds["test"]["n"] > 0
        for key in ("baseline", "gold|paper (raw)", "rules|paper (raw)", f"gold|{sel}", "gold|recommended"):
            v = s[key]["overall"]
            assert not math.isnan(v) and 0.0 <= v <= 1.0, (name, key, v)
            for x in s[key]["by_neg"].values():
                assert math.isnan(x) or 0.0 <= x <= 1.0
    r = res["datasets"]["reuters"]["test"]["summary"]
    # Exact-answer synthetic queries: the logical form must beat the whole-text embedding clearly.
    assert r["gold|paper (raw)"]["overall"] > r["baseline"]["overall"] + 0.05
    assert len([k for k in r if k.startswith("ops|")]) == 12
    report = (out / "report.md").read_text()
    for heading in ("paper Table 1", "paper Table 2", "paper Tables 3 and 4", "## 5. Targets", "not run"):
        assert heading in report, heading
