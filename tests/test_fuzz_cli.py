"""The fuzzing harness: hostile files for every reader and hostile option values for every subcommand, run
through the real entry point ``itlr_gpu.cli.main(argv)`` in-process.

Every input is certainly wrong (see tests/fuzz_strategies.py), and every run must fail cleanly: exit 1 or 2,
exactly one ``itlr: error:`` line on stderr, no traceback, and nothing new (or changed) in the output folder.
No model is loaded: the index is built from random embeddings and queries are embedded by a hash encoder.

Quick by default (FUZZ_EXAMPLES per test); ``pytest tests/test_fuzz_cli.py --hypothesis-profile=long`` runs the
long campaign.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import itlr_gpu.cli_common as cli_common
import fuzz_strategies as fz
from hostile import DIM, HashEncoder, assert_clean_failure, build_index, run_cli, tree, write_queries

LONG = settings.default.max_examples > 1000
FUZZ_EXAMPLES = settings.default.max_examples if LONG else 30
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=not LONG,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.filter_too_much, HealthCheck.data_too_large])


@pytest.fixture(autouse=True)
def fake_encoder(monkeypatch):
    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    idx = build_index(root)
    q = write_queries(root / "q.jsonl")
    qrels = root / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    res = root / "r.arrow"
    table = pa.table({"query_id": ["q1"], "rank": pa.array([1], pa.int32()), "doc_id": ["d1"],
                      "score": pa.array([0.5], pa.float32())})
    with pa.OSFile(str(res), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
        w.write_table(table)
    return {"root": root, "idx": idx, "q": q, "qrels": qrels, "results": res}


def check(argv_of, files: dict[str, bytes], capsys, codes=(1, 2)) -> None:
    """Write ``files`` into a fresh input folder, run ``argv_of(input folder, output folder)`` and demand a
    clean failure that leaves the output folder as it was."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp, "in"), Path(tmp, "out")
        src.mkdir()
        out.mkdir()
        for name, data in files.items():
            (src / name).write_bytes(data)
        before = tree(out)
        rc, _, err = run_cli(argv_of(src, out), capsys)
        assert_clean_failure(rc, err, codes)
        assert tree(out) == before, f"the output folder changed: {tree(out)}"


# --------------------------------------------------------------------------- hostile files


@FUZZ
@given(qf=fz.query_files(), how=st.sampled_from(["file", "bulk", "rerank"]))
def test_fuzz_query_files(base, capsys, qf, how):
    name, data = qf
    idx, q = base["idx"], base["q"]
    if how == "file":
        check(lambda i, o: ["search", idx, i / name, "-o", o / "r.arrow", "-k", "3"], {name: data}, capsys)
    elif how == "bulk":
        check(lambda i, o: ["search", idx, i / name, "-o", o / "bulk", "--batch-size", "2"], {name: data}, capsys)
    else:
        check(lambda i, o: ["rerank", idx, i / name, q, "-o", o / "r.arrow"], {name: data}, capsys)


@FUZZ
@given(qf=fz.query_files(translate=True))
def test_fuzz_translate_inputs(capsys, qf):
    name, data = qf
    check(lambda i, o: ["translate", i / name, "-o", o / "t.arrow"], {name: data}, capsys)


@FUZZ
@given(cf=fz.corpus_files(), beir=st.booleans())
def test_fuzz_corpus_files(capsys, cf, beir):
    name, data = cf
    if beir and name.startswith("c.jsonl"):  # a BEIR folder holding the corpus
        name = "corpus" + name[1:]
        check(lambda i, o: ["index", i, "-o", o / "ix"], {name: data}, capsys)
    else:
        check(lambda i, o: ["index", i / name, "-o", o / "ix"], {name: data}, capsys)


@FUZZ
@given(npy=fz.npy_files(DIM), ids=fz.id_files, which=st.sampled_from(["npy", "ids"]))
def test_fuzz_embedding_imports(capsys, npy, ids, which):
    good_npy = _npy(np.ones((3, DIM), np.float32))
    files = {"e.npy": npy, "ids.txt": b"a\nb\nc\n"} if which == "npy" else {"e.npy": good_npy, "ids.txt": ids}
    check(lambda i, o: ["index", "--embeddings", i / "e.npy", "--ids", i / "ids.txt", "-o", o / "ix"], files, capsys)


