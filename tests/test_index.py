"""Tests for itlr_gpu.index: construction, validation, save/load and imports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from itlr_gpu import index as index_mod
from itlr_gpu.errors import IndexIntegrityError, InputError
from itlr_gpu.index import Index


class FakeEncoder:
    """Deterministic bag-of-characters encoder (no model download)."""

    name = "fake-chars"
    dim = 8

    def __init__(self):
        self.calls: list[int] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.ones((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t:
                out[i, ord(ch) % self.dim] += 1
        return out


def rand(n=6, d=5, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def ids(n):
    return [f"d{i}" for i in range(n)]


# ------------------------------------------------------------------ from_arrays


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_from_arrays_normalises_and_casts(dtype):
    x = rand()
    ix = Index.from_arrays(x, ids(6), dtype=dtype, model="m")
    assert ix.dtype == np.dtype(dtype) and ix.embeddings.dtype == np.dtype(dtype)
    assert (len(ix), ix.dim) == (6, 5)
    tol = 1e-3 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(np.linalg.norm(ix.embeddings.astype(np.float64), axis=1), 1, atol=tol)
    expected = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_allclose(ix.embeddings.astype(np.float64), expected, atol=tol)
    assert ix.manifest["model"] == "m" and ix.manifest["dtype"] == dtype and ix.manifest["count"] == 6
    assert ix.doc_id_at([3, 0]) == ["d3", "d0"] and ix.doc_id_at(np.array([5])) == ["d5"]
    assert ix.doc_id_at(2) == ["d2"]
    assert isinstance(ix.doc_ids, pa.Array) and ix.doc_ids.type == pa.string()


@pytest.mark.parametrize(
    "emb, doc_ids, match",
    [
        (np.ones(3), ["a", "b", "c"], "2-D"),
        (np.ones((0, 3)), [], "at least one row"),
        (np.ones((2, 3)), ["a"], "1 doc ids for 2 embedding rows"),
        (np.ones((2, 3)), ["a", "a"], "duplicate doc_id 'a' at row 1"),
        (np.ones((2, 3)), ["a", ""], "empty doc_id at row 1"),
        (np.ones((2, 3)), ["a", None], "null doc_id at row 1"),
        (np.array([[1.0, 2], [np.nan, 1], [1, 1]]), ["a", "b", "c"], "row 1 contains NaN or Inf"),
        (np.array([[1.0, 2], [1, 1], [np.inf, 1]]), ["a", "b", "c"], "row 2 contains NaN or Inf"),
        (np.array([[1.0, 2], [0, 0]]), ["a", "b"], "row 1 has zero norm"),
        (np.array([["x", "y"]]), ["a"], "dtype"),
    ],
)
def test_from_arrays_errors(emb, doc_ids, match):
    with pytest.raises(InputError, match=match):
        Index.from_arrays(emb, doc_ids)


def test_from_arrays_bad_dtype():
    with pytest.raises(InputError, match="float16 or float32"):
        Index.from_arrays(rand(), ids(6), dtype="int8")


def test_from_arrays_extreme_magnitudes():
    x = np.array([[1e300, 1e300], [1e-300, 0.0], [3.0, 4.0]])
    ix = Index.from_arrays(x, ["a", "b", "c"], dtype="float32")
    np.testing.assert_allclose(ix.embeddings, [[2**-0.5, 2**-0.5], [1, 0], [0.6, 0.8]], rtol=1e-6)


# ------------------------------------------------------------------ save / load


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("mmap", [True, False])
def test_save_load_round_trip(tmp_path, dtype, mmap):
    ix = Index.from_arrays(rand(), ids(6), dtype=dtype, model="mini")
    out = ix.save(tmp_path / "ix")
    assert sorted(os.listdir(out)) == ["doc_ids.arrow", "embeddings.npy", "manifest.json"]
    m = json.loads((out / "manifest.json").read_text())
    assert m["format"] == "itlr-index" and m["format_version"] == 1 and m["normalization"] == "l2"
    assert (m["model"], m["dim"], m["dtype"], m["count"]) == ("mini", 5, dtype, 6)
    assert m["checksum"].startswith("sha256:") and len(m["checksum"]) == 71 and m["created"]
    loaded = Index.load(out, mmap=mmap)
    assert isinstance(loaded.embeddings, np.memmap) == mmap
    assert loaded.embeddings.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(loaded.embeddings), ix.embeddings)
    assert loaded.doc_ids.equals(ix.doc_ids) and loaded.manifest == m
    assert np.load(out / "embeddings.npy", mmap_mode="r").shape == (6, 5)  # plain .npy
    assert os.listdir(tmp_path) == ["ix"]  # no temporary folders left


def test_save_replaces_index_but_refuses_other_folders(tmp_path):
    Index.from_arrays(rand(3, 2), ids(3)).save(tmp_path / "ix")
    Index.from_arrays(rand(4, 2), ids(4)).save(tmp_path / "ix")
    assert len(Index.load(tmp_path / "ix")) == 4
    assert os.listdir(tmp_path) == ["ix"]

    other = tmp_path / "data"
    other.mkdir()
    (other / "keep.txt").write_text("precious")
    with pytest.raises(InputError, match=r"data.*not an itlr index"):
        Index.from_arrays(rand(3, 2), ids(3)).save(other)
    assert os.listdir(other) == ["keep.txt"]

    (tmp_path / "empty").mkdir()
    Index.from_arrays(rand(3, 2), ids(3)).save(tmp_path / "empty")
    assert len(Index.load(tmp_path / "empty")) == 3

    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        Index.from_arrays(rand(3, 2), ids(3)).save(tmp_path / "file")


def test_save_over_its_own_mmapped_source(tmp_path):
    Index.from_arrays(rand(3, 2), ids(3)).save(tmp_path / "ix")
    loaded = Index.load(tmp_path / "ix")
    loaded.save(tmp_path / "ix")
    assert len(Index.load(tmp_path / "ix")) == 3


def test_save_failure_keeps_old_index(tmp_path, monkeypatch):
    Index.from_arrays(rand(3, 2), ids(3)).save(tmp_path / "ix")
    before = (tmp_path / "ix" / "embeddings.npy").read_bytes()

    def broken(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(index_mod.np, "save", broken)
    with pytest.raises(KeyboardInterrupt):
        Index.from_arrays(rand(4, 2), ids(4)).save(tmp_path / "ix")
    assert os.listdir(tmp_path) == ["ix"]
    assert (tmp_path / "ix" / "embeddings.npy").read_bytes() == before


def test_checksum_mismatch_after_flipping_a_byte(tmp_path):
    Index.from_arrays(rand(), ids(6)).save(tmp_path / "ix")
    path = tmp_path / "ix" / "embeddings.npy"
    data = bytearray(path.read_bytes())
    data[-3] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(IndexIntegrityError, match=r"embeddings\.npy.*checksum mismatch"):
        Index.load(tmp_path / "ix")
    assert len(Index.load(tmp_path / "ix", verify=False)) == 6


def test_checksum_is_streamed_in_blocks(monkeypatch):
    x = Index.from_arrays(rand(50, 4), ids(50), dtype="float32").embeddings
    whole = index_mod._checksum(x)
    monkeypatch.setattr(index_mod, "BLOCK_BYTES", 3 * 4 * 4)  # 3 rows a block
    assert index_mod._checksum(x) == whole


def _corrupt_manifest(path: Path, **changes):
    m = json.loads(path.read_text())
    for k, v in changes.items():
        if v is KeyError:
            del m[k]
        else:
            m[k] = v
    path.write_text(json.dumps(m))


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"format": "other"}, "format is 'other'"),
        ({"format_version": 2}, "format_version is 2.*newer"),
        ({"dim": KeyError}, "field 'dim' is missing"),
        ({"dtype": "int8"}, "field 'dtype' is 'int8'"),
        ({"checksum": "md5:1"}, "field 'checksum'"),
        ({"count": 7}, r"matrix is .* \(6, 5\) but the manifest says float16 \(7, 5\)"),
        ({"dtype": "float32"}, "manifest says float32"),
    ],
)
def test_load_manifest_problems(tmp_path, changes, match):
    Index.from_arrays(rand(), ids(6)).save(tmp_path / "ix")
    _corrupt_manifest(tmp_path / "ix" / "manifest.json", **changes)
    with pytest.raises(IndexIntegrityError, match=match):
        Index.load(tmp_path / "ix")


def test_load_missing_files_and_bad_ids(tmp_path):
    with pytest.raises(InputError, match="index folder not found"):
        Index.load(tmp_path / "nope")
    ix = Index.from_arrays(rand(), ids(6))
    for name in ("manifest.json", "embeddings.npy", "doc_ids.arrow"):
        ix.save(tmp_path / name)
        (tmp_path / name / name).unlink()
        with pytest.raises(IndexIntegrityError, match=f"{name} is missing"):
            Index.load(tmp_path / name)
    ix.save(tmp_path / "ids")
    with pa.OSFile(str(tmp_path / "ids" / "doc_ids.arrow"), "wb") as f:
        t = pa.table({"doc_id": ids(5)})
        with pa.ipc.new_file(f, t.schema) as w:
            w.write_table(t)
    with pytest.raises(IndexIntegrityError, match="doc_ids.arrow: checksum mismatch"):
        Index.load(tmp_path / "ids")
    _corrupt_manifest(tmp_path / "ids" / "manifest.json", ids_checksum=KeyError)  # as an index of the first format
    with pytest.raises(IndexIntegrityError, match="5 doc ids but the manifest says 6"):
        Index.load(tmp_path / "ids")
    ix.save(tmp_path / "trunc")
    p = tmp_path / "trunc" / "embeddings.npy"
    p.write_bytes(p.read_bytes()[:-10])
    with pytest.raises(IndexIntegrityError, match="embeddings.npy"):
        Index.load(tmp_path / "trunc")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    x=hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
                 elements=st.floats(-1e6, 1e6, width=32)),
    dtype=st.sampled_from(["float16", "float32"]),
)
def test_round_trip_property(tmp_path, x, dtype):
    good = np.abs(x).max(axis=1) > 0
    if not good.any():
        return
    x = x[good]
    ix = Index.from_arrays(x, ids(len(x)), dtype=dtype)
    np.testing.assert_allclose(np.linalg.norm(ix.embeddings.astype(np.float64), axis=1), 1,
                               atol=2e-3 if dtype == "float16" else 1e-5)
    ix.save(tmp_path / "prop")
    loaded = Index.load(tmp_path / "prop")
    np.testing.assert_array_equal(np.asarray(loaded.embeddings), ix.embeddings)
    assert loaded.doc_ids.to_pylist() == ids(len(x))


# ------------------------------------------------------------------ build / encoder check


def test_build_from_corpus_path_and_table(tmp_path):
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "a", "title": "T", "text": "xyz"}\n{"_id": "b", "text": "hello"}\n{"_id": "c", "text": "q"}\n'
    )
    enc = FakeEncoder()
    ix = Index.build(tmp_path, enc, dtype="float32", batch_size=2)
    assert enc.calls == [2, 1]
    assert ix.doc_ids.to_pylist() == ["a", "b", "c"] and ix.manifest["model"] == "fake-chars"
    expected = FakeEncoder().encode(["T xyz", "hello", "q"])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(ix.embeddings, expected, rtol=1e-6)
    table = pa.table({"doc_id": ["a", "b"], "text": ["xyz", "hello"]})
    assert len(Index.build(table, FakeEncoder())) == 2


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.text(alphabet="abcdefgh xyz", min_size=1, max_size=40).filter(str.strip), min_size=1,
                      max_size=30),
       batch_size=st.integers(1, 7))
def test_build_sorts_by_length_and_keeps_corpus_order(texts, batch_size):
    """Calls get texts of similar length (longest first over the whole corpus); rows stay in corpus order."""
    seen: list[list[str]] = []

    class Recording(FakeEncoder):
        def encode(self, batch):
            seen.append(list(batch))
            return super().encode(batch)

    table = pa.table({"doc_id": [f"d{i}" for i in range(len(texts))], "text": texts})
    ix = Index.build(table, Recording(), dtype="float32", batch_size=batch_size)
    want = FakeEncoder().encode(texts)
    np.testing.assert_allclose(ix.embeddings, want / np.linalg.norm(want, axis=1, keepdims=True), rtol=1e-6)
    lengths = [len(t) for batch in seen for t in batch]
    assert lengths == sorted(lengths, reverse=True) and sorted(sum(seen, [])) == sorted(texts)
    assert [len(b) for b in seen[:-1]] == [batch_size] * (len(seen) - 1)


def test_build_names_the_corpus_row_of_a_bad_vector():
    class ZeroForX:
        def encode(self, texts):
            return np.array([[0.0, 0.0] if t == "x" else [1.0, 2.0] for t in texts], dtype=np.float32)

    table = pa.table({"doc_id": ["a", "b", "c", "d"], "text": ["a long text", "x", "medium", "longest text of all"]})
    with pytest.raises(InputError, match="row 1 has zero norm"):
        Index.build(table, ZeroForX(), batch_size=2)


def test_build_rejects_bad_encoder_output():
    class Bad:
        def encode(self, texts):
            return np.zeros((len(texts), 3), dtype=np.float32)

    table = pa.table({"doc_id": ["a", "b"], "text": ["x", "y"]})
    with pytest.raises(InputError, match="row 0 has zero norm"):
        Index.build(table, Bad())
    with pytest.raises(InputError, match="encoder"):
        Index.build(table, object())

    class Liar:
        dim = 5

        def encode(self, texts):
            return np.ones((len(texts), 8), dtype=np.float32)

    with pytest.raises(InputError, match="declares dim 5 but returned 8 columns"):
        Index.build(table, Liar())


@pytest.mark.slow
def test_build_with_default_encoder(tmp_path):
    from itlr_gpu.encoders import default_encoder

    table = pa.table({"doc_id": ["a", "b"], "text": ["cats purr", "tax forms"], "title": ["Cats", ""]})
    ix = Index.build(table)
    assert (len(ix), ix.dim, ix.manifest["model"]) == (2, 384, "all-MiniLM-L6-v2")
    ix.check_encoder(default_encoder())


def test_check_encoder_dimension(tmp_path):
    ix = Index.from_arrays(rand(3, 4), ids(3), model="small-model")
    ix.save(tmp_path / "ix")
    loaded = Index.load(tmp_path / "ix")
    with pytest.raises(InputError) as e:
        loaded.check_encoder(FakeEncoder())
    msg = str(e.value)
    assert "8" in msg and "4" in msg and "fake-chars" in msg and "small-model" in msg and "ix" in msg
    enc = FakeEncoder()
    enc.dim = 4
    loaded.check_encoder(enc)  # matching dimension: fine

    class NoDim:
        def encode(self, texts):
            return np.ones((len(texts), 4), dtype=np.float32)

    loaded.check_encoder(NoDim())


# ------------------------------------------------------------------ imports


@pytest.mark.parametrize("trailing_newline", [True, False])
def test_import_npy_and_text_ids(tmp_path, trailing_newline):
    x = rand(3, 4)
    np.save(tmp_path / "e.npy", x)
    (tmp_path / "ids.txt").write_text("a\nb b\nc" + ("\n" if trailing_newline else ""))
    ix = Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "ids.txt", dtype="float32")
    assert ix.doc_ids.to_pylist() == ["a", "b b", "c"]
    # blank lines after the last id are no ids (an outside audit saw "\n\n" at the end refused); inner ones are
    (tmp_path / "ids2.txt").write_text("a\nb b\nc\n\n \r\n")
    ix = Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "ids2.txt", dtype="float32")
    assert ix.doc_ids.to_pylist() == ["a", "b b", "c"]
    np.testing.assert_allclose(ix.embeddings, x / np.linalg.norm(x, axis=1, keepdims=True), rtol=1e-6)


def test_import_npy_id_file_errors(tmp_path):
    np.save(tmp_path / "e.npy", rand(3, 4))
    (tmp_path / "blank.txt").write_text("a\n\nc\n")
    with pytest.raises(InputError, match=r"blank\.txt:2: blank line"):
        Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "blank.txt")
    (tmp_path / "dup.txt").write_text("a\nb\na\n")   # a text file's place is its line, counted from 1
    with pytest.raises(InputError, match=r"dup\.txt:3: duplicate doc_id 'a' \(first on line 1\)"):
        Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "dup.txt")
    (tmp_path / "two.txt").write_text("a\nb\n")
    with pytest.raises(InputError, match=r"two\.txt.*2 doc ids for 3 embedding rows"):
        Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "two.txt")
    with pytest.raises(InputError, match="needs an ids file"):
        Index.from_embedding_files(tmp_path / "e.npy")
    with pytest.raises(InputError, match="ids file not found"):
        Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "nope.txt")
    (tmp_path / "e.csv").write_text("1,2\n")
    with pytest.raises(InputError, match=r"e\.csv.*\.npy, \.parquet, \.arrow"):
        Index.from_embedding_files(tmp_path / "e.csv", tmp_path / "two.txt")


@pytest.mark.parametrize("ext", ["parquet", "arrow"])
def test_import_npy_and_table_ids(tmp_path, ext):
    np.save(tmp_path / "e.npy", rand(2, 3).astype(np.float32))
    table = pa.table({"whatever": ["x", "y"]})
    path = tmp_path / f"ids.{ext}"
    if ext == "parquet":
        pq.write_table(table, path)
    else:
        with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
            w.write_table(table)
    assert Index.from_embedding_files(tmp_path / "e.npy", path).doc_ids.to_pylist() == ["x", "y"]
    pq.write_table(pa.table({"_id": ["p", "q"], "other": [1, 2]}), tmp_path / "ids2.parquet")
    assert Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "ids2.parquet").doc_id_at([1]) == ["q"]
    pq.write_table(pa.table({"a": ["p", "q"], "b": [1, 2]}), tmp_path / "ids3.parquet")
    with pytest.raises(InputError, match=r"ids3\.parquet.*no id column"):
        Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "ids3.parquet")


def test_import_parquet_list_column(tmp_path):
    vecs = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
    pq.write_table(pa.table({"doc_id": ["a", "b"], "embedding": vecs}), tmp_path / "e.parquet")
    ix = Index.from_embedding_files(tmp_path / "e.parquet", dtype="float32")
    assert ix.doc_ids.to_pylist() == ["a", "b"]
    np.testing.assert_array_equal(ix.embeddings, [[1, 0, 0], [0, 1, 0]])

    fixed = pa.array(vecs, pa.list_(pa.float32(), 3))
    pq.write_table(pa.table({"_id": ["a", "b"], "vec": fixed}), tmp_path / "f.parquet")
    assert Index.from_embedding_files(tmp_path / "f.parquet").dim == 3

    (tmp_path / "ids.txt").write_text("x\ny\n")
    pq.write_table(pa.table({"v": vecs}), tmp_path / "g.parquet")
    assert Index.from_embedding_files(tmp_path / "g.parquet", tmp_path / "ids.txt").doc_id_at([0]) == ["x"]
    with pytest.raises(InputError, match=r"g\.parquet.*no id column"):
        Index.from_embedding_files(tmp_path / "g.parquet")


def test_import_list_column_errors(tmp_path):
    pq.write_table(pa.table({"doc_id": ["a", "b", "c"], "embedding": [[1.0, 2.0], [1.0, 2.0], [3.0]]}),
                   tmp_path / "r.parquet")
    with pytest.raises(InputError, match=r"r\.parquet column 'embedding'.*row 2 has 1 values but row 0 has 2"):
        Index.from_embedding_files(tmp_path / "r.parquet")
    pq.write_table(pa.table({"doc_id": ["a", "b"], "embedding": [[1.0], None]}), tmp_path / "n.parquet")
    with pytest.raises(InputError, match="null embedding at row 1"):
        Index.from_embedding_files(tmp_path / "n.parquet")
    pq.write_table(pa.table({"doc_id": ["a"], "u": [[1.0]], "v": [[2.0]]}), tmp_path / "two.parquet")
    with pytest.raises(InputError, match="2 list columns"):
        Index.from_embedding_files(tmp_path / "two.parquet")
    pq.write_table(pa.table({"doc_id": ["a"], "embedding": ["x"]}), tmp_path / "s.parquet")
    with pytest.raises(InputError, match="column 'embedding' has type string"):
        Index.from_embedding_files(tmp_path / "s.parquet")


# ------------------------------------------------------------------ encoder settings in the manifest


class SettingsEncoder(FakeEncoder):
    def __init__(self, **settings):
        super().__init__()
        self.settings = {"model": "fake-chars", "max_length": 128, "backend": "onnx", "precision": "int8", **settings}


def test_manifest_records_encoder_settings_and_refuses_a_mismatch(tmp_path):
    table = pa.table({"doc_id": ["a", "b"], "text": ["cats purr", "tax forms"]})
    Index.build(table, SettingsEncoder()).save(tmp_path / "ix")
    loaded = Index.load(tmp_path / "ix")
    assert loaded.manifest["encoder"] == SettingsEncoder().settings
    loaded.check_encoder(SettingsEncoder())
    with pytest.raises(InputError, match=r"ix: query encoder settings .*'fp32'.*do not match the index's .*'int8'") as e:
        loaded.check_encoder(SettingsEncoder(precision="fp32"))
    assert "the encoder the index was built with" in str(e.value)
    loaded.check_encoder(FakeEncoder())          # an encoder that states no settings: only dim is checked


W = "sha256:0123456789abcdef"   # a model digest: records the project's encoder writes carry one


@pytest.mark.parametrize("encoder", [
    {"model": "x", "max_length": "long", "backend": "onnx", "precision": "int8"},
    {"model": "x", "max_length": 128, "backend": "onnx", "precision": "int4", "weights": W},   # no such precision
    {"model": "x", "max_length": 128, "backend": "torch", "precision": "int8", "weights": W},  # a pair no one runs
    {"model": "x", "max_length": 4, "backend": "torch", "precision": "fp32", "weights": W},    # below the floor
    {"weights": W},                                                                             # names no model
])
def test_corrupt_encoder_field_is_refused(tmp_path, encoder):
    """Said as the manifest's field, not as an option the user never gave (--precision)."""
    Index.from_arrays(rand(3, 4), ids(3)).save(tmp_path / "ix")
    m = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    m["encoder"] = encoder
    (tmp_path / "ix" / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(IndexIntegrityError, match=r"manifest\.json: field 'encoder' is "):
        Index.load(tmp_path / "ix")


def test_documents_without_text_are_left_out_with_a_warning_or_kept_on_request():
    table = pa.table({"doc_id": ["a", "b", "c", "d"], "text": ["", "cats", "   ", "dogs"], "title": ["", "", None, "D"]})
    with pytest.warns(UserWarning, match=r"2 of 4 documents of corpus table have no text .*first: 'a'\): left out"):
        idx = Index.build(table, FakeEncoder(), dtype="float32")
    assert idx.doc_ids.to_pylist() == ["b", "d"]
    want = Index.build(table.filter(pa.array([False, True, False, True])), FakeEncoder(), dtype="float32")
    np.testing.assert_array_equal(np.asarray(idx.embeddings), np.asarray(want.embeddings))
    with pytest.warns(UserWarning, match=r"have no text .*: each is embedded as an empty string"):
        kept = Index.build(table, FakeEncoder(), dtype="float32", keep_empty=True)
    assert kept.doc_ids.to_pylist() == ["a", "b", "c", "d"]
    with pytest.raises(InputError, match=r"no document has text \(2 with empty title and text\).*--keep-empty"):
        Index.build(pa.table({"doc_id": ["a", "b"], "text": ["", " "]}), FakeEncoder())
    with pytest.warns(UserWarning, match="embedded as an empty string"):   # kept when asked, all of them too
        assert len(Index.build(pa.table({"doc_id": ["a", "b"], "text": ["", " "]}), FakeEncoder(), keep_empty=True)) == 2
    # zero-width and format characters are no text either (their vector is the empty string's)
    invisible = pa.table({"doc_id": ["z", "f", "n", "t"], "text": ["\u200b", "\ufeff\u00a0", "\u3000\u200b\u2060", "é"]})
    with pytest.warns(UserWarning, match=r"3 of 4 documents .* left out"):
        assert Index.build(invisible, FakeEncoder()).doc_ids.to_pylist() == ["t"]


def test_a_table_with_its_own_ids_and_an_ids_file_is_refused(tmp_path):
    """Two id sources that may disagree: every result would carry another document's id."""
    pq.write_table(pa.table({"doc_id": ["a", "b"], "embedding": [[1.0, 0.0], [0.0, 1.0]]}), tmp_path / "e.parquet")
    (tmp_path / "ids.txt").write_text("b\na\n")
    with pytest.raises(InputError, match=r"e\.parquet has its own 'doc_id' column and an ids file was given"):
        Index.from_embedding_files(tmp_path / "e.parquet", tmp_path / "ids.txt")


def test_an_ids_file_with_a_header_line_says_so(tmp_path):
    np.save(tmp_path / "e.npy", rand(2, 3))
    (tmp_path / "ids.csv").write_text("doc_id\nx\ny\n")
    with pytest.raises(InputError, match=r"ids\.csv:1: the first line 'doc_id' looks like a column header"):
        Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "ids.csv")


