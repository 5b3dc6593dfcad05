"""Tests for itlr_gpu.evaluate (values checked by hand)."""

from __future__ import annotations

import json
import math
import re

import ir_measures
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from itlr_gpu.errors import InputError
from itlr_gpu.evaluate import evaluate, read_qrels, shallow_measures
from itlr_gpu.io import RESULT_SCHEMA

# One query; ranking a, b, c; b and c relevant.
# DCG = 1/log2(3) + 1/log2(4); IDCG = 1 + 1/log2(3).
NDCG = (1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3))


def results(rows):
    return pa.Table.from_pylist(
        [{"query_id": q, "rank": i + 1, "doc_id": d, "score": s} for i, (q, d, s) in enumerate(rows)],
        schema=RESULT_SCHEMA,
    )


RUN = results([("q1", "a", 3.0), ("q1", "b", 2.0), ("q1", "c", 1.0)])


def test_hand_checked_ndcg():
    qrels = [ir_measures.Qrel("q1", "b", 1), ir_measures.Qrel("q1", "c", 1), ir_measures.Qrel("q1", "z", 0)]
    out = evaluate(RUN, qrels, measures=("nDCG@10", "R@100", "P@1", "RR"))
    assert out["nDCG@10"] == pytest.approx(NDCG) and NDCG == pytest.approx(0.693426, abs=1e-6)
    assert out["R@100"] == 1.0 and out["P@1"] == 0.0 and out["RR"] == 0.5
    assert out["judged_queries"] == 1


def test_rank_column_is_ignored_score_orders():
    run = results([("q1", "c", 1.0), ("q1", "b", 2.0), ("q1", "a", 3.0)])
    qrels = [ir_measures.Qrel("q1", "b", 1), ir_measures.Qrel("q1", "c", 1)]
    with pytest.warns(UserWarning, match=r"the rank column of 1 query in results does not follow the scores \(the "
                      r"first 'q1': rank 2 scores 2, below rank 3 at 3\); documents are judged by score"):
        assert evaluate(run, qrels)["nDCG@10"] == pytest.approx(NDCG)


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_a_rank_column_against_the_scores_is_warned_of_exactly_when_it_is(data):
    """Oracle: some pair of one query's rows where the better rank has the lower score (ties in score or rank,
    constant ranks as some tools write them, any row order)."""
    rows = []
    for q in ("q1", "q2"):
        n = data.draw(st.integers(1, 6))
        scores = data.draw(st.lists(st.sampled_from([0.1, 0.5, 0.9]), min_size=n, max_size=n))
        ranks = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        rows += [{"query_id": q, "rank": r, "doc_id": f"d{i}", "score": s}
                 for i, (s, r) in enumerate(zip(scores, ranks))]
    rows = data.draw(st.permutations(rows))
    against = {a["query_id"] for a in rows for b in rows
               if a["query_id"] == b["query_id"] and a["score"] > b["score"] and a["rank"] > b["rank"]}
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate(pa.Table.from_pylist(rows, schema=RESULT_SCHEMA), [ir_measures.Qrel("q1", "d0", 1)])
    said = [str(w.message) for w in caught if "rank column" in str(w.message)]
    assert len(said) == (1 if against else 0)
    if against:
        assert f"of {len(against)} quer" in said[0]


def test_score_ties_keep_the_rank_order():
    # a and b tie; the engine ranked b first, so b (relevant) is at 1, not re-ordered by doc id
    run = results([("q1", "b", 1.0), ("q1", "a", 1.0), ("q1", "c", 0.5)])
    qrels = [ir_measures.Qrel("q1", "b", 1)]
    assert evaluate(run, qrels, measures=["P@1"])["P@1"] == 1.0
    swapped = results([("q1", "a", 1.0), ("q1", "b", 1.0), ("q1", "c", 0.5)])
    assert evaluate(swapped, qrels, measures=["P@1"])["P@1"] == 0.0
    no_rank = run.drop_columns(["rank"])          # without a rank: trec_eval's rule, which is not rank order
    ties = ir_measures.calc_aggregate([ir_measures.P @ 1], qrels,
                                      [ir_measures.ScoredDoc("q1", d, s) for d, s in (("b", 1.0), ("a", 1.0))])
    assert evaluate(no_rank, qrels, measures=["P@1"])["P@1"] == ties[ir_measures.P @ 1]


def test_ties_trec_eval_ignores_the_rank_column():
    # the same run judged as trec_eval judges it: the rank column plays no part, ir_measures' order decides
    run = results([("q1", "b", 1.0), ("q1", "a", 1.0), ("q1", "c", 0.5)])
    qrels = [ir_measures.Qrel("q1", "b", 1)]
    want = ir_measures.calc_aggregate([ir_measures.RR], qrels, [ir_measures.ScoredDoc("q1", d, s) for d, s in
                                                               (("b", 1.0), ("a", 1.0), ("c", 0.5))])[ir_measures.RR]
    assert evaluate(run, qrels, measures=["RR"], ties="trec_eval")["RR"] == want
    assert evaluate(run, qrels, measures=["RR"], ties="rank")["RR"] == 1.0
    with pytest.raises(InputError, match="ties='docid'"):
        evaluate(run, qrels, ties="docid")


