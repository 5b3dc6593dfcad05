"""The quality benchmark's corpus-embedding cache: an interrupted embedding resumes from its
checkpoint and gives the same matrix as one uninterrupted run."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.quality import data  # noqa: E402


class HashModel:
    """A deterministic stand-in for a sentence-transformers model; can fail after ``fail_after`` batches."""

    def __init__(self, dim: int, fail_after: int | None = None):
        self.dim, self.fail_after, self.max_seq_length = dim, fail_after, 256
        self.seen: list[str] = []

    def encode(self, texts, **kw):
        if self.fail_after is not None and len(self.seen) >= self.fail_after * 256:
            raise KeyboardInterrupt("stopped")
        self.seen += texts
        return np.stack([np.random.default_rng(abs(hash(t)) % 2**32).normal(size=self.dim) for t in texts]
                        ).astype(np.float32)


class Inner:
    def __init__(self, model):
        self.model, self.name, self.dim = model, "hash-model", model.dim

    def _load(self):
        return self.model


def encoder(tmp_path, model) -> data.CachedEncoder:
    enc = data.CachedEncoder.__new__(data.CachedEncoder)
    enc.inner, enc.name = Inner(model), "hash-model"
    enc.cache_dir = tmp_path
    tmp_path.mkdir(parents=True, exist_ok=True)
    return enc


def test_interrupted_corpus_embedding_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    texts = [f"document {i} " + "word " * (i % 37) for i in range(1000)]
    ids = [f"d{i}" for i in range(1000)]
    full = encoder(tmp_path / "a", HashModel(8)).encode_corpus("c", ids, texts)

    monkeypatch.setattr(data, "CHECKPOINT_S", 0.0)  # checkpoint after every batch
    first = HashModel(8, fail_after=2)
    with pytest.raises(KeyboardInterrupt):
        encoder(tmp_path / "b", first).encode_corpus("c", ids, texts)
    assert len(first.seen) == 512
    assert list((tmp_path / "b").glob("*.partial.npz")) and not list((tmp_path / "b").glob("c-*[0-9a-f].npy"))

    second = HashModel(8)
    resumed = encoder(tmp_path / "b", second).encode_corpus("c", ids, texts)
    assert len(second.seen) == 1000 - 512 and not set(second.seen) & set(first.seen)
    np.testing.assert_array_equal(resumed, full)
    assert not list((tmp_path / "b").glob("*.partial.npz"))


class EncodingInner(Inner):
    def encode(self, texts):
        return self.model.encode(list(texts))


def test_text_memo_round_trips_long_and_unicode_keys_compactly(tmp_path):
    """Texts are stored as one UTF-8 blob: a 20,000-character key does not pad every other key."""
    enc = data.CachedEncoder(tmp_path)
    enc.inner = EncodingInner(HashModel(8))
    texts = ["short", "naïve café — ünïcode", "x" * 20_000] + [f"term {i}" for i in range(200)]
    first = enc.encode(texts)
    enc.save()
    memo = next(tmp_path.rglob("texts.npz"))
    assert memo.stat().st_size < 200_000   # fixed-width keys would take 203 x 20,000 x 4 bytes
    again = data.CachedEncoder(tmp_path)
    again.inner = EncodingInner(HashModel(8, fail_after=0))   # any text not in the memo would raise
    np.testing.assert_array_equal(again.encode(texts), first)


def test_text_memo_reads_the_older_fixed_width_format(tmp_path):
    enc = data.CachedEncoder(tmp_path)
    vecs = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.savez(enc._memo_file, keys=np.array(["alpha", "béta"]), vecs=vecs)
    old = data.CachedEncoder(tmp_path)
    old.inner = EncodingInner(HashModel(3, fail_after=0))
    np.testing.assert_array_equal(old.encode(["béta", "alpha"]), vecs[::-1])