def test_an_ids_text_file_names_the_line_of_an_odd_id_and_may_be_gzipped(tmp_path):
    import gzip

    np.save(tmp_path / "e.npy", rand(3, 3))
    (tmp_path / "ids.txt").write_text("a\nb \nc\n")
    with pytest.raises(InputError, match=r"ids\.txt:2: doc_id 'b ' has white space at an end or a control character"):
        Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "ids.txt")
    (tmp_path / "ids.txt").write_text("a\nb\u2028x\nc\n")
    with pytest.raises(InputError, match=r"ids\.txt:2: doc_id 'b\\u2028x'"):
        Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "ids.txt")
    with gzip.open(tmp_path / "ids.txt.gz", "wt") as f:
        f.write("a\nb\nc\n")
    assert Index.from_embedding_files(tmp_path / "e.npy", tmp_path / "ids.txt.gz").doc_ids.to_pylist() == ["a", "b", "c"]


@pytest.mark.parametrize("bad", ["b ", " b", "b\tc", "b\nc", "b\x00", "b\x7fc", "b\x85c", "b\x9fc", "b\u2028c",
                                 "b\u2029c"])
def test_ids_with_white_space_at_an_end_or_control_characters_are_refused(tmp_path, bad):
    """No qrels or run line can name such an id, so `itlr eval` would score the run 0 without a word."""
    with pytest.raises(InputError, match=r"row 1 has white space at an end or a control character"):
        Index.from_arrays(rand(2, 3), ["a", bad])
    assert Index.from_arrays(rand(2, 3), ["a", "b c"]).doc_ids.to_pylist() == ["a", "b c"]   # inside: kept
    assert Index.from_arrays(rand(2, 3), ["a", "b\xa0c\u00e9"]).doc_ids.to_pylist() == ["a", "b\xa0c\u00e9"]