def test_eval_cli_judges_a_trec_run_as_trec_eval(tmp_path, capsys):
    # a TREC run's tie is broken as trec_eval breaks it (what ir-measures reports for the file), unless --ties rank
    from itlr_gpu.cli import main
    (tmp_path / "tie.run").write_text("q1 Q0 a 1 1.0 x\nq1 Q0 b 2 1.0 x\n")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ta\t1\n")
    want = ir_measures.calc_aggregate([ir_measures.RR], list(ir_measures.read_trec_qrels("q1 0 a 1\n")),
                                      list(ir_measures.read_trec_run(str(tmp_path / "tie.run"))))[ir_measures.RR]

    def rr(*extra):
        assert main(["eval", str(tmp_path / "tie.run"), str(tmp_path / "qrels.tsv"), "--measures", "RR", *extra]) == 0
        return float(next(l for l in capsys.readouterr().out.splitlines() if l.startswith("RR")).split("\t")[1])

    assert want < 1.0   # trec_eval puts b first: the two orders differ
    assert rr() == pytest.approx(want, abs=5e-5)
    assert rr("--ties", "trec_eval") == pytest.approx(want, abs=5e-5)
    assert rr("--ties", "rank") == 1.0


@given(st.data())
@settings(max_examples=40, deadline=None)
def test_ties_follow_rank_across_queries_and_row_orders(data):
    """Against a by-hand judgement: top 3 of each query in rank order, whatever the row order."""
    rows, qrels, want = [], [], {}
    for q in ("q1", "q2", "q3"):
        scores = data.draw(st.lists(st.sampled_from([0.1, 0.5, 0.9]), min_size=4, max_size=8))
        docs = [f"d{i}" for i in range(len(scores))]
        tie_order = data.draw(st.permutations(range(len(docs))))     # how the engine broke the ties
        ranked = sorted(range(len(docs)), key=lambda i: (-scores[i], tie_order[i]))
        rows += [{"query_id": q, "rank": r + 1, "doc_id": docs[i], "score": scores[i]} for r, i in enumerate(ranked)]
        relevant = data.draw(st.sets(st.sampled_from(docs), min_size=1, max_size=3))
        qrels += [ir_measures.Qrel(q, d, 1) for d in sorted(relevant)]
        want[q] = sum(docs[i] in relevant for i in ranked[:3]) / 3
    rows = data.draw(st.permutations(rows))
    out = evaluate(pa.Table.from_pylist(rows, schema=RESULT_SCHEMA), qrels, measures=["P@3"], per_query=True)
    assert {q: v["P@3"] for q, v in out["per_query"].items()} == pytest.approx(want)


def test_unanswered_queries_count_as_zero_or_are_left_out():
    qrels = [ir_measures.Qrel("q1", "b", 1), ir_measures.Qrel("q1", "c", 1), ir_measures.Qrel("q2", "x", 1)]
    zero = evaluate(RUN, qrels, measures=["nDCG@10"])             # q2 has no results
    assert zero["nDCG@10"] == pytest.approx(NDCG / 2)
    assert (zero["judged_queries"], zero["unanswered_queries"]) == (1, 1)
    skip = evaluate(RUN, qrels, measures=["nDCG@10"], unanswered="skip")
    assert skip["nDCG@10"] == pytest.approx(NDCG) and skip["judged_queries"] == 1


def test_measures_come_in_the_order_asked_for():
    qrels = [ir_measures.Qrel("q1", "b", 1)]
    for order in (["P@5", "nDCG@10", "R@100"], ["R@100", "P@5", "nDCG@10"]):
        assert list(evaluate(RUN, qrels, measures=order))[:3] == order


def test_repeated_results_and_conflicting_judgements_are_errors(tmp_path):
    qrels = [ir_measures.Qrel("q1", "b", 1)]
    twice = results([("q1", "b", 0.9), ("q1", "b", 0.8)])
    with pytest.raises(InputError, match=r"run\.arrow: document 'b' appears 2 times for query 'q1'"):
        evaluate(twice, qrels, where="run.arrow")
    (tmp_path / "q.txt").write_text("q1 0 b 1\nq1 0 c 1\nq1 0 b 0\n")
    with pytest.raises(InputError, match=r"q\.txt:3: document 'b' of query 'q1' is judged 1 on line 1 and 0 here"):
        read_qrels(tmp_path / "q.txt")
    (tmp_path / "same.txt").write_text("q1 0 b 1\nq1 0 b 1\n")      # the same judgement twice: harmless
    assert len(read_qrels(tmp_path / "same.txt")) == 2


def test_bad_rank_column():
    qrels = [ir_measures.Qrel("q1", "b", 1)]
    bad = pa.table({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0], "rank": [1.5]})
    with pytest.raises(InputError, match=r"run\.arrow column 'rank': column has type double"):
        evaluate(bad, qrels, where="run.arrow")
    nulls = pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, 0.5],
                      "rank": pa.array([1, None], pa.int32())})
    with pytest.raises(InputError, match="null rank at row 1"):
        evaluate(nulls, qrels)


def test_beir_header_with_spaces(tmp_path):
    path = tmp_path / "spaces.tsv"
    path.write_text("query-id corpus-id score\nq1 b 1\nq1 c 1\n")
    assert evaluate(RUN, path)["nDCG@10"] == pytest.approx(NDCG)


