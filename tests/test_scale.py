"""Out-of-core shards: exact top-k merge (ties), out-of-core == in-memory, sharded index files and their errors."""

from __future__ import annotations

import json
import re
import sys
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from itlr_gpu import Ops, compile_queries
from itlr_gpu.backends.reference import search_reference
from itlr_gpu.cli import main
from itlr_gpu.errors import IndexIntegrityError, InputError
from itlr_gpu.index import Index
from itlr_gpu.io import read_table
from itlr_gpu.scale.bulk import check_unique_ids
from itlr_gpu.scale.shards import (ShardedIndex, load_index, merge_topk, parse_bytes, plan_shards, save_sharded,
                                   search_out_of_core, slice_program)

DIM = 16
EXPRS = ["t0 AND NOT t1", "t2 OR t3", "t4", "(t0 OR t5) AND NOT (t2 AND t3)", "NOT t6", "t1 AND t7 AND t3"]


class HashEncoder:
    """Deterministic random unit-ish vector per text (no model)."""

    name = None
    dim = DIM

    def encode(self, texts):
        return np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(DIM).astype(np.float32)
                         for t in texts]) if texts else np.zeros((0, DIM), np.float32)


def unit_rows(rng, n, d=DIM):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def make_index(n=3000, seed=0, dtype="float16", dup_every=0):
    rng = np.random.default_rng(seed)
    x = unit_rows(rng, n)
    if dup_every:  # identical rows -> exactly tied scores across shard boundaries
        x[dup_every::dup_every] = x[0]
    return Index.from_arrays(x, [f"d{i}" for i in range(n)], dtype=dtype)


def program_and_terms(exprs=EXPRS * 3, seed=1):
    program = compile_queries(exprs, [f"q{i}" for i in range(len(exprs))])
    terms = np.asarray(HashEncoder().encode(program.terms))
    return program, terms / np.linalg.norm(terms, axis=1, keepdims=True)


def brute_topk(scores: np.ndarray, k: int):
    order = np.stack([np.lexsort((np.arange(len(s)), -s))[:k] for s in scores])
    return np.take_along_axis(scores, order, 1), order


# --------------------------------------------------------------------------- merge_topk


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 5), st.integers(1, 80), st.integers(1, 30), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_merge_topk_exact_with_ties(q, n, k, n_shards, seed):
    rng = np.random.default_rng(seed)
    # few distinct values -> many ties, including signed zeros
    scores = rng.choice(np.array([-1.0, -0.0, 0.0, 0.25, 0.5, 1.0], np.float32), size=(q, n))
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(n_shards - 1, n - 1), replace=False)) if n > 1 else []
    bounds = [0, *cuts.tolist(), n] if len(cuts) else [0, n]
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        s, r = brute_topk(scores[:, lo:hi], k)
        parts.append((s, r + lo))
    rng.shuffle(parts)  # order of arrival must not matter
    got_s, got_r = merge_topk(parts, k)
    want_s, want_r = brute_topk(scores, k)
    np.testing.assert_array_equal(got_r, want_r)
    np.testing.assert_array_equal(got_s, want_s)


def test_merge_topk_widths_and_errors():
    a = (np.array([[0.5, 0.5]], np.float32), np.array([[7, 9]]))
    b = (np.array([[0.5]], np.float32), np.array([[2]]))
    s, r = merge_topk([a, b], 10)
    assert r.tolist() == [[2, 7, 9]] and s.shape == (1, 3)
    assert merge_topk([a, b], 1)[1].tolist() == [[2]]
    with pytest.raises(InputError):
        merge_topk([], 3)
    with pytest.raises(InputError):
        merge_topk([a, (np.zeros((2, 1), np.float32), np.zeros((2, 1)))], 3)


