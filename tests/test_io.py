"""Tests for itlr_gpu.io: corpus/query/table readers and the atomic writer."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itlr_gpu import io
from itlr_gpu.errors import InputError

DOCS = [
    {"_id": "d1", "title": "Cats", "text": "Cats purr."},
    {"_id": "d2", "text": "Dogs bark."},
    {"_id": "d3", "title": "", "text": "Birds sing."},
]


def write_jsonl(path: Path, rows: list, gz: bool = False) -> Path:
    data = "".join(json.dumps(r) + "\n" for r in rows).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def corpus_table() -> pa.Table:
    return pa.table({"doc_id": ["d1", "d2", "d3"], "text": ["Cats purr.", "Dogs bark.", "Birds sing."],
                     "title": ["Cats", None, ""]})


def write_ipc(table: pa.Table, path: Path, stream: bool = False) -> Path:
    with pa.OSFile(str(path), "wb") as f:
        opener = pa.ipc.new_stream if stream else pa.ipc.new_file
        with opener(f, table.schema) as w:
            w.write_table(table)
    return path


def assert_expected_corpus(t: pa.Table) -> None:
    assert t.schema == pa.schema([("doc_id", pa.string()), ("text", pa.string()), ("title", pa.string())])
    assert t.column("doc_id").to_pylist() == ["d1", "d2", "d3"]
    assert t.column("title").to_pylist() == ["Cats", "", ""]
    assert io.document_texts(t) == ["Cats Cats purr.", "Dogs bark.", "Birds sing."]


# ------------------------------------------------------------------ corpus round trips


@pytest.mark.parametrize("gz", [False, True])
def test_corpus_beir_folder(tmp_path, gz):
    write_jsonl(tmp_path / ("corpus.jsonl.gz" if gz else "corpus.jsonl"), DOCS, gz=gz)
    assert_expected_corpus(io.read_corpus(tmp_path))


@pytest.mark.parametrize("name", ["c.jsonl", "c.jsonl.gz"])
def test_corpus_jsonl_files(tmp_path, name):
    path = write_jsonl(tmp_path / name, DOCS, gz=name.endswith(".gz"))
    assert_expected_corpus(io.read_corpus(path))


def test_corpus_parquet_and_arrow(tmp_path):
    table = corpus_table()
    pq.write_table(table, tmp_path / "c.parquet")
    assert_expected_corpus(io.read_corpus(tmp_path / "c.parquet"))
    assert_expected_corpus(io.read_corpus(write_ipc(table, tmp_path / "c.arrow")))
    assert_expected_corpus(io.read_corpus(write_ipc(table, tmp_path / "s.arrow", stream=True)))


def test_corpus_underscore_id_and_no_title(tmp_path):
    pq.write_table(pa.table({"_id": [1, 2], "text": ["a", "b"]}), tmp_path / "c.parquet")
    t = io.read_corpus(tmp_path / "c.parquet")
    assert t.column("doc_id").to_pylist() == ["1", "2"]
    assert t.column("title").to_pylist() == ["", ""]


def test_document_texts_without_title_column():
    assert io.document_texts(pa.table({"text": ["x", None]})) == ["x", ""]


# ------------------------------------------------------------------ corpus errors


def test_corpus_missing_path(tmp_path):
    with pytest.raises(InputError, match="not found") as e:
        io.read_corpus(tmp_path / "nope.jsonl")
    assert "nope.jsonl" in str(e.value)


def test_corpus_folder_without_corpus(tmp_path):
    with pytest.raises(InputError, match="corpus.jsonl"):
        io.read_corpus(tmp_path)


def test_corpus_unknown_extension(tmp_path):
    (tmp_path / "c.xlsx").write_text("a,b\n")
    with pytest.raises(InputError) as e:
        io.read_corpus(tmp_path / "c.xlsx")
    msg = str(e.value)
    assert "c.xlsx" in msg and ".csv" in msg and ".jsonl" in msg and ".parquet" in msg and ".arrow" in msg


def test_corpus_missing_columns(tmp_path):
    pq.write_table(pa.table({"id": ["a"], "body": ["x"]}), tmp_path / "c.parquet")
    with pytest.raises(InputError) as e:
        io.read_corpus(tmp_path / "c.parquet")
    assert "'doc_id'" in str(e.value) and "'text'" in str(e.value) and "c.parquet" in str(e.value)


def test_corpus_jsonl_missing_field(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"_id": "a", "text": "x"}, {"_id": "b"}])
    with pytest.raises(InputError, match=r"c\.jsonl:2.*text"):
        io.read_corpus(path)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_corpus_duplicate_ids(tmp_path, fmt):
    rows = [{"_id": "a", "text": "x"}, {"_id": "b", "text": "y"}, {"_id": "a", "text": "z"}]
    if fmt == "jsonl":
        path = write_jsonl(tmp_path / "c.jsonl", rows)
    else:
        path = tmp_path / "c.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path)
    with pytest.raises(InputError) as e:
        io.read_corpus(path)
    msg = str(e.value)
    assert "duplicate" in msg and "'a'" in msg and "row 2" in msg and path.name in msg


def test_corpus_null_and_empty_ids(tmp_path):
    pq.write_table(pa.table({"doc_id": ["a", None], "text": ["x", "y"]}), tmp_path / "n.parquet")
    with pytest.raises(InputError, match=r"n\.parquet.*null doc_id at row 1"):
        io.read_corpus(tmp_path / "n.parquet")
    pq.write_table(pa.table({"doc_id": ["a", "b", ""], "text": ["x", "y", "z"]}), tmp_path / "e.parquet")
    with pytest.raises(InputError, match=r"e\.parquet.*empty doc_id at row 2"):
        io.read_corpus(tmp_path / "e.parquet")
    path = write_jsonl(tmp_path / "c.jsonl", [{"_id": "a", "text": "x"}, {"_id": "", "text": "y"}])
    with pytest.raises(InputError, match=r"c\.jsonl:2: empty _id"):
        io.read_corpus(path)
    path = write_jsonl(tmp_path / "d.jsonl", [{"doc_id": None, "text": "x"}])
    with pytest.raises(InputError, match=r"d\.jsonl:1: null doc_id"):
        io.read_corpus(path)


def test_corpus_empty(tmp_path):
    (tmp_path / "c.jsonl").write_text("\n\n")
    with pytest.raises(InputError, match=r"c\.jsonl.*empty"):
        io.read_corpus(tmp_path / "c.jsonl")
    pq.write_table(pa.table({"doc_id": pa.array([], pa.string()), "text": pa.array([], pa.string())}),
                   tmp_path / "c.parquet")
    with pytest.raises(InputError, match=r"c\.parquet.*empty"):
        io.read_corpus(tmp_path / "c.parquet")


def test_corpus_malformed_json_line(tmp_path):
    (tmp_path / "c.jsonl").write_text('{"_id": "a", "text": "x"}\n{"_id": "b", "text": \n')
    with pytest.raises(InputError, match=r"c\.jsonl:2: malformed JSON"):
        io.read_corpus(tmp_path / "c.jsonl")
    (tmp_path / "d.jsonl").write_text('["not", "an", "object"]\n')
    with pytest.raises(InputError, match=r"d\.jsonl:1"):
        io.read_corpus(tmp_path / "d.jsonl")


def test_a_key_twice_in_one_object_is_an_error_not_the_last_value(tmp_path):
    """json.loads keeps the last of two values silently; a corpus row, a query or a manifest with a repeated key
    is a data error named by file and line (keys repeated in other objects of the file are fine)."""
    from itlr_gpu.validate import read_json_file

    (tmp_path / "c.jsonl").write_text('{"_id": "a", "text": "x"}\n{"_id": "b", "text": "y", "meta": {"k": 1, "k": 2}}\n')
    with pytest.raises(InputError, match=r"c\.jsonl:2: the key 'k' appears twice in one object"):
        io.read_corpus(tmp_path / "c.jsonl")
    (tmp_path / "q.jsonl").write_text('{"query_id": "q1", "text": "cats", "text": "dogs"}\n')
    with pytest.raises(InputError, match=r"q\.jsonl:1: the key 'text' appears twice"):
        io.read_queries(tmp_path / "q.jsonl")
    (tmp_path / "manifest.json").write_text('{"dim": 384, "count": 2, "dim": 768}')
    with pytest.raises(InputError, match=r"manifest\.json: the key 'dim' appears twice"):
        read_json_file(tmp_path / "manifest.json", "an index manifest")
    (tmp_path / "ok.jsonl").write_text('{"_id": "a", "text": "x", "m": {"text": 1}}\n{"_id": "b", "text": "y"}\n')
    assert io.read_corpus(tmp_path / "ok.jsonl").num_rows == 2


def test_corpus_corrupt_files(tmp_path):
    (tmp_path / "c.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match=r"c\.parquet.*Parquet"):
        io.read_corpus(tmp_path / "c.parquet")
    (tmp_path / "c.arrow").write_bytes(b"not arrow at all")
    with pytest.raises(InputError, match=r"c\.arrow.*Arrow"):
        io.read_corpus(tmp_path / "c.arrow")
    (tmp_path / "c.jsonl.gz").write_bytes(b"not gzip")
    with pytest.raises(InputError, match=r"c\.jsonl\.gz.*gzip"):
        io.read_corpus(tmp_path / "c.jsonl.gz")


# ------------------------------------------------------------------ queries


def test_queries_formats(tmp_path):
    rows = [{"_id": 1, "expr": "cat AND dog", "note": "x"}, {"_id": 2, "text": "birds"}]
    t = io.read_queries(write_jsonl(tmp_path / "q.jsonl", rows))
    assert t.column("query_id").to_pylist() == ["1", "2"]
    assert t.column("expr").to_pylist() == ["cat AND dog", None]
    assert "note" in t.column_names

    (tmp_path / "q.tsv").write_text('query_id\texpr\textra\nq1\t"cat" AND NOT dog\tk\nq2\tbird\tk\n')
    t = io.read_queries(tmp_path / "q.tsv")
    assert t.column("expr").to_pylist() == ['"cat" AND NOT dog', "bird"]
    assert t.column("extra").to_pylist() == ["k", "k"]

    table = pa.table({"query_id": pa.array([7, 8], pa.int64()), "text": ["a", "b"]})
    pq.write_table(table, tmp_path / "q.parquet")
    assert io.read_queries(tmp_path / "q.parquet").column("query_id").type == pa.string()
    t = io.read_queries(write_ipc(table, tmp_path / "q.arrow"))
    assert t.column("query_id").to_pylist() == ["7", "8"]


def test_queries_missing_columns(tmp_path):
    (tmp_path / "q.tsv").write_text("q1\tcat\n")  # no header row
    with pytest.raises(InputError) as e:
        io.read_queries(tmp_path / "q.tsv")
    assert "q.tsv" in str(e.value) and "query_id" in str(e.value) and "header" in str(e.value)
    write_jsonl(tmp_path / "q.jsonl", [{"query_id": "a", "body": "x"}])
    with pytest.raises(InputError, match=r"q\.jsonl.*'expr' or 'text'"):
        io.read_queries(tmp_path / "q.jsonl")


def test_queries_duplicates_null_empty(tmp_path):
    write_jsonl(tmp_path / "q.jsonl", [{"query_id": "a", "text": "x"}, {"query_id": "a", "text": "y"}])
    with pytest.raises(InputError, match=r"q\.jsonl.*duplicate query_id 'a' at row 1"):
        io.read_queries(tmp_path / "q.jsonl")
    write_jsonl(tmp_path / "n.jsonl", [{"query_id": "a", "text": "x"}, {"text": "y"}])
    with pytest.raises(InputError, match=r"n\.jsonl.*null query_id at row 1"):
        io.read_queries(tmp_path / "n.jsonl")
    (tmp_path / "e.tsv").write_text("")
    with pytest.raises(InputError, match=r"e\.tsv.*empty"):
        io.read_queries(tmp_path / "e.tsv")
    (tmp_path / "h.tsv").write_text("query_id\ttext\n")
    with pytest.raises(InputError, match=r"h\.tsv.*empty"):
        io.read_queries(tmp_path / "h.tsv")


def test_queries_tsv_bad_row(tmp_path):
    (tmp_path / "q.tsv").write_text("query_id\ttext\nq1\tcat\nq2\n")
    with pytest.raises(InputError, match=r"q\.tsv:3"):
        io.read_queries(tmp_path / "q.tsv")


# ------------------------------------------------------------------ generic tables


@pytest.mark.parametrize("ext", [".arrow", ".parquet"])
def test_write_read_table_round_trip(tmp_path, ext):
    table = pa.table({"query_id": ["q"], "rank": pa.array([1], pa.int32()), "doc_id": ["d"],
                      "score": pa.array([0.5], pa.float32())}, schema=io.RESULT_SCHEMA)
    path = tmp_path / "sub" / "dir" / f"r{ext}"
    io.write_table(table, path)
    assert io.read_table(path).equals(table)
    assert sorted(os.listdir(path.parent)) == [path.name]


def test_read_table_stream_and_jsonl(tmp_path):
    table = pa.table({"a": [1, 2]})
    assert io.read_table(write_ipc(table, tmp_path / "s.arrow", stream=True)).equals(table)
    write_jsonl(tmp_path / "t.jsonl", [{"a": 1}, {"a": 2, "b": "x"}])
    t = io.read_table(tmp_path / "t.jsonl")
    assert t.column("a").to_pylist() == [1, 2] and t.column("b").to_pylist() == [None, "x"]


def test_read_table_errors(tmp_path):
    with pytest.raises(InputError, match="not found"):
        io.read_table(tmp_path / "x.arrow")
    (tmp_path / "x.csv").write_text("")
    with pytest.raises(InputError, match=r"x\.csv.*\.arrow"):
        io.read_table(tmp_path / "x.csv")


def test_write_table_unknown_extension_writes_nothing(tmp_path):
    with pytest.raises(InputError, match=r"out\.csv.*\.arrow, \.parquet"):
        io.write_table(pa.table({"a": [1]}), tmp_path / "new" / "out.csv")
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("ext", [".arrow", ".parquet"])
@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_write_table_failure_keeps_old_file(tmp_path, monkeypatch, ext, exc):
    path = tmp_path / f"r{ext}"
    old = pa.table({"a": [1, 2, 3]})
    io.write_table(old, path)
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise exc("disk on fire")

    monkeypatch.setattr(io.pq, "write_table", broken)
    monkeypatch.setattr(io.pa.ipc, "new_file", broken)
    with pytest.raises(exc):
        io.write_table(pa.table({"a": [9]}), path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == [path.name]


def test_write_table_failure_in_rename(tmp_path, monkeypatch):
    path = tmp_path / "r.arrow"

    def broken(*args, **kwargs):
        raise OSError("rename failed")

    monkeypatch.setattr(io.os, "replace", broken)
    from itlr_gpu.output import OutputError

    with pytest.raises(OutputError, match="rename failed"):  # one user-facing line, the temporary removed
        io.write_table(pa.table({"a": [1]}), path)
    assert os.listdir(tmp_path) == []


def test_ambiguous_corpus_sources_are_refused(tmp_path):
    import gzip

    from itlr_gpu.io import read_corpus, read_queries

    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text('{"_id": "a", "text": "alpha"}\n')
    with gzip.open(beir / "corpus.jsonl.gz", "wt") as f:
        f.write('{"_id": "z", "text": "zeta"}\n')
    with pytest.raises(InputError, match="both corpus.jsonl and corpus.jsonl.gz"):
        read_corpus(beir)
    both = tmp_path / "both.jsonl"
    both.write_text('{"_id": "a", "doc_id": "b", "text": "x"}\n')
    with pytest.raises(InputError, match=r"both\.jsonl:1: both 'doc_id' and '_id' fields"):
        read_corpus(both)
    pq.write_table(pa.table({"_id": ["a"], "doc_id": ["b"], "text": ["x"]}), tmp_path / "both.parquet")
    with pytest.raises(InputError, match="both 'doc_id' and '_id' columns"):
        read_corpus(tmp_path / "both.parquet")
    (tmp_path / "q.jsonl").write_text('{"_id": "1", "query_id": "2", "text": "x"}\n')
    with pytest.raises(InputError, match="both 'query_id' and '_id'"):
        read_queries(tmp_path / "q.jsonl")


def test_a_field_of_mixed_json_types_names_the_first_odd_row(tmp_path):
    from itlr_gpu.io import read_queries

    (tmp_path / "q.jsonl").write_text('{"query_id": "a", "text": "x"}\n{"query_id": "b", "text": null}\n'
                                      '{"query_id": "c", "text": 5}\n')
    with pytest.raises(InputError, match="field 'text' mixes incompatible value types: string values, then number "
                                         "at row 2"):
        read_queries(tmp_path / "q.jsonl")



def test_fields_the_job_does_not_read_may_mix_json_types(tmp_path):
    """A BEIR queries.jsonl's free-form metadata (an object of strings in one row, of numbers in the next), a list
    of mixed items or a number beyond 64 bits in an unread field: kept as JSON text, the file is not refused; in a
    field that is read the same value is still an error, and so is an id written as a float."""
    from itlr_gpu.io import read_queries, read_run

    (tmp_path / "q.jsonl").write_text('{"_id": "q1", "text": "cats", "metadata": {}}\n'
                                      '{"_id": "q2", "text": "dogs", "metadata": {"a": "b"}}\n'
                                      '{"_id": 3, "text": "birds", "metadata": {"a": 1}, "tags": [1, "x"], '
                                      '"big": 123456789012345678901234567890}\n')
    t = read_queries(tmp_path / "q.jsonl")
    assert t.column("query_id").to_pylist() == ["q1", "q2", "3"]
    assert t.column("text").to_pylist() == ["cats", "dogs", "birds"]
    assert [json.loads(x) for x in t.column("metadata").to_pylist()] == [{}, {"a": "b"}, {"a": 1}]
    assert t.column("tags").to_pylist() == [None, None, '[1, "x"]']
    assert t.column("big").to_pylist() == [None, None, "123456789012345678901234567890"]
    (tmp_path / "r.jsonl").write_text('{"query_id": "q1", "doc_id": "d1", "score": 1.0, "note": "x"}\n'
                                      '{"query_id": "q1", "doc_id": "d2", "score": 0.5, "note": 2}\n')
    assert read_run(tmp_path / "r.jsonl").column("doc_id").to_pylist() == ["d1", "d2"]
    (tmp_path / "bad.jsonl").write_text('{"query_id": "q1", "doc_id": "d1", "score": 1.0}\n'
                                        '{"query_id": "q1", "doc_id": "d2", "score": "high"}\n')
    with pytest.raises(InputError, match="field 'score' mixes incompatible value types"):
        read_run(tmp_path / "bad.jsonl")
    for ids in ('1, 2.5', '1, 1.0'):
        a, b = ids.split(", ")
        (tmp_path / "f.jsonl").write_text(f'{{"_id": {a}, "text": "x"}}\n{{"_id": {b}, "text": "y"}}\n')
        with pytest.raises(InputError, match=rf"field '_id' at row 1 is a JSON float \({b}\) \(expected ids as "
                                             r"strings or integers\)"):
            read_queries(tmp_path / "f.jsonl")


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"),
                                   OSError("576000 requested and 8128 written")])   # numpy's short write
def test_a_write_that_fails_without_a_file_name_names_the_output(tmp_path, error):
    """The disk filling up inside pyarrow or numpy raises an OSError with no file name: the error names the
    output, and nothing is left behind."""
    from itlr_gpu.output import OutputError, atomic_dir, atomic_file

    target = tmp_path / "r.arrow"
    with pytest.raises(OutputError) as info:
        with atomic_file(target) as f:
            f.write(b"partial")
            raise error
    assert info.value.where == str(target) and "cannot write the file" in info.value.what
    assert str(error.strerror or error) in info.value.what
    with pytest.raises(OutputError, match="cannot write the folder"):
        with atomic_dir(tmp_path / "idx"):
            raise error
    assert os.listdir(tmp_path) == []


def test_a_folder_filled_by_another_job_meanwhile_is_left_as_it_wrote_it(tmp_path):
    """Two jobs writing one new index folder: the second to finish does not replace what the first wrote, and says
    why (not "folder is not empty", which read as a contradiction of "an existing index is replaced")."""
    from itlr_gpu.output import OutputError, atomic_dir, check_output_file

    target = tmp_path / "idx"
    with pytest.raises(OutputError) as info:
        with atomic_dir(target) as tmp:
            (tmp / "mine").write_text("second job")
            target.mkdir()
            (target / "theirs").write_text("first job")
    assert "filled while this job ran" in info.value.what and info.value.where == str(target)
    assert sorted(os.listdir(tmp_path)) == ["idx"] and os.listdir(target) == ["theirs"]
    with pytest.raises(OutputError, match="folder is not empty"):   # not empty from the start: before any work
        with atomic_dir(target):
            raise AssertionError("the work ran")
    with pytest.raises(OutputError) as info:   # an output type refused names its option, as other -o errors do
        check_output_file(tmp_path / "run.csv")
    assert info.value.where == f"-o {tmp_path / 'run.csv'}" and "unknown output type .csv" in info.value.what


@pytest.mark.parametrize("after_rename", [1, 2])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_during_a_folders_swap_leaves_the_new_folder_in_place(tmp_path, monkeypatch, after_rename, sig):
    """Replacing a folder renames the old one aside, then the new one in: a Ctrl-C or SIGTERM arriving after either
    rename waits until both are done (after the first it left no folder at the path; after the second the rollback
    failed with 'Directory not empty' and said the folder was not in place), then interrupts as usual."""
    import signal

    from itlr_gpu import output
    from itlr_gpu.output import Terminated, atomic_dir, handle_signals

    target = tmp_path / "idx"
    target.mkdir()
    (target / "old").write_text("old")
    real, calls = os.replace, []

    def replace(a, b):
        real(a, b)
        calls.append((a, b))
        if len(calls) == after_rename:
            os.kill(os.getpid(), getattr(signal, sig))

    monkeypatch.setattr(output.os, "replace", replace)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)   # (a pytest-xdist worker ignores it)
    try:
        with pytest.raises(KeyboardInterrupt if sig == "SIGINT" else Terminated):
            with handle_signals(), atomic_dir(target, replace=True) as tmp:
                (tmp / "new").write_text("new")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(calls) == 2
    assert os.listdir(target) == ["new"] and os.listdir(tmp_path) == ["idx"]


def test_an_output_where_no_file_can_be_made_is_refused_before_any_work(tmp_path):
    """access() says yes to root on /proc; creating a probe tells the truth."""
    from itlr_gpu.output import OutputError, check_output_file, check_output_folder

    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here")
    refused = "cannot create entries in /proc|folder /proc is not writable"   # as root, or not
    with pytest.raises(OutputError, match=refused):
        check_output_file("/proc/x.arrow")
    with pytest.raises(OutputError, match=refused):
        check_output_folder("/proc/new/idx")
    check_output_file(tmp_path / "ok.arrow")
    check_output_folder(tmp_path / "a" / "b")
    assert os.listdir(tmp_path) == []                    # the probes are gone


def test_a_tsv_corpus_with_a_header(tmp_path):
    path = tmp_path / "c.tsv"
    path.write_text("_id\ttitle\ttext\nd1\tCats\tcats are nice\nd2\t\tdogs bark\n")
    table = io.read_corpus(path)
    assert table.to_pylist() == [{"doc_id": "d1", "text": "cats are nice", "title": "Cats"},
                                 {"doc_id": "d2", "text": "dogs bark", "title": ""}]
    (tmp_path / "nohdr.tsv").write_text("1\tcats are nice\n2\tdogs\n")
    with pytest.raises(InputError, match=r"missing column\(s\) 'doc_id', 'text'; found \['1', 'cats are nice'\]"):
        io.read_corpus(tmp_path / "nohdr.tsv")
    (tmp_path / "empty.tsv").write_text("")
    with pytest.raises(InputError, match="corpus is empty"):
        io.read_corpus(tmp_path / "empty.tsv")


def test_gzipped_tsv_corpus_and_queries_read_as_plain(tmp_path):
    corpus = "_id\ttitle\ttext\nd1\tCats\tcats are nice\nd2\t\tdogs bark\n"
    queries = "query_id\texpr\nq1\t\"cats\" AND NOT \"dogs\"\n"
    for name, text in (("c.tsv", corpus), ("q.tsv", queries)):
        (tmp_path / name).write_text(text)
        with gzip.open(tmp_path / (name + ".gz"), "wt", encoding="utf-8") as f:
            f.write(text)
    assert io.read_corpus(tmp_path / "c.tsv.gz").equals(io.read_corpus(tmp_path / "c.tsv"))
    assert io.read_queries(tmp_path / "q.tsv.gz").equals(io.read_queries(tmp_path / "q.tsv"))
    (tmp_path / "bad.tsv.gz").write_bytes(gzip.compress(corpus.encode())[:-12])
    with pytest.raises(InputError, match=r"corrupt or truncated gzip data"):
        io.read_corpus(tmp_path / "bad.tsv.gz")
    (tmp_path / "dup.tsv.gz").write_bytes(gzip.compress(b"query_id\texpr\texpr\nq1\ta\tb\n"))
    with pytest.raises(InputError, match=r"header repeats column\(s\) \['expr'\]"):
        io.read_queries(tmp_path / "dup.tsv.gz")


@pytest.mark.parametrize("name", ["q.csv", "q.tsv"])
def test_utf16_delimited_files_are_refused_with_a_hint(tmp_path, name):
    """A spreadsheet's "Unicode text" export is UTF-16: with its byte-order mark it is not UTF-8 (the error
    says what it is); without one, every other byte is NUL (refused: no UTF-8 text has NUL bytes)."""
    sep = "," if name.endswith(".csv") else "\t"
    text = f"query_id{sep}expr\nq1{sep}cats\n"
    (tmp_path / name).write_bytes(text.encode("utf-16"))
    with pytest.raises(InputError, match=rf"{name}:1: invalid UTF-8 .*this file starts with a UTF-16 byte-order "
                                         r"mark: save it as UTF-8"):
        io.read_queries(tmp_path / name)
    (tmp_path / name).write_bytes(text.encode("utf-16-le"))
    with pytest.raises(InputError, match=rf"{name}:1: NUL byte in a field \(expected UTF-8 text without NUL"):
        io.read_queries(tmp_path / name)


@pytest.mark.parametrize("name", ["q.tsv", "q.csv", "q.tsv.gz"])
@pytest.mark.parametrize("bad_line", [2, 4, 401, 5000])
def test_invalid_utf8_in_a_delimited_file_names_its_own_line(tmp_path, name, bad_line):
    """The decoder reads a buffer ahead of the row reader: the error still names the line that holds the byte."""
    sep = "," if ".csv" in name else "\t"
    lines = [f"query_id{sep}expr"] + [f"q{i}{sep}topic number {i} about grain" for i in range(1, 6000)]
    data = "\n".join(lines).encode()
    target = lines[bad_line - 1].encode()
    data = data.replace(target, target + b" caf\xe9", 1)
    (tmp_path / name).write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    with pytest.raises(InputError, match=rf"{name}:{bad_line}: invalid UTF-8 "):
        io.read_queries(tmp_path / name)


def test_a_corrupt_parquet_file_is_one_error_line(tmp_path):
    """pyarrow's OSError for a Parquet file that is not one has a line break in its message."""
    (tmp_path / "junk.parquet").write_bytes(b"PAR1" + bytes(100) + b"PAR1")
    with pytest.raises(InputError) as e:
        io.read_queries(tmp_path / "junk.parquet")
    assert "\n" not in str(e.value) and "junk.parquet: cannot read" in str(e.value)