def test_beir_qrels_file(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq1\tb\t1\nq1\tc\t1\n\nq1\tz\t0\n")
    qrels = read_qrels(path)
    assert (qrels[0].query_id, qrels[0].doc_id, qrels[0].relevance) == ("q1", "b", 1)
    assert len(qrels) == 3
    assert evaluate(RUN, path)["nDCG@10"] == pytest.approx(NDCG)


def test_beir_header_with_more_columns(tmp_path):
    """A BEIR qrels file with a column of notes after the three: the header is a header (not a TREC line whose
    grade is 'note'), the extra column is ignored, and a row must still have the header's width."""
    path = tmp_path / "notes.tsv"
    path.write_text("query-id\tcorpus-id\tscore\tnote\nq1\tb\t1\tgood\nq1\tc\t1\t\n")
    assert evaluate(RUN, path)["nDCG@10"] == pytest.approx(NDCG)
    path.write_text("query-id\tcorpus-id\tscore\tnote\nq1\tb\t1\n")
    with pytest.raises(InputError, match=r"notes\.tsv:2: 3 fields \(expected query-id, corpus-id, score separated by "
                                         r"tabs \(and the header's 1 more\)\)"):
        read_qrels(path)


def test_trec_qrels_file_and_unjudged_queries(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 b 1\nq1 0 c 1\nq2 0 x 2\n")
    run = results([("q1", "a", 3.0), ("q1", "b", 2.0), ("q1", "c", 1.0), ("q9", "a", 1.0)])
    out = evaluate(run, str(path), measures=["nDCG@10"], per_query=True)
    # q9 has no qrels: not judged; q2 has qrels but no results: scores 0.
    assert out["judged_queries"] == 1
    assert out["nDCG@10"] == pytest.approx(NDCG / 2)
    assert out["per_query"]["q1"]["nDCG@10"] == pytest.approx(NDCG)
    assert "q9" not in out["per_query"]


@pytest.mark.parametrize(
    "name, content, match",
    [
        ("q.tsv", "query-id\tcorpus-id\tscore\nq1\tb\tx\n", r"q\.tsv:2: relevance 'x'"),
        ("q.tsv", "query-id\tcorpus-id\tscore\nq1\tb\n", r"q\.tsv:2: 2 fields"),
        ("q.tsv", "q1 0 b 1\nq1 0 c\n", r"q\.tsv:2: 3 fields"),
        ("q.tsv", "q1 b 1\n", r"q\.tsv:1: cannot detect qrels format"),
        ("q.tsv", "\n\n", r"q\.tsv.*no judgements"),
        ("q.tsv", "query-id\tcorpus-id\tscore\n", r"q\.tsv.*no judgements"),
        # CSV qrels: a header naming the columns
        ("q.csv", "query_id,doc_id\nq1,b\n", r"q\.csv:1: header \['query_id', 'doc_id'\] has no grade column"),
        ("q.csv", "qid,query_id,doc_id,score\nq1,q1,b,1\n", r"q\.csv:1: .* has more than one query column"),
        ("q.csv", "query_id,doc_id,score\nq1,b\n", r"q\.csv:2: 2 comma-separated fields, header has 3"),
        ("q.csv", "query_id,doc_id,score\nq1,b,1.5\n", r"q\.csv:2: relevance '1.5' is not an integer"),
        ("q.csv", "query_id,doc_id,score\nq1,b,1\nq1,b,2\n",
         r"q\.csv:3: document 'b' of query 'q1' is judged 1 on line 2"),
        ("q.csv", 'query_id,doc_id,score\n"q1,b,1\n', r"q\.csv:2: a quoted field opened in the row starting on line 2"),
        ("q.csv", "query_id,doc_id,score\n", r"q\.csv.*no judgements"),
        ("q.csv", "", r"q\.csv.*qrels file is empty"),
    ],
)
def test_qrels_errors(tmp_path, name, content, match):
    (tmp_path / name).write_text(content)
    with pytest.raises(InputError, match=match):
        read_qrels(tmp_path / name)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(judgements=st.dictionaries(
    st.tuples(st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=6),
              st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=6)),
    st.integers(-2, 3), min_size=1, max_size=12),
       pandas_names=st.booleans(), gz=st.booleans())
def test_csv_qrels_read_as_the_beir_tsv(tmp_path, judgements, pandas_names, gz):
    """A CSV written by Python's csv module (ids with commas, quotes or other characters CSV quotes) reads as
    the same judgements as BEIR's TSV of the same data; an index column before them is ignored."""
    import csv
    import gzip
    import io

    judgements = {(q.strip(), d.strip()): g for (q, d), g in judgements.items() if q.strip() and d.strip()
                  and "\t" not in q + d}
    assume(judgements)
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(["", "query_id", "doc_id", "relevance"] if pandas_names else ["query-id", "corpus-id", "score"])
    for i, ((q, d), g) in enumerate(judgements.items()):
        w.writerow([i, q, d, g] if pandas_names else [q, d, f"{g}.0" if i % 2 else g])
    path = tmp_path / ("q.csv.gz" if gz else "q.csv")
    data = buf.getvalue().encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    tsv = tmp_path / "q.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for (q, d), g in judgements.items()))
    assert read_qrels(path) == read_qrels(tsv)


@pytest.mark.parametrize("header, row", [
    ("query_id\tdoc_id\trelevance", lambda i, q, d, g: f"{q}\t{d}\t{g}"),
    ("query_id\tdoc_id\trelevance\tnote", lambda i, q, d, g: f"{q}\t{d}\t{g}\tseen"),   # four: not TREC
    ("idx\tquery_id\tdoc_id\trelevance", lambda i, q, d, g: f"{i}\t{q}\t{d}\t{g}"),
    ("\tquery_id\tdoc_id\trelevance", lambda i, q, d, g: f"{i}\t{q}\t{d}\t{g}.0"),   # pandas, index column
    ("corpus-id\tquery-id\tscore", lambda i, q, d, g: f"{d}\t{q}\t{g}"),              # columns by their names
])
def test_a_tab_separated_header_names_the_qrels_columns_as_a_csv_header_does(tmp_path, header, row):
    """A .tsv with query_id / doc_id / relevance (what pandas writes with sep="\t") reads as the BEIR file of the
    same judgements; the same names were taken in a .csv and refused in a .tsv (an outside review)."""
    judged = [("q1", "d1", 2), ("q1", "d2", 0), ("q 2", "d,3", 1)]
    path = tmp_path / "named.tsv"
    path.write_text(header + "\n" + "".join(row(i, q, d, g) + "\n" for i, (q, d, g) in enumerate(judged)))
    beir = tmp_path / "beir.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in judged))
    assert read_qrels(path) == read_qrels(beir)