def test_plan_shards_and_sizes():
    assert plan_shards(10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert plan_shards(3, 5, start=7) == [(7, 10)]
    with pytest.raises(InputError):
        plan_shards(10, 0)
    assert parse_bytes("2MiB") == 2 << 20 and parse_bytes("1.5k", minimum=1) == 1536 and parse_bytes(100, minimum=1) == 100
    assert parse_bytes("128KiB") == 128 << 10 == parse_bytes(131072)          # the least a cap can be honoured with
    for bad, why in (("lots", "cannot read size"), ("100KiB", "below the least"), (100, "below the least"),
                     ("0.5B", "not a whole number"), ("1e9", "cannot read size"), (2**63, "too large")):
        with pytest.raises(InputError, match=f"--memory-cap: .*{why}"):
            parse_bytes(bad)


def test_slice_program_scores_like_the_full_program():
    program, terms = program_and_terms()
    docs = unit_rows(np.random.default_rng(3), 500)
    full = search_reference(docs, terms, program, Ops(), 7)
    sub, used = slice_program(program, 4, 11)
    assert sub.query_ids == program.query_ids[4:11] and len(sub.terms) == len(used)
    part = search_reference(docs, terms[used], sub, Ops(), 7)
    np.testing.assert_array_equal(part[1], full[1][4:11])
    np.testing.assert_array_equal(part[0], full[0][4:11])


# --------------------------------------------------------------------------- out-of-core


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale")
    index = make_index(3000, dup_every=97)
    index.save(root / "single")
    save_sharded(index, root / "sharded", 700)
    return root, index


@pytest.mark.parametrize("layout", ["single", "sharded"])
@pytest.mark.parametrize("shard_rows", [256, 1000, 333, 5000])
@pytest.mark.parametrize("ops", [Ops(), Ops("min", "max", "reciprocal")], ids=str)
def test_out_of_core_equals_in_memory(saved, layout, shard_rows, ops):
    root, index = saved
    program, terms = program_and_terms()
    want = search_reference(np.asarray(index.embeddings), terms, program, ops, 25, chunk_size=256)
    loaded = load_index(root / layout)
    got = search_out_of_core(loaded, terms, program, ops, 25, "cpu", shard_rows=shard_rows, chunk_size=256)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])


def test_a_shard_changed_while_the_index_is_open_is_refused(saved, tmp_path):
    """The shard checksums are checked when the index is opened; a shard file rewritten in place afterwards
    (during a long job) is refused at its next read, not scored."""
    import shutil

    root, _ = saved
    shutil.copytree(root / "sharded", tmp_path / "sharded")
    loaded = load_index(tmp_path / "sharded")
    program, terms = program_and_terms()
    search_out_of_core(loaded, terms, program, Ops(), 5, "cpu", shard_rows=500)   # intact: reads fine
    shard = sorted((tmp_path / "sharded").glob("embeddings-*.npy"))[2]
    with open(shard, "r+b") as f:
        f.seek(-64, 2)
        tail = f.read(64)
        f.seek(-64, 2)
        f.write(bytes(b ^ 0x40 for b in tail))
    with pytest.raises(IndexIntegrityError, match=r"the file changed while the index was open"):
        search_out_of_core(loaded, terms, program, Ops(), 5, "cpu", shard_rows=500)


def test_out_of_core_memory_cap_default_chunks_and_row_range(saved):
    root, index = saved
    program, terms = program_and_terms()
    want = search_reference(np.asarray(index.embeddings), terms, program, Ops(), 10)
    seen = []
    got = search_out_of_core(load_index(root / "single"), terms, program, Ops(), 10, "cpu", memory_cap="160KiB",
                             on_shard=seen.append)
    assert sum(seen) == 3000 and len(seen) > 1
    np.testing.assert_array_equal(got[1], want[1])
    # a row range returns global rows; k larger than the range returns the range ranked
    sub = search_out_of_core(index, terms, program, Ops(), 5000, "cpu", shard_rows=64, rows=(100, 400))
    assert sub[1].shape == (program.num_queries, 300) and sub[1].min() >= 100 and sub[1].max() < 400
    brute = search_reference(np.asarray(index.embeddings)[100:400], terms, program, Ops(), 300)
    np.testing.assert_array_equal(sub[1], brute[1] + 100)


