"""The embedded demo corpus: shipped data, determinism, topic coverage."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from importlib import resources

import pyarrow as pa
import pytest

from itlr_gpu.demo import load_topics, make_corpus, topic_terms


def test_topics_json_shape():
    data = json.loads(resources.files("itlr_gpu.demo").joinpath("topics.json").read_text("utf-8"))
    topics = data["topics"]
    assert len(topics) == 16
    ids = [t["id"] for t in topics]
    terms = [t["term"] for t in topics]
    assert len(set(ids)) == 16 and len(set(terms)) == 16
    for t in topics:
        assert 2 <= len(t["term"].split()) <= 3, t["term"]
        # Term phrases must not contain query keywords (keeps natural renderings unambiguous).
        assert not {"and", "or", "not"} & set(t["term"].lower().split())
        assert len(t["sentences"]) >= 12
        assert len(set(t["sentences"])) == len(t["sentences"])
        for s in t["sentences"]:
            assert s.strip() == s and s.endswith(".")


def test_sentences_are_unique_across_topics():
    all_sentences = [s for t in load_topics() for s in t["sentences"]]
    assert len(all_sentences) == len(set(all_sentences))


def test_topic_terms_matches_load_topics():
    assert topic_terms() == {t["id"]: t["term"] for t in load_topics()}
    assert list(topic_terms()) == [t["id"] for t in load_topics()]


def test_load_topics_returns_copies():
    topics = load_topics()
    topics[0]["sentences"].clear()
    assert load_topics()[0]["sentences"]


def test_table_schema_and_ids():
    table, labels = make_corpus(50, seed=3)
    assert table.column_names == ["doc_id", "title", "text"]
    for name in table.column_names:
        assert table.schema.field(name).type == pa.string()
    ids = table["doc_id"].to_pylist()
    assert ids[0] == "d0001" and ids[-1] == "d0050"
    assert len(set(ids)) == 50
    assert list(labels) == ids
    assert set(table["title"].to_pylist()) == {""}


def test_deterministic_for_seed():
    t1, l1 = make_corpus(120, seed=7)
    t2, l2 = make_corpus(120, seed=7)
    assert t1.equals(t2) and l1 == l2
    t3, l3 = make_corpus(120, seed=8)
    assert not t1.equals(t3) or l1 != l3


def test_prefix_stable_in_n_docs():
    # More documents only appends (same seed): handy when scaling the demo.
    t_small, l_small = make_corpus(40, seed=1)
    t_big, l_big = make_corpus(80, seed=1)
    assert t_big.slice(0, 40).equals(t_small)
    assert {k: l_big[k] for k in l_small} == l_small


def test_every_topic_covered_and_balanced():
    table, labels = make_corpus()
    assert table.num_rows == 400
    counts = Counter(t for ls in labels.values() for t in ls)
    assert set(counts) == set(topic_terms())
    assert min(counts.values()) >= 30
    assert max(counts.values()) - min(counts.values()) <= 5


def test_topic_mix_and_cooccurrence():
    _, labels = make_corpus()
    sizes = Counter(len(ls) for ls in labels.values())
    assert set(sizes) == {1, 2, 3}
    assert all(sizes[k] >= 40 for k in (1, 2, 3))
    pairs = Counter(p for ls in labels.values() for p in itertools.combinations(sorted(ls), 2))
    assert len(pairs) >= 100  # of the 120 possible pairs


@pytest.mark.parametrize("n_docs", [16, 17, 33])
def test_small_corpora_cover_every_topic(n_docs):
    _, labels = make_corpus(n_docs, seed=5)
    assert set().union(*labels.values()) == set(topic_terms())


def test_text_is_made_of_its_topics_sentences():
    table, labels = make_corpus(60, seed=2)
    by_topic = {t["id"]: set(t["sentences"]) for t in load_topics()}
    for doc_id, text in zip(table["doc_id"].to_pylist(), table["text"].to_pylist()):
        topics = labels[doc_id]
        for t in topics:
            n = sum(s in text for s in by_topic[t])
            assert 2 <= n <= 4, (doc_id, t, n)
        for t in set(by_topic) - topics:
            assert not any(s in text for s in by_topic[t])


def test_empty_corpus():
    table, labels = make_corpus(0)
    assert table.num_rows == 0 and labels == {}
    with pytest.raises(ValueError):
        make_corpus(-1)