def test_named_qrels_given_as_results_are_told_apart(tmp_path):
    """A named-header qrels file whose grade column says "relevance" is recognised as qrels where RESULTS belong
    (the arguments swapped); a results-like "score" column is not claimed."""
    from itlr_gpu.evaluate import looks_like_qrels

    path = tmp_path / "named.tsv"
    path.write_text("query_id\tdoc_id\trelevance\nq1\td1\t1\nq1\td2\t0\n")
    assert looks_like_qrels(path)
    path.write_text("query_id\tdoc_id\tscore\nq1\td1\t1\n")
    assert not looks_like_qrels(path)
    path.write_text("query_id\tdoc_id\trelevance\nq1\td1\t0.5\n")
    assert not looks_like_qrels(path)


def test_a_tab_separated_header_without_a_grade_column_is_one_error(tmp_path):
    path = tmp_path / "named.tsv"
    path.write_text("query_id\tdoc_id\n" + "q1\td1\n")
    with pytest.raises(InputError, match=r"named.tsv:1: header .* has no grade column"):
        read_qrels(path)
    path.write_text("query_id\tqid\tdoc_id\trelevance\n" + "q1\tq1\td1\t1\n")   # four columns: no TREC line
    with pytest.raises(InputError, match=r"has more than one query column"):
        read_qrels(path)
    path.write_text("query_id\tdoc_id\tscore\trank\n" + "q1\td1\t3\t1\n")
    with pytest.raises(InputError, match=r"a results table \(its header has a rank column\), not qrels"):
        read_qrels(path)
    path.write_text("query_id\tdoc_id\tscore\n" + "q1\td1\t0.8731\n")
    with pytest.raises(InputError, match=r"named.tsv:2: relevance '0.8731' is not an integer .*a results file\?"):
        read_qrels(path)
    path.write_text("query_id\tdoc_id\trelevance\nq1\td1\n")
    with pytest.raises(InputError, match=r"named.tsv:2: 2 tab-separated fields, header has 3"):
        read_qrels(path)


def test_qrels_folder_points_at_the_file(tmp_path):
    (tmp_path / "qrels").mkdir()
    with pytest.raises(InputError, match=r"is a folder \(expected a BEIR .tsv, TREC qrels, .csv or .arrow / .parquet qrels file \(in a "
                                         r"BEIR folder: qrels/test.tsv\)\)"):
        read_qrels(tmp_path)


def test_qrels_missing_file(tmp_path):
    with pytest.raises(InputError, match=r"nope\.tsv.*not found"):
        read_qrels(tmp_path / "nope.tsv")


def test_unknown_measure():
    qrels = [ir_measures.Qrel("q1", "b", 1)]
    with pytest.raises(InputError, match="unknown measure 'bogus@3'"):
        evaluate(RUN, qrels, measures=["nDCG@10", "bogus@3"])
    with pytest.raises(InputError, match="unknown measure"):
        evaluate(RUN, qrels, measures=["nDCG@x"])
    with pytest.raises(InputError, match="no measures"):
        evaluate(RUN, qrels, measures=[])
    # a name that differs only in case is spelled as the library spells it
    with pytest.raises(InputError, match=r"unknown measure 'ndcg@10' \(did you mean 'nDCG@10'\?\)"):
        evaluate(RUN, qrels, measures=["ndcg@10"])
    # every unknown name at once; trec_eval's names spelled as ir_measures spells them
    with pytest.raises(InputError, match=r"unknown measures 'map' \(did you mean 'AP'\?\), 'ndcg_cut.10' \(did you "
                                         r"mean 'nDCG@10'\?\), 'P_5' \(did you mean 'P@5'\?\), 'nDCG@x' \(the cutoff "
                                         r"after @ is a positive integer\)"):
        evaluate(RUN, qrels, measures=["nDCG@10", "map", "ndcg_cut.10", "P_5", "nDCG@x"])
    with pytest.raises(InputError, match=r"did you mean 'P\(rel=2\)@5'\?"):
        evaluate(RUN, qrels, measures=["p(rel=2)@5"])
    with pytest.raises(InputError, match="unknown measure 'ndcg@x'") as e:   # no suggestion that is no measure
        evaluate(RUN, qrels, measures=["ndcg@x"])
    assert "did you mean" not in str(e.value)


def test_a_cutoff_deeper_than_the_run_is_named():
    assert shallow_measures(RUN, ["nDCG@3", "R@100", "AP", "P@4"]) == [("R@100", 100, 3), ("P@4", 4, 3)]
    assert shallow_measures(RUN, ["nDCG@3"]) == []