def test_ties_across_shards_go_to_the_lower_row(saved):
    _, index = saved
    program = compile_queries(["t0"])
    terms = np.asarray(index.embeddings[:1], dtype=np.float32)  # row 0 and its copies (97, 194, ...) tie at the top
    s, r = search_out_of_core(index, terms, program, Ops(), 6, "cpu", shard_rows=50)
    assert r[0].tolist() == [0, 97, 194, 291, 388, 485]
    assert len(set(s[0].tolist())) == 1


# --------------------------------------------------------------------------- sharded index files


def test_sharded_index_roundtrip(saved):
    root, index = saved
    sharded = load_index(root / "sharded")
    assert isinstance(sharded, ShardedIndex) and len(sharded.shards) == 5
    assert sharded.manifest["checksum"] == load_index(root / "single").manifest["checksum"]
    m = sharded.embeddings
    np.testing.assert_array_equal(m[650:1450], index.embeddings[650:1450])
    rows = np.array([2999, 0, 700, 699, 1400])
    np.testing.assert_array_equal(m[rows], index.embeddings[rows])
    assert sharded.doc_ids.equals(index.doc_ids)


def _copy_index(src, dst):
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_missing_shard_is_one_clear_error(saved, tmp_path, capsys):
    root, _ = saved
    broken = _copy_index(root / "sharded", tmp_path / "idx")
    (broken / "embeddings-00001.npy").unlink()
    with pytest.raises(IndexIntegrityError, match=r"embeddings-00001\.npy: shard 1 \(rows 700-1399\) is missing"):
        load_index(broken)
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"query_id": "a", "expr": "t0"}) + "\n")
    assert main(["search", str(broken), str(queries), "-o", str(tmp_path / "r.arrow")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("itlr: error:") and "shard 1" in err[0]


def corrupt_shard_copy(src, dst, shard: int):
    """A copy of the sharded index ``src`` whose shard file ``shard`` has a few data bytes overwritten."""
    broken = _copy_index(src, dst)
    with open(broken / f"embeddings-{shard:05d}.npy", "r+b") as f:
        f.seek(300)   # past the .npy header: the data, so only the checksum can tell
        f.write(b"\x00\x01\x02\x03")
    return broken


def test_corrupt_shard_names_the_shard(saved, tmp_path):
    root, _ = saved
    broken = corrupt_shard_copy(root / "sharded", tmp_path / "idx", 3)
    with pytest.raises(IndexIntegrityError, match=r"shard 3 \(rows 2100-2799\) checksum mismatch") as info:
        load_index(broken)
    assert "\n" not in str(info.value)
    # without verification the damage is caught when that shard's rows are verified (what a Ray worker does)
    lazy = load_index(broken, verify=False)
    lazy.embeddings.verify(0, 2100)
    with pytest.raises(IndexIntegrityError, match="shard 3"):
        lazy.embeddings.verify(2000, 2200)


def test_truncated_shard_and_bad_manifest(saved, tmp_path):
    root, _ = saved
    broken = _copy_index(root / "sharded", tmp_path / "idx")
    path = broken / "embeddings-00004.npy"
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(IndexIntegrityError, match="truncated"):
        load_index(broken)
    broken2 = _copy_index(root / "sharded", tmp_path / "idx2")
    manifest = json.loads((broken2 / "manifest.json").read_text())
    manifest["shards"][2]["start"] += 1
    (broken2 / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexIntegrityError, match="shard entry 2"):
        load_index(broken2)
    broken3 = _copy_index(root / "sharded", tmp_path / "idx3")   # the encoder record is checked as an index's
    manifest = json.loads((broken3 / "manifest.json").read_text())
    manifest["encoder"] = {"model": "x", "max_length": 128, "backend": "torch", "precision": "int8",
                           "weights": "sha256:0123456789abcdef"}
    (broken3 / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IndexIntegrityError, match=r"manifest\.json: field 'encoder' is "):
        load_index(broken3)


def test_save_sharded_replaces_an_index_and_refuses_other_folders(saved, tmp_path):
    _, index = saved
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "f").write_text("keep me")
    with pytest.raises(InputError, match="refusing to replace a non-empty folder that is not an itlr index"):
        save_sharded(index, tmp_path / "x", 100)
    assert (tmp_path / "x" / "f").read_text() == "keep me"
    # an index folder (single-file or sharded) is replaced, as `itlr index` replaces one
    for layout in ("single", "sharded"):
        target = tmp_path / layout
        (index.save(target) if layout == "single" else save_sharded(index, target, 300))
        save_sharded(index, target, 100)
        again = load_index(target)
        assert len(again.manifest["shards"]) == -(-len(index) // 100)
        np.testing.assert_array_equal(np.asarray(again.embeddings), np.asarray(index.embeddings))
        assert not (target / "embeddings.npy").exists()
    (tmp_path / "sharded" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match=r"also holds other files \(notes.txt\)"):
        save_sharded(index, tmp_path / "sharded", 100)


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def fake_encoder(monkeypatch):
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())


def _queries_file(path, exprs=EXPRS, ids=None):
    ids = ids or [f"q{i}" for i in range(len(exprs))]
    with open(path, "w") as f:
        for qid, e in zip(ids, exprs):
            f.write(json.dumps({"query_id": qid, "expr": e}) + "\n")
    return path


def test_cli_out_of_core_and_sharded_equal_plain_search(saved, tmp_path, fake_encoder, capsys):
    root, _ = saved
    q = _queries_file(tmp_path / "q.jsonl")
    plain, ooc, sh = tmp_path / "plain.arrow", tmp_path / "ooc.arrow", tmp_path / "sh.parquet"
    assert main(["search", str(root / "single"), str(q), "-o", str(plain), "-k", "9", "--device", "cpu"]) == 0
    assert main(["search", str(root / "single"), str(q), "-o", str(ooc), "-k", "9", "--device", "cpu",
                 "--shard-rows", "400"]) == 0
    assert main(["search", str(root / "sharded"), str(q), "-o", str(sh), "-k", "9", "--device", "cpu",
                 "--memory-cap", "1MiB"]) == 0
    want = read_table(plain)
    assert read_table(ooc).equals(want)
    assert read_table(sh).equals(want)
    # Query batches: a batch's term matrix is smaller, and the float32 matmul may round the last bit
    # differently for another shape; the ranking is the same here and scores agree to 1 ulp.
    batched = tmp_path / "batched.arrow"
    assert main(["search", str(root / "single"), str(q), "-o", str(batched), "-k", "9", "--device", "cpu",
                 "--shard-rows", "400", "--batch-size", "4"]) == 0
    got = read_table(batched)
    assert got.column("doc_id").equals(want.column("doc_id"))
    np.testing.assert_allclose(got.column("score").to_numpy(), want.column("score").to_numpy(), rtol=1e-6)


@pytest.mark.parametrize("extra", [[], ["--shard-rows", "400"], ["--batch-size", "2"]], ids=["plain", "shards", "bulk"])
def test_k_above_the_corpus_is_noted_once_and_the_summary_shows_the_k_applied(saved, tmp_path, fake_encoder, capsys,
                                                                              extra):
    root, index = saved
    q = _queries_file(tmp_path / "q.jsonl", exprs=EXPRS[:2])
    out = tmp_path / ("out" if "--batch-size" in extra else "out.arrow")
    capsys.readouterr()
    assert main(["search", str(root / "single"), str(q), "-o", str(out), "-k", "2147483648", "--device", "cpu",
                 *extra]) == 0
    cap = capsys.readouterr()
    notes = [line for line in cap.err.splitlines() if "above the corpus size" in line]
    assert notes == ["itlr: note: -k 2,147,483,648 is above the corpus size 3,000: every document is returned for "
                     "each query"]
    assert "k=3,000 -> " in cap.out and "2147483648" not in cap.out


def test_cli_eval_reads_a_result_folder_like_the_file(saved, tmp_path, fake_encoder, capsys):
    root, _ = saved
    q = _queries_file(tmp_path / "q.jsonl")
    plain, folder = tmp_path / "plain.arrow", tmp_path / "out"
    assert main(["search", str(root / "single"), str(q), "-o", str(plain), "-k", "9", "--device", "cpu"]) == 0
    assert main(["search", str(root / "single"), str(q), "-o", str(folder), "-k", "9", "--device", "cpu",
                 "--batch-size", "2"]) == 0
    table = read_table(plain)
    qrels = tmp_path / "qrels.tsv"
    rows = list(zip(table.column("query_id").to_pylist(), table.column("doc_id").to_pylist()))
    qrels.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in rows[1::4]))
    capsys.readouterr()
    assert main(["eval", str(plain), str(qrels), "--measures", "nDCG@5,R@9"]) == 0
    from_file = capsys.readouterr().out
    assert main(["eval", str(folder), str(qrels), "--measures", "nDCG@5,R@9"]) == 0
    assert capsys.readouterr().out == from_file and "nDCG@5" in from_file
    assert main(["eval", str(tmp_path), str(qrels)]) == 1              # a folder that is no result folder
    assert "_itlr_job.json" in capsys.readouterr().err


