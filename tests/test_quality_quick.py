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
        # paired bootstrap intervals of recommended - Baseline: the mean is the difference of the means
        ci = ds["test"]["ci"]
        mean, lo, hi = ci["overall"]
        assert lo <= mean <= hi
        assert abs(mean - (s["gold|recommended"]["overall"] - s["baseline"]["overall"])) < 1e-9
        assert set(ci["by_family"]) == set(s["baseline"]["by_family"])
    r = res["datasets"]["reuters"]["test"]["summary"]
    # Exact-answer synthetic queries: the logical form must beat the whole-text embedding clearly.
    assert r["gold|paper (raw)"]["overall"] > r["baseline"]["overall"] + 0.05
    assert len([k for k in r if k.startswith("ops|")]) == 12
    report = (out / "report.md").read_text()
    for heading in ("paper Table 1", "paper Table 2", "paper Tables 3 and 4", "## 5. Targets", "not run",
                    "recommended - Baseline [95% CI]"):
        assert heading in report, heading


@pytest.mark.skipif(not (DATA / "reuters21578").is_dir(),
                    reason=f"evaluation data not found at {DATA} (the shared data folder is absent)")
def test_llm_rows_from_dumped_queries_and_translation_files(tmp_path):
    """--dump-queries writes the subsample; --llm-translations reads `itlr translate`-shaped Arrow files
    (here hand-written: every form is the query text as one term, so each LLM row must equal the baseline
    on the same queries) and reports the rows with their failures counted."""
    import pyarrow as pa

    from itlr_gpu.io import write_table
    from itlr_gpu.query import quote
    from itlr_gpu.translate import output_schema

    env = dict(os.environ, PYTHONUNBUFFERED="1", TQDM_DISABLE="1")
    base = [sys.executable, str(REPO / "benchmarks" / "quality.py"), "--quick", "--datasets", "reuters",
            "--data-dir", str(DATA)]
    qdir = tmp_path / "llm"
    proc = subprocess.run(base + ["--dump-queries", str(qdir), "--llm-max-queries", "40"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (qdir / "datasets.txt").read_text().split() == ["reuters"]
    assert not (tmp_path / "results.json").exists()
    rows = [json.loads(line) for line in (qdir / "reuters.jsonl").read_text().splitlines()]
    assert len(rows) == 40 and all(set(r) == {"query_id", "text"} for r in rows)
    ids = [r["query_id"] for r in rows]
    texts = [r["text"] for r in rows]
    assert len(set(ids)) == 40
    # deterministic: a second dump is identical
    proc = subprocess.run(base + ["--dump-queries", str(tmp_path / "again"), "--llm-max-queries", "40"], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and (tmp_path / "again" / "reuters.jsonl").read_text() == (qdir / "reuters.jsonl").read_text()

    model = ["vllm:smollm2-135m-instruct"] * 40
    expr = [quote(t) for t in texts]
    err: list = [None] * 40
    expr[0], err[0] = None, "generation does not parse: 'AND AND'"
    write_table(pa.Table.from_pydict({"query_id": ids, "text": texts, "expr": expr, "translator": model,
                                      "error": err, "llm_expr": [None] * 40, "repaired": [None] * 40},
                                     schema=output_schema("logical")), qdir / "reuters.logical.arrow")
    expr = [quote(t) for t in texts]
    rewrite: list = list(texts)
    err = [None] * 40
    expr[1], rewrite[1], err[1] = None, None, "empty generation"
    write_table(pa.Table.from_pydict({"query_id": ids, "text": texts, "expr": expr, "translator": model,
                                      "error": err, "rewrite": rewrite}, schema=output_schema("rewrite")),
                qdir / "reuters.rewrite.arrow")

    out = tmp_path / "quality"
    proc = subprocess.run(base + ["--llm-translations", str(qdir), "--out", str(out)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=1500)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((out / "results.json").read_text())
    r = res["datasets"]["reuters"]
    lm = r["llm"]
    assert lm["n"] == 40 and sorted(lm["query_ids"]) == sorted(ids)
    assert lm["failures"] == {"logical": 1, "rewrite": 1}
    assert lm["model"]["logical"] == "vllm:smollm2-135m-instruct"
    # stratified: every template of the test split is in the subsample (40 >= 32 templates)
    fam = {q["query_id"]: q["n_neg"] for q in r["test"]["queries"]}
    assert {fam[i] for i in ids} == {0, 1, 2, 3}
    s = lm["summary"]
    for key in ("baseline", "llm|rewrite", "llm|paper (raw)", "llm|recommended", "gold|paper (raw)",
                "gold|recommended", "rules|paper (raw)", "rules|recommended"):
        assert s[key]["n"] == 40 and 0.0 <= s[key]["overall"] <= 1.0, key
    # one-term forms of the query text (and the fallbacks) score exactly like the baseline on the same queries
    assert s["llm|rewrite"]["overall"] == pytest.approx(s["baseline"]["overall"], abs=1e-9)
    assert s["llm|paper (raw)"]["overall"] == pytest.approx(s["baseline"]["overall"], abs=1e-9)
    # the subsample numbers of the other methods are the full run's per-query numbers restricted to it
    full = r["test"]["per_query"]["baseline"]
    assert s["baseline"]["overall"] == pytest.approx(sum(full[i] for i in ids) / 40)
    assert lm["exact"]["llm"] == 0
    # LLM vs rules where the rules translate, and the largest per-query losses, worst first
    wr = lm["where_rules_translate"]
    assert wr["n"] == 40 - lm["rules_failures"] == 40   # the rules translate every Reuters rendering
    assert wr["rules|recommended"] == pytest.approx(s["rules|recommended"]["overall"])
    assert wr["llm|recommended"] == pytest.approx(s["llm|recommended"]["overall"])
    drops = [e["ndcg_rules"] - e["ndcg_llm"] for e in lm["losses"]]
    assert len(drops) <= 5 and all(x > 0 for x in drops) and drops == sorted(drops, reverse=True)
    report = (out / "report.md").read_text()
    assert f"Where the rules translate ({wr['n']} of 40 queries)" in report
    assert ("Where the LLM loses most" in report) == bool(drops)
    assert "## 3b. LLM rows (subsample of 40 test queries per dataset, model vllm:smollm2-135m-instruct)" in report
    assert "| reuters | 40 |" in report and "1/40 | 1/40" in report
    assert "pipeline check" in report and "Llama3-70B" in report
    assert "--llm-translations" in report


@pytest.mark.skipif(not (DATA / "reuters21578").is_dir() or not (DATA / "scifact").is_dir(),
                    reason=f"evaluation data not found at {DATA} (the shared data folder is absent)")
def test_seed_robustness_script(tmp_path):
    """benchmarks/quality_seeds.py: per seed and family, recommended - Baseline is the difference of the two
    methods' means, inside its bootstrap interval; the table names every seed."""
    out = tmp_path / "seeds"
    env = dict(os.environ, PYTHONUNBUFFERED="1", TQDM_DISABLE="1")
    cmd = [sys.executable, str(REPO / "benchmarks" / "quality_seeds.py"), "--quick", "--seeds", "0,3",
           "--datasets", "reuters,scifact", "--out", str(out), "--data-dir", str(DATA)]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((out / "seeds.json").read_text())
    assert set(res["datasets"]) == {"reuters", "scifact"} and res["settings"]["seeds"] == [0, 3]
    for name, per_seed in res["datasets"].items():
        assert set(per_seed) == {"0", "3"}
        for r in per_seed.values():
            assert sum(f["n"] for f in r["families"].values()) == r["n"] > 0
            for f in r["families"].values():
                assert abs(f["delta"] - (f["gold|recommended"] - f["baseline"])) < 1e-9
                assert f["ci"][0] - 1e-12 <= f["delta"] <= f["ci"][1] + 1e-12
    md = (out / "seeds.md").read_text()
    assert "seed 0" in md and "seed 3" in md and "## scifact" in md
    assert (out / "seeds.png").stat().st_size > 0
    bad = subprocess.run(cmd[:2] + ["--seeds", "x"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--seeds" in bad.stderr


@pytest.mark.skipif(not (DATA / "scifact").is_dir(),
                    reason=f"evaluation data not found at {DATA} (the shared data folder is absent)")
def test_a_beir_folder_of_ones_own_runs_under_its_folder_name(tmp_path):
    """`--datasets PATH`: a user's BEIR folder (here SciFact's files, uncompressed, under another name) gets the
    same compositions and report sections as the shared BEIR sets; a folder that is no BEIR folder is one line."""
    import gzip
    import shutil

    own = tmp_path / "my-claims"
    (own / "qrels").mkdir(parents=True)
    with gzip.open(DATA / "scifact" / "corpus.jsonl.gz", "rb") as src, open(own / "corpus.jsonl", "wb") as dst:
        shutil.copyfileobj(src, dst)
    shutil.copy(DATA / "scifact" / "queries.jsonl", own / "queries.jsonl")
    shutil.copy(DATA / "scifact" / "qrels" / "test.tsv", own / "qrels" / "test.tsv")
    out = tmp_path / "quality"
    env = dict(os.environ, PYTHONUNBUFFERED="1", TQDM_DISABLE="1")
    cmd = [sys.executable, str(REPO / "benchmarks" / "quality.py"), "--quick", "--datasets", str(own), "--out", str(out)]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads((out / "results.json").read_text())
    assert list(res["datasets"]) == ["my-claims"] and res["settings"]["dataset_dirs"] == {"my-claims": str(own)}
    s = res["datasets"]["my-claims"]["test"]["summary"]
    assert res["datasets"]["my-claims"]["test"]["n"] > 0 and 0.0 <= s["gold|recommended"]["overall"] <= 1.0
    report = (out / "report.md").read_text()
    assert f"--datasets {own} --quick" in report and "### my-claims: by number of negations (test)" in report

    (tmp_path / "empty").mkdir()
    cmd[cmd.index(str(own))] = str(tmp_path / "empty")
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert proc.stderr.strip().splitlines()[-1] == (
        f"{tmp_path / 'empty'}: not a BEIR folder: corpus.jsonl(.gz), queries.jsonl, qrels/test.tsv missing "
        "(expected corpus.jsonl or corpus.jsonl.gz, queries.jsonl and qrels/test.tsv)")


@pytest.mark.skipif(not (DATA / "reuters21578").is_dir(), reason="Reuters-21578 not in the shared data")
def test_reuters_to_beir_writes_a_folder_itlr_reads(tmp_path):
    """The converter's folder holds the quality benchmark's articles and one query per category of 10 articles or
    more, judged by the articles' labels (oracle: load_reuters itself); index, search and eval read it."""
    from benchmarks.quality.data import load_reuters
    from benchmarks.reuters_to_beir import main as convert_main
    from itlr_gpu.evaluate import read_qrels
    from itlr_gpu.io import read_corpus, read_queries

    out = tmp_path / "reuters"
    assert convert_main([str(DATA / "reuters21578"), "-o", str(out)]) == 0
    corpus = load_reuters(DATA / "reuters21578")
    table = read_corpus(out)
    assert table.column("doc_id").to_pylist() == corpus.doc_ids
    queries = read_queries(out / "queries.jsonl")
    qrels = read_qrels(out / "qrels" / "test.tsv")
    sizes = {}
    for q in qrels:
        assert q.query_id in corpus.labels[q.doc_id] and q.relevance == 1
        sizes[q.query_id] = sizes.get(q.query_id, 0) + 1
    assert sorted(queries.column("query_id").to_pylist()) == sorted(sizes) and min(sizes.values()) >= 10
    assert convert_main([str(DATA / "reuters21578"), "-o", str(out)]) == 1   # a folder not empty: refused
    assert convert_main([str(tmp_path), "-o", str(tmp_path / "x")]) == 1     # no SGML there
    assert not (tmp_path / "x").exists()