def test_bad_results_and_mismatched_ids():
    qrels = [ir_measures.Qrel("q1", "b", 1)]
    for unanswered in ("zero", "skip"):   # an empty run is a mistake upstream, not a score of 0
        with pytest.raises(InputError, match="the results hold no rows"):
            evaluate(RESULT_SCHEMA.empty_table(), qrels, unanswered=unanswered)
    with pytest.raises(InputError, match=r"lacks column\(s\) \['score'\]"):
        evaluate(pa.table({"query_id": ["q1"], "doc_id": ["a"]}), qrels)
    with pytest.raises(InputError, match="null score at row 1"):
        evaluate(pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, None]}), qrels)
    with pytest.raises(InputError, match="none of the 1 result queries"):
        evaluate(results([("1", "a", 1.0)]), qrels)


def test_trec_run_results_and_swapped_arguments(tmp_path, capsys):
    from itlr_gpu.cli import main
    from itlr_gpu.io import is_trec_run, read_trec_run

    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tb\t1\nq1\tc\t1\n")
    run = tmp_path / "bm25.run"
    run.write_text("q1 Q0 a 1 3.5 bm25\nq1\tQ0\tb\t2\t2.25\tbm25\nq1 Q0 c 3 1 bm25\n")
    table = read_trec_run(run)
    assert table.column_names == ["query_id", "rank", "doc_id", "score"]
    assert table.column("score").to_pylist() == [3.5, 2.25, 1.0]
    headerless = tmp_path / "run.tsv"
    headerless.write_text(run.read_text().replace(" Q0 ", " 0 "))   # some tools write 0 for Q0
    assert is_trec_run(run) and is_trec_run(headerless) and not is_trec_run(qrels)
    for path in (run, headerless):
        assert main(["eval", str(path), str(qrels), "--measures", "nDCG@10"]) == 0
        assert capsys.readouterr().out.split("\n")[0] == f"nDCG@10\t{NDCG:.4f}"
    # RESULTS and QRELS swapped: said either way round
    assert main(["eval", str(qrels), str(run)]) == 1
    assert "holds qrels, not results (itlr eval takes RESULTS first, then QRELS)" in capsys.readouterr().err
    # results headed as BEIR qrels over whole-number scores, no rank: qrels' shape, so swapped arguments are
    # told by the other file; where both have qrels' shape the order given stands, with a warning
    whole = tmp_path / "whole.tsv"
    whole.write_text("query-id\tcorpus-id\tscore\nq1\tc\t12\nq1\tb\t7\nq1\ta\t3\n")
    assert main(["eval", str(whole), str(qrels), "--measures", "nDCG@10"]) == 0
    captured = capsys.readouterr()
    assert captured.out.split("\n")[0] == "nDCG@10\t1.0000"
    assert f"{whole} looks like qrels (whole-number scores in qrels' columns), as {qrels} does" in captured.err
    assert main(["eval", str(qrels), str(whole)]) == 0   # undecidable: read as given
    capsys.readouterr()
    assert main(["eval", str(qrels), str(qrels)]) == 1
    assert "qrels.tsv: is given as both RESULTS and QRELS" in capsys.readouterr().err
    assert main(["eval", str(qrels), str(tmp_path / "missing.tsv")]) == 1
    assert "missing.tsv" in capsys.readouterr().err
    trec = tmp_path / "qrels.trec"   # TREC qrels are never a run, whatever QRELS looks like
    trec.write_text("q1 0 b 1\nq1 0 c 1\n")
    assert main(["eval", str(trec), str(qrels)]) == 1
    err = capsys.readouterr().err
    assert "qrels.trec: holds qrels, not results" in err and "warning" not in err
    arrow = tmp_path / "r.arrow"
    from itlr_gpu.io import write_table

    write_table(RUN, arrow)
    assert main(["eval", str(qrels), str(arrow)]) == 1
    assert main(["eval", str(arrow), str(arrow)]) == 1
    assert "a results table (it has a rank column), not qrels (itlr eval takes RESULTS first" in capsys.readouterr().err
    # a .tsv / .csv with a header, Parquet with qid/docid: what itlr rerank reads as candidates is a run here too
    (tmp_path / "hdr.tsv").write_text("query_id\tdoc_id\tscore\nq1\ta\t1\n")
    (tmp_path / "hdr.csv").write_text("qid,docid,score\nq1,a,1\n")
    pq.write_table(pa.table({"qid": ["q1"], "docid": ["a"], "score": [1.0]}), tmp_path / "aliases.parquet")
    for name in ("hdr.tsv", "hdr.csv", "aliases.parquet"):
        assert main(["eval", str(tmp_path / name), str(qrels)]) == 0, name
        assert "judged_queries\t1" in capsys.readouterr().out
    # MS MARCO's headerless qid<TAB>pid<TAB>rank: named as data without a header, not as a header's problem
    (tmp_path / "msmarco.tsv").write_text("1\t10608397\t1\n1\t1\t2\n")
    assert main(["eval", str(tmp_path / "msmarco.tsv"), str(qrels)]) == 1
    assert "the first line holds values, not column names (['1', '10608397', '1'])" in capsys.readouterr().err
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a one 3.5 bm25\n")
    with pytest.raises(InputError, match=r"bad\.run:1: rank 'one'"):
        read_trec_run(bad)


@pytest.mark.parametrize("name", ["nDCG(foo=1)@10", "NERR10@10", "INST(T=1)", "alpha_nDCG@10"])
def test_a_measure_no_provider_computes_is_one_error_before_any_file(name):
    from itlr_gpu.evaluate import parse_measures

    with pytest.raises(InputError, match="not computed by the installed evaluation providers: " + re.escape(repr(name))):
        parse_measures([name])


