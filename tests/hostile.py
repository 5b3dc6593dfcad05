"""Shared pieces of the hostile-input tests (test_hostile.py, test_fuzz_cli.py): a small index from random
embeddings, the CLI run in-process with a model-free encoder, and the clean-failure assertion."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from itlr_gpu.cli import main

from test_scale import DIM, HashEncoder

__all__ = ["DIM", "HashEncoder", "build_index", "write_queries", "run_cli", "tree", "assert_clean_failure"]


def build_index(folder: Path, n: int = 40, seed: int = 0, prefix: str = "d") -> Path:
    """An index of ``n`` random DIM-dimensional rows imported with ``itlr index --embeddings``."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    emb, ids = folder / f"emb-{seed}.npy", folder / f"ids-{prefix}.txt"
    np.save(emb, rng.standard_normal((n, DIM)).astype(np.float32))
    ids.write_text("".join(f"{prefix}{i}\n" for i in range(n)))
    out = folder / f"idx-{prefix}-{seed}"
    assert main(["index", "--embeddings", str(emb), "--ids", str(ids), "-o", str(out), "--dtype", "float32"]) == 0
    return out


def write_queries(path: Path, exprs=("t0 AND NOT t1", "t2 OR t3", "t4", "NOT t5")) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, e in enumerate(exprs):
            f.write(json.dumps({"query_id": f"q{i}", "expr": e}) + "\n")
    return path


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """``itlr_gpu.cli.main(argv)`` in-process; (exit code, stdout, stderr)."""
    capsys.readouterr()
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``folder`` (hidden ones too) with its size and mtime: to prove nothing changed."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root, name)
            st = p.lstat()
            found[str(p.relative_to(folder))] = (st.st_size if p.is_file() else -1, st.st_mtime_ns)
    return found


def assert_clean_failure(rc: int, err: str, codes=(1, 2)) -> None:
    """Exit 1 or 2, exactly one ``itlr: error:`` line, no traceback."""
    assert rc in codes, f"exit {rc}, stderr: {err!r}"
    lines = [line for line in err.splitlines() if line.startswith("itlr: error:")]
    assert len(lines) == 1, f"expected one 'itlr: error:' line, got {err!r}"
    assert "Traceback" not in err, err