def test_torch_tensors_of_any_float_dtype_are_accepted():
    torch = pytest.importorskip("torch")
    x = torch.randn(5, 8)
    want = Index.from_arrays(x.numpy(), list("abcde"), dtype="float32").embeddings
    for t in (x.bfloat16(), x.half(), x.double()):
        got = Index.from_arrays(t, list("abcde"), dtype="float32").embeddings
        np.testing.assert_allclose(got, want, atol=1e-2 if t.dtype == torch.bfloat16 else 1e-3)


def test_build_refuses_what_is_no_corpus_by_name():
    with pytest.raises(InputError, match=r"Index\.build: corpus is a list \(expected a path to a corpus file, "
                                         r"a pyarrow\.Table or a pandas DataFrame"):
        Index.build([{"doc_id": "a", "text": "x"}], encoder=object())


def test_build_takes_a_pandas_dataframe():
    pd = pytest.importorskip("pandas")

    class Tiny:   # an Encoder: two fixed dimensions from the text's length
        name, dim = "tiny", 2

        def encode(self, texts, **kw):
            return np.array([[1.0, len(t)] for t in texts], dtype=np.float32)

    from itlr_gpu.encoders import Encoder
    Encoder.register(Tiny)
    ix = Index.build(pd.DataFrame({"doc_id": ["a", "b"], "text": ["x", "yy"]}), encoder=Tiny(), dtype="float32")
    assert ix.doc_ids.to_pylist() == ["a", "b"]