def test_cli_shard_command(saved, tmp_path, capsys):
    root, index = saved
    assert main(["shard", str(root / "single"), "-o", str(tmp_path / "s"), "--shard-rows", "1024"]) == 0
    assert "3 shards" in capsys.readouterr().out
    again = load_index(tmp_path / "s")
    assert len(again.shards) == 3
    np.testing.assert_array_equal(again.embeddings[:], index.embeddings[:])


def test_repeated_query_ids_are_an_error(saved, tmp_path, capsys):
    with pytest.raises(InputError, match="query_id 'a' repeats at row 2"):
        check_unique_ids(["a", "b", "a"])
    root, _ = saved
    q = _queries_file(tmp_path / "q.jsonl", ["t0", "t1", "t2"], ["a", "b", "a"])
    assert main(["search", str(root / "single"), str(q), "-o", str(tmp_path / "out"), "--batch-size", "2"]) == 1
    err = capsys.readouterr().err
    assert "duplicate" in err and "'a'" in err


def test_ray_flag_without_ray_is_a_clear_error(saved, tmp_path, fake_encoder, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    root, _ = saved
    q = _queries_file(tmp_path / "q.jsonl")
    assert main(["search", str(root / "single"), str(q), "-o", str(tmp_path / "r.arrow"), "--ray"]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("itlr: error")]
    assert len(err) == 1 and "Ray is not installed" in err[0] and "pip install ray" in err[0]


# --------------------------------------------------------------------------- scoring options at scale

from itlr_gpu.backends.reference import search_with_options  # noqa: E402
from itlr_gpu.scoring import RECOMMENDED, ScoreOptions, linearize_options  # noqa: E402


@pytest.mark.parametrize("layout", ["single", "sharded"])
@pytest.mark.parametrize("opt", [RECOMMENDED, ScoreOptions(calibration="zscore", guard=True),
                                 ScoreOptions(hybrid=0.7, calibration="minmax", or_max=True)], ids=str)
def test_out_of_core_options_equal_in_memory(saved, layout, opt):
    # The options' statistics come from one sample over the whole index (folded once by linearize_options),
    # so every shard scores with the same constants: the same result as the in-memory search.
    root, index = saved
    program, terms = program_and_terms()
    whole = unit_rows(np.random.default_rng(3), program.num_queries)
    want = search_with_options(np.asarray(index.embeddings), terms, program, Ops(), 25, opt, whole, chunk_size=256)
    loaded = load_index(root / layout)
    lin = linearize_options(loaded.embeddings, terms, program, Ops(), opt, whole)
    got = search_out_of_core(loaded, terms, program, Ops(), 25, "cpu", shard_rows=512, chunk_size=256, linear=lin)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])