def test_measure_parameters_may_hold_commas():
    from itlr_gpu.cli_common import measure_list

    assert measure_list("nDCG(gains={0:0,1:5})@10, R@100") == ["nDCG(gains={0:0,1:5})@10", "R@100"]


def test_a_beir_headed_file_of_scores_is_results_not_qrels(tmp_path):
    from itlr_gpu.evaluate import looks_like_qrels

    results, qrels = tmp_path / "res.tsv", tmp_path / "qrels.tsv"
    results.write_text("query-id\tcorpus-id\tscore\nq1\td1\t0.354\nq1\td2\t0.2\n")
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td3\t0\n")
    assert not looks_like_qrels(results) and looks_like_qrels(qrels)
    # more columns after BEIR's three: the grade is still the third (as read_qrels reads it), and a rank column
    # is a result's, whatever its scores (itlr rerank reads such a file as candidates)
    results.write_text("query-id\tcorpus-id\tscore\trank\nq1\td1\t0.83\t1\nq1\td2\t0.51\t2\n")
    assert not looks_like_qrels(results)
    results.write_text("query-id\tcorpus-id\tscore\trank\nq1\td1\t12\t1\nq1\td2\t7\t2\n")
    assert not looks_like_qrels(results)
    qrels.write_text("query-id\tcorpus-id\tscore\tnote\nq1\td1\t1\t0.5\n")
    assert looks_like_qrels(qrels)
    qrels.write_text("query-id corpus-id score\nq1 d1 1\n")   # spaces, as some exports write it
    assert looks_like_qrels(qrels)
    results.write_text("query-id\tcorpus-id\tscore\trank\nq1\td1\t1\t1\n")
    with pytest.raises(InputError, match="a results table .its header has a rank column., not qrels"):
        read_qrels(results)


@given(st.data())
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_values_are_those_of_the_ids_themselves(data):
    """The providers see numbered ids (gdeval takes numeric query ids only): every measure, per query too, equals
    ir_measures on the ids as they are, ties broken by doc id included (scores drawn from few values, more than
    nine documents, so that numbering out of order would show)."""
    docs = [data.draw(st.text("abcXYZ-_.09", min_size=1, max_size=6)) for _ in range(14)]
    docs = sorted(set(docs))
    run, qrels = [], []
    for q in ("PLAIN-1", "q 2", "03"):
        picked = data.draw(st.lists(st.sampled_from(docs), min_size=1, max_size=len(docs), unique=True))
        run += [ir_measures.ScoredDoc(q, d, data.draw(st.sampled_from([0.25, 0.5, 1.0]))) for d in picked]
        qrels += [ir_measures.Qrel(q, d, data.draw(st.integers(0, 2))) for d in data.draw(st.sets(st.sampled_from(docs)))]
    assume(qrels)
    table = pa.Table.from_pylist([{"query_id": r.query_id, "doc_id": r.doc_id, "score": r.score} for r in run])
    names = ["nDCG@10", "P@5", "AP", "RR", "R@100"]
    out = evaluate(table, qrels, measures=names, per_query=True)
    want = ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in names], qrels, run)
    assert {n: out[n] for n in names} == pytest.approx({n: want[ir_measures.parse_measure(n)] for n in names})
    per = {}
    for m in ir_measures.iter_calc([ir_measures.parse_measure(n) for n in names], qrels, run):
        per.setdefault(m.query_id, {})[str(m.measure)] = m.value
    assert set(out["per_query"]) == set(per)
    for q, values in per.items():
        assert out["per_query"][q] == pytest.approx(values)


def test_gdeval_measures_take_any_query_ids():
    """ERR@10 (gdeval, a Perl script that refuses non-numeric query ids) on BEIR-style ids: computed."""
    run = results([("PLAIN-1", "MED-10", 3.0), ("PLAIN-1", "MED-2", 2.0), ("PLAIN-2", "MED-2", 1.0)])
    qrels = [ir_measures.Qrel("PLAIN-1", "MED-2", 2), ir_measures.Qrel("PLAIN-2", "MED-2", 1)]
    out = evaluate(run, qrels, measures=["ERR@10"], per_query=True)
    numeric = ir_measures.calc_aggregate([ir_measures.ERR @ 10], [ir_measures.Qrel("1", "b", 2), ir_measures.Qrel("2", "b", 1)],
                                         [ir_measures.ScoredDoc("1", "a", 3.0), ir_measures.ScoredDoc("1", "b", 2.0),
                                          ir_measures.ScoredDoc("2", "b", 1.0)])
    assert out["ERR@10"] == pytest.approx(numeric[ir_measures.ERR @ 10]) and 0 < out["ERR@10"] < 1
    assert set(out["per_query"]) == {"PLAIN-1", "PLAIN-2"}


@pytest.mark.parametrize("line, match", [
    ("q1 Q0 a 1 1_000 bm25\n", r"score '1_000'"),
    ("q1 Q0 a 1_0 3.5 bm25\n", r"rank '1_0'"),
    ("q1 Q0 a \u0661 3.5 bm25\n", "rank '\u0661'"),          # an Arabic-Indic one: Python's int() takes it
    ("q1 Q0 a 1 \uff13.5 bm25\n", "score '\uff13.5'"),       # a full-width three
])
def test_run_numbers_are_plain_ascii_numbers(tmp_path, line, match):
    from itlr_gpu.io import read_trec_run

    path = tmp_path / "r.run"
    path.write_text(line, encoding="utf-8")
    with pytest.raises(InputError, match=match):
        read_trec_run(path)