def test_documents_with_almost_no_text_are_kept_with_a_warning():
    """A one-character or emoji-only document embeds near many short terms (a user probe found "x" ranked first
    for "gold" AND NOT "livestock"): kept, as documents, but named."""
    table = pa.table({"doc_id": ["a", "b", "c"], "text": ["x", "gold prices rose", "\U0001f355\U0001f525"]})
    with pytest.warns(UserWarning, match=r"2 of 3 documents of corpus table hold almost no text .*first: 'a'"):
        idx = Index.build(table, FakeEncoder(), dtype="float32")
    assert idx.doc_ids.to_pylist() == ["a", "b", "c"]


def test_a_corpus_csv_that_repeats_its_header_is_refused(tmp_path):
    from itlr_gpu.io import read_corpus

    (tmp_path / "c.csv").write_text("doc_id,text\na,cats\ndoc_id,text\nb,dogs\n")
    with pytest.raises(InputError, match=r"c\.csv:3: the header row again"):
        read_corpus(tmp_path / "c.csv")


def test_the_python_api_is_listed_and_its_errors_name_keywords():
    """dir() shows the lazily loaded names; errors name the keyword a Python caller passed, not a CLI flag; a
    dictionary-encoded (pandas "category") id column is read as strings."""
    import itlr_gpu

    names = dir(itlr_gpu)
    assert {"Index", "search", "ScoreOptions", "RECOMMENDED", "compile_queries", "translate"} <= set(names)
    assert "os" not in names and "sys" not in names
    rng = np.random.default_rng(0)
    ids = pa.array([f"d{i}" for i in range(6)]).dictionary_encode()
    idx = Index.from_arrays(rng.random((6, 8), dtype=np.float32), ids)
    assert idx.doc_ids.type == pa.string() and idx.doc_ids.to_pylist()[0] == "d0"
    enc = type("E", (), {"encode": lambda self, texts: rng.random((len(texts), 8), dtype=np.float32)})()
    with pytest.raises(InputError, match=r"^backend: unknown backend 'faiss'"):
        itlr_gpu.search(idx, ["a"], encoder=enc, backend="faiss")
    with pytest.raises(InputError, match=r"^device: unknown device 'tpu'"):
        itlr_gpu.search(idx, ["a"], encoder=enc, device="tpu")


