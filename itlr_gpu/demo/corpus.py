"""A small, deterministic, labelled demo corpus built from ``topics.json``.

Every document is about one to three of the 16 topics; its text is two to four
sentences of each of its topics, shuffled together.  The labels (doc id -> set of
topic ids) make exact relevance judgements for synthetic logical queries.
"""

from __future__ import annotations

import json
import random
from functools import lru_cache
from importlib import resources
from typing import Any

import pyarrow as pa

__all__ = ["load_topics", "topic_terms", "make_corpus", "TOPIC_MIX"]

# Probability of a document covering 1, 2 or 3 topics.
TOPIC_MIX: tuple[tuple[int, float], ...] = ((1, 0.4), (2, 0.4), (3, 0.2))
SENTENCES_PER_TOPIC = (2, 4)


@lru_cache(maxsize=1)
def _topics_raw() -> tuple[dict[str, Any], ...]:
    text = resources.files(__package__).joinpath("topics.json").read_text(encoding="utf-8")
    data = json.loads(text)
    topics = tuple(data["topics"])
    ids = [t["id"] for t in topics]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate topic ids in topics.json")
    return topics


def load_topics() -> list[dict[str, Any]]:
    """The topics as ``[{"id", "term", "sentences"}, ...]`` (fresh copies, file order)."""
    return [
        {"id": t["id"], "term": t["term"], "sentences": list(t["sentences"])}
        for t in _topics_raw()
    ]


def topic_terms() -> dict[str, str]:
    """Topic id -> its short query term phrase (e.g. ``"coffee" -> "coffee brewing"``)."""
    return {t["id"]: t["term"] for t in _topics_raw()}


def _draw_topics(rng: random.Random, deck: list[str], ids: list[str], k: int) -> list[str]:
    """Take ``k`` distinct topics from a shuffled deck, refilling it when empty.

    Drawing from a deck (every topic once per round) keeps topic frequencies
    balanced, while the random deck order makes pairs and triples vary.
    """
    chosen: list[str] = []
    skipped: list[str] = []
    while len(chosen) < k:
        if not deck:
            deck.extend(ids)
            rng.shuffle(deck)
        t = deck.pop()
        (skipped if t in chosen else chosen).append(t)
    deck.extend(skipped)  # duplicates go back for a later document
    return chosen


def make_corpus(n_docs: int = 400, seed: int = 0) -> tuple[pa.Table, dict[str, frozenset[str]]]:
    """Build the demo corpus.

    Returns ``(table, labels)``: a table with string columns ``doc_id`` (``"d0001"``
    ...), ``title`` (always ``""``) and ``text``; and ``labels`` mapping each doc id
    to the frozenset of its topic ids.  Deterministic for a given ``(n_docs, seed)``.
    With ``n_docs >= 16`` every topic occurs in at least one document; with the
    default 400 each topic occurs in roughly 45 documents.
    """
    if n_docs < 0:
        raise ValueError("n_docs must be >= 0")
    rng = random.Random(seed)
    topics = {t["id"]: t["sentences"] for t in _topics_raw()}
    ids = list(topics)
    sizes = [k for k, _ in TOPIC_MIX]
    weights = [w for _, w in TOPIC_MIX]
    width = max(4, len(str(n_docs)))
    deck: list[str] = []

    doc_ids: list[str] = []
    texts: list[str] = []
    labels: dict[str, frozenset[str]] = {}
    for i in range(1, n_docs + 1):
        k = rng.choices(sizes, weights)[0]
        chosen = _draw_topics(rng, deck, ids, k)
        sentences: list[str] = []
        for t in chosen:
            n = rng.randint(*SENTENCES_PER_TOPIC)
            sentences.extend(rng.sample(topics[t], n))
        rng.shuffle(sentences)
        doc_id = f"d{i:0{width}d}"
        doc_ids.append(doc_id)
        texts.append(" ".join(sentences))
        labels[doc_id] = frozenset(chosen)

    table = pa.table(
        {
            "doc_id": pa.array(doc_ids, pa.string()),
            "title": pa.array([""] * n_docs, pa.string()),
            "text": pa.array(texts, pa.string()),
        }
    )
    return table, labels