def test_cli_options_with_shards_and_bulk_equal_plain_search(saved, tmp_path, fake_encoder, capsys, monkeypatch):
    root, _ = saved
    q = tmp_path / "q.jsonl"
    with open(q, "w") as f:
        for i, e in enumerate(EXPRS):
            f.write(json.dumps({"query_id": f"q{i}", "expr": e, "text": f"whole text {i}"}) + "\n")
    flags = ["-k", "9", "--device", "cpu", "--recommended"]
    plain, ooc = tmp_path / "plain.arrow", tmp_path / "ooc.arrow"
    assert main(["search", str(root / "single"), str(q), "-o", str(plain), *flags]) == 0
    assert main(["search", str(root / "sharded"), str(q), "-o", str(ooc), *flags, "--shard-rows", "512",
                 "--chunk-size", "256"]) == 0
    want = read_table(plain)
    got = read_table(ooc)
    assert got.column("doc_id").equals(want.column("doc_id"))
    np.testing.assert_allclose(got.column("score").to_numpy(), want.column("score").to_numpy(), rtol=1e-5, atol=1e-5)
    # the options change the result (they are not silently dropped)
    raw = tmp_path / "raw.arrow"
    assert main(["search", str(root / "single"), str(q), "-o", str(raw), "-k", "9", "--device", "cpu"]) == 0
    assert not read_table(raw).column("doc_id").equals(want.column("doc_id"))
    # a resumable bulk job records the options: a rerun with other options is refused
    out = tmp_path / "job"
    import itlr_gpu.scale.shards as shards

    reads = []
    sample = shards.document_sample_read
    monkeypatch.setattr(shards, "document_sample_read", lambda *a, **kw: reads.append(1) or sample(*a, **kw))
    assert main(["search", str(root / "single"), str(q), "-o", str(out), *flags, "--batch-size", "2"]) == 0
    assert len(EXPRS) > 2 and len(reads) == 1     # the options' document sample is read once for all batches
    from itlr_gpu.scale.bulk import read_results

    bulk = read_results(out)
    assert bulk.column("doc_id").equals(want.column("doc_id"))
    assert main(["search", str(root / "single"), str(q), "-o", str(out), "-k", "9", "--device", "cpu",
                 "--batch-size", "2"]) != 0
    assert "options" in capsys.readouterr().err