# ------------------------------------------------------------------ append


@settings(max_examples=30, deadline=None)
@given(texts=st.lists(st.text(alphabet="abcdefgh xyz", min_size=2, max_size=30)
                      .filter(lambda t: sum(c.isalpha() for c in t) >= 2), min_size=2, max_size=20, unique=True),
       cut=st.integers(1, 19), dtype=st.sampled_from(["float16", "float32"]))
def test_append_equals_building_all_documents_at_once(texts, cut, dtype):
    cut = min(cut, len(texts) - 1)
    table = pa.table({"doc_id": [f"d{i}" for i in range(len(texts))], "text": texts})
    whole = Index.build(table, SettingsEncoder(), dtype=dtype)
    first = Index.build(table.slice(0, cut), SettingsEncoder(), dtype=dtype)
    appended = first.append(Index.build(table.slice(cut), SettingsEncoder(), dtype="float32"))  # cast to first's
    assert appended.doc_ids.to_pylist() == whole.doc_ids.to_pylist() and appended.dtype == whole.dtype
    np.testing.assert_array_equal(appended.embeddings, whole.embeddings)
    assert appended.manifest["encoder"] == whole.manifest["encoder"] and appended.manifest["count"] == len(texts)
    assert len(first) == cut   # the original is left as it was