@pytest.mark.parametrize("grade", ["1_0", "\u0662", "+1_0.0"])
def test_qrels_grades_are_plain_ascii_numbers(tmp_path, grade):
    path = tmp_path / "q.tsv"
    path.write_text(f"query-id\tcorpus-id\tscore\nq1\tb\t{grade}\n", encoding="utf-8")
    with pytest.raises(InputError, match="is not an integer"):
        read_qrels(path)
    path.write_text("query-id\tcorpus-id\tscore\nq1\tb\t+2\nq1\tc\t1.0\n", encoding="utf-8")
    assert [q.relevance for q in read_qrels(path)] == [2, 1]


def test_eval_cli_json_holds_the_means_and_each_querys_values(tmp_path, capsys):
    from itlr_gpu.cli import main
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 a 1 2.0 x\nq1 Q0 b 2 1.0 x\nq2 Q0 c 1 1.0 x\n")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tb\t1\nq2\tc\t1\n")
    out = tmp_path / "eval.json"
    assert main(["eval", str(run), str(tmp_path / "qrels.tsv"), "--measures", "RR,P@1", "--json", str(out)]) == 0
    import json
    report = json.loads(out.read_text())
    assert report["per_query"] == {"q1": {"RR": 0.5, "P@1": 0.0}, "q2": {"RR": 1.0, "P@1": 1.0}}
    assert report["means"]["RR"] == pytest.approx(0.75) and report["means"]["judged_queries"] == 2
    assert report["ties"] == "trec_eval"
    # a bad --json path is refused before any work, nothing written
    capsys.readouterr()
    assert main(["eval", str(run), str(tmp_path / "qrels.tsv"), "--json", str(tmp_path / "eval.txt")]) != 0
    assert "(expected .json)" in capsys.readouterr().err and not (tmp_path / "eval.txt").exists()