def _npy(arr: np.ndarray) -> bytes:
    import io

    sink = io.BytesIO()
    np.save(sink, arr)
    return sink.getvalue()


@FUZZ
@given(damage=fz.manifest_damage(), other=st.sampled_from(["manifest", "npy", "ids", "missing"]),
       offset=st.integers(0, 10**6), cmd=st.sampled_from(["search", "shard", "rerank"]))
def test_fuzz_index_folders(base, capsys, damage, other, offset, cmd):
    """A damaged index folder: a bad manifest field, garbled matrix or ids bytes, or a missing file."""
    with tempfile.TemporaryDirectory() as tmp:
        idx = Path(tmp, "idx")
        shutil.copytree(base["idx"], idx)
        if other == "manifest":
            field, value = damage
            if field:
                m = json.loads((idx / "manifest.json").read_text())
                m[field] = value
                (idx / "manifest.json").write_text(json.dumps(m))
            else:
                (idx / "manifest.json").write_bytes(value)
        elif other in ("npy", "ids"):
            p = idx / ("embeddings.npy" if other == "npy" else "doc_ids.arrow")
            data = bytearray(p.read_bytes())
            at = offset % (len(data) - 8)
            new = bytes((b + 1) % 256 for b in data[at:at + 8])  # certainly different bytes
            data[at:at + 8] = new
            p.write_bytes(bytes(data))
        else:
            (idx / ["manifest.json", "embeddings.npy", "doc_ids.arrow"][offset % 3]).unlink()
        q = base["q"]
        argv = {"search": lambda i, o: ["search", idx, q, "-o", o / "r.arrow"],
                "shard": lambda i, o: ["shard", idx, "-o", o / "sh", "--shard-rows", "7"],
                "rerank": lambda i, o: ["rerank", idx, q, q, "-o", o / "r.arrow"]}[cmd]
        check(argv, {}, capsys)


@FUZZ
@given(qrels=fz.qrels_files(), table=fz.bad_result_tables, which=st.sampled_from(["qrels", "results"]),
       fmt=st.sampled_from(["arrow", "parquet", "jsonl"]))
def test_fuzz_eval_inputs(base, capsys, qrels, table, which, fmt):
    if which == "qrels":
        check(lambda i, o: ["eval", base["results"], i / "qrels.tsv"], {"qrels.tsv": qrels}, capsys)
        return
    t = pa.table(table)
    if fmt == "arrow":
        data = fz._ipc_bytes(t)
    elif fmt == "parquet":
        data = fz._parquet_bytes(t)
    else:  # JSON lines of the same table (NaN/Infinity are no JSON: written as such, and refused; JSON has no
        # binary type: a binary id becomes an object, which no id may be)
        data = "".join(json.dumps({k: {"bytes": v.decode()} if isinstance(v, bytes) else v for k, v in row.items()})
                       + "\n"
                       for row in t.to_pylist()).encode()
    check(lambda i, o: ["eval", i / f"r.{fmt}", base["qrels"]], {f"r.{fmt}": data}, capsys)


@FUZZ
@given(job=st.one_of(st.binary(max_size=60), st.just(b"[]"), st.just(b'{"format": "itlr-bulk/2"}'),
                     st.dictionaries(fz.words, fz.non_strings, max_size=3).map(lambda d: json.dumps(d).encode()),
                     st.integers(33, 2000).map(lambda n: ("[" * n + "]" * n).encode())))