def test_append_save_load_round_trip_keeps_the_encoder_check(tmp_path):
    a = Index.build(pa.table({"doc_id": ["a"], "text": ["cats"]}), SettingsEncoder())
    b = Index.build(pa.table({"doc_id": ["b"], "text": ["dogs"]}), SettingsEncoder())
    a.append(b).save(tmp_path / "ix")
    loaded = Index.load(tmp_path / "ix")
    assert loaded.doc_ids.to_pylist() == ["a", "b"]
    with pytest.raises(InputError, match="do not match the index's"):
        loaded.check_encoder(SettingsEncoder(precision="fp32"))


def test_append_refuses_what_would_mix_or_repeat():
    a = Index.build(pa.table({"doc_id": ["a", "b"], "text": ["cats", "dogs"]}), SettingsEncoder())
    same_id = Index.build(pa.table({"doc_id": ["c", "b"], "text": ["owls", "dogs"]}), SettingsEncoder())
    with pytest.raises(InputError, match=r"doc_id 'b' is already in the index \(1 of the new ids are\)"):
        a.append(same_id)
    other = Index.build(pa.table({"doc_id": ["c"], "text": ["owls"]}), SettingsEncoder(precision="fp32"))
    with pytest.raises(InputError, match="embedded otherwise than the index's: precision 'fp32' \\(new\\) vs 'int8' \\(index\\)"):
        a.append(other)
    with pytest.raises(InputError, match="dimension 5 appended to an index of dimension 8"):
        a.append(Index.from_arrays(rand(1, 5), ["z"]))
    with pytest.raises(InputError, match="can only append a single-file Index"):
        a.append(rand(1, 8))


