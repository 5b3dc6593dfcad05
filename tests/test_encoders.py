"""Tests for itlr_gpu.encoders (the MiniLM ones are marked slow)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from itlr_gpu import encoders
from itlr_gpu.encoders import Encoder, SentenceTransformerEncoder, default_encoder, l2_normalize
from itlr_gpu.errors import InputError


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
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="model folder not found"):
        SentenceTransformerEncoder(tmp_path / "file")


def test_names_and_lazy_loading(tmp_path):
    enc = SentenceTransformerEncoder()
    assert enc.name == "all-MiniLM-L6-v2" and enc._model is None
    (tmp_path / "my-model").mkdir()
    assert SentenceTransformerEncoder(tmp_path / "my-model").name == "my-model"
    with pytest.raises(InputError, match="batch_size"):
        SentenceTransformerEncoder(batch_size=0)


def test_not_a_model_folder(tmp_path):
    (tmp_path / "empty-model").mkdir()
    enc = SentenceTransformerEncoder(tmp_path / "empty-model")
    with pytest.raises(InputError, match="empty-model"):
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

    enc = SentenceTransformerEncoder()
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