def test_fuzz_bulk_job_files(base, capsys, job):
    """A bulk folder whose job file is not this job's: refused, nothing written."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "bulk")
        out.mkdir()
        (out / "_itlr_job.json").write_bytes(job)
        before = tree(out)
        rc, _, err = run_cli(["search", base["idx"], base["q"], "-o", out, "--batch-size", "2"], capsys)
        assert_clean_failure(rc, err, (1,))
        assert tree(out) == before


# --------------------------------------------------------------------------- hostile option values

P = fz.bad_positive_ints
OPTIONS = {
    "search": [("-k", P), ("--ops", fz.bad_ops), ("--chunk-size", P), ("--memory-cap", fz.bad_sizes),
               ("--batch-size", P), ("--shard-rows", P), ("--workers", P), ("--hybrid", fz.bad_unit_floats),
               ("--conj-hybrid", fz.bad_unit_floats), ("--field", fz.bad_choice(("auto", "expr", "text"))),
               ("--backend", fz.bad_choice(("auto", "torch", "triton"))),
               ("--device", fz.bad_choice(("auto", "cpu", "cuda"))),
               ("--calibration", fz.bad_choice(("none", "equalize", "zscore", "minmax", "percentile"))),
               ("--part-format", fz.bad_choice(("parquet", "arrow")))],
    "rerank": [("-k", P), ("--ops", fz.bad_ops), ("--field", fz.bad_choice(("auto", "expr", "text"))),
               ("--device", fz.bad_choice(("auto", "cpu", "cuda")))],
    "index": [("--batch-size", P), ("--dtype", fz.bad_choice(("float16", "float32"))),
              ("--device", fz.bad_devices)],
    "eval": [("--measures", fz.bad_measures)],
    "translate": [("--batch-size", P), ("--max-model-len", P), ("--gpu-memory-utilization", fz.bad_fractions),
                  ("--tensor-parallel-size", P), ("--translator", fz.bad_choice(("rules", "vllm"))),
                  ("--mode", fz.bad_choice(("logical", "rewrite")))],
    "shard": [("--shard-rows", P)],
    "demo": [("--docs", P), ("--per-template", P), ("--seed", fz.bad_non_negative_ints)],
}


@st.composite
def hostile_options(draw):
    cmd = draw(st.sampled_from(sorted(OPTIONS)))
    flag, values = draw(st.sampled_from(OPTIONS[cmd]))
    return cmd, flag, draw(values)


@FUZZ
@given(opt=hostile_options(), bulk=st.booleans())
def test_fuzz_option_values(base, capsys, opt, bulk):
    """A bad value for one option of a command that would otherwise run: a usage error (exit 2), before
    any file is read or written."""
    cmd, flag, value = opt
    idx, q, root = base["idx"], base["q"], base["root"]
    valid = {
        "search": lambda o: ["search", idx, q, "-o", o / ("bulk" if bulk else "r.arrow")],
        "rerank": lambda o: ["rerank", idx, q, q, "-o", o / "r.arrow"],
        "index": lambda o: ["index", "--embeddings", root / "emb-0.npy", "--ids", root / "ids-d.txt", "-o", o / "ix"],
        "eval": lambda o: ["eval", base["results"], base["qrels"]],
        "translate": lambda o: ["translate", q, "-o", o / "t.arrow"],
        "shard": lambda o: ["shard", idx, "-o", o / "sh"],
        "demo": lambda o: ["demo"],
    }[cmd]
    check(lambda i, o: valid(o) + [f"{flag}={value}"], {}, capsys, codes=(2,))


@FUZZ
@given(expr=fz.bad_exprs)
def test_fuzz_parse(capsys, expr):
    rc, _, err = run_cli(["parse", expr], capsys)
    assert_clean_failure(rc, err, (2,))


# --------------------------------------------------------------------------- corrupt bytes in readable formats


@FUZZ
@given(fmt=st.sampled_from(["arrow", "parquet", "jsonl.gz"]), at=st.integers(0, 10**6),
       junk=st.binary(min_size=1, max_size=64))
@example(fmt="arrow", at=1356, junk=b"\x80")  # found by the long profile: a field name that is not UTF-8
def test_fuzz_overwritten_bytes_never_crash_a_reader(tmp_path_factory, fmt, at, junk):
    """Bytes overwritten inside a valid Arrow/Parquet/gzip file: the reader returns a valid table or raises
    InputError -- never another exception, never a crash (the doc_ids.arrow segfault of issue 12).  Unlike the
    CLI cases above, the damaged file may still be valid, so success is allowed here."""
    from itlr_gpu.errors import InputError
    from itlr_gpu.io import read_queries

    table = pa.table({"query_id": [f"q{i}" for i in range(30)], "expr": [f"t{i} AND NOT t{i + 1}" for i in range(30)]})
    data = bytearray({"arrow": fz._ipc_bytes, "parquet": fz._parquet_bytes}[fmt](table) if fmt != "jsonl.gz" else
                     __import__("gzip").compress("".join(json.dumps(r) + "\n" for r in table.to_pylist()).encode()))
    at %= len(data)
    data[at:at + len(junk)] = junk
    path = tmp_path_factory.mktemp("corrupt") / f"q.{fmt}"
    path.write_bytes(bytes(data))
    try:
        got = read_queries(path)
    except InputError:
        return
    got.validate(full=True)
    assert got.column_names[0] == "query_id" or "query_id" in got.column_names
