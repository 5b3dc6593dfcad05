"""One invalid query does not sink a batch: every invalid query is reported, --skip-invalid scores the rest."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from itlr_gpu import cli_common
from itlr_gpu.io import read_table

from hostile import HashEncoder, assert_clean_failure, build_index, run_cli, tree, write_queries

EXPRS = ("t0 AND NOT t1", "t2 OR (", "t4", "", "AND t5", "NOT t6 AND t7")
BAD = {"q1", "q3", "q4"}


@pytest.fixture(autouse=True)
def _no_model(monkeypatch):
    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())


def test_every_invalid_query_is_listed_and_nothing_is_written(tmp_path, capsys):
    index = build_index(tmp_path / "i")
    queries = write_queries(tmp_path / "q.jsonl", EXPRS)
    before = tree(tmp_path)
    rc, _, err = run_cli(["search", index, queries, "-o", tmp_path / "out.arrow"], capsys)
    assert_clean_failure(rc, err, codes=(2,))
    assert err.splitlines()[0].startswith("itlr: error: ")  # the error first, then the list
    listed = [line for line in err.splitlines() if line.startswith("  invalid query")]
    assert [line.split("'")[1] for line in listed] == ["q1", "q3", "q4"]
    assert "row 1" in listed[0] and "position" in listed[0] and "empty expr" in listed[1]
    assert "3 of 6 queries are invalid" in err and "--skip-invalid" in err
    assert tree(tmp_path) == before


def test_many_invalid_queries_are_counted_and_the_first_listed(tmp_path, capsys):
    index = build_index(tmp_path / "i")
    queries = write_queries(tmp_path / "q.jsonl", ["t1 AND"] * (cli_common.MAX_LISTED + 7) + ["t2"])
    rc, _, err = run_cli(["search", index, queries, "-o", tmp_path / "out.arrow"], capsys)
    assert_clean_failure(rc, err, codes=(2,))
    assert sum(line.startswith("  invalid query") for line in err.splitlines()) == cli_common.MAX_LISTED
    assert f"{cli_common.MAX_LISTED + 7} of {cli_common.MAX_LISTED + 8} queries are invalid" in err


def _expected(tmp_path, index, capsys):
    valid = [e for i, e in enumerate(EXPRS) if f"q{i}" not in BAD]
    ids = [f"q{i}" for i in range(len(EXPRS)) if f"q{i}" not in BAD]
    path = tmp_path / "valid.jsonl"
    with open(path, "w") as f:
        for qid, e in zip(ids, valid):
            f.write(json.dumps({"query_id": qid, "expr": e}) + "\n")
    assert run_cli(["search", index, path, "-o", tmp_path / "valid.arrow"], capsys)[0] == 0
    return read_table(tmp_path / "valid.arrow")


def test_skip_invalid_scores_the_rest_and_writes_the_errors_table(tmp_path, capsys):
    index = build_index(tmp_path / "i")
    queries = write_queries(tmp_path / "q.jsonl", EXPRS)
    want = _expected(tmp_path, index, capsys)
    rc, out, err = run_cli(["search", index, queries, "-o", tmp_path / "out.arrow", "--skip-invalid"], capsys)
    assert rc == 0, err
    assert "skipped 3 invalid queries" in err and "Traceback" not in err
    assert read_table(tmp_path / "out.arrow").equals(want)
    errors = read_table(tmp_path / "out.errors.arrow")
    assert errors.column_names == ["query_id", "row", "error"]
    assert errors.column("query_id").to_pylist() == ["q1", "q3", "q4"]
    assert errors.column("row").to_pylist() == [1, 3, 4]
    assert all(errors.column("error").to_pylist())


@pytest.mark.parametrize("name,errors_name", [("out.parquet", "out.errors.parquet"), ("out.trec", "out.errors.arrow"),
                                               ("out.run", "out.errors.arrow")])
def test_skip_invalid_beside_each_result_format(tmp_path, capsys, name, errors_name):
    """The errors table takes the result file's format where it is a table, Arrow beside a TREC run (which has no
    column for an error): --skip-invalid alone works with every -o the search writes."""
    index = build_index(tmp_path / "i")
    queries = write_queries(tmp_path / "q.jsonl", EXPRS)
    rc, _, err = run_cli(["search", index, queries, "-o", tmp_path / name, "--skip-invalid"], capsys)
    assert rc == 0, err
    assert (tmp_path / name).stat().st_size > 0
    assert read_table(tmp_path / errors_name).column("query_id").to_pylist() == ["q1", "q3", "q4"]


def test_skip_invalid_in_a_bulk_folder_keeps_it_a_dataset(tmp_path, capsys):
    index = build_index(tmp_path / "i")
    queries = write_queries(tmp_path / "q.jsonl", EXPRS)
    want = _expected(tmp_path, index, capsys)
    out = tmp_path / "bulk"
    rc, _, err = run_cli(["search", index, queries, "-o", out, "--batch-size", "2", "--skip-invalid"], capsys)
    assert rc == 0, err
    got = ds.dataset(out).to_table().sort_by([("query_id", "ascending"), ("rank", "ascending")])
    assert got.column("doc_id").to_pylist() == want.column("doc_id").to_pylist()
    assert read_table(out / "_errors.arrow").column("query_id").to_pylist() == ["q1", "q3", "q4"]


def test_skip_invalid_with_no_valid_query_is_an_error(tmp_path, capsys):
    index = build_index(tmp_path / "i")
    queries = write_queries(tmp_path / "q.jsonl", ["a AND", ""])
    before = tree(tmp_path)
    rc, _, err = run_cli(["search", index, queries, "-o", tmp_path / "out.arrow", "--skip-invalid"], capsys)
    assert_clean_failure(rc, err)
    assert "2 of 2 queries are invalid (listed below), the first" in err        # listed, not in a table
    assert "invalid query" in err and "--skip-invalid scores" not in err
    assert tree(tmp_path) == before


@pytest.mark.parametrize("out, argv, what", [
    ("out.arrow", ["--errors", "e.arrow"], "--errors only goes with --skip-invalid"),
    ("out.arrow", ["--skip-invalid", "--errors", "e.txt"], "e.txt"),
    ("out.arrow", ["--skip-invalid", "--errors", "out.arrow"], "would replace the results"),
    # a result folder is read as one dataset: an errors table there must be hidden from it
    ("res", ["--batch-size", "2", "--skip-invalid", "--errors", "res/errs.parquet"], "would be read as results"),
    ("res", ["--batch-size", "2", "--skip-invalid", "--errors", "res/sub/_e.arrow"], "would be read as results"),
])
def test_errors_option_misuse_is_a_usage_error(tmp_path, capsys, monkeypatch, out, argv, what):
    monkeypatch.chdir(tmp_path)
    index = build_index(tmp_path / "i")
    queries = write_queries(tmp_path / "q.jsonl", EXPRS)
    before = tree(tmp_path)
    rc, _, err = run_cli(["search", index, queries, "-o", out, *argv], capsys)
    assert_clean_failure(rc, err)
    assert what in err
    assert tree(tmp_path) == before


def test_a_long_query_of_whole_documents_is_accepted(tmp_path, capsys):
    """Query by document: an OR of three ~6,000-character texts (over the old 10,000-character limit)."""
    index = build_index(tmp_path / "i")
    doc = " ".join(f"word{i}" for i in range(1000))
    expr = " OR ".join(f'"{doc} {n}"' for n in range(3))
    assert len(expr) > 10_000
    queries = write_queries(tmp_path / "q.jsonl", [expr, "t1"])
    rc, _, err = run_cli(["search", index, queries, "-o", tmp_path / "out.arrow"], capsys)
    assert rc == 0, err
    assert read_table(tmp_path / "out.arrow").num_rows == 20


def test_a_missing_expr_is_named_so_and_points_at_the_rows_text(tmp_path, capsys):
    index = build_index(tmp_path / "i")
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query_id": "a", "expr": "cats AND NOT dogs", "text": "cats not dogs"}\n'
                       '{"query_id": "b", "text": "only a text"}\n{"query_id": "c", "expr": " ", "text": ""}\n')
    rc, _, err = run_cli(["search", index, queries, "-o", tmp_path / "out.arrow"], capsys)
    assert_clean_failure(rc, err, codes=(2,))
    listed = [line for line in err.splitlines() if line.startswith("  invalid query")]
    assert "no expr (null) (the row has a text: --field text" in listed[0]
    assert listed[1].endswith("empty expr")


def test_fallback_text_searches_a_bad_row_by_its_text(tmp_path, capsys):
    """A translator's error row (no expr, or one that does not parse) with a text: --fallback-text embeds the
    text whole, as a --field text search of that row would; a bad row without a text is still an error."""
    index = build_index(tmp_path / "i")
    rows = [{"query_id": "q0", "text": "alpha words", "expr": "t0 AND NOT t1"},
            {"query_id": "q1", "text": "beta words", "expr": None, "error": "prose"},
            {"query_id": "q2", "text": "gamma words", "expr": "t2 OR ("}]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    rc, _, err = run_cli(["search", index, queries, "-o", tmp_path / "strict.arrow"], capsys)
    assert rc == 2 and "--fallback-text searches a row that has a text by its text" in err
    for command in ("search", "rerank"):
        out = tmp_path / f"{command}.arrow"
        extra = [tmp_path / "cands.tsv"] if command == "rerank" else []
        if extra:
            extra[0].write_text("query_id\tdoc_id\n" + "".join(f"q{q}\td{d}\n" for q in range(3) for d in range(40)))
        rc, _, err = run_cli([command, index, queries, *extra, "-o", out, "--fallback-text", "-k", "5"], capsys)
        assert rc == 0, err
        assert "itlr: note: 2 queries of 3 with no valid expr are searched by their text (first 'q1', " in err
        got = read_table(out)
        texts = tmp_path / "texts.jsonl"
        texts.write_text("".join(json.dumps({"query_id": r["query_id"], "text": r["text"]}) + "\n" for r in rows))
        assert run_cli([command, index, texts, *extra, "-o", tmp_path / "t.arrow", "--field", "text", "-k", "5"],
                       capsys)[0] == 0
        base = read_table(tmp_path / "t.arrow")
        for qid in ("q1", "q2"):   # exactly the baseline's ranking for the rows searched by their text
            mine = got.filter(pa.compute.equal(got.column("query_id"), qid))
            want = base.filter(pa.compute.equal(base.column("query_id"), qid))
            assert mine.column("doc_id").to_pylist() == want.column("doc_id").to_pylist()
    rc, _, err = run_cli(["search", index, queries, "-o", tmp_path / "x.arrow", "--fallback-text", "--field", "text"],
                         capsys)
    assert rc == 2 and "--fallback-text only goes with expressions" in err


def test_whole_texts_read_line_breaks_tabs_and_control_characters_as_spaces(tmp_path, capsys):
    """A text embedded whole (--field text, --fallback-text, rerank, bench) with a line break, a tab or a C1 control
    character (a mis-decoded dash, as in one of ArguAna's BEIR queries) is searched as that text with spaces, as an
    expression reads it; one of control characters alone is an invalid row that --skip-invalid leaves out."""
    index = build_index(tmp_path / "i")
    messy = ["alpha\nwords", "beta\twords\r\n", "gamma \u0097 words", "delta\u2028words"]
    clean = ["alpha words", "beta words", "gamma   words", "delta words"]
    for name, texts in (("messy", messy), ("clean", clean)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps({"query_id": f"q{i}", "text": t}) + "\n"
                                                        for i, t in enumerate(texts)))
    cands = tmp_path / "cands.tsv"
    cands.write_text("query_id\tdoc_id\n" + "".join(f"q{q}\td{d}\n" for q in range(4) for d in range(40)))
    for command, extra in (("search", []), ("rerank", [cands]), ("bench", [])):
        got = {}
        for name in ("messy", "clean"):
            out = tmp_path / f"{command}-{name}.{'json' if command == 'bench' else 'arrow'}"
            argv = [command, index, tmp_path / f"{name}.jsonl", *extra]
            argv += (["--json", out, "--repeat", "1", "--min-time", "0", "--backends", "torch-cpu"] if command == "bench"
                     else ["-o", out])
            rc, _, err = run_cli(argv, capsys)
            assert rc == 0, err
            got[name] = None if command == "bench" else read_table(out)
        if command != "bench":   # the encoder saw the same texts: the same results
            assert got["messy"].equals(got["clean"])
    only = tmp_path / "only.jsonl"
    only.write_text(json.dumps({"query_id": "a", "text": "fine words"}) + "\n"
                    + json.dumps({"query_id": "b", "text": "\u0097\n\t"}) + "\n")
    rc, _, err = run_cli(["search", index, only, "-o", tmp_path / "only.arrow"], capsys)
    assert_clean_failure(rc, err, codes=(2,))
    assert "'b': text of control characters and spaces only" in err
    rc, _, err = run_cli(["search", index, only, "-o", tmp_path / "only.arrow", "--skip-invalid"], capsys)
    assert rc == 0, err
    assert read_table(tmp_path / "only.errors.arrow").column("query_id").to_pylist() == ["b"]


def test_whole_text_is_the_text_an_expression_would_read():
    from itlr_gpu.query import Term, canonical, parse
    from itlr_gpu.query.parser import whole_text

    for text in ("a\nb", "a\tb\r\nc", "x \u0097 y", "  padded\n", "plain text", "caf\u00e9 \u6771\u4eac"):
        got = whole_text(text)
        assert got.isprintable() and got == got.strip()
        assert parse(canonical(Term(got))) == Term(got)   # spells as an expression and reads back
