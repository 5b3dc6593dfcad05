"""Reranking: equals brute force on the candidate set; candidate formats; unknown ids reported or refused."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from itlr_gpu import Ops, compile_queries
from itlr_gpu.cli import main
from itlr_gpu.compiler import evaluate_postfix
from itlr_gpu.errors import InputError
from itlr_gpu.io import read_table
from itlr_gpu.scale.rerank import read_candidates, rerank
from itlr_gpu.scale.shards import load_index, save_sharded

from test_scale import EXPRS, HashEncoder, _queries_file, make_index


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("rerank")
    index = make_index(1500, seed=11, dup_every=31)  # duplicate rows -> tied scores
    index.save(root / "single")
    save_sharded(index, root / "sharded", 400)
    return root, index


def brute_force(index, exprs, ids, pairs, ops, k):
    """Score every document, keep each query's candidates, order by (score desc, row asc)."""
    program = compile_queries(exprs, ids)
    terms = HashEncoder().encode(program.terms)
    terms = terms / np.linalg.norm(terms, axis=1, keepdims=True)
    # float64 then float32: identical rows get identical similarities (a float32 BLAS may round them differently)
    sims = (terms.astype(np.float64) @ np.asarray(index.embeddings, dtype=np.float64).T).astype(np.float32)
    row_of = {d: i for i, d in enumerate(index.doc_ids.to_pylist())}
    out = {}
    for q, qid in enumerate(ids):
        s = np.asarray(evaluate_postfix(program, q, sims, ops), dtype=np.float32)
        rows = sorted({row_of[d] for qq, d in pairs if qq == qid and d in row_of})
        rows.sort(key=lambda r: (-s[r], r))
        out[qid] = [(index.doc_ids[r].as_py(), s[r]) for r in rows[:k]]
    return out


def assert_same_ranking(got, want):
    """Same documents in the same order; only documents with numerically equal scores may swap."""
    assert len(got) == len(want)
    for (gd, gs, _), (wd, ws) in zip(got, want):
        assert gd == wd or abs(gs - ws) <= 1e-6, (gd, gs, wd, ws)


def by_query(table):
    got = {}
    for q, d, s, r in zip(*(table.column(c).to_pylist() for c in ("query_id", "doc_id", "score", "rank"))):
        got.setdefault(q, []).append((d, s, r))
    return got


@pytest.mark.parametrize("layout,batch_bytes", [("single", 256 << 20), ("sharded", 256 << 20), ("single", 20_000)])
@pytest.mark.parametrize("ops", [Ops(), Ops("sum", "max", "reciprocal")], ids=str)
def test_rerank_equals_brute_force(saved, layout, ops, batch_bytes):
    root, index = saved
    rng = np.random.default_rng(3)
    ids = [f"q{i}" for i in range(len(EXPRS))]
    pairs = []
    for qid in ids:
        rows = rng.choice(len(index), size=60, replace=False)
        rows[:4] = [0, 31, 62, 93]  # identical documents: ties must go to the lower row
        pairs += [(qid, f"d{r}") for r in rows]
    pairs += pairs[:5]  # repeated pairs are scored once
    cands = pa.table({"query_id": [p[0] for p in pairs], "doc_id": [p[1] for p in pairs]})
    table, report = rerank(load_index(root / layout), EXPRS, ids, cands, HashEncoder(), k=20, ops=ops,
                           device="cpu", batch_bytes=batch_bytes)   # 20,000 bytes: one query per batch
    assert report.duplicates == 5 and report.unknown_docs == 0
    assert report.candidates == len(pairs) and report.scored == len(pairs) - 5
    want = brute_force(index, EXPRS, ids, pairs, ops, 20)
    got = by_query(table)
    assert table.schema.names == ["query_id", "rank", "doc_id", "score"]
    for qid in ids:
        assert_same_ranking(got[qid], want[qid])
        np.testing.assert_allclose([s for _, s, _ in got[qid]], [s for _, s in want[qid]], rtol=1e-5, atol=1e-6)
        assert [r for _, _, r in got[qid]] == list(range(1, 21))
        copies = [int(d[1:]) for d, _, _ in got[qid] if int(d[1:]) % 31 == 0]  # copies of row 0 tie exactly
        assert copies == sorted(copies)


def test_candidate_formats(tmp_path):
    (tmp_path / "c.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t3\nq1\td2\t1\n")
    (tmp_path / "run.tsv").write_text("q1 Q0 d1 1 9.5 bm25\nq1 Q0 d2 2 8.0 bm25\n")
    (tmp_path / "c.run").write_text("q1\tQ0\td1\t1\t9.5\tbm25\nq1 Q0 d2 2 8.0 bm25\n")
    (tmp_path / "c.jsonl").write_text('{"qid": "q1", "docid": "d1"}\n{"qid": "q1", "docid": "d2"}\n')
    pq.write_table(pa.table({"query_id": ["q1", "q1"], "doc_id": [1, 2]}).set_column(
        1, "doc_id", pa.array(["d1", "d2"])), tmp_path / "c.parquet")
    for name in ("c.tsv", "run.tsv", "c.run", "c.jsonl", "c.parquet"):
        t = read_candidates(tmp_path / name)
        assert t.column("query_id").to_pylist() == ["q1", "q1"], name
        assert t.column("doc_id").to_pylist() == ["d1", "d2"], name
    (tmp_path / "bad.run").write_text("q1 Q0 d1 1 9.5\n")
    with pytest.raises(InputError, match=r"bad\.run:1: 5 fields"):
        read_candidates(tmp_path / "bad.run")
    (tmp_path / "nocol.tsv").write_text("a\tb\nx\ty\n")
    with pytest.raises(InputError, match="no query_id column"):
        read_candidates(tmp_path / "nocol.tsv")


