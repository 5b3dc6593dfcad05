"""Reranking: equals brute force on the candidate set; candidate formats; unknown ids reported or refused."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from itlr_gpu import Ops, compile_queries
from itlr_gpu.cli import main
from itlr_gpu.compiler import evaluate_postfix
from itlr_gpu.engine import search
from itlr_gpu.errors import InputError
from itlr_gpu.io import read_table
from itlr_gpu.scale.rerank import read_candidates, rerank
from itlr_gpu.scoring import RECOMMENDED, ScoreOptions
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
    assert any("2 candidate(s) name doc ids not in the index (first: 'nope', 'gone')" in w for w in report.warnings())
    with pytest.raises(InputError, match=r"2 candidate\(s\) name doc ids not in the index \(first: 'nope', 'gone'\)"):
        rerank(index, EXPRS[:2], ["q0", "q1"], cands, HashEncoder(), k=5, device="cpu", strict=True)
    # --strict names every kind of problem at once (an outside review: only the first was named)
    both = pa.concat_tables([cands, pa.table({"query_id": ["q1"], "doc_id": ["d7"]})])
    with pytest.raises(InputError) as err:
        rerank(index, EXPRS[:2], ["q0", "q1"], both, HashEncoder(), k=5, device="cpu", strict=True)
    text = str(err.value)
    assert "doc ids not in the index" in text and "query ids not in the queries file" in text \
        and "repeat a (query, document) pair" in text and "each document at most once per query (--strict)" in text


def test_nothing_to_score_is_an_error(saved):
    # a candidates file of another corpus (or queries file): no empty result, one error naming both kinds
    root, index = saved
    cands = pa.table({"query_id": ["q0", "q0", "zz"], "doc_id": ["MED-1", "", "d1"]})
    with pytest.raises(InputError, match=r"none of the 3 candidates can be scored: 2 candidate\(s\) name doc ids not "
                                         r"in the index \(first: 'MED-1', ''\); 1 candidate\(s\) name query ids not in "
                                         r"the queries file \(first: 'zz'\)"):
        rerank(index, EXPRS[:1], ["q0"], cands, HashEncoder(), device="cpu")


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
    assert "itlr: warning: 1 candidate(s) name doc ids not in the index (first: 'missing-doc')" in captured.err
    assert "6 of 7 candidates scored (1 skipped) for 2 queries" in captured.out
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
@example(n_queries=1, seed=658, k=1, batch_bytes=20_000)   # its one query draws no candidate
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
    if not pairs:   # every query drew 0 candidates: an empty candidates table is an input error
        with pytest.raises(InputError, match="no candidates"):
            rerank(load_index(root / "single"), exprs, ids, cands, HashEncoder(), k=k, device="cpu")
        return
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


# --------------------------------------------------------------------------- scoring options

@st.composite
def score_options(draw):
    hybrid = draw(st.none() | st.sampled_from([0.0, 0.3, 0.5, 1.0]))
    mixed = hybrid is not None
    return ScoreOptions(
        hybrid=hybrid,
        neg_hybrid=draw(st.none() | st.sampled_from([0.2, 1.0])) if mixed else None,
        conj_hybrid=draw(st.none() | st.sampled_from([0.1, 0.9])) if mixed else None,
        adaptive=draw(st.booleans()) if mixed else False,
        calibration=draw(st.sampled_from([None, "none", "equalize", "zscore", "minmax"])),
        guard=draw(st.booleans()), or_max=draw(st.booleans()), and_min=draw(st.booleans()),
        sample_size=draw(st.sampled_from([37, 4096])))


OPTIONS = score_options().filter(lambda o: o.active)


def assert_matches_full_search(table, full, pairs, k, tol=2e-4):
    """Each query's reranked list is a best-k of its candidates under the full search's scores: every score
    equals the full search's score of that document, scores do not increase, and no candidate left out
    scores above the last one kept (all up to float32 rounding, ``tol``)."""
    full_score = {(q, d): s for q, d, s in zip(*(full.column(c).to_pylist() for c in ("query_id", "doc_id", "score")))}
    got = by_query(table)
    for qid in {q for q, _ in pairs}:
        cand = {d for q, d in pairs if q == qid}
        rows = got.get(qid, [])
        assert len(rows) == min(k, len(cand))
        assert [r for _, _, r in rows] == list(range(1, len(rows) + 1))
        for d, s, _ in rows:
            assert abs(s - full_score[qid, d]) <= tol * max(1.0, abs(s)), (qid, d, s, full_score[qid, d])
        scores = [s for _, s, _ in rows]
        assert all(b <= a + tol * max(1.0, abs(a)) for a, b in zip(scores, scores[1:]))
        left_out = [full_score[qid, d] for d in cand - {d for d, _, _ in rows}]
        if left_out:
            assert max(left_out) <= scores[-1] + tol * max(1.0, abs(scores[-1]))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(options=OPTIONS, seed=st.integers(0, 2**31 - 1), k=st.integers(1, 25), texts=st.booleans(),
       batch_bytes=st.sampled_from([20_000, 256 << 20]), layout=st.sampled_from(["single", "sharded"]))
def test_rerank_with_score_options_equals_full_search(saved, options, seed, k, texts, batch_bytes, layout):
    # The options' constants come from the whole index's sample, as in a full search: a candidate gets the
    # score `search` gives it with the same options (whole-query texts given, or rendered from the expression).
    root, index = saved
    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(len(EXPRS))]
    whole = [f"whole text {i}" for i in range(len(EXPRS))] if texts and options.hybrid is not None else None
    pairs = [(qid, f"d{r}") for qid in ids for r in rng.choice(len(index), size=int(rng.integers(1, 70)),
                                                               replace=False)]
    cands = pa.table({"query_id": [p[0] for p in pairs], "doc_id": [p[1] for p in pairs]})
    table, _ = rerank(load_index(root / layout), EXPRS, ids, cands, HashEncoder(), k=k, device="cpu",
                      batch_bytes=batch_bytes, score_options=options, whole_queries=whole)
    full = search(index, EXPRS, HashEncoder(), k=len(index), backend="torch", device="cpu", query_ids=ids,
                  score_options=options, whole_queries=whole)
    assert_matches_full_search(table, full, pairs, k)


def test_rerank_score_options_change_the_order(saved):
    # Not a no-op: the recommended options reorder some query's candidates.
    root, index = saved
    ids = [f"q{i}" for i in range(len(EXPRS))]
    pairs = [(qid, f"d{r}") for qid in ids for r in range(0, 600, 3)]
    cands = pa.table({"query_id": [p[0] for p in pairs], "doc_id": [p[1] for p in pairs]})
    plain, _ = rerank(index, EXPRS, ids, cands, HashEncoder(), k=10, device="cpu")
    tuned, _ = rerank(index, EXPRS, ids, cands, HashEncoder(), k=10, device="cpu", score_options=RECOMMENDED)
    assert plain.column("doc_id").to_pylist() != tuned.column("doc_id").to_pylist()


def test_rerank_score_options_refused(saved):
    root, index = saved
    cands = pa.table({"query_id": ["q0"], "doc_id": ["d1"]})
    with pytest.raises(InputError, match="percentile calibration does not combine with rerank"):
        rerank(index, EXPRS[:1], ["q0"], cands, HashEncoder(), score_options=ScoreOptions(calibration="percentile"))
    with pytest.raises(InputError, match="whole_queries must be a list with one text per query"):
        rerank(index, EXPRS[:1], ["q0"], cands, HashEncoder(), score_options=RECOMMENDED, whole_queries=["a", "b"])
    with pytest.raises(InputError, match="score_options is a dict"):
        rerank(index, EXPRS[:1], ["q0"], cands, HashEncoder(), score_options={"hybrid": 0.5})
    with pytest.raises(InputError, match="whole_queries given but hybrid scoring is off"):
        rerank(index, EXPRS[:1], ["q0"], cands, HashEncoder(), score_options=ScoreOptions(calibration="equalize"),
               whole_queries=["a"])


def test_cli_rerank_score_options(saved, tmp_path, monkeypatch, capsys):
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    root, index = saved
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps({"query_id": f"q{i}", "expr": e, "text": f"text of query {i}"}) + "\n"
                         for i, e in enumerate(EXPRS[:3])))
    run = tmp_path / "first.run"
    pairs = [(f"q{i}", f"d{r}") for i in range(3) for r in range(i, 900, 7)]
    run.write_text("".join(f"{qq} Q0 {d} {j + 1} 1.0 x\n" for j, (qq, d) in enumerate(pairs)))
    out = tmp_path / "out.arrow"
    assert main(["rerank", str(root / "single"), str(q), str(run), "-o", str(out), "-k", "7", "--recommended",
                 "--neg-hybrid", "1"]) == 0
    options = replace(RECOMMENDED, neg_hybrid=1.0)
    full = search(index, EXPRS[:3], HashEncoder(), k=len(index), backend="torch", device="cpu",
                  query_ids=["q0", "q1", "q2"], score_options=options,
                  whole_queries=[f"text of query {i}" for i in range(3)])
    assert_matches_full_search(read_table(out), full, pairs, 7)
    capsys.readouterr()
    assert main(["rerank", str(root / "single"), str(q), str(run), "-o", str(tmp_path / "p.arrow"),
                 "--calibration", "percentile"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["itlr: error: --calibration: percentile calibration does not combine with itlr rerank (expected "
                   "equalize, zscore, minmax or none; itlr search takes it)"]
    assert not (tmp_path / "p.arrow").exists()
    # options without a hybrid do not read the text column; search and rerank run with them as the API does
    options = ScoreOptions(calibration="equalize")
    full = search(index, EXPRS[:3], HashEncoder(), k=len(index), backend="torch", device="cpu",
                  query_ids=["q0", "q1", "q2"], score_options=options)
    assert main(["rerank", str(root / "single"), str(q), str(run), "-o", str(tmp_path / "eq.arrow"), "-k", "7",
                 "--calibration", "equalize"]) == 0
    assert_matches_full_search(read_table(tmp_path / "eq.arrow"), full, pairs, 7)
    assert main(["search", str(root / "single"), str(q), "-o", str(tmp_path / "eqs.arrow"), "-k", "7",
                 "--backend", "torch", "--device", "cpu", "--calibration", "equalize"]) == 0
    top = search(index, EXPRS[:3], HashEncoder(), k=7, backend="torch", device="cpu",
                 query_ids=["q0", "q1", "q2"], score_options=options)
    assert read_table(tmp_path / "eqs.arrow").column("doc_id").equals(top.column("doc_id"))


def test_gzipped_runs_and_result_folders_are_candidates(saved, tmp_path, monkeypatch):
    import gzip

    import itlr_gpu.cli_common as cli_common

    (tmp_path / "c.run.gz").write_bytes(gzip.compress(b"q1 Q0 d1 1 9.5 bm25\nq1 Q0 d2 2 8.0 bm25\n"))
    (tmp_path / "c.tsv.gz").write_bytes(gzip.compress(b"qid\tdocid\nq1\td1\nq1\td2\n"))
    for name in ("c.run.gz", "c.tsv.gz"):
        t = read_candidates(tmp_path / name)
        assert t.column("doc_id").to_pylist() == ["d1", "d2"], name
    # the result folder of a batched search: its (query, doc) pairs
    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    root, _ = saved
    q = _queries_file(tmp_path / "q.jsonl", EXPRS[:3], ["q0", "q1", "q2"])
    assert main(["search", str(root / "single"), str(q), "-o", str(tmp_path / "first"), "-k", "4",
                 "--batch-size", "2", "--device", "cpu"]) == 0
    pairs = read_candidates(tmp_path / "first")
    assert pairs.num_rows == 12 and sorted(set(pairs.column("query_id").to_pylist())) == ["q0", "q1", "q2"]


@pytest.mark.parametrize("name", ["c.jsonl", "c.tsv", "c.csv", "c.run"])
def test_an_empty_candidates_file_says_it_is_empty(tmp_path, name):
    (tmp_path / name).write_text("")
    with pytest.raises(InputError, match=r"is empty|no run lines"):
        read_candidates(tmp_path / name)


def test_cli_rerank_checks_the_first_stage_as_eval_does(saved, tmp_path, monkeypatch, capsys):
    """Repeated pairs: a warning naming the first (an error with --strict); a rank or score that eval refuses is
    refused here too; a pandas "category" (dictionary) id column is read."""
    import pyarrow.parquet as pq

    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    root, _ = saved
    q = _queries_file(tmp_path / "q.jsonl", EXPRS[:1], ["q0"])
    out = tmp_path / "r.arrow"
    dup = tmp_path / "dup.run"
    dup.write_text("q0 Q0 d5 1 3 bm25\nq0 Q0 d9 2 2 bm25\nq0 Q0 d5 3 1 bm25\n")
    assert main(["rerank", str(root / "sharded"), str(q), str(dup), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert ("itlr: warning: 1 candidate(s) repeat a (query, document) pair already listed (first: document 'd5' for "
            "query 'q0'); scored once") in captured.err
    assert "2 of 3 candidates scored (1 repeated)" in captured.out
    out.unlink()
    assert main(["rerank", str(root / "sharded"), str(q), str(dup), "-o", str(out), "--strict"]) == 1
    assert "repeat a (query, document) pair" in capsys.readouterr().err and not out.exists()
    for line, message in (("q0 Q0 d5 four 3 bm25", "rank 'four'"), ("q0 Q0 d5 1 NaN bm25", "bad.run:1: score 'NaN' (expected a finite number")):
        bad = tmp_path / "bad.run"
        bad.write_text(line + "\n")
        assert main(["rerank", str(root / "sharded"), str(q), str(bad), "-o", str(out)]) == 1
        assert message in capsys.readouterr().err and not out.exists()
    cats = tmp_path / "cats.parquet"
    pq.write_table(pa.table({"qid": pa.array(["q0", "q0"]).dictionary_encode(), "docid": ["d5", "d9"]}), cats)
    assert main(["rerank", str(root / "sharded"), str(q), str(cats), "-o", str(out)]) == 0
    assert "2 of 2 candidates scored" in capsys.readouterr().out


def test_the_rerank_api_checks_its_arguments_as_search_does():
    """A list as candidates, a table without query_id, encoder=None (the index's model, as search takes it) and
    k=0 (named as the argument, not the command line's -k)."""
    import pyarrow as pa

    import itlr_gpu as itlr
    from itlr_gpu.errors import InputError
    from itlr_gpu.scale.rerank import rerank

    index = itlr.Index.from_arrays(np.eye(4, dtype=np.float32), ["a", "b", "c", "d"], dtype="float32")

    class Axis:
        def encode(self, texts):
            return np.array([np.eye(4, dtype=np.float32)["abcd".index(t)] for t in texts])

    cands = pa.table({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"]})
    for bad, message in (([("q", "a")], "candidates is a list"),
                         (pa.table({"qid": ["q"], "doc_id": ["a"]}), "candidates have no query_id column")):
        with pytest.raises(InputError, match=message):
            rerank(index, ["a"], ["q"], bad, Axis())
    with pytest.raises(InputError, match=r"k: k=0"):
        rerank(index, ["a"], ["q"], cands, Axis(), k=0)
    with pytest.raises(InputError, match="encoder is a int with no encode method"):
        rerank(index, ["a"], ["q"], cands, 5)
    table, _ = rerank(index, ["a OR b"], ["q"], pa.RecordBatch.from_pydict(cands.to_pydict()), Axis(), k=2)
    assert table.column("doc_id").to_pylist() == ["a", "b"]