def test_embedded_alike_is_matched_as_a_query_encoder_is():
    """--append's check: the settings both records hold (an index from before the model digest), and the model's
    name only where the digests differ (a copied model folder) -- the rules a search applies to its queries."""
    import numpy as np

    index = Index.from_arrays(np.eye(2, 8, dtype=np.float32), ["a", "b"], model="all-MiniLM-L6-v2")
    settings = {"model": "all-MiniLM-L6-v2", "max_length": 256, "backend": "onnx", "precision": "int8"}
    index.manifest["encoder"] = dict(settings)                                  # no digest: an older index
    index.check_embedded_alike("all-MiniLM-L6-v2", {**settings, "weights": "sha256:1"})
    index.manifest["encoder"] = {**settings, "weights": "sha256:1"}
    index.check_embedded_alike("copy", {**settings, "model": "copy", "weights": "sha256:1"})   # same files
    with pytest.raises(InputError, match="embedded with model 'copy'"):
        index.check_embedded_alike("copy", {**settings, "model": "copy", "weights": "sha256:2"})
    with pytest.raises(InputError, match="max_length 128 \\(new\\) vs 256 \\(index\\)"):
        index.check_embedded_alike("all-MiniLM-L6-v2", {**settings, "max_length": 128, "weights": "sha256:1"})