def test_csv_corpus_and_queries_follow_csv_quoting(tmp_path):
    import csv

    rows = [{"_id": "d1", "title": "Sugar", "text": 'He said "hello", then\nleft\tearly'}, {"_id": "d2", "title": "",
                                                                                           "text": "plain"}]
    with open(tmp_path / "c.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=["_id", "title", "text"])
        w.writeheader()
        w.writerows(rows)
    table = io.read_corpus(tmp_path / "c.csv")
    assert table.column("text").to_pylist() == [rows[0]["text"], "plain"]
    with gzip.open(tmp_path / "c.csv.gz", "wt", encoding="utf-8", newline="") as f:
        f.write((tmp_path / "c.csv").read_text(encoding="utf-8"))
    assert io.read_corpus(tmp_path / "c.csv.gz").equals(table)
    (tmp_path / "q.csv").write_text('query_id,expr\nq1,"""cats"" AND NOT ""dogs"""\n', encoding="utf-8")
    assert io.read_queries(tmp_path / "q.csv").column("expr").to_pylist() == ['"cats" AND NOT "dogs"']
    # an unclosed quote runs to the end of the file: the error names the line its row starts on
    (tmp_path / "bad.csv").write_text('query_id,expr\nq1,"open quote\nq2,a\nq3,b\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad\.csv:2: a quoted field opened in the row starting on line 2 is not "
                                         r"closed by the end of the file"):
        io.read_queries(tmp_path / "bad.csv")
    (tmp_path / "stray.csv").write_text('query_id,expr\nq1,"a"b\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"stray\.csv:2: unreadable CSV"):
        io.read_queries(tmp_path / "stray.csv")
    # a TSV keeps quotes literally, and a row that does not fit its header says why
    (tmp_path / "q.tsv").write_text('query_id\texpr\nq1\t"a\tb"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"3 tab-separated fields, header has 2.*read without quoting"):
        io.read_queries(tmp_path / "q.tsv")


def test_a_tsv_written_with_csv_quoting_is_named_as_such(tmp_path):
    """pandas' to_csv(sep='\\t') and csv.writer quote a field with quotes in it: read without quoting, that gave
    "empty term at position 0"; the reader says what it is and what to do."""
    import csv

    from itlr_gpu.io import read_queries

    path = tmp_path / "q.tsv"
    with open(path, "w", newline="") as f:
        csv.writer(f, delimiter="\t").writerows([["query_id", "expr"], ["1", '"grain" AND NOT "wheat"']])
    with pytest.raises(InputError) as info:
        read_queries(path)
    assert info.value.where == f"{path}:2" and "is CSV-quoted" in info.value.what and ".csv" in info.value.expected
    path.write_text('query_id\texpr\n1\t"grain" AND NOT "wheat"\n2\t"maize"\n')   # as typed: read as it stands
    assert read_queries(path).column("expr").to_pylist() == ['"grain" AND NOT "wheat"', '"maize"']
    csv_path = tmp_path / "q.csv"   # the same content named .csv is read with CSV quoting
    with open(csv_path, "w", newline="") as f:
        csv.writer(f).writerows([["query_id", "expr"], ["1", '"grain" AND NOT "wheat"']])
    assert read_queries(csv_path).column("expr").to_pylist() == ['"grain" AND NOT "wheat"']


def test_json_lines_output_round_trips_and_refuses_what_json_cannot_hold(tmp_path):
    """write_table(.jsonl): one object per row, nulls and non-ASCII kept (oracle: the table itself); a NaN, which
    JSON has no form for, is one clear error and nothing is left behind."""
    import json

    from itlr_gpu.io import write_table

    table = pa.table({"query_id": ["q1", "q2"], "expr": ['"café" AND NOT "thé"', None], "n": [1, 2]})
    write_table(table, tmp_path / "t.jsonl")
    lines = (tmp_path / "t.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == table.to_pylist() and "café" in lines[0]
    with pytest.raises(InputError, match="cannot be written as JSON"):
        write_table(pa.table({"score": [float("nan")]}), tmp_path / "nan.jsonl")
    assert sorted(os.listdir(tmp_path)) == ["t.jsonl"]


def test_a_trec_run_output_refuses_ids_its_fields_cannot_hold(tmp_path):
    from itlr_gpu.io import RESULT_SCHEMA, write_table

    ok = pa.Table.from_pylist([{"query_id": "q1", "rank": 1, "doc_id": "d1", "score": 0.1234567}],
                              schema=RESULT_SCHEMA)
    write_table(ok, tmp_path / "r.run")
    assert (tmp_path / "r.run").read_text() == "q1 Q0 d1 1 0.123456702 itlr\n"   # float32 to 9 digits: exact
    spaced = pa.Table.from_pylist([{"query_id": "q1", "rank": 1, "doc_id": "d 1", "score": 0.5}], schema=RESULT_SCHEMA)
    with pytest.raises(InputError, match="doc id 'd 1' holds white space"):
        write_table(spaced, tmp_path / "s.trec")
    with pytest.raises(InputError, match="needs columns query_id, rank, doc_id, score"):
        write_table(pa.table({"query_id": ["q1"]}), tmp_path / "t.trec")
    assert sorted(os.listdir(tmp_path)) == ["r.run"]


def test_the_trec_run_white_space_class_is_pythons():
    """The run writer's RE2 class for white space is exactly what str.isspace() (and so str.split(), as run readers
    split a line) takes for it, over every code point (oracle: str.isspace)."""
    import pyarrow.compute as pc

    from itlr_gpu.io import _SPACE_CHARS

    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    found = pc.match_substring_regex(pa.array(chars), _SPACE_CHARS).to_pylist()
    assert [c for c, hit in zip(chars, found) if hit != c.isspace()] == []


def test_ids_that_differ_only_in_unicode_normalisation_are_named_in_a_warning(tmp_path):
    """"café" composed (U+00E9) and decomposed (e + U+0301) print alike: a corpus or query file holding both is
    read (they are different ids) with one warning naming the pair and their rows; one spelling alone, or ASCII
    ids, warn of nothing."""
    import warnings

    io._TWINS_WARNED.clear()   # (one warning per pair and process)
    path = tmp_path / "corpus.jsonl"
    rows = [{"_id": "caf\u00e9", "text": "a"}, {"_id": "x", "text": "b"}, {"_id": "cafe\u0301", "text": "c"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.warns(UserWarning, match=r"doc_ids 'caf\u00e9' \(row 0\) and 'cafe\u0301' \(row 2\) differ only in "
                                         r"Unicode normalisation"):
        table = io.read_corpus(path)
    assert table.column("doc_id").to_pylist() == ["caf\u00e9", "x", "cafe\u0301"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows[:2]), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        io.read_corpus(path)
        io.check_ids(pa.array(["a", "b"]), "ids")
        io.check_ids(pa.array(["caf\u00e9", "cafe\u0301"]), "again")   # a pair already named is not named again


def test_a_gzipped_file_without_gz_and_a_double_extension_are_named(tmp_path):
    """A gzipped JSON-lines file named .jsonl is said to be gzipped (it read as invalid UTF-8 alone); an unknown
    type names both extensions of x.sgm.gz, not '.gz'."""
    import gzip

    from itlr_gpu.io import read_queries

    plain = tmp_path / "q.jsonl"
    plain.write_bytes(gzip.compress(b'{"query_id": "a", "text": "x"}\n'))
    with pytest.raises(InputError, match=r"this file is gzip-compressed: name it q\.jsonl\.gz"):
        read_queries(plain)
    (tmp_path / "reut2-000.sgm.gz").write_bytes(gzip.compress(b"<REUTERS>"))
    with pytest.raises(InputError, match=r"unknown query file type '\.sgm\.gz'"):
        read_queries(tmp_path / "reut2-000.sgm.gz")