def test_unknown_ids_reported_and_strict(saved):
    root, index = saved
    cands = pa.table({"query_id": ["q0", "q0", "q0", "q9", "q1"], "doc_id": ["d5", "nope", "gone", "d1", "d7"]})
    table, report = rerank(index, EXPRS[:2], ["q0", "q1"], cands, HashEncoder(), k=5, device="cpu")
    assert report.unknown_docs == 2 and report.unknown_doc_examples == ["nope", "gone"]
    assert report.unknown_queries == 1 and report.unknown_query_examples == ["q9"]
    assert (report.candidates, report.scored) == (5, 2)
    assert table.column("doc_id").to_pylist() == ["d5", "d7"]
    assert any("2 candidate(s) name doc ids not in the index (first: nope, gone)" in w for w in report.warnings())
    with pytest.raises(InputError, match=r"2 candidate\(s\) name doc ids not in the index \(first: nope, gone\)"):
        rerank(index, EXPRS[:2], ["q0", "q1"], cands, HashEncoder(), k=5, device="cpu", strict=True)


def test_cli_rerank(saved, tmp_path, monkeypatch, capsys):
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    root, index = saved
    q = _queries_file(tmp_path / "q.jsonl", EXPRS[:2], ["q0", "q1"])
    run = tmp_path / "bm25.run"
    lines = [f"q0 Q0 d{r} {i + 1} {10 - i} bm25" for i, r in enumerate([5, 9, 400, 1200, 77])]
    lines += ["q1 Q0 d3 1 5 bm25", "q1 Q0 missing-doc 2 4 bm25"]
    run.write_text("\n".join(lines) + "\n")
    out = tmp_path / "reranked.arrow"
    assert main(["rerank", str(root / "sharded"), str(q), str(run), "-o", str(out), "-k", "3"]) == 0
    captured = capsys.readouterr()
    assert "itlr: warning: 1 candidate(s) name doc ids not in the index (first: missing-doc)" in captured.err
    assert "6 of 7 candidates scored (1 skipped or repeated) for 2 queries" in captured.out
    table = read_table(out)
    got = by_query(table)
    pairs = [(ln.split()[0], ln.split()[2]) for ln in lines]
    want = brute_force(index, EXPRS[:2], ["q0", "q1"], pairs, Ops(), 3)
    assert_same_ranking(got["q0"], want["q0"])
    assert [d for d, _, _ in got["q1"]] == ["d3"]
    assert main(["rerank", str(root / "sharded"), str(q), str(run), "-o", str(out), "--strict"]) == 1
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("itlr: error")]
    assert len(err) == 1 and "missing-doc" in err[0] and "bm25.run" in err[0]
    json.dumps(got)  # plain values


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(n_queries=st.integers(1, 14), seed=st.integers(0, 2**31 - 1), k=st.integers(1, 30),
       batch_bytes=st.sampled_from([20_000, 200_000, 256 << 20]))
def test_rerank_shared_shapes_uneven_candidates(saved, n_queries, seed, k, batch_bytes):
    # Several queries per program shape, each with its own number of candidates (0 included): the
    # padded (queries x candidates) evaluation must equal scoring each query alone.
    root, index = saved
    rng = np.random.default_rng(seed)
    shapes = ["t{} AND NOT t{}", "t{} OR t{}", "(t{} OR t{}) AND t{}"]
    exprs, ids, pairs = [], [], []
    for i in range(n_queries):
        shape = shapes[int(rng.integers(len(shapes)))]
        exprs.append(shape.format(*rng.choice(8, size=shape.count("{}"), replace=False)))
        ids.append(f"q{i}")
        for r in rng.choice(len(index), size=int(rng.integers(0, 80)), replace=False):
            pairs.append((ids[-1], f"d{r}"))
    cands = pa.table({"query_id": pa.array([p[0] for p in pairs], pa.string()),
                      "doc_id": pa.array([p[1] for p in pairs], pa.string())})
    table, report = rerank(load_index(root / "single"), exprs, ids, cands, HashEncoder(), k=k, device="cpu",
                           batch_bytes=batch_bytes)
    want = brute_force(index, exprs, ids, pairs, Ops(), k)
    got = by_query(table)
    assert report.queries_without_candidates == sum(1 for q in ids if not want[q])
    assert table.column("query_id").to_pylist() == [q for q in ids for _ in want[q]]   # query order kept
    for qid in ids:
        assert_same_ranking(got.get(qid, []), want[qid])
        if want[qid]:
            np.testing.assert_allclose([s for _, s, _ in got[qid]], [s for _, s in want[qid]], rtol=1e-5, atol=1e-6)
