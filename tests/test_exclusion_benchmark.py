"""benchmarks/exclusion.py: the label pairs it measures meet its thresholds; its measures match a direct count."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from exclusion import label_pairs  # noqa: E402


def test_label_pairs_meet_the_thresholds():
    labels = {}
    for i in range(100):                       # grain on 100 articles, wheat on 40 of them, corn on 5
        labels[f"g{i}"] = frozenset({"grain", "wheat"} if i < 40 else {"grain", "corn"} if i < 45 else {"grain"})
    for i in range(50):
        labels[f"w{i}"] = frozenset({"wheat"})
    terms = {"grain": "grain", "wheat": "wheat", "corn": "corn"}
    pairs = label_pairs(labels, terms, n=10, seed=0, min_docs=5, min_overlap=0.2, min_answers=20)
    # wheat is on 40% of grain's articles, corn on 5% (too few); grain is on 40 of wheat's 90 (44%), with 50
    # articles of wheat and not grain
    assert set(pairs) == {("grain", "wheat"), ("wheat", "grain")}
    assert label_pairs(labels, terms, n=10, seed=0, min_docs=5, min_overlap=0.5, min_answers=20) == []
    assert label_pairs(labels, {"grain": "grain"}, n=10, seed=0, min_docs=5, min_overlap=0.2, min_answers=20) == []
    assert len(label_pairs(labels, terms, n=1, seed=3, min_docs=5, min_overlap=0.2, min_answers=20)) == 1


class _Encoder:
    """A fixed unit vector per text (no model)."""

    name = None
    dim = 16

    def encode(self, texts):
        import zlib

        import numpy as np

        return np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal(self.dim).astype(np.float32)
                         for t in texts])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_measure_counts_the_wanted_and_the_excluded_in_the_top_10(seed):
    import numpy as np

    from exclusion import ExclusionSet, measure
    from itlr_gpu import Index, ScoreOptions, Term

    rng = np.random.default_rng(seed)
    docs = rng.standard_normal((80, 16)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    ids = [f"d{i}" for i in range(80)]
    enc = _Encoder()
    pairs = [("a", "b"), ("c", "d")]
    qids = [f"{a}-not-{b}" for a, b in pairs]
    wanted = {q: {d: 1 for d in rng.choice(ids, 30, replace=False)} for q in qids}
    excluded = {q: {d: 1 for d in rng.choice(ids, 20, replace=False)} for q in qids}
    xs = ExclusionSet(index=Index.from_arrays(docs, ids, dtype="float32"), encoder=enc, pairs=pairs,
                      terms={t: t for t in "abcd"}, qids=qids, wanted=wanted, excluded=excluded,
                      texts=[f"{a} but not {b}" for a, b in pairs],
                      queries={"pos": [Term(a) for a, _ in pairs], "not": [f'"{a}" AND NOT "{b}"' for a, b in pairs]})

    def unit(t):
        v = enc.encode([t])[0]
        return v / np.linalg.norm(v)

    for kind, options, score in (("pos", None, lambda a, b: docs @ unit(a)),
                                 ("not", ScoreOptions(), lambda a, b: (docs @ unit(a)) * (1 - docs @ unit(b)))):
        top = {q: [ids[i] for i in np.argsort(-score(a, b))[:10]] for q, (a, b) in zip(qids, pairs)}
        got = measure(xs, kind, options)
        assert got["pairs"] == 2
        assert got["P@10"] == pytest.approx(np.mean([sum(d in wanted[q] for d in top[q]) / 10 for q in qids]))
        assert got["leak@10"] == pytest.approx(np.mean([sum(d in excluded[q] for d in top[q]) / 10 for q in qids]))


@pytest.mark.parametrize("cap", [0, 1, 7, 30, 31, 100])
def test_sample_corpus_keeps_a_fixed_subset_with_its_labels(cap):
    from exclusion import sample_corpus

    from benchmarks.quality.data import Corpus

    ids = [f"d{i}" for i in range(30)]
    corpus = Corpus("reuters", ids, [f"text {i}" for i in range(30)],
                    labels={d: frozenset({"grain"} if i % 2 else {"wheat"}) for i, d in enumerate(ids)})
    got = sample_corpus(corpus, cap)
    assert len(got.doc_ids) == (30 if cap == 0 else min(cap, 30))
    assert got.doc_ids == sorted(got.doc_ids, key=ids.index)               # corpus order kept
    assert all(got.texts[i] == corpus.texts[ids.index(d)] for i, d in enumerate(got.doc_ids))
    assert got.labels == {d: corpus.labels[d] for d in got.doc_ids}
    assert sample_corpus(corpus, cap).doc_ids == got.doc_ids               # the same sample every run