@pytest.mark.parametrize("kind", ["arrow", "parquet", "tsv"])
def test_an_empty_result_table_with_a_score_column_is_one_error_line(tmp_path, capsys, kind):
    # a results table filtered down to nothing (or a TSV of its header alone): eval and rerank say it has no rows
    # (the finite-score check read an empty column's null all() as a failure and indexed row -1)
    import pyarrow.ipc as ipc

    from itlr_gpu.cli import main

    path = tmp_path / f"empty.{kind}"
    if kind == "arrow":
        with ipc.new_file(path, RESULT_SCHEMA) as w:
            w.write_table(RESULT_SCHEMA.empty_table())
    elif kind == "parquet":
        pq.write_table(RESULT_SCHEMA.empty_table(), path)
    else:
        path.write_text("query_id\tdoc_id\tscore\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    capsys.readouterr()
    assert main(["eval", str(path), str(qrels)]) == 1
    err = capsys.readouterr().err
    assert err == f"itlr: error: {path}: no rows (expected at least one (query_id, doc_id) row)\n"


def test_identical_ids_are_counted_and_left_out_as_beir_does():
    """Queries drawn from the corpus (ArguAna) find themselves first; BEIR's evaluation leaves those results out.
    Left out, the run is judged as if the self-hit were never there (oracle: the same run without those rows)."""
    run = results([("q1", "q1", 3.0), ("q1", "b", 2.0), ("q1", "c", 1.0), ("q2", "x", 2.0), ("q2", "q2", 1.0)])
    qrels = [ir_measures.Qrel("q1", "b", 1), ir_measures.Qrel("q2", "x", 1), ir_measures.Qrel("q1", "q1", 0)]
    kept = evaluate(run, qrels, measures=("nDCG@10", "P@1"))
    left = evaluate(run, qrels, measures=("nDCG@10", "P@1"), ignore_identical_ids=True)
    oracle = evaluate(results([("q1", "b", 2.0), ("q1", "c", 1.0), ("q2", "x", 2.0)]), qrels,
                      measures=("nDCG@10", "P@1"))
    assert kept["identical_ids"] == left["identical_ids"] == 2 and oracle["identical_ids"] == 0
    assert kept["P@1"] == 0.5 and left["P@1"] == oracle["P@1"] == 1.0
    assert left["nDCG@10"] == pytest.approx(oracle["nDCG@10"]) and kept["nDCG@10"] < left["nDCG@10"]


def test_qrels_as_an_arrow_or_parquet_table(tmp_path, capsys):
    """BEIR's qrels exported as a table (query-id, corpus-id, score) are read as the TSV is (oracle: the same
    judgements as text); a results table or a query file given as qrels is said to be one."""
    import pyarrow.parquet as pq

    from itlr_gpu.cli import main
    from itlr_gpu.io import write_table

    text = tmp_path / "qrels.tsv"
    text.write_text("query-id\tcorpus-id\tscore\nq1\tb\t1\nq1\tc\t2\n")
    pq.write_table(pa.table({"query-id": ["q1", "q1"], "corpus-id": [" b", "c"], "score": [1.0, 2.0]}),
                   tmp_path / "qrels.parquet")
    write_table(pa.table({"qid": pa.array([1, 1]), "docid": ["b", "c"], "relevance": pa.array([1, 2], pa.int8())}),
                tmp_path / "qrels.arrow")
    want = read_qrels(text)
    assert sorted(read_qrels(tmp_path / "qrels.parquet")) == sorted(want)
    assert sorted(read_qrels(tmp_path / "qrels.arrow")) == [ir_measures.Qrel("1", q.doc_id, q.relevance)
                                                            for q in sorted(want)]
    pq.write_table(pa.table({"query_id": ["q1"], "doc_id": ["b"], "score": [0.25]}), tmp_path / "scores.parquet")
    with pytest.raises(InputError, match=r"grade 0.25 at row 0 is not a whole number \(a results table's scores\?"):
        read_qrels(tmp_path / "scores.parquet")
    pq.write_table(pa.table({"query_id": ["q1"], "text": ["coffee"]}), tmp_path / "queries.parquet")
    with pytest.raises(InputError, match=r"a query file \(a text or expr column, no grade\), not qrels"):
        read_qrels(tmp_path / "queries.parquet")
    assert main(["eval", str(tmp_path / "scores.parquet"), str(tmp_path / "qrels.parquet"), "--measures", "P@1"]) == 0
    assert capsys.readouterr().out.startswith("P@1\t1.0000")   # the table's qrels judge b relevant


def test_result_ids_are_read_as_qrels_ids_are(tmp_path, capsys):
    """A TSV's ids lose white space at their ends on both sides (the id 'd1 ' of both files matches); an empty
    id is refused, not judged as a document."""
    from itlr_gpu.cli import main

    (tmp_path / "q.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1 \t1\nq1\td2\t1\n")
    (tmp_path / "r.tsv").write_text("query_id\tdoc_id\tscore\nq1\td1 \t2\nq1\td2\t1\n")
    assert main(["eval", str(tmp_path / "r.tsv"), str(tmp_path / "q.tsv"), "--measures", "P@1,RR"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["P@1\t1.0000", "RR\t1.0000"]
    (tmp_path / "e.jsonl").write_text('{"query_id": "q1", "doc_id": " ", "score": 1}\n')
    assert main(["eval", str(tmp_path / "e.jsonl"), str(tmp_path / "q.tsv")]) == 1
    assert "e.jsonl: empty doc_id at row 0" in capsys.readouterr().err


def test_eval_json_survives_a_reader_that_stops_early_and_ties_rank_needs_a_rank(tmp_path):
    import subprocess
    import sys

    (tmp_path / "q.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    (tmp_path / "r.tsv").write_text("query_id\tdoc_id\tscore\nq1\td1\t1.0\nq1\td2\t1.0\n")
    proc = subprocess.run(f"{sys.executable} -m itlr_gpu eval r.tsv q.tsv --json e.json --ties rank | head -c0",
                          shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert json.loads((tmp_path / "e.json").read_text())["means"]["judged_queries"] == 1
    assert "--ties rank, but r.tsv has no rank column: its ties are broken as trec_eval breaks them" in proc.stderr


def test_a_pipe_is_said_to_be_one(tmp_path, capsys):
    import os

    from itlr_gpu.cli import main

    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    (tmp_path / "q.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    assert main(["eval", str(fifo), str(tmp_path / "q.tsv")]) == 1
    assert "run.fifo: is a pipe or device, not a regular results file" in capsys.readouterr().err
    (tmp_path / "r.tsv").write_text("query_id\tdoc_id\tscore\nq1\td1\t0.5\n")
    assert main(["eval", str(tmp_path / "r.tsv"), str(fifo)]) == 1
    assert "run.fifo: is a pipe or device, not a regular qrels file" in capsys.readouterr().err
    assert main(["translate", str(fifo), "-o", str(tmp_path / "t.arrow")]) == 1   # every reader says so
    assert "run.fifo: is a pipe or device, not a regular query file" in capsys.readouterr().err


def test_measure_names_every_bad_one_at_once_and_keeps_the_name_asked():
    with pytest.raises(InputError) as info:
        evaluate(RUN, [ir_measures.Qrel("q1", "b", 1)], measures=["ndcg@10", "foo", "nDCG@0"])
    assert "'ndcg@10' (did you mean 'nDCG@10'?)" in info.value.what and "'foo'" in info.value.what
    assert "'nDCG@0' (its cutoff 0" in info.value.what and info.value.what.startswith("unknown or invalid measures")
    with pytest.raises(InputError) as info:
        evaluate(RUN, [ir_measures.Qrel("q1", "b", 1)], measures=["SDCG@10"])
    assert "<object" not in info.value.what and "max_rel=(not given)" in info.value.what
    out = evaluate(RUN, [ir_measures.Qrel("q1", "b", 1)], measures=["NumRelRet", "P@2"], per_query=True)
    assert out["NumRelRet"] == 1.0 and set(out["per_query"]["q1"]) == {"NumRelRet", "P@2"}


def test_the_rank_warning_says_how_ties_are_broken(tmp_path):
    import warnings

    run = results([("q1", "c", 1.0), ("q1", "b", 2.0), ("q1", "a", 2.0)])
    for ties, tail in (("rank", "the rank breaking ties only"), ("trec_eval", "ties broken as trec_eval breaks them")):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            evaluate(run, [ir_measures.Qrel("q1", "b", 1)], ties=ties)
        assert [str(w.message).endswith(tail) for w in caught if "rank column" in str(w.message)] == [True]


def test_decimal_scores_are_numbers(tmp_path):
    import decimal

    import pyarrow.parquet as pq

    from itlr_gpu.io import read_run

    pq.write_table(pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", "b"],
                             "score": pa.array([decimal.Decimal("0.50"), decimal.Decimal("0.25")], pa.decimal128(5, 2))}),
                   tmp_path / "r.parquet")
    table = read_run(tmp_path / "r.parquet", "results")
    assert table.column("score").to_pylist() == [0.5, 0.25]
    assert evaluate(table, [ir_measures.Qrel("q1", "b", 1)], measures=["RR"])["RR"] == 0.5