def test_bytes_after_the_matrix_are_refused(tmp_path):
    """The checksum covers the matrix the header states: bytes appended after it went unseen."""
    Index.from_arrays(rand(3, 4), ids(3)).save(tmp_path / "ix")
    with open(tmp_path / "ix" / "embeddings.npy", "ab") as f:
        f.write(b"\0" * 1536)
    with pytest.raises(InputError, match=r"embeddings\.npy: 1,536 bytes follow the matrix its header states"):
        Index.load(tmp_path / "ix")


def test_a_missing_index_whose_replace_was_interrupted_names_the_copy_left_aside(tmp_path):
    """kill -9 between a replace's two renames leaves the previous index under a hidden name: the error says
    where, so that it can be renamed back (stale-temporary clean-up keeps that copy)."""
    Index.from_arrays(rand(3, 4), ids(3)).save(tmp_path / "ix")
    aside = tmp_path / ".ix.old.itlr-tmp-4242-0badcafe"
    (tmp_path / "ix").rename(aside)
    with pytest.raises(InputError, match=r"ix: index folder not found; a replace of it was interrupted and left the "
                                         r"previous index at .*\.ix\.old\.itlr-tmp-4242-0badcafe \(rename it back to ix\)"):
        Index.load(tmp_path / "ix")
    with pytest.raises(InputError, match=r"other: index folder not found \(expected"):
        Index.load(tmp_path / "other")


@pytest.mark.parametrize("settings", [{"version": "1.2"}, {"model": "toy", "max_length": 512, "backend": "torch",
                                                            "precision": "float32"}])
def test_another_encoders_own_settings_are_recorded_and_read_back(tmp_path, settings):
    """The API takes any encoder: its settings are its own vocabulary, saved and loaded as given."""
    class Own(FakeEncoder):
        def __init__(self):
            super().__init__()
            self.settings = dict(settings)

    table = pa.table({"doc_id": ["a", "b"], "text": ["cats purr", "tax forms"]})
    Index.build(table, Own()).save(tmp_path / "ix")
    assert Index.load(tmp_path / "ix").manifest["encoder"] == settings