def test_an_unreachable_ray_address_is_refused_at_once():
    """ray.init retries an address nobody listens on forever; the address is tried first."""
    import socket
    import time

    from itlr_gpu.scale.distributed import _check_reachable

    with socket.socket() as s:   # a port that was just free
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}"):
        with pytest.raises(InputError, match=rf"cannot reach a Ray cluster at {re.escape(address)} \("):
            _check_reachable(address)
    assert time.monotonic() - t0 < 5
    with pytest.raises(InputError, match="has no valid port"):
        _check_reachable("localhost:http")
    with socket.socket() as server:   # a listening port passes; "auto" is left to Ray
        server.bind(("127.0.0.1", 0))
        server.listen()
        _check_reachable(f"127.0.0.1:{server.getsockname()[1]}")
    _check_reachable("auto")


@pytest.mark.parametrize("address, why", [("host:abc", "has no valid port"), ("foo", "is not HOST:PORT"),
                                          ("ray://h:99999", "has no valid port"), (":6379", "is not HOST:PORT")])
def test_a_malformed_ray_address_is_a_usage_error_before_any_file_is_read(tmp_path, capsys, address, why):
    from itlr_gpu.scale.distributed import _check_reachable

    missing = tmp_path / "no-such-queries.jsonl"
    assert main(["search", str(tmp_path / "no-index"), str(missing), "-o", str(tmp_path / "r.arrow"),
                 "--ray", address]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"argument --ray: {address!r} {why}" in err[0] and "not found" not in err[0]
    with pytest.raises(InputError, match=why):   # the Python API's address, checked when it connects
        _check_reachable(address)


def test_ray_stream_memory_cap_sets_the_rows_each_task_reads():
    # an outside review: --ray-stream --memory-cap ignored the cap (a task read its whole N/workers rows at once)
    import argparse

    from itlr_gpu.scale.cli import _ray_ready
    from itlr_gpu.scale.distributed import RayConfig
    from itlr_gpu.scale.shards import parse_bytes, shard_rows_for_cap

    index = make_index(30000, seed=1)
    config = _ray_ready(RayConfig(num_workers=2), argparse.Namespace(ray_stream=True, memory_cap="1MiB"), index)
    want = shard_rows_for_cap(index.dim, np.dtype(index.dtype).itemsize, parse_bytes("1MiB"))
    assert config.shard_rows == want and 0 < want < len(index)
    # resident shards: at most four per CPU of a local Ray (each is a worker process of its own)
    from itlr_gpu.errors import UsageError

    with pytest.raises(UsageError, match="resident shards"):
        _ray_ready(RayConfig(num_workers=2, shard_rows=7), argparse.Namespace(ray_stream=False, memory_cap=None), index)
    assert _ray_ready(RayConfig(num_workers=2, shard_rows=15000),
                      argparse.Namespace(ray_stream=False, memory_cap=None), index).shard_rows == 15000


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_the_options_sample_is_read_without_mapping_the_matrix(tmp_path, dtype):
    """The scoring options' document sample of a file-backed index (a memmap, shard files) is read with pread: the
    same rows as indexing the matrix, and never through the memmap (whose pages around 4,096 spread rows mapped most
    of a large matrix into the process under --memory-cap)."""
    import torch

    from itlr_gpu.scale.shards import document_sample_read
    from itlr_gpu.scoring import RECOMMENDED, document_sample

    rng = np.random.default_rng(3)
    index = Index.from_arrays(unit_rows(rng, 5000), [f"d{i}" for i in range(5000)], dtype=dtype)
    index.save(tmp_path / "idx")
    save_sharded(index, tmp_path / "sh", shard_rows=700)
    for loaded in (load_index(tmp_path / "idx"), load_index(tmp_path / "sh"), index):
        want = document_sample(loaded.embeddings, RECOMMENDED, "cpu")
        got = document_sample_read(loaded.embeddings, RECOMMENDED, "cpu")
        assert got.dtype == torch.float32 and torch.equal(got, want)
    mapped = load_index(tmp_path / "idx").embeddings
    assert isinstance(mapped, np.memmap)

    class Unindexable(np.memmap):
        def __getitem__(self, key):
            raise AssertionError("the sample was read through the memmap")

    guarded = mapped.view(Unindexable)
    guarded.filename, guarded.offset = mapped.filename, mapped.offset
    assert torch.equal(document_sample_read(guarded, RECOMMENDED, "cpu"),
                       document_sample(mapped, RECOMMENDED, "cpu"))


def test_the_resident_shard_limit_counts_the_cpus_of_the_local_ray_the_job_starts(tmp_path):
    """--workers N starts a local Ray of N CPUs: the four-shards-a-CPU limit and its message count those."""
    import argparse

    from itlr_gpu.errors import UsageError
    from itlr_gpu.scale.cli import _ray_ready
    from itlr_gpu.scale.distributed import RayConfig

    index = make_index(2000, seed=1)
    args = argparse.Namespace(ray_stream=False, memory_cap=None)
    with pytest.raises(UsageError, match=r"makes 10 resident shards .* on a local Ray of 1 CPU\(s\) .*at most 4 shards"):
        _ray_ready(RayConfig(num_workers=1, shard_rows=200), args, index)
    assert _ray_ready(RayConfig(num_workers=2, shard_rows=250), args, index).shard_rows == 250
    # more workers than cores share the cores: the cores bound the resident shards
    import os

    assert (os.cpu_count() or 1) * 4 < 2000
    with pytest.raises(UsageError, match=r"resident shards"):
        _ray_ready(RayConfig(num_workers=64, shard_rows=1), args, index)
